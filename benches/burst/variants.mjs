// The five things a scenario's loop can call, behind one shape so that the loop body is the same
// for every variant:
//   native   — the module under test as an app runs it: the HAR's capture buffer (CallBuffer.ets,
//              built from ets/ by capture-code.mjs) in front of RumPipeline from librum_native.so;
//   baseline — the pre-queue SDK in plain JS (baseline.mjs);
//   jsqueue  — the reference change's dispatch queue and view coalescing in plain JS (jsqueue.mjs),
//              what a user would write instead of using the native module;
//   floor    — the least the job can cost: a JS loop that only snapshots the arguments (a
//              timestamp and a copy of the attributes pushed on an array), no crossing;
//   copy     — copyArgsFloor from the same .so: a native function that copies the arguments
//              property by property and does nothing else (what a native call per event costs).
// Each target has addAction(type, name, attrs) (called as a method in the loop), startView, and
// settle/flush/stats/bytesWritten/nextBatch/completeBatch/stop for the harness around the loop.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { libraryPath, loadNative } from '../../tests/shared/native.mjs';
import { BaselineSdk } from './baseline.mjs';
import { JsQueueSdk } from './jsqueue.mjs';
import { bufferFor, loadCallBuffer } from '../capture-code.mjs';

const CallBuffer = await loadCallBuffer();

export { loadNative };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Methods the harness needs on a RumPipeline instance (docs/interface.md). */
export const REQUIRED_METHODS = ['startView', 'addAction', 'flush', 'stop', 'stats', 'nextBatch', 'completeBatch'];

/** The library a run loads unless told otherwise (RUM_NATIVE_LIB, else target/release). */
export const defaultLibraryPath = libraryPath;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Options every variant's pipeline is built with; `extra` carries per-scenario storage limits. The
 * application id is a UUID, as the format requires and real ones are (so documents have their real
 * size and validate).
 */
function pipelineOptions(storageDir, extra) {
  return { storageDir, applicationId: '6c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f', service: 'burst', version: '0.0.0', env: 'bench', trackingConsent: 'granted', ...extra };
}

export function createTarget(variant, { storageDir, libPath, storage = {} }) {
  if (variant === 'baseline') return baselineTarget(storageDir, storage);
  if (variant === 'jsqueue') return jsQueueTarget(storageDir, storage);
  const native = loadNative(libPath);
  if (variant === 'native') return nativeTarget(native, storageDir, storage);
  if (variant === 'floor') return snapshotTarget();
  if (variant === 'copy') return copyTarget(native);
  throw new Error(`unknown variant '${variant}'`);
}

function nativeTarget(native, storageDir, storage) {
  const p = new native.RumPipeline(pipelineOptions(storageDir, storage));
  for (const m of REQUIRED_METHODS) {
    if (typeof p[m] !== 'function') throw new Error(`RumPipeline has no method ${m}()`);
  }
  const calls = bufferFor(CallBuffer, p, { capacity: storage.queueCapacity ?? 5000 });
  // The loop calls the buffer's methods; any other method of the pipeline (addError, ...) is
  // made as RumMonitor makes it: after handing the buffer over.
  for (const m of Object.getOwnPropertyNames(Object.getPrototypeOf(p))) {
    if (m !== 'constructor' && !(m in calls)) calls[m] = (...args) => (calls.handOverAll(), p[m](...args));
  }
  return {
    variant: 'native',
    sdk: calls,
    pipeline: p,
    startView: (key, name, attrs) => calls.startView(key, name, attrs),
    /** Calls not processed yet: those in the capture buffer and those in the native queue. */
    queueLength() {
      const q = p.stats()?.queueLength;
      if (typeof q !== 'number') throw new Error('RumPipeline.stats().queueLength is not a number');
      return q + calls.stats().buffered;
    },
    /** Resolves once every queued call has been processed on later turns (no synchronous drain). */
    async settle(timeoutMs = 120_000) {
      const t0 = performance.now();
      while (this.queueLength() > 0) {
        if (performance.now() - t0 > timeoutMs) throw new Error(`queue not empty after ${timeoutMs} ms (queueLength ${this.queueLength()})`);
        await sleep(1);
      }
    },
    /** flush() waits at most flushTimeoutMs and says whether it finished; retry until it does. */
    flush(deadlineMs = 120_000) {
      const t0 = performance.now();
      let attempts = 0;
      calls.handOverAll();
      for (;;) {
        attempts += 1;
        if (p.flush() === true) return { ok: true, attempts };
        if (performance.now() - t0 > deadlineMs) return { ok: false, attempts };
      }
    },
    stats: () => plain(p.stats()),
    /** Bytes appended to batch files so far, all files (stats().bytesWritten). */
    bytesWritten: () => Number(p.stats().bytesWritten),
    nextBatch: () => p.nextBatch(),
    completeBatch: (id, delivered) => p.completeBatch(id, delivered),
    stop() {
      calls.handOverAll();
      return p.stop();
    },
  };
}

