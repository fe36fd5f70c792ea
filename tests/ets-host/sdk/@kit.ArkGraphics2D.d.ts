/* Stand-in for the SDK's kits/@kit.ArkGraphics2D.d.ts (subset). */
import displaySync from './@ohos.graphics.displaySync';

export { displaySync };
