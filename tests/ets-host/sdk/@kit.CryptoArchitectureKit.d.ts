/* Stand-in for the SDK's kits/@kit.CryptoArchitectureKit.d.ts (subset). */
import cryptoFramework from './@ohos.security.cryptoFramework';

export { cryptoFramework };
