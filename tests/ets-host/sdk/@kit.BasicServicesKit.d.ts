/* Stand-in for the SDK's kits/@kit.BasicServicesKit.d.ts (subset). */
import { AsyncCallback, BusinessError, Callback } from './@ohos.base';
import deviceInfo from './@ohos.deviceInfo';
import systemDateTime from './@ohos.systemDateTime';
import zlib from './@ohos.zlib';

export { AsyncCallback, BusinessError, Callback, deviceInfo, systemDateTime, zlib };
