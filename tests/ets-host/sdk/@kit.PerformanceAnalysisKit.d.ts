/* Stand-in for the SDK's kits/@kit.PerformanceAnalysisKit.d.ts (subset). */
import hiAppEvent from './@ohos.hiviewdfx.hiAppEvent';
import hilog from './@ohos.hilog';

export { hiAppEvent, hilog };
