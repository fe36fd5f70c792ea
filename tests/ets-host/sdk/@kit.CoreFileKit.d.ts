/* Stand-in for the SDK's kits/@kit.CoreFileKit.d.ts (subset). */
import fileIo from './@ohos.file.fs';

export { fileIo };
