/* Stand-in for the SDK's api/@ohos.hiviewdfx.hiAppEvent.d.ts (subset). */
declare namespace hiAppEvent {
  enum EventType {
    FAULT = 1,
    STATISTIC = 2,
    SECURITY = 3,
    BEHAVIOR = 4
  }

  namespace domain {
    const OS: string;
  }

  namespace event {
    const APP_CRASH: string;
    const APP_FREEZE: string;
    const MAIN_THREAD_JANK: string;
  }

  interface AppEventInfo {
    domain: string;
    name: string;
    eventType: EventType;
    params: object;
  }

  class AppEventPackageHolder {
    constructor(watcherName: string);
  }

  interface TriggerCondition {
    row?: number;
    size?: number;
    timeOut?: number;
  }

  interface AppEventFilter {
    domain: string;
    eventTypes?: EventType[];
    names?: string[];
  }

  interface AppEventGroup {
    name: string;
    appEventInfos: Array<AppEventInfo>;
  }

  interface Watcher {
    name: string;
    triggerCondition?: TriggerCondition;
    appEventFilters?: AppEventFilter[];
    onTrigger?: (curRow: number, curSize: number, holder: AppEventPackageHolder) => void;
    onReceive?: (domain: string, appEventGroups: Array<AppEventGroup>) => void;
  }

  function addWatcher(watcher: Watcher): AppEventPackageHolder;
  function removeWatcher(watcher: Watcher): void;
}

export default hiAppEvent;
