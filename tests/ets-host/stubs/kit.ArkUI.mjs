// Run-time stand-in for @kit.ArkUI's non-component part: display (./ohos.display.mjs), window's
// enums, and the observers automatic capture registers, which a test drives through `ui.host`:
//   routerPage(name, state, { pageId, path })   routerPageUpdate (static form and UIObserver's)
//   navDestination(name, state, { navigationId, navDestinationId, index })
//   tabContent(tabContentId, state, { id, uniqueId, tabContentUniqueId, index })
//   click({ id, type, targetId })               didClick on every UIObserver, with a FrameNode
//   frame()                                     runs the frame callbacks posted so far
//   counts(), reset()
// Each info object has the fields the SDK declares for it (api/@ohos.arkui.observer.d.ts).
import display from './ohos.display.mjs';

const RouterPageState = { ABOUT_TO_APPEAR: 0, ABOUT_TO_DISAPPEAR: 1, ON_PAGE_SHOW: 2, ON_PAGE_HIDE: 3, ON_BACK_PRESS: 4 };
const NavDestinationState = {
  ON_SHOWN: 0, ON_HIDDEN: 1, ON_APPEAR: 2, ON_DISAPPEAR: 3, ON_WILL_SHOW: 4, ON_WILL_HIDE: 5, ON_WILL_APPEAR: 6,
  ON_WILL_DISAPPEAR: 7, ON_ACTIVE: 8, ON_INACTIVE: 9, ON_BACKPRESS: 100
};
const TabContentState = { ON_SHOW: 0, ON_HIDE: 1 };

const listeners = () => ({ routerPageUpdate: new Set(), navDestinationUpdate: new Set(), tabContentUpdate: new Set(), didClick: new Set() });

const host = {
  static: listeners(),
  observers: [],
  frames: [],
  nextUnique: 1,
  routerPage(name, state, { pageId = name, path = '', index = 0, context = null } = {}) {
    const info = { context, index, name, path, state, pageId };
    this.fire('routerPageUpdate', info);
  },
  navDestination(name, state, { navigationId = 'nav', navDestinationId = name, index = 0, param = undefined } = {}) {
    this.fire('navDestinationUpdate', { navigationId, name, state, index, param, navDestinationId });
  },
  tabContent(tabContentId, state, { id = 'tabs', uniqueId = 7, tabContentUniqueId = undefined, index = 0 } = {}) {
    const info = { tabContentId, tabContentUniqueId: tabContentUniqueId ?? this.unique(tabContentId), state, index, id, uniqueId };
    this.fire('tabContentUpdate', info);
  },
  click({ id = '', type = 'Button', targetId = undefined } = {}) {
    const node = { getId: () => id, getUniqueId: () => 1, getNodeType: () => type };
    const event = { target: { area: {}, id: targetId }, timestamp: Number(process.hrtime.bigint()), x: 1, y: 1 };
    for (const o of this.observers) for (const cb of [...o.listeners.didClick]) cb(event, node);
  },
  frame() {
    const due = this.frames;
    this.frames = [];
    for (const f of due) f.onFrame(Number(process.hrtime.bigint()));
  },
  fire(type, info) {
    for (const cb of [...this.static[type]]) cb(info);
    for (const o of this.observers) for (const cb of [...o.listeners[type]]) cb(info);
  },
  counts() {
    const n = (type) => this.static[type].size + this.observers.reduce((s, o) => s + o.listeners[type].size, 0);
    return Object.fromEntries(Object.keys(this.static).map((t) => [t, n(t)]));
  },
  unique(text) {
    let h = 0;
    for (const c of text) h = (h * 31 + c.charCodeAt(0)) | 0;
    return Math.abs(h);
  },
  reset() {
    this.static = listeners();
    this.observers = [];
    this.frames = [];
  }
};

function register(set, type, callback) {
  if (!(type in set) || typeof callback !== 'function') {
    throw Object.assign(new Error(`Parameter error: ${type}`), { code: 401 });
  }
  set[type].add(callback);
}

export const uiObserver = {
  RouterPageState,
  NavDestinationState,
  TabContentState,
  on(type, ...args) {
    register(host.static, type, args[args.length - 1]);
  },
  off(type, ...args) {
    const cb = args[args.length - 1];
    if (typeof cb === 'function') host.static[type]?.delete(cb);
    else host.static[type]?.clear();
  },
  host
};

export class UIObserver {
  constructor() {
    this.listeners = listeners();
  }
  on(type, callback) {
    register(this.listeners, type, callback);
  }
  off(type, callback) {
    if (typeof callback === 'function') this.listeners[type]?.delete(callback);
    else this.listeners[type]?.clear();
  }
}

export class FrameCallback {}

export class UIContext {
  constructor() {
    this.observer = new UIObserver();
    host.observers.push(this.observer);
  }
  getUIObserver() {
    return this.observer;
  }
  postFrameCallback(callback) {
    host.frames.push(callback);
  }
}

export class FrameNode {}

export const window = { WindowStageEventType: { SHOWN: 1, ACTIVE: 2, INACTIVE: 3, HIDDEN: 4, RESUMED: 5, PAUSED: 6 } };

export { display };
export const ui = host;
