/* Stand-in for the SDK's api/@ohos.process.d.ts (subset). */
declare namespace process {
  export class ProcessManager {
    exit(code: number): void;
  }
  /** CPU time of the process since it started, ms. */
  function getPastCpuTime(): number;
}

export default process;
