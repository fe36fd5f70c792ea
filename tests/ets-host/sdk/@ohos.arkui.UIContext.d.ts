/* Stand-in for the SDK's api/@ohos.arkui.UIContext.d.ts and api/arkui/FrameNode.d.ts (subset). */
import { Callback } from './@ohos.base';
import observer from './@ohos.arkui.observer';

declare type ClickEventListenerCallback = (event: ClickEvent, node?: FrameNode) => void;

export declare class FrameNode {
  getId(): string;
  getUniqueId(): number;
  getNodeType(): string;
}

export declare abstract class FrameCallback {
  onFrame(frameTimeInNano: number): void;
  onIdle(timeLeftInNano: number): void;
}

export declare class UIObserver {
  on(type: 'routerPageUpdate', callback: Callback<observer.RouterPageInfo>): void;
  off(type: 'routerPageUpdate', callback?: Callback<observer.RouterPageInfo>): void;
  on(type: 'didClick', callback: ClickEventListenerCallback): void;
  off(type: 'didClick', callback?: ClickEventListenerCallback): void;
}

export declare class UIContext {
  getUIObserver(): UIObserver;
  postFrameCallback(frameCallback: FrameCallback): void;
}
