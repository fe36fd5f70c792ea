// Run-time stand-in for @kit.PerformanceAnalysisKit: hilog records each line (tests read
// `hilog.records`) and prints it when RUM_HOST_LOG is set.
const records = [];

function render(format, args) {
  let i = 0;
  return format.replace(/%\{(?:public|private)\}([sdifo])|%([sdifo])/g, () => String(args[i++]));
}

function logger(level) {
  return (domain, tag, format, ...args) => {
    const message = render(String(format), args);
    records.push({ level, domain, tag, message });
    if (process.env.RUM_HOST_LOG) {
      console.error(`[${level}] ${tag}: ${message}`);
    }
  };
}

const LogLevel = { DEBUG: 3, INFO: 4, WARN: 5, ERROR: 6, FATAL: 7 };

export const hilog = {
  debug: logger('debug'),
  info: logger('info'),
  warn: logger('warn'),
  error: logger('error'),
  fatal: logger('fatal'),
  isLoggable: () => true,
  LogLevel,
  records
};

// hiAppEvent — keeps the watchers the facade adds; `hiAppEvent.host.deliver(domain, groups)`
// calls each watcher's onReceive whose filters take the events, as the system does at launch.
const appEventHost = {
  watchers: [],
  deliver(domain, groups) {
    for (const w of [...this.watchers]) {
      const filters = w.appEventFilters ?? [];
      const wanted = groups
        .map((g) => ({
          name: g.name,
          appEventInfos: g.appEventInfos.filter((e) =>
            filters.length === 0 || filters.some((f) => f.domain === e.domain && (!f.names || f.names.includes(e.name)))),
        }))
        .filter((g) => g.appEventInfos.length > 0);
      if (wanted.length > 0) w.onReceive?.(domain, wanted);
    }
  },
  reset() {
    this.watchers = [];
  },
};

export const hiAppEvent = {
  EventType: { FAULT: 1, STATISTIC: 2, SECURITY: 3, BEHAVIOR: 4 },
  domain: { OS: 'OS' },
  event: { APP_CRASH: 'APP_CRASH', APP_FREEZE: 'APP_FREEZE', MAIN_THREAD_JANK: 'MAIN_THREAD_JANK' },
  addWatcher(watcher) {
    if (typeof watcher?.name !== 'string') throw Object.assign(new Error('Parameter error'), { code: 401 });
    appEventHost.watchers = appEventHost.watchers.filter((w) => w.name !== watcher.name);
    appEventHost.watchers.push(watcher);
    return {};
  },
  removeWatcher(watcher) {
    appEventHost.watchers = appEventHost.watchers.filter((w) => w.name !== watcher.name);
  },
  host: appEventHost,
};
