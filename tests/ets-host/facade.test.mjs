// RumMonitor and the Sendable event classes, built from ets/ and run against librum_native.so.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { drainBatches, fakeContext, loadFacade, tempDir, until } from './lib/harness.mjs';

let h;
before(async () => {
  h = await loadFacade();
});

function monitor(t, options = {}, context = fakeContext(tempDir())) {
  const m = h.facade.RumMonitor.create(context, {
    applicationId: 'app-ets-host',
    service: 'ets-host',
    version: '1.0.0',
    keepAliveIntervalMs: 0,
    ...options
  });
  t.after(() => m.stop());
  return m;
}

/** Counts calls of a native method (on the class the facade constructs), for one test. */
function spy(t, method) {
  const proto = h.native.RumPipeline.prototype;
  const original = proto[method];
  const calls = [];
  proto[method] = function (...args) {
    calls.push(args);
    return original.apply(this, args);
  };
  t.after(() => {
    proto[method] = original;
  });
  return calls;
}

const ofType = (docs, type) => docs.filter((d) => d.type === type);

test('redactContext (an ArkTS-typed mapper) removes attribute keys from every document', (t) => {
  const m = monitor(t);
  m.addAttribute('email', 'global@example.com');
  m.setEventMapper(h.facade.redactContext(['email', 'token']));
  m.startView('v', 'V');
  m.addAction('tap', 'login', { email: 'a@b.c', token: 't-1', plan: 'pro' });
  m.addError('failed', 'custom', undefined, { token: 't-2', code: 7 });
  m.flush();
  const docs = drainBatches(m).filter((d) => d.type !== 'view');
  assert.deepEqual(docs.map((d) => d.type), ['action', 'error']);
  assert.deepEqual(docs[0].context, { plan: 'pro' });
  assert.deepEqual(docs[1].context, { code: 7 });
});

test('the facade is built from ets/ and exports what Index.ets promises', () => {
  for (const name of ['RumMonitor', 'RumAction', 'RumError', 'RumResource', 'RumView', 'RumUploader',
    'buildSyncedMessageActions', 'buildActionsOnTaskPool', 'rumAttributes', 'redactContext']) {
    assert.equal(typeof h.facade[name], 'function', `${name} is exported`);
  }
  assert.equal(h.facade.RumMonitor.KEEP_ALIVE_INTERVAL_MS, 30000);
});

test('batches are stored under the context’s filesDir, or under options.storageDir', (t) => {
  const filesDir = tempDir();
  const m = monitor(t, {}, fakeContext(filesDir));
  m.addAction('tap', 'stored');
  m.flush();
  assert.ok(existsSync(join(filesDir, 'rum')), '<filesDir>/rum exists');
  assert.ok(readdirSync(join(filesDir, 'rum')).some((f) => /\.ndjson(\.gz)?$/.test(f)), 'with a batch file');

  const storageDir = tempDir();
  const other = monitor(t, { storageDir }, fakeContext(tempDir()));
  other.addAction('tap', 'elsewhere');
  other.flush();
  assert.ok(readdirSync(join(storageDir, 'rum')).some((f) => /\.ndjson(\.gz)?$/.test(f)));
});

test('plain-argument calls produce the documented documents', (t) => {
  const m = monitor(t);
  m.startView('home', 'Home', { tab: 'inbox' });
  m.addAction('tap', 'compose', { button: 'fab' });
  m.addError('sync failed', 'network', 'at sync()', { attempt: 2 });
  m.startResource('r1', 'GET', 'https://example.test/api', { cache: false });
  m.stopResource('r1', 200, 'fetch', 1234);
  assert.equal(m.flush(), true);
  const docs = drainBatches(m);

  const [action] = ofType(docs, 'action').filter((d) => d.action.target.name === 'compose');
  assert.ok(action, 'the action was written');
  assert.equal(action.action.type, 'tap');
  assert.equal(action.context.button, 'fab');
  assert.equal(action.application.id, 'app-ets-host');

  const [error] = ofType(docs, 'error');
  assert.equal(error.error.message, 'sync failed');
  assert.equal(error.error.source, 'network');
  assert.equal(error.error.stack, 'at sync()');
  assert.equal(error.context.attempt, 2);

  const [resource] = ofType(docs, 'resource');
  assert.equal(resource.resource.url, 'https://example.test/api');
  assert.equal(resource.resource.method, 'GET');
  assert.equal(resource.resource.status_code, 200);
  assert.equal(resource.resource.type, 'fetch');
  assert.equal(resource.resource.size, 1234);

  assert.ok(ofType(docs, 'view').some((d) => d.view.name === 'Home'), 'the view was written');
});

