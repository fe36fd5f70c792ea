/* Stand-in for the SDK's api/@ohos.app.ability.errorManager.d.ts and application/ErrorObserver.d.ts (subset). */
declare class ErrorObserverClass {
  onUnhandledException(errMsg: string): void;
  onException?(errObject: Error): void;
}

declare namespace errorManager {
  function on(type: 'error', observer: ErrorObserver): number;
  function off(type: 'error', observerId: number): Promise<void>;
  function on(type: 'unhandledRejection', observer: UnhandledRejectionObserver): void;
  function off(type: 'unhandledRejection', observer?: UnhandledRejectionObserver): void;
  function on(type: 'loopObserver', timeout: number, observer: LoopObserver): void;
  function off(type: 'loopObserver', observer?: LoopObserver): void;
  export interface LoopObserver {
    onLoopTimeOut?(timeout: number): void;
  }
  export type ErrorObserver = ErrorObserverClass;
  export type UnhandledRejectionObserver = (reason: Error | any, promise: Promise<any>) => void;
}

export default errorManager;
