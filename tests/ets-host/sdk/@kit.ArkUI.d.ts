/* Stand-in for the SDK's kits/@kit.ArkUI.d.ts (the non-component part the project uses). */
import window from './@ohos.window';

export { window };