/** A plain-JS SDK (the baseline or the JS queue) behind the harness's target shape. */
function jsTarget(variant, sdk, { queueLength = () => 0, settle = async () => {} } = {}) {
  return {
    variant,
    sdk,
    startView: (key, name, attrs) => sdk.startView(key, name, attrs),
    queueLength,
    settle,
    flush: () => ({ ok: sdk.flush(), attempts: 1 }),
    stats: () => sdk.stats(),
    bytesWritten: () => sdk.stats().bytesWritten,
    nextBatch: () => sdk.nextBatch(),
    completeBatch: (id, delivered) => sdk.completeBatch(id, delivered),
    stop: () => sdk.stop(),
  };
}

function baselineTarget(storageDir, storage) {
  return jsTarget('baseline', new BaselineSdk(pipelineOptions(storageDir, storage)));
}

function jsQueueTarget(storageDir, storage) {
  const sdk = new JsQueueSdk(pipelineOptions(storageDir, storage));
  return jsTarget('jsqueue', sdk, {
    queueLength: () => sdk.queueLength,
    /** Resolves once its slices have processed every queued call on later turns (no drain). */
    async settle(timeoutMs = 120_000) {
      const t0 = performance.now();
      while (sdk.queueLength > 0) {
        if (performance.now() - t0 > timeoutMs) throw new Error(`queue not empty after ${timeoutMs} ms (queueLength ${sdk.queueLength})`);
        await sleep(1);
      }
    },
  });
}

/** The floor: each call's arguments snapshotted in JS (timestamp, attributes copied), kept. */
function snapshotTarget() {
  const kept = [];
  const sdk = {
    addAction(type, name, attributes) {
      kept.push([type, name, { ...attributes }, Date.now()]);
    },
  };
  return { ...inertTarget('floor', sdk), kept };
}

function copyTarget(native) {
  if (typeof native.copyArgsFloor !== 'function') {
    throw new Error('the native module exports no copyArgsFloor(type, name, attrs) function (the per-property copy)');
  }
  // The loop calls target.sdk.addAction(...): here that is the bare native function.
  return inertTarget('copy', { addAction: native.copyArgsFloor });
}

/** A variant that writes nothing: the harness's calls around the loop do nothing. */
function inertTarget(variant, sdk) {
  return {
    variant,
    sdk,
    startView() {},
    queueLength: () => 0,
    async settle() {},
    flush: () => ({ ok: true, attempts: 0 }),
    stats: () => ({}),
    bytesWritten: () => null,
    nextBatch: () => null,
    completeBatch() {},
    stop() {},
  };
}

/** A JSON-safe copy of a stats object (BigInt → Number; nested objects kept). */
export function plain(value) {
  return JSON.parse(JSON.stringify(value ?? {}, (_, v) => (typeof v === 'bigint' ? Number(v) : v)));
}
