/* Stand-in for the SDK's kits/@kit.ArkUI.d.ts (the non-component part the project uses). */
import display from './@ohos.display';
import window from './@ohos.window';
import uiObserver from './@ohos.arkui.observer';
import { FrameCallback, FrameNode, UIContext, UIObserver } from './@ohos.arkui.UIContext';

export { display, FrameCallback, FrameNode, UIContext, UIObserver, uiObserver, window };
