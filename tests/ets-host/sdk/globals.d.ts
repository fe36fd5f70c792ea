/* Stand-ins for the ArkTS globals the checked files use (the real ones come with the SDK). */

/** ArkTS built-in class decorator: the class's instances may be shared between threads. */
declare function Sendable<T extends Function>(target: T): T;

declare function setTimeout(handler: Function | string, delay?: number, ...args: Object[]): number;
declare function clearTimeout(timeoutID?: number): void;
declare function setInterval(handler: Function | string, delay: number, ...args: Object[]): number;
declare function clearInterval(intervalID?: number): void;

interface Console {
  debug(message: string, ...arguments: Object[]): void;
  log(message: string, ...arguments: Object[]): void;
  info(message: string, ...arguments: Object[]): void;
  warn(message: string, ...arguments: Object[]): void;
  error(message: string, ...arguments: Object[]): void;
}
declare const console: Console;

/** ArkUI's frame-rate range (component/common.d.ts), used by displaySync. */
declare interface ExpectedFrameRateRange {
  min: number;
  max: number;
  expected: number;
}

/** ArkUI's resource reference ($r(...)) and string-or-resource (global/resource.d.ts, component/units.d.ts). */
declare interface Resource {
  readonly id: number;
  readonly type: number;
  readonly params?: Object[];
  readonly bundleName: string;
  readonly moduleName: string;
}
declare type ResourceStr = string | Resource;

/** ArkUI's click event (component/common.d.ts): the fields the HAR reads. */
declare interface EventTarget {
  id?: string;
}
declare interface ClickEvent {
  target: EventTarget;
  timestamp: number;
  x: number;
  y: number;
}
