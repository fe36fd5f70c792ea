/* Stand-in for the SDK's api/@ohos.bundle.bundleManager.d.ts and bundleManager/BundleInfo.d.ts (subset). */
declare namespace bundleManager {
  enum BundleFlag {
    GET_BUNDLE_INFO_DEFAULT = 0x00000000,
    GET_BUNDLE_INFO_WITH_APPLICATION = 0x00000001,
    GET_BUNDLE_INFO_WITH_HAP_MODULE = 0x00000002
  }

  /** @throws { BusinessError } 401 - Parameter error. */
  function getBundleInfoForSelfSync(bundleFlags: number): BundleInfo;

  export interface BundleInfo {
    readonly name: string;
    readonly vendor: string;
    readonly versionCode: number;
    readonly versionName: string;
    readonly minCompatibleVersionCode: number;
    readonly targetVersion: number;
  }
}

export default bundleManager;
