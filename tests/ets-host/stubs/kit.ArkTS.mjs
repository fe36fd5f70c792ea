// Run-time stand-in for @kit.ArkTS on the host.
//   collections — the JS built-ins (a Sendable container is an ordinary one on one thread);
//   taskpool    — runs the task's function in this process on a later macrotask, as if on a
//                 worker thread, and hands the result back by reference (no copy), which is what
//                 Sendable results do on the device;
//   lang        — types only.

class SendableArray extends Array {}
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
