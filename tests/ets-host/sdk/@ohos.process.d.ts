/* Stand-in for the SDK's api/@ohos.process.d.ts (subset). */
declare namespace process {
  export class ProcessManager {
    exit(code: number): void;
  }
  /** CPU time of the process since it started, ms. */
  function getPastCpuTime(): number;
  /** ms after boot (deep sleep left out) at which the process started. */
  function getStartRealtime(): number;
}

export default process;
