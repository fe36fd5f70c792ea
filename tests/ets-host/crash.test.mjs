// Crash reporting of the HAR (ets/src/main/ets/crash/), built from ets/ and run against
// librum_native.so: errorManager's observers and hiAppEvent's watcher are the stand-ins of
// stubs/ (typed by sdk/ from the real SDK's declarations), fired the way the platform fires them.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, beforeEach, test } from 'node:test';
import { SCHEMAS_MISSING_NOTE, schemaValidator } from '../shared/schema.mjs';
import { readBatchFiles } from '../node/lib/helpers.mjs';
import { drainBatches, fakeContext, importStub, loadFacade, tempDir } from './lib/harness.mjs';

let h;
let errorManager;
let appRecovery;
let processStub;
let hiAppEvent;
before(async () => {
  h = await loadFacade();
  ({ errorManager, appRecovery } = await importStub('kit.AbilityKit.mjs'));
  ({ process: processStub } = await importStub('kit.ArkTS.mjs'));
  ({ hiAppEvent } = await importStub('kit.PerformanceAnalysisKit.mjs'));
});

beforeEach(() => {
  errorManager.host.reset();
  appRecovery.host.reset();
  processStub.host.reset();
  hiAppEvent.host.reset();
});

const STATE_FILE = 'rum-crash-state.json';

/** A monitor on `dir` (a launch of the app); stopped when the test ends. */
function launch(t, dir, options = {}) {
  const m = h.facade.RumMonitor.create(fakeContext(dir), {
    applicationId: '4b2f7c1e-9d3a-4e8b-a1c2-3d4e5f6a7b8c',
    service: 'ets-host',
    version: '1.0.0',
    // An enum source: the documents then validate with no exception at all.
    source: 'android',
    keepAliveIntervalMs: 0,
    connectivityTracking: false,
    // Crash reporting alone: automatic capture's watchers and observers are its own tests'.
    autoCapture: false,
    ...options
  });
  t.after(() => m.stop());
  return m;
}

const errorsOf = (docs) => docs.filter((d) => d.type === 'error');

function assertValid(docs) {
  const v = schemaValidator();
  if (v === null) {
    console.log(`# ${SCHEMAS_MISSING_NOTE}`);
    return;
  }
  for (const d of docs) assert.deepEqual(v.validate(d), [], `${d.type} document validates: ${JSON.stringify(d).slice(0, 300)}`);
}

test('a thrown error reaches the observer: crash document written and synced before the exit', (t) => {
  const dir = tempDir();
  const m = launch(t, dir);
  assert.equal(errorManager.host.errorObservers.size, 1, 'an error observer is registered');
  m.startView('checkout', 'Checkout');
  for (let i = 0; i < 50; i++) m.addAction('tap', `before-${i}`);
  let onDisk = null;
  processStub.host.onExit = () => {
    // What a kill right now would leave: the batch files as they are at the exit call.
    onDisk = readBatchFiles(dir).docs;
  };
  const thrown = new TypeError("Cannot read properties of undefined (reading 'total')");
  errorManager.host.crash(thrown);

  assert.deepEqual(processStub.host.exits, [0], 'the process is ended once, as the errorManager guidelines do');
  assert.ok(onDisk !== null);
  const [crash] = errorsOf(onDisk);
  assert.ok(crash, 'the crash document is on disk when exit is called');
  assert.equal(crash.error.is_crash, true);
  assert.equal(crash.error.type, 'TypeError');
  assert.equal(crash.error.message, thrown.message);
  assert.equal(crash.error.stack, thrown.stack);
  assert.equal(crash.error.source, 'source');
  assert.equal(crash.error.handling, 'unhandled');
  const before = onDisk.slice(0, onDisk.indexOf(crash)).filter((d) => d.type === 'action');
  assert.equal(before.length, 50, 'every action called before the crash is on disk before it');
  const views = onDisk.filter((d) => d.type === 'view');
  assert.equal(views.at(-1).view.crash.count, 1, 'the crashed view counts it');
  assert.equal(views.at(-1).view.is_active, false, 'and is closed');
  assertValid(onDisk);
  assert.equal(appRecovery.host.calls.length, 0, 'appRecovery is not used unless the host enabled it');

  // A second callback for the same crash (onUnhandledException after onException) records nothing.
  errorManager.host.crashWithText('Error name:TypeError\nError message:again\nStacktrace:\n    at f');
  assert.equal(processStub.host.exits.length, 1);
  assert.equal(errorsOf(readBatchFiles(dir).docs).length, 1);

  const state = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8'));
  assert.equal(state.jsCrashes.length, 1, 'the crash is remembered for the crash-loop guard');
});

