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
