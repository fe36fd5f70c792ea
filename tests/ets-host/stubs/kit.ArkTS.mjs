// Run-time stand-in for @kit.ArkTS on the host.
//   util        — generateRandomUUID (node:crypto);
//   collections — Map is the JS built-in; Array an array-like that is not a JS Array;
//   taskpool    — runs the task's function in this process on a later macrotask, as if on a
//                 worker thread, and hands the result back by reference (no copy), which is what
//                 Sendable results do on the device;
//   lang        — types only.
import { randomUUID } from 'node:crypto';

/**
 * collections.Array: not a JS Array, so the binding reads it by `length` and index. On a device
 * napi_is_array answers true for a Sendable array (docs/arkts-napi.md) and the binding reads it as
 * an array; this stand-in keeps the other path, which any array-like takes, tested.
 */
class SendableArray {
  #length = 0;

  constructor(...items) {
    this.push(...items);
  }

  get length() {
    return this.#length;
  }

  push(...items) {
    for (const item of items) this[this.#length++] = item;
    return this.#length;
  }

  at(index) {
    return this[index < 0 ? this.#length + index : index];
  }

  forEach(fn) {
    for (let i = 0; i < this.#length; i++) fn(this[i], i, this);
  }

  *[Symbol.iterator]() {
    for (let i = 0; i < this.#length; i++) yield this[i];
  }
}
Object.defineProperty(SendableArray, 'name', { value: 'Array' });

class SendableMap extends Map {}
Object.defineProperty(SendableMap, 'name', { value: 'Map' });

export const collections = { Array: SendableArray, Map: SendableMap };

export const lang = {};

const Priority = { HIGH: 0, MEDIUM: 1, LOW: 2, IDLE: 3 };

class Task {
  constructor(first, ...rest) {
    if (typeof first === 'string') {
      this.name = first;
      this.function = rest.shift();
    } else {
      this.name = '';
      this.function = first;
    }
    this.arguments = rest;
  }
}

/** Every task run through `execute`, oldest first (for tests: did the work go through the pool?). */
const executed = [];

function execute(taskOrFunction, ...args) {
  const task = taskOrFunction instanceof Task ? taskOrFunction : new Task(taskOrFunction, ...args);
  if (typeof task.function !== 'function') {
    return Promise.reject(new TypeError('taskpool.execute: the task has no function'));
  }
  executed.push(task);
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      try {
        resolve(task.function(...task.arguments));
      } catch (e) {
        reject(e);
      }
    });
  });
}

export const taskpool = { Priority, Task, execute, executed };

/** util — generateRandomUUID over node:crypto (RFC 4122 version 4, lower case). */
export const util = { generateRandomUUID: (_entropyCache) => randomUUID() };

// process — ProcessManager.exit does not end the test process: it records the code in
// `process.host.exits` and runs `process.host.onExit(code)` (a test checks there what is on disk
// at the moment the app would end).
const processHost = {
  exits: [],
  onExit: null,
  reset() {
    this.exits = [];
    this.onExit = null;
  },
};

class ProcessManager {
  exit(code) {
    processHost.exits.push(code);
    processHost.onExit?.(code);
  }
}

// getPastCpuTime — the process's CPU time (user + system), ms, as the SDK's.
const getPastCpuTime = () => {
  const { user, system } = globalThis.process.cpuUsage();
  return (user + system) / 1000;
};

// getStartRealtime — ms after boot at which this process started, on the clock systemDateTime's
// getUptime stands in with (process.hrtime), so their difference is the process's age.
const getStartRealtime = () => Number(globalThis.process.hrtime.bigint()) / 1e6 - globalThis.process.uptime() * 1000;

export const process = { ProcessManager, getPastCpuTime, getStartRealtime, host: processHost };
