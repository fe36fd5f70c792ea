/* Stand-in for the SDK's api/@ohos.security.cryptoFramework.d.ts (subset: message digests). */
declare namespace cryptoFramework {
  interface DataBlob {
    data: Uint8Array;
  }
  interface Md {
    update(input: DataBlob): Promise<void>;
    updateSync(input: DataBlob): void;
    digest(): Promise<DataBlob>;
    digestSync(): DataBlob;
    getMdLength(): number;
    readonly algName: string;
  }
  function createMd(algName: string): Md;
}

export default cryptoFramework;