test('onUnhandledException alone (no onException): the runtime summary is parsed', (t) => {
  const dir = tempDir();
  launch(t, dir);
  const [observer] = errorManager.host.errorObservers.values();
  observer.onUnhandledException('Error name:RangeError\nError message:Invalid array length\nStacktrace:\n    at build (entry/src/main/ets/pages/Index.ets:42:7)\n');
  assert.deepEqual(processStub.host.exits, [0]);
  const [crash] = errorsOf(readBatchFiles(dir).docs);
  assert.equal(crash.error.type, 'RangeError');
  assert.equal(crash.error.message, 'Invalid array length');
  assert.equal(crash.error.stack.trim(), 'at build (entry/src/main/ets/pages/Index.ets:42:7)');
  assert.equal(crash.error.is_crash, true);
});

test('a crash the pipeline refuses whole is recorded shortened, and the app still ends', (t) => {
  const dir = tempDir();
  launch(t, dir, { pipeline: { eventMaxBytes: 64 * 1024 } });
  const big = new Error('m'.repeat(200 * 1024));
  errorManager.host.crash(big);
  assert.deepEqual(processStub.host.exits, [0]);
  const [crash] = errorsOf(readBatchFiles(dir).docs);
  assert.ok(crash, 'recorded despite the size');
  assert.equal(crash.error.message.length, 4096);
});

test('a crash whose parts fit but whose document does not: dropped by the writer, recorded again shortened', (t) => {
  const dir = tempDir();
  launch(t, dir, { pipeline: { eventMaxBytes: 64 * 1024 } });
  const err = new Error('m'.repeat(40 * 1024));
  err.stack = 's'.repeat(40 * 1024);
  errorManager.host.crash(err);
  assert.deepEqual(processStub.host.exits, [0]);
  const crashes = errorsOf(readBatchFiles(dir).docs);
  assert.equal(crashes.length, 1, 'one crash document, the shortened one');
  assert.equal(crashes[0].error.message.length, 4096);
  assert.equal(crashes[0].error.stack.length, 16384);
});

test('appRecovery enabled by the host: state saved and restartApp instead of exit', (t) => {
  const dir = tempDir();
  launch(t, dir, { crashReporting: { appRecovery: true } });
  let crashOnDisk = false;
  appRecovery.host.onRestart = () => {
    crashOnDisk = errorsOf(readBatchFiles(dir).docs).some((d) => d.error.is_crash);
  };
  errorManager.host.crash(new Error('boom'));
  assert.deepEqual(appRecovery.host.calls, ['saveAppState', 'restartApp']);
  assert.equal(crashOnDisk, true, 'the crash is on disk before the restart');
  assert.deepEqual(processStub.host.exits, [], 'no exit: appRecovery restarts the process');
});

test('crash loop: the third crash within the window across launches only records and exits', (t) => {
  const dir = tempDir();
  for (let launchNo = 1; launchNo <= 3; launchNo++) {
    errorManager.host.reset();
    appRecovery.host.reset();
    processStub.host.reset();
    const m = launch(t, dir, { crashReporting: { appRecovery: true, crashLoopCount: 3, crashLoopWindowMs: 60_000 } });
    m.addAction('tap', `launch ${launchNo}`);
    errorManager.host.crash(new Error(`crash ${launchNo}`));
    if (launchNo < 3) {
      assert.deepEqual(appRecovery.host.calls, ['saveAppState', 'restartApp'], `launch ${launchNo} restarts`);
      assert.deepEqual(processStub.host.exits, []);
    } else {
      assert.deepEqual(appRecovery.host.calls, [], 'in a crash loop: no restart');
      assert.deepEqual(processStub.host.exits, [0], 'the app still ends');
    }
    m.stop();
  }
  const crashes = errorsOf(readBatchFiles(dir).docs).filter((d) => d.error.is_crash);
  assert.deepEqual(crashes.map((d) => d.error.message), ['crash 1', 'crash 2', 'crash 3'], 'every crash is recorded');
});

