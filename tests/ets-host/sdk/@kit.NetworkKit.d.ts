/* Stand-in for the SDK's kits/@kit.NetworkKit.d.ts (subset). */
import http from './@ohos.net.http';

export { http };