test('Sendable events are accepted in place of plain arguments', (t) => {
  const { RumAction, RumError, RumResource, RumView, rumAttributes } = h.facade;
  const m = monitor(t);
  const viewAttrs = rumAttributes();
  viewAttrs.set('tab', 'settings');
  m.startView(new h.facade.RumView('settings', 'Settings', viewAttrs));
  m.addAction(new RumAction('click', 'toggle dark mode').with('enabled', true).with('level', 3));
  m.addError(new RumError('disk full', 'source').with('free', 0));
  const resource = new RumResource('img-1', 'GET', 'https://cdn.example.test/a.png').with('lazy', true);
  m.startResource(resource);
  m.stopResource(resource.complete(404, 'image'));
  m.flush();
  const docs = drainBatches(m);

  const [action] = ofType(docs, 'action');
  assert.equal(action.action.type, 'click');
  assert.equal(action.action.target.name, 'toggle dark mode');
  assert.equal(action.context.enabled, true);
  assert.equal(action.context.level, 3);

  const [error] = ofType(docs, 'error');
  assert.equal(error.error.message, 'disk full');
  assert.equal(error.error.source, 'source');
  assert.equal(error.context.free, 0);

  const [res] = ofType(docs, 'resource');
  assert.equal(res.resource.status_code, 404);
  assert.equal(res.resource.type, 'image');
  assert.equal(res.context.lazy, true);
  assert.ok(res.resource.size === undefined || res.resource.size === null, 'an unknown size (-1) is not reported');

  assert.ok(ofType(docs, 'view').some((d) => d.view.name === 'Settings' && d.context.tab === 'settings'));
});

test('Sendable events built from another thread\'s copy of their classes are accepted', async (t) => {
  // On a device a module is loaded once per thread: an event a TaskPool task built is an instance
  // of that thread's RumAction, not of the UI thread's. A second instance of the events module
  // stands in for the task's copy.
  const other = await import(new URL('src/main/ets/events/RumEvents.js?thread=taskpool', h.indexUrl).href);
  assert.notEqual(other.RumAction, h.facade.RumAction, 'a separate copy of the classes');
  const m = monitor(t);
  m.startView(new other.RumView('cart', 'Cart'));
  m.addAction(new other.RumAction('tap', 'checkout').with('items', 2));
  m.addError(new other.RumError('card declined', 'network'));
  const resource = new other.RumResource('pay-1', 'POST', 'https://pay.example.test/charge');
  m.startResource(resource);
  m.stopResource(resource.complete(200, 'fetch'));
  m.flush();
  const docs = drainBatches(m);
  const [action] = ofType(docs, 'action');
  assert.equal(action.action.target.name, 'checkout');
  assert.equal(action.context.items, 2);
  assert.equal(ofType(docs, 'error')[0].error.message, 'card declined');
  assert.equal(ofType(docs, 'resource')[0].resource.status_code, 200);
  assert.ok(ofType(docs, 'view').some((d) => d.view.name === 'Cart'));
});

test('addActions hands a whole collections.Array to the pipeline in one native call', (t) => {
  const { RumAction } = h.facade;
  const { collections } = h;
  const batchCalls = spy(t, 'addActions');
  const singleCalls = spy(t, 'addAction');
  const m = monitor(t);
  const actions = new collections.Array();
  assert.equal(Array.isArray(actions), false, 'as on the device, a collections.Array is not a JS Array');
  for (let i = 0; i < 1000; i++) {
    const attrs = new collections.Map();
    attrs.set('i', i);
    actions.push(new RumAction('custom', `burst ${i}`, attrs));
  }
  m.addActions(actions);
  assert.equal(batchCalls.length, 1, 'one native call');
  assert.equal(batchCalls[0][0], actions, 'the array itself is passed, not a copy');
  assert.equal(singleCalls.length, 0, 'no per-action native calls');
  m.flush();
  const names = ofType(drainBatches(m), 'action').map((d) => d.action.target.name);
  assert.deepEqual(names, Array.from(actions, (a) => a.name), 'every action once, in call order');
});