test('crashes older than the window are no loop', (t) => {
  const dir = tempDir();
  const old = Date.now() - 10 * 60_000;
  writeFileSync(join(dir, STATE_FILE), JSON.stringify({
    version: 1,
    jsCrashes: [1, 2, 3, 4].map((i) => ({ time: old + i, name: 'Error', message: `old ${i}` })),
    seen: []
  }));
  launch(t, dir, { crashReporting: { appRecovery: true } });
  errorManager.host.crash(new Error('fresh'));
  assert.deepEqual(appRecovery.host.calls, ['saveAppState', 'restartApp']);
});

test('an unreadable state file is an empty state: crash reporting still works', (t) => {
  const dir = tempDir();
  writeFileSync(join(dir, STATE_FILE), '{ torn');
  launch(t, dir);
  errorManager.host.crash(new Error('after a torn state'));
  assert.deepEqual(processStub.host.exits, [0]);
  assert.equal(errorsOf(readBatchFiles(dir).docs).length, 1);
});

test('an unhandled rejection: an unhandled error, not a crash, and the app goes on', (t) => {
  const dir = tempDir();
  const m = launch(t, dir);
  assert.equal(errorManager.host.rejectionObservers.size, 1);
  m.startView('feed', 'Feed');
  const reason = new SyntaxError('Unexpected token < in JSON at position 0');
  errorManager.host.reject(reason);
  errorManager.host.reject('plain string reason');
  errorManager.host.reject(undefined);
  assert.deepEqual(processStub.host.exits, [], 'no exit: the platform does not end the app for a rejection');
  m.flush();
  const errors = errorsOf(drainBatches(m));
  assert.equal(errors.length, 3);
  assert.equal(errors[0].error.type, 'SyntaxError');
  assert.equal(errors[0].error.message, reason.message);
  assert.equal(errors[0].error.stack, reason.stack);
  assert.equal(errors[0].error.is_crash, false);
  assert.equal(errors[0].error.handling, 'unhandled');
  assert.equal(errors[1].error.message, 'plain string reason');
  assert.equal(typeof errors[2].error.message, 'string');
  assertValid(errors);
});

// ---- hiAppEvent: the params the platform documents for APP_CRASH and APP_FREEZE ----

const CRASH_TIME = Date.now() - 3_600_000;

function nativeCrash(overrides = {}) {
  return {
    domain: 'OS',
    name: 'APP_CRASH',
    eventType: 1,
    params: {
      time: CRASH_TIME,
      crash_type: 'NativeCrash',
      foreground: true,
      bundle_version: '1.0.0',
      bundle_name: 'com.example.rumburst',
      pid: 4321,
      uid: 20010044,
      uuid: 'b6f9d3a0e2c14b8d9a7f0c1e2d3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b',
      exception: {
        message: '',
        signal: { signo: 11, code: 1, address: '0x0000000000000000' },
        thread_name: 'com.example.rumburst',
        tid: 4321,
        frames: [
          { symbol: 'RumDemoCrash', file: '/data/storage/el1/bundle/libs/arm64/libdemo.so', buildId: '3b1c5e7a', pc: '000000000001d3c4', offset: 28 },
          { symbol: '', file: '/system/lib64/platformsdk/libace_napi.z.so', buildId: '', pc: '0000000000034a10', offset: 0 }
        ]
      },
      hilog: ['12-04 20:40:11.123  4321  4321 I A03d00/JSAPP: before the crash'],
      threads: [{ thread_name: 'OS_IPC_0_4330', tid: 4330, frames: [{ symbol: 'ioctl', file: '/system/lib/ld-musl-aarch64.so.1', buildId: 'a1', pc: '00000000000c1f20', offset: 8 }] }],
      external_log: ['/data/storage/el2/log/hiappevent/APP_CRASH_1733300000000_4321.log'],
      log_over_limit: false,
      ...overrides
    }
  };
}

function jsErrorCrash(time, name, message) {
  return {
    domain: 'OS',
    name: 'APP_CRASH',
    eventType: 1,
    params: {
      time,
      crash_type: 'JsError',
      foreground: true,
      bundle_version: '1.0.0',
      bundle_name: 'com.example.rumburst',
      pid: 5000,
      uid: 20010044,
      uuid: 'c0ffee',
      exception: { name, message, stack: '    at onClick (entry/src/main/ets/pages/Index.ets:88:11)' },
      hilog: [],
      external_log: [],
      log_over_limit: false
    }
  };
}

