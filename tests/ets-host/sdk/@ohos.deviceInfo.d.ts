/* Stand-in for the SDK's api/@ohos.deviceInfo.d.ts (subset). */
declare namespace deviceInfo {
  const deviceType: string;
  const brand: string;
  const marketName: string;
  const productModel: string;
  const displayVersion: string;
  const osFullName: string;
  const sdkApiVersion: number;
  const abiList: string;
  const majorVersion: number;
  const distributionOSName: string;
  const distributionOSVersion: string;
}

export default deviceInfo;