test('missing plain arguments throw a TypeError naming the method and the argument', (t) => {
  const m = monitor(t);
  assert.throws(() => m.addAction('tap'), { name: 'TypeError', message: /addAction.*name/ });
  assert.throws(() => m.startView('k'), { name: 'TypeError', message: /startView.*name/ });
  assert.throws(() => m.addError('oops'), { name: 'TypeError', message: /addError.*source/ });
  assert.throws(() => m.startResource('k', 'GET'), { name: 'TypeError', message: /startResource.*url/ });
  assert.throws(() => m.stopResource('k', 200), { name: 'TypeError', message: /stopResource.*kind/ });
});

test('bad values are refused by the pipeline with a RangeError', (t) => {
  const m = monitor(t);
  assert.throws(() => m.addAction('wave', 'hello'), RangeError);
  assert.throws(() => m.addAction(new h.facade.RumAction('wave', 'hello')), RangeError);
  assert.throws(() => m.setTrackingConsent('maybe'), RangeError);
});

test('the user and global attributes reach later documents', (t) => {
  const m = monitor(t);
  m.setUser({ id: 'u-1', name: 'Ann', extra: { plan: 'pro' } });
  m.addAttribute('build', '42');
  m.addAction('tap', 'after user');
  m.removeAttribute('build');
  m.setUser(null);
  m.addAction('tap', 'after clear');
  m.flush();
  const actions = ofType(drainBatches(m), 'action');
  const after = actions.find((d) => d.action.target.name === 'after user');
  assert.equal(after.usr.id, 'u-1');
  assert.equal(after.usr.name, 'Ann');
  assert.equal(after.usr.plan, 'pro');
  assert.equal(after.context.build, '42');
  const cleared = actions.find((d) => d.action.target.name === 'after clear');
  assert.equal(cleared.usr, undefined);
  assert.equal(cleared.context.build, undefined);
  assert.equal(typeof m.sessionId(), 'string');
});

test('an event mapper can change or drop documents', (t) => {
  const m = monitor(t);
  m.setEventMapper((doc) => {
    if (doc.type === 'action' && doc.action.target.name === 'secret') {
      return null;
    }
    doc.context = { ...doc.context, mapped: true };
    return doc;
  });
  m.addAction('tap', 'secret');
  m.addAction('tap', 'public');
  m.setEventMapper(null);
  m.addAction('tap', 'unmapped');
  m.flush();
  const actions = ofType(drainBatches(m), 'action');
  assert.deepEqual(actions.map((d) => d.action.target.name), ['public', 'unmapped']);
  assert.equal(actions[0].context.mapped, true);
  assert.equal(actions[1].context.mapped, undefined);
});

test('going to the background flushes the pipeline', (t) => {
  const flushes = spy(t, 'flush');
  const context = fakeContext(tempDir());
  const m = monitor(t, { pipeline: { batchWindowMs: 600000 } }, context);
  assert.equal(context.listenerCount(), 1, 'the facade listens to applicationStateChange');
  m.addAction('tap', 'before background');
  assert.equal(m.nextBatch(), null, 'nothing is sealed before the flush');
  context.background();
  assert.equal(flushes.length, 1, 'one flush on background');
  const docs = drainBatches(m);
  assert.ok(ofType(docs, 'action').some((d) => d.action.target.name === 'before background'));
});

test('no flush on background when flushOnBackground is false', (t) => {
  const flushes = spy(t, 'flush');
  const context = fakeContext(tempDir());
  monitor(t, { flushOnBackground: false }, context);
  context.background();
  assert.equal(flushes.length, 0);
});

test('without keepAliveIntervalMs the keep-alive runs every 30 s', (t) => {
  const original = globalThis.setInterval;
  const intervals = [];
  globalThis.setInterval = (fn, ms, ...rest) => {
    intervals.push(ms);
    return original(fn, ms, ...rest);
  };
  try {
    const m = h.facade.RumMonitor.create(fakeContext(tempDir()), { applicationId: 'app-keep-alive' });
    t.after(() => m.stop());
  } finally {
    globalThis.setInterval = original;
  }
  assert.deepEqual(intervals, [30000]);
});

test('keep-alive runs on its interval in the foreground, pauses in the background, ends at stop', async (t) => {
  const keepAlives = spy(t, 'keepAlive');
  const context = fakeContext(tempDir());
  const m = monitor(t, { keepAliveIntervalMs: 25 }, context);
  await until(() => keepAlives.length >= 2, 2000, 'two keep-alives');
  context.background();
  const paused = keepAlives.length;
  await new Promise((r) => setTimeout(r, 120));
  assert.equal(keepAlives.length, paused, 'no keep-alive in the background');
  context.foreground();
  await until(() => keepAlives.length > paused, 2000, 'keep-alive after foreground');
  m.stop();
  assert.equal(context.listenerCount(), 0, 'stop removes the application state listener');
  const stopped = keepAlives.length;
  await new Promise((r) => setTimeout(r, 120));
  assert.equal(keepAlives.length, stopped, 'no keep-alive after stop');
});

