// Shared by tests/ets-host/*.test.mjs: builds the HAR's facade from its .ets sources, loads it
// with the real librum_native.so, and provides a fake ability context and a loopback intake.
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parseNdjson as ndjson, tmpDir, until } from '../../shared/util.mjs';
import { STUBS_DIR } from './files.mjs';
import { build } from './stage.mjs';

export { ndjson, until };

/** A fresh temp directory, removed at process exit. */
export const tempDir = (prefix = 'rum-ets-host-data-') => tmpDir(undefined, prefix);

const stub = (name) => pathToFileURL(join(STUBS_DIR, name)).href;

/**
 * A run-time stand-in module (`kit.NetworkKit.mjs`, ...), the same instance the built facade
 * imports: tests drive the platform through it (connection.host, display.host, ...).
 */
export const importStub = (name) => import(stub(name));

let loading = null;

/**
 * Loads the native library and the built facade once per process. Rejects with the loader's
 * message when librum_native.so is missing, so every test that needs it fails with that message.
 */
export function loadFacade() {
  if (loading === null) {
    loading = (async () => {
      // ArkTS's built-in @Sendable decorator: on one thread a Sendable class is an ordinary class.
      globalThis.Sendable ??= (target) => target;
      const native = (await import(stub('native.mjs'))).default;
      const built = build();
      const facade = await import(built.indexUrl);
      const { collections, taskpool } = await import(stub('kit.ArkTS.mjs'));
      const { hilog } = await import(stub('kit.PerformanceAnalysisKit.mjs'));
      process.on('exit', () => rmSync(built.outDir, { recursive: true, force: true }));
      return { facade, native, collections, taskpool, hilog, indexUrl: built.indexUrl };
    })();
  }
  return loading;
}

/**
 * The facade built again with `nativeStub` (a module path) standing in for librum_native.so, e.g.
 * one whose default export is undefined (the library missing from the app). Not cached.
 */
export async function loadFacadeWithNative(nativeStub) {
  globalThis.Sendable ??= (target) => target;
  const built = build({ nativeStub });
  process.on('exit', () => rmSync(built.outDir, { recursive: true, force: true }));
  return import(built.indexUrl);
}

/**
 * A demo scenario module (`entry/src/main/ets/scenarios/<name>.ets`, built with the facade) and a
 * monitor for it on a fresh directory, without keep-alive or connectivity tracking; stopped after
 * the test.
 */
export async function demoScenario(t, name, applicationId) {
  const h = await loadFacade();
  const scenario = await import(new URL(`../entry/src/main/ets/scenarios/${name}.js`, h.indexUrl).href);
  const monitor = h.facade.RumMonitor.create(fakeContext(tempDir()), {
    applicationId, keepAliveIntervalMs: 0, connectivityTracking: false
  });
  t.after(() => monitor.stop());
  return { scenario, monitor, facade: h.facade };
}

/**
 * A stand-in for the ability context the facade is given, with the members RumMonitor uses of
 * the SDK's Context (`filesDir`, `getApplicationContext()`) and ApplicationContext (`filesDir`,
 * `on`/`off('applicationStateChange')`, whose listeners the test can fire). As on a device the
 * application context has a `filesDir` of its own (`applicationFilesDir`; by default the same).
 */
export function fakeContext(filesDir, applicationFilesDir = filesDir) {
  const listeners = new Set();
  const lifecycles = new Map();
  let nextLifecycle = 1;
  const applicationContext = {
    filesDir: applicationFilesDir,
    on(type, callback) {
      if (type === 'abilityLifecycle') {
        lifecycles.set(nextLifecycle, callback);
        return nextLifecycle++;
      }
      if (type !== 'applicationStateChange') {
        throw new TypeError(`unexpected event ${type}`);
      }
      listeners.add(callback);
    },
    off(type, callback) {
      if (type === 'abilityLifecycle') {
        return lifecycles.delete(callback) ? Promise.resolve() : Promise.reject(new Error('no such callback'));
      }
      if (callback === undefined) {
        listeners.clear();
      } else {
        listeners.delete(callback);
      }
    },
    getApplicationContext() {
      return applicationContext;
    }
  };
  return {
    filesDir,
    getApplicationContext: () => applicationContext,
    listenerCount: () => listeners.size,
    lifecycleCount: () => lifecycles.size,
    /** A UIAbility's window stage was made, as ApplicationContext's abilityLifecycle reports it. */
    windowStageCreate: (ability, windowStage) => lifecycles.forEach((l) => l.onWindowStageCreate(ability, windowStage)),
    background: () => listeners.forEach((l) => l.onApplicationBackground()),
    foreground: () => listeners.forEach((l) => l.onApplicationForeground())
  };
}


/** Claims and acknowledges every sealed batch; returns their documents in claim order. */
export function drainBatches(monitor) {
  const docs = [];
  for (let b = monitor.nextBatch(); b !== null; b = monitor.nextBatch()) {
    // Sealed batches come gzip-compressed; the facade passes the encoding on.
    const body = b.encoding === 'gzip' ? gunzipSync(Buffer.from(b.body)) : b.body;
    const batchDocs = ndjson(body);
    if (batchDocs.length !== b.eventCount) {
      throw new Error(`batch ${b.id}: eventCount ${b.eventCount} but ${batchDocs.length} lines`);
    }
    docs.push(...batchDocs);
    monitor.completeBatch(b.id, true);
  }
  return docs;
}

/**
 * A RUM intake on 127.0.0.1 (port 0). `respond(request, index)` returns the status for each
 * request (default 202), or 'reset' to close the connection without an answer (a network error
 * for the client). Every request is recorded with its path, headers, raw body and documents (the
 * body gunzipped first when it says `Content-Encoding: gzip`).
 */
export async function startIntake(respond = () => 202) {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const gzip = /^gzip$/i.test(req.headers['content-encoding'] ?? '');
      const record = {
        method: req.method,
        url: req.url,
        headers: req.headers,
        raw,
        body: gzip ? gunzipSync(raw) : raw,
        docs: null
      };
      record.docs = ndjson(record.body);
      const status = respond(record, requests.length);
      record.status = status;
      requests.push(record);
      if (status === 'reset') {
        req.socket.destroy();
        return;
      }
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    site: `http://127.0.0.1:${port}`,
    requests,
    /** Documents of the requests the intake accepted (2xx), in arrival order. */
    accepted: () => requests.filter((r) => r.status >= 200 && r.status < 300).flatMap((r) => r.docs),
    close: () => new Promise((resolve) => server.close(resolve))
  };
}