function freeze() {
  return {
    domain: 'OS',
    name: 'APP_FREEZE',
    eventType: 1,
    params: {
      time: CRASH_TIME + 1000,
      foreground: true,
      bundle_version: '1.0.0',
      bundle_name: 'com.example.rumburst',
      process_name: 'com.example.rumburst',
      pid: 6000,
      uid: 20010044,
      uuid: 'freeze-uuid',
      exception: { name: 'THREAD_BLOCK_6S', message: 'App main thread is not response!' },
      hilog: [],
      event_handler: ['Event { send thread = 6000, send time = ..., handle time = ... }'],
      event_handler_size_3s: '5',
      event_handler_size_6s: '9',
      peer_binder: [],
      threads: [
        { thread_name: 'com.example.rumburst', tid: 6000, frames: [
          { symbol: 'buildActions', file: 'entry/src/main/ets/scenarios/BurstDemo.ets', packageName: 'entry/', line: 31, column: 9 },
          { symbol: 'epoll_wait', file: '/system/lib/ld-musl-aarch64.so.1', buildId: 'a1', pc: '00000000000c4a6c', offset: 12 }
        ] },
        { thread_name: 'OS_IPC_0_6010', tid: 6010, frames: [] }
      ],
      memory: { rss: 200000, vss: 9000000, pss: 150000, sys_free_mem: 1000000, sys_avail_mem: 3000000, sys_total_mem: 12000000 },
      external_log: [],
      log_over_limit: false
    }
  };
}

const deliver = (...events) => hiAppEvent.host.deliver('OS', [{ name: 'OS', appEventInfos: events }]);

