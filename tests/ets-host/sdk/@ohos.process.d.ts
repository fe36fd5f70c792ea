/* Stand-in for the SDK's api/@ohos.process.d.ts (subset). */
declare namespace process {
  export class ProcessManager {
    exit(code: number): void;
  }
}

export default process;
