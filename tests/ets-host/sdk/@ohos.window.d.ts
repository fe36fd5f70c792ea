/* Stand-in for the SDK's api/@ohos.window.d.ts (subset). */
import { AsyncCallback, Callback } from './@ohos.base';
import type { UIContext } from './@ohos.arkui.UIContext';

declare namespace window {
  enum WindowStageEventType {
    SHOWN = 1,
    ACTIVE = 2,
    INACTIVE = 3,
    HIDDEN = 4,
    RESUMED = 5,
    PAUSED = 6
  }
  interface Window {
    getUIContext(): UIContext;
  }
  interface WindowStage {
    loadContent(path: string, callback: AsyncCallback<void>): void;
    loadContent(path: string): Promise<void>;
    getMainWindowSync(): Window;
    on(eventType: 'windowStageEvent', callback: Callback<WindowStageEventType>): void;
  }
}

export default window;