test('hiAppEvent: native crash and freeze of an earlier launch become valid error documents, dated', (t) => {
  const dir = tempDir();
  const m = launch(t, dir);
  assert.equal(hiAppEvent.host.watchers.length, 1, 'a watcher is added');
  const [watcher] = hiAppEvent.host.watchers;
  assert.deepEqual(watcher.appEventFilters, [{ domain: 'OS', names: ['APP_CRASH', 'APP_FREEZE'] }]);
  m.startView('home', 'Home');
  deliver(nativeCrash(), freeze(), jsErrorCrash(CRASH_TIME + 5, 'TypeError', 'x is undefined'));
  m.flush();
  const docs = drainBatches(m);
  const [crash, hang, js] = errorsOf(docs);
  assert.equal(crash.error.is_crash, true);
  assert.equal(crash.error.type, 'SIGSEGV');
  assert.equal(crash.error.handling, 'unhandled');
  assert.equal(crash.date, CRASH_TIME, 'dated when it happened');
  assert.match(crash.error.message, /SIGSEGV/);
  assert.match(crash.error.stack, /^#00 pc 000000000001d3c4 \/data\/storage\/el1\/bundle\/libs\/arm64\/libdemo\.so\(RumDemoCrash\+28\)\(3b1c5e7a\)$/m);
  assert.equal(crash.context.signal, 11);
  assert.equal(crash.context.crash_type, 'NativeCrash');
  assert.equal(crash.context.pid, 4321);
  assert.equal(crash.context.bundle_version, '1.0.0');

  assert.equal(hang.error.category, 'App Hang');
  assert.equal(hang.error.is_crash, false);
  assert.equal(hang.error.type, 'THREAD_BLOCK_6S');
  assert.equal(hang.error.message, 'App main thread is not response!');
  assert.equal(hang.date, CRASH_TIME + 1000);
  assert.match(hang.error.stack, /at buildActions \(entry\/entry\/src\/main\/ets\/scenarios\/BurstDemo\.ets:31:9\)/);

  assert.equal(js.error.is_crash, true);
  assert.equal(js.error.type, 'TypeError');
  assert.equal(js.error.message, 'x is undefined');
  assertValid(docs);
  // Earlier processes' crashes neither close nor count on this launch's view.
  const view = docs.filter((d) => d.type === 'view').at(-1);
  assert.equal(view.view.crash?.count ?? 0, 0);
  assert.equal(view.view.is_active, true);
});

test('hiAppEvent: each event is recorded once, across repeated deliveries and launches', (t) => {
  const dir = tempDir();
  const first = launch(t, dir);
  deliver(nativeCrash(), freeze());
  deliver(nativeCrash(), freeze());
  first.flush();
  first.stop();
  hiAppEvent.host.reset();
  const second = launch(t, dir);
  deliver(nativeCrash(), freeze(), nativeCrash({ time: CRASH_TIME + 60_000, pid: 4400 }));
  second.flush();
  const errors = errorsOf(readBatchFiles(dir).docs);
  assert.deepEqual(errors.map((d) => [d.error.type, d.date]), [
    ['SIGSEGV', CRASH_TIME],
    ['THREAD_BLOCK_6S', CRASH_TIME + 1000],
    ['SIGSEGV', CRASH_TIME + 60_000]
  ]);
});

test("hiAppEvent: the system's report of a JS crash the observer recorded is not recorded again", (t) => {
  const dir = tempDir();
  launch(t, dir);
  errorManager.host.crash(new TypeError('total is undefined'));
  const crashTime = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')).jsCrashes[0].time;
  hiAppEvent.host.reset();
  errorManager.host.reset();
  const next = launch(t, dir);
  deliver(jsErrorCrash(crashTime - 20, 'TypeError', 'total is undefined'), jsErrorCrash(crashTime, 'TypeError', 'another one'));
  next.flush();
  const crashes = errorsOf(readBatchFiles(dir).docs);
  assert.deepEqual(crashes.map((d) => d.error.message), ['total is undefined', 'another one']);
});

test('hiAppEvent: malformed events are skipped without losing the others or throwing', (t) => {
  const dir = tempDir();
  const m = launch(t, dir);
  const [watcher] = hiAppEvent.host.watchers;
  assert.doesNotThrow(() => watcher.onReceive('OS', null));
  assert.doesNotThrow(() => watcher.onReceive('OS', [{ name: 'OS', appEventInfos: [
    null,
    { domain: 'OS', name: 'APP_CRASH', eventType: 1, params: null },
    { domain: 'OS', name: 'APP_CRASH', eventType: 1, params: { time: 'soon', exception: 'text', threads: 'none' } },
    { domain: 'OS', name: 'APP_FREEZE', eventType: 1, params: { time: -5, exception: { name: 7 }, threads: [null, { frames: 'x' }] } },
    nativeCrash()
  ] }]));
  m.flush();
  const errors = errorsOf(drainBatches(m));
  assert.equal(errors.length, 3, 'two garbled events still become documents with what they carry, and the real one');
  assert.equal(errors.at(-1).error.type, 'SIGSEGV');
  assertValid(errors);
});

test('options turn each part off; false turns all off; stop() removes them', (t) => {
  const off = launch(t, tempDir(), { crashReporting: false });
  assert.equal(errorManager.host.errorObservers.size, 0);
  assert.equal(errorManager.host.rejectionObservers.size, 0);
  assert.equal(hiAppEvent.host.watchers.length, 0);
  off.stop();

  const noJs = launch(t, tempDir(), { crashReporting: { jsCrashes: false } });
  assert.equal(errorManager.host.errorObservers.size, 0);
  assert.equal(errorManager.host.rejectionObservers.size, 1);
  assert.equal(hiAppEvent.host.watchers.length, 1);
  noJs.stop();

  const noRejections = launch(t, tempDir(), { crashReporting: { unhandledRejections: false } });
  assert.equal(errorManager.host.errorObservers.size, 1);
  assert.equal(errorManager.host.rejectionObservers.size, 0);
  noRejections.stop();
  assert.equal(errorManager.host.errorObservers.size, 0, 'stop() unregisters the error observer');
  assert.equal(hiAppEvent.host.watchers.length, 0, 'and removes the watcher');

  const dir = tempDir();
  const noSystem = launch(t, dir, { crashReporting: { systemEvents: false } });
  assert.equal(hiAppEvent.host.watchers.length, 0);
  assert.equal(errorManager.host.errorObservers.size, 1);
  noSystem.stop();
  assert.equal(existsSync(join(dir, STATE_FILE)), false, 'nothing written while nothing happened');
});

test('the platform refusing the observers (not the main thread) leaves a working monitor', (t) => {
  errorManager.host.onError = Object.assign(new Error('If the caller is invalid.'), { code: 16200001 });
  const m = launch(t, tempDir());
  m.addAction('tap', 'still works');
  m.flush();
  assert.equal(drainBatches(m).filter((d) => d.type === 'action').length, 1);
  assert.equal(hiAppEvent.host.watchers.length, 1, 'the watcher does not depend on errorManager');
});