test('after stop() a call reaches the pipeline at the end of its turn, not after a stream\'s linger', async (t) => {
  const m = monitor(t);
  m.startView('home', 'Home');
  m.addAction('tap', 'before-stop');
  m.stop();
  const before = m.stats();
  m.addAction('tap', 'after-stop'); // within the linger of the stop's own handover: a stream, were it not stopped
  await Promise.resolve();
  await Promise.resolve();
  const after = m.stats();
  assert.equal(after.queueLength, 0, 'nothing waits in the capture buffer');
  assert.equal(after.callsInline + after.callsQueued - before.callsInline - before.callsQueued, 1, 'the call was processed');
});

test('pipeline.captureLingerMs: a stream\'s calls wait for it (by default none does); a bad value throws before anything is made', async (t) => {
  const nextTurn = () => new Promise((r) => setTimeout(r, 0));
  const waiting = async (m) => {
    m.startView('home', 'Home');
    await nextTurn(); // the view crosses at the end of its turn: the next call is a stream's
    m.addAction('tap', 'streamed');
    await Promise.resolve();
    await Promise.resolve();
    return m.stats().queueLength;
  };
  assert.equal(await waiting(monitor(t)), 0, 'by default the call crossed at the end of its turn');
  assert.equal(await waiting(monitor(t, { pipeline: { captureLingerMs: 100 } })), 1, 'with a linger it waits for it');
  const filesDir = tempDir();
  const create = (captureLingerMs) => () =>
    h.facade.RumMonitor.create(fakeContext(filesDir), { applicationId: 'app-ets-host', keepAliveIntervalMs: 0, pipeline: { captureLingerMs } });
  assert.throws(create(-1), { name: 'RangeError', message: 'RumMonitor: pipeline.captureLingerMs must be from 0 to 1000 ms, got -1' });
  assert.throws(create(5000), { name: 'RangeError', message: /got 5000$/ });
  assert.throws(create(Number.NaN), { name: 'RangeError', message: /got NaN$/ });
  assert.throws(create('100'), { name: 'TypeError', message: 'RumMonitor: pipeline.captureLingerMs must be a number, got string' });
  assert.equal(existsSync(join(filesDir, 'rum')), false, 'no pipeline was made: its storage directory does not exist');
});

test('captureStats() reports the capture buffer: calls buffered, crossings, the longest handover', async (t) => {
  const m = monitor(t);
  const idle = m.captureStats();
  assert.deepEqual(idle, { buffered: 0, handovers: 0, handoverErrors: 0, longestHandoverMs: 0, handoverMs: 0 });
  m.startView('home', 'Home');
  for (let i = 0; i < 20; i++) m.addAction('tap', `t-${i}`);
  assert.equal(m.captureStats().buffered, 21, 'the calls wait in the buffer until their turn ends');
  assert.equal(m.stats().queueLength, 21, 'stats().queueLength counts them');
  await new Promise((r) => setTimeout(r, 0));
  const after = m.captureStats();
  assert.equal(after.buffered, 0);
  assert.ok(after.handovers >= 1, `handed over in ${after.handovers} crossings`);
  assert.equal(after.handoverErrors, 0);
  assert.ok(after.longestHandoverMs >= 0 && Number.isFinite(after.longestHandoverMs), `longestHandoverMs ${after.longestHandoverMs}`);
  assert.ok(after.handoverMs >= after.longestHandoverMs, `handoverMs ${after.handoverMs}`);
});

test('stats() reports the counters in camelCase', (t) => {
  const m = monitor(t);
  m.addAction('tap', 'counted');
  m.flush();
  const stats = m.stats();
  for (const field of ['callsInline', 'callsQueued', 'queueLength', 'queueHighWater', 'slicesRun', 'longestSliceUs',
    'longestInlineTurnUs', 'drains', 'documentsWritten', 'viewWritesSaved', 'bytesOnDisk', 'batchesOnDisk']) {
    assert.equal(typeof stats[field], 'number', `stats().${field}`);
  }
  assert.ok(stats.callsInline + stats.callsQueued >= 1);
  assert.ok(stats.documentsWritten >= 1);
});
