/* Stand-in for the SDK's kits/@kit.PerformanceAnalysisKit.d.ts (subset). */
import hilog from './@ohos.hilog';

export { hilog };
