/* Stand-in for the SDK's api/@ohos.graphics.displaySync.d.ts. */
import { Callback } from './@ohos.base';

declare namespace displaySync {
  interface IntervalInfo {
    timestamp: number;
    targetTimestamp: number;
  }

  interface DisplaySync {
    setExpectedFrameRateRange(rateRange: ExpectedFrameRateRange): void;
    on(type: 'frame', callback: Callback<IntervalInfo>): void;
    off(type: 'frame', callback?: Callback<IntervalInfo>): void;
    start(): void;
    stop(): void;
  }

  function create(): DisplaySync;
}

export default displaySync;
