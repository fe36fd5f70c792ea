/* Stand-in for the SDK's api/@ohos.arkui.observer.d.ts (subset). */
import { Callback } from './@ohos.base';
import common from './@ohos.app.ability.common';
import type { UIContext } from './@ohos.arkui.UIContext';

declare namespace uiObserver {
  export enum NavDestinationState { ON_SHOWN = 0, ON_HIDDEN = 1, ON_APPEAR = 2, ON_DISAPPEAR = 3 }
  export enum RouterPageState { ABOUT_TO_APPEAR = 0, ABOUT_TO_DISAPPEAR = 1, ON_PAGE_SHOW = 2, ON_PAGE_HIDE = 3, ON_BACK_PRESS = 4 }
  export enum TabContentState { ON_SHOW = 0, ON_HIDE = 1 }
  export interface NavDestinationInfo {
    navigationId: ResourceStr;
    name: ResourceStr;
    state: NavDestinationState;
    index: number;
    param?: Object;
    navDestinationId: string;
  }
  export class RouterPageInfo {
    context: common.UIAbilityContext | UIContext;
    index: number;
    name: string;
    path: string;
    state: RouterPageState;
    pageId: string;
  }
  export interface TabContentInfo {
    tabContentId: string;
    tabContentUniqueId: number;
    state: TabContentState;
    index: number;
    id: string;
    uniqueId: number;
  }
  export function on(type: 'navDestinationUpdate', callback: Callback<NavDestinationInfo>): void;
  export function off(type: 'navDestinationUpdate', callback?: Callback<NavDestinationInfo>): void;
  export function on(type: 'tabContentUpdate', callback: Callback<TabContentInfo>): void;
  export function off(type: 'tabContentUpdate', callback?: Callback<TabContentInfo>): void;
  export function on(type: 'routerPageUpdate', context: common.UIAbilityContext | UIContext,
    callback: Callback<RouterPageInfo>): void;
  export function off(type: 'routerPageUpdate', context: common.UIAbilityContext | UIContext,
    callback?: Callback<RouterPageInfo>): void;
}

export default uiObserver;
