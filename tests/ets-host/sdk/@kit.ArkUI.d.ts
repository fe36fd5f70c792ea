/* Stand-in for the SDK's kits/@kit.ArkUI.d.ts (the non-component part the project uses). */
import display from './@ohos.display';
import window from './@ohos.window';

export { display, window };
