/* Stand-in for the SDK's api/@ohos.window.d.ts (subset). */
import { AsyncCallback } from './@ohos.base';

declare namespace window {
  interface WindowStage {
    loadContent(path: string, callback: AsyncCallback<void>): void;
    loadContent(path: string): Promise<void>;
  }
}

export default window;
