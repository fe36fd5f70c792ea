/* Stand-in for the SDK's api/@ohos.hilog.d.ts. */
declare namespace hilog {
  function debug(domain: number, tag: string, format: string, ...args: any[]): void;
  function info(domain: number, tag: string, format: string, ...args: any[]): void;
  function warn(domain: number, tag: string, format: string, ...args: any[]): void;
  function error(domain: number, tag: string, format: string, ...args: any[]): void;
  function fatal(domain: number, tag: string, format: string, ...args: any[]): void;
  function isLoggable(domain: number, tag: string, level: LogLevel): boolean;

  enum LogLevel {
    DEBUG = 3,
    INFO = 4,
    WARN = 5,
    ERROR = 6,
    FATAL = 7
  }
}

export default hilog;
