/* Stand-in for the SDK's kits/@kit.NetworkKit.d.ts (subset). */
import connection from './@ohos.net.connection';
import http from './@ohos.net.http';

export { connection, http };
