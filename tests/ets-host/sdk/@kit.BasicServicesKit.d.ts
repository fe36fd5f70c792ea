/* Stand-in for the SDK's kits/@kit.BasicServicesKit.d.ts (subset). */
import { AsyncCallback, BusinessError, Callback } from './@ohos.base';

export { AsyncCallback, BusinessError, Callback };
