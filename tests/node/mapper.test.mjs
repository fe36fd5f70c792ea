// The event mapper (docs/design.md "Dispatch rules"): run for each non-view document; returns
// the document (maybe changed) or null to drop it; a throwing mapper keeps the document unchanged
// and counts an error, and nothing is thrown to the caller or into the timer; a mapper that
// changes the user must not break the pipeline.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  actionSeqs,
  burst,
  childScript,
  loadNative,
  ofType,
  openPipeline,
  range,
  readBatchFiles,
  runNode,
  tmpDir,
  waitDrained,
} from './lib/helpers.mjs';

const BIG_QUOTA = { diskQuotaBytes: 64 * 1024 * 1024 };

/** Records uncaught exceptions for the duration of a test (a throw into the timer lands there). */
function catchUncaught(t) {
  const seen = [];
  const onError = (e) => seen.push(e);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  t.after(() => {
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  });
  return seen;
}

test('the mapper sees every attribute as an own property, __proto__ included', (t) => {
  const { p, dir } = openPipeline(t);
  let seen = null;
  p.setEventMapper((doc) => {
    seen = doc.context;
    return doc;
  });
  p.startView('v', 'V');
  // JSON.parse makes `__proto__` an own key, as a host's parsed payload would have it.
  p.addAction('tap', 'one', JSON.parse('{"__proto__": "kept", "k": 1}'));
  assert.equal(p.flush(), true);
  assert.deepEqual(Object.getOwnPropertyDescriptor(seen, '__proto__')?.value, 'kept', 'an own property, not the prototype');
  assert.equal(Object.getPrototypeOf(seen), Object.prototype);
  const [a] = ofType(readBatchFiles(dir).docs, 'action');
  assert.equal(Object.getOwnPropertyDescriptor(a.context, '__proto__')?.value, 'kept', 'and written back');
  assert.equal(a.context.k, 1);
});

test('a mapper can change documents and sees no view documents', (t) => {
  const { p, dir } = openPipeline(t);
  const seenTypes = new Set();
  p.setEventMapper((doc) => {
    seenTypes.add(doc.type);
    assert.equal(typeof doc.date, 'number', 'the mapper gets the document as a plain object');
    doc.context.mapped = true;
    if (doc.type === 'action') doc.action.target.name = `${doc.action.target.name}!`;
    return doc;
  });
  p.startView('v', 'Mapped');
  p.addAction('tap', 'one', { k: 1 });
  p.addError('oops', 'console');
  p.startResource('r', 'POST', 'https://x/y');
  p.stopResource('r', 201, 'xhr');
  p.stopView('v');
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  assert.ok(!seenTypes.has('view'), 'view documents never reach the mapper');
  assert.deepEqual([...seenTypes].sort(), ['action', 'error', 'resource']);
  const [a] = ofType(docs, 'action');
  assert.equal(a.action.target.name, 'one!', 'the changed document is written');
  assert.deepEqual(a.context, { k: 1, mapped: true });
  assert.equal(ofType(docs, 'error')[0].context.mapped, true);
  assert.equal(ofType(docs, 'resource')[0].context.mapped, true);
  assert.ok(ofType(docs, 'view').every((v) => !v.context.mapped), 'views are not mapped');

  p.setEventMapper(null);
  p.addAction('tap', 'unmapped');
  assert.equal(p.flush(), true);
  const last = ofType(readBatchFiles(dir).docs, 'action').at(-1);
  assert.equal(last.action.target.name, 'unmapped', 'setEventMapper(null) removes the mapper');
  assert.ok(!('mapped' in last.context));
});

test('a mapper that returns null drops the document', (t) => {
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  p.setEventMapper((doc) => (doc.type === 'action' && doc.context.seq % 2 === 1 ? null : doc));
  p.startView('v', 'Dropping');
  burst(p, 1000);
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  assert.deepEqual(
    actionSeqs(docs),
    range(0, 1000).filter((i) => i % 2 === 0),
    'odd actions dropped, even ones kept in order',
  );
});

test('a throwing mapper: documents written unchanged, mapperErrors counted, nothing thrown', async (t) => {
  const uncaught = catchUncaught(t);
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  let calls = 0;
  p.setEventMapper((doc) => {
    calls++;
    doc.context.tampered = true; // mutation before the throw must not leak into the document
    throw new Error('mapper exploded');
  });
  p.startView('v', 'Throwing');
  const before = p.stats().mapperErrors;
  // Inline: the caller must not see the mapper's exception.
  assert.doesNotThrow(() => p.addAction('tap', 'inline', { seq: -1 }));
  // Queued: the mapper runs inside slices, on timers.
  burst(p, 1500);
  assert.ok(p.stats().queueLength > 0, 'part of the burst is queued, so the mapper runs in slices');
  await waitDrained(p);
  assert.equal(p.flush(), true);
  const s = p.stats();
  assert.equal(uncaught.length, 0, `nothing thrown into the event loop: ${uncaught.map((e) => e?.message)}`);
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.deepEqual(actionSeqs(actions), [-1, ...range(0, 1500)], 'every document written despite the mapper');
  assert.ok(actions.every((a) => !('tampered' in a.context)), 'written unchanged');
  assert.equal(calls, 1501, 'the mapper ran once per action');
  assert.equal(s.mapperErrors - before, 1501, `mapperErrors counts each failure (${before} → ${s.mapperErrors})`);
  assert.ok(s.slicesRun > 1, 'slices kept running after the first failure');
});

test('a mapper returning a non-object counts an error and keeps the document', (t) => {
  const { p, dir } = openPipeline(t);
  p.setEventMapper(() => 42);
  p.startView('v', 'Weird');
  p.addAction('tap', 'kept');
  assert.equal(p.flush(), true);
  assert.equal(ofType(readBatchFiles(dir).docs, 'action')[0]?.action.target.name, 'kept');
  assert.equal(p.stats().mapperErrors, 1);
});

test('a mapper that calls setUser inline: no crash, later documents carry the new user', (t) => {
  const uncaught = catchUncaught(t);
  const { p, dir } = openPipeline(t);
  let switched = 0;
  p.setEventMapper((doc) => {
    if (doc.type === 'action' && doc.action.target.name === 'switch' && switched++ === 0) {
      p.setUser({ id: 'new' });
    }
    return doc;
  });
  p.setUser({ id: 'old' });
  p.startView('v', 'Users');
  p.addAction('tap', 'before');
  p.addAction('tap', 'switch');
  p.addAction('tap', 'after');
  assert.equal(p.flush(), true);
  assert.equal(switched, 1, 'the mapper saw the switch action once');
  assert.equal(p.stats().mapperErrors, 0, 'setUser inside the mapper did not throw');
  assert.equal(uncaught.length, 0);
  const byName = Object.fromEntries(ofType(readBatchFiles(dir).docs, 'action').map((a) => [a.action.target.name, a]));
  assert.deepEqual(Object.keys(byName).sort(), ['after', 'before', 'switch']);
  assert.deepEqual(byName.before.usr, { id: 'old' });
  assert.deepEqual(byName.after.usr, { id: 'new' }, 'documents after the change carry the new user');
});

test('a mapper that calls setUser during a slice: no crash, every action once, later ones carry the new user', async (t) => {
  const uncaught = catchUncaught(t);
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  let switchedInSlice = false;
  let inSync = true;
  p.setEventMapper((doc) => {
    if (doc.type === 'action' && doc.context.seq === 1500) {
      switchedInSlice = !inSync;
      p.setUser({ id: 'new' });
    }
    return doc;
  });
  p.setUser({ id: 'old' });
  p.startView('v', 'Users');
  burst(p, 2500);
  inSync = false;
  assert.ok(p.stats().queueLength > 0);
  await waitDrained(p);
  p.addAction('tap', 'later', { seq: 99_999 });
  assert.equal(p.flush(), true);
  assert.equal(uncaught.length, 0, `nothing thrown into the event loop: ${uncaught.map((e) => e?.message)}`);
  assert.equal(p.stats().mapperErrors, 0, 'setUser inside the mapper did not throw');
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.deepEqual(actionSeqs(actions), [...range(0, 2500), 99_999], 'every action once, in order');
  assert.ok(switchedInSlice, 'the mapper changed the user from inside a deferred slice');
  for (const a of actions) {
    if (a.context.seq < 1500) assert.deepEqual(a.usr, { id: 'old' }, `action ${a.context.seq} processed before the switch`);
  }
  assert.deepEqual(actions.at(-1).usr, { id: 'new' }, 'a document called after the change carries the new user');
});

test('calls made from inside the mapper are not lost and do not break the pipeline', (t) => {
  const uncaught = catchUncaught(t);
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  p.setEventMapper((doc) => {
    if (doc.type === 'action' && doc.action.target.name.startsWith('origin')) {
      p.addAction('tap', `echo-${doc.action.target.name}`);
      p.stats();
      p.sessionId();
    }
    return doc;
  });
  p.startView('v', 'Reentrant');
  for (let i = 0; i < 3; i++) p.addAction('tap', `origin${i}`);
  burst(p, 1000);
  assert.equal(p.flush(), true);
  assert.equal(p.stats().mapperErrors, 0, 'no call from inside the mapper threw');
  assert.equal(uncaught.length, 0);
  const names = ofType(readBatchFiles(dir).docs, 'action').map((a) => a.action.target.name);
  for (let i = 0; i < 3; i++) {
    assert.equal(names.filter((n) => n === `echo-origin${i}`).length, 1, `the action added by the mapper for origin${i} is written once`);
    assert.ok(names.indexOf(`echo-origin${i}`) > names.indexOf(`origin${i}`), 'after the action that triggered it');
  }
  assert.equal(names.filter((n) => /^a\d+$/.test(n)).length, 1000, 'the burst is intact');
});

test('a mapper throwing a value whose message getter throws: nothing thrown, slices keep running', async (t) => {
  const uncaught = catchUncaught(t);
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  let armed = false;
  p.setEventMapper((doc) => {
    if (!armed) return doc;
    // eslint-disable-next-line no-throw-literal
    throw {
      get message() {
        throw new Error('message getter exploded');
      },
    };
  });
  p.startView('v', 'Hostile throw');
  burst(p, 1500);
  assert.ok(p.stats().queueLength > 0, 'part of the burst is queued, so the mapper also runs in slices');
  armed = true;
  assert.doesNotThrow(() => p.addAction('tap', 'x', { seq: 1500 }), 'the caller does not see the mapper failure');
  await waitDrained(p, 10_000);
  assert.equal(uncaught.length, 0, `nothing thrown into the event loop: ${uncaught.map((e) => e?.message)}`);
  assert.equal(p.flush(), true);
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.deepEqual(actionSeqs(actions), range(0, 1501), 'every action written, in order');
  assert.ok(p.stats().mapperErrors >= 1, 'the failures are counted');
});

test('a drain through the mapper does not keep every mapped document alive until it ends', async (t) => {
  loadNative();
  const dir = tmpDir(t);
  const count = 80_000;
  const r = await runNode(['--max-old-space-size=48', childScript('child-mapper-drain.mjs'), dir, String(count)], { timeoutMs: 60_000 });
  assert.equal(r.timedOut, false, 'the drain finished');
  assert.equal(r.signal, null, `the process died with ${r.signal} (stderr: ${r.stderr.slice(0, 400)})`);
  assert.equal(r.code, 0, `the child failed (stderr: ${r.stderr.slice(0, 400)})`);
  const res = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.ok(res.queued > count / 2, `most of the burst was queued for the drain (${res.queued})`);
  assert.equal(res.flushed, true);
  assert.equal(res.mapperErrors, 0);
  assert.ok(res.mapped >= count, `the mapper saw every action (${res.mapped})`);
});

test('stop() called from inside the mapper stops queuing', (t) => {
  const uncaught = catchUncaught(t);
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  let stopped;
  p.setEventMapper((doc) => {
    if (stopped === undefined && doc.type === 'action') stopped = p.stop();
    return doc;
  });
  p.startView('v', 'Stop inside');
  p.addAction('tap', 'stopper', { seq: -1 });
  assert.equal(stopped, true, 'stop() returned true from inside the mapper');
  const queuedBefore = p.stats().callsQueued;
  burst(p, 3000);
  const s = p.stats();
  assert.equal(s.callsQueued, queuedBefore, 'after stop() every call is processed on the caller\'s turn');
  assert.equal(s.queueLength, 0);
  assert.equal(uncaught.length, 0);
  assert.equal(p.flush(), true);
  assert.deepEqual(actionSeqs(ofType(readBatchFiles(dir).docs, 'action')), [-1, ...range(0, 3000)]);
});

test('a mapper changes documents that carry the deepest attributes accepted', (t) => {
  const { p, dir } = openPipeline(t);
  // 16 levels: the deepest attribute value addAction accepts.
  let deep = 1;
  for (let i = 0; i < 15; i++) deep = { d: deep };
  p.setEventMapper((doc) => {
    doc.context.redacted = true;
    return doc;
  });
  p.addAction('tap', 'deep', { deep });
  assert.equal(p.flush(), true);
  assert.equal(p.stats().mapperErrors, 0, 'the mapped document was read back');
  const [a] = ofType(readBatchFiles(dir).docs, 'action');
  assert.equal(a.context.redacted, true, "the mapper's change is written, not the unchanged document");
});

test('setEventMapper from inside the mapper is a plain Error naming the method, and changes nothing', (t) => {
  const { p, dir } = openPipeline(t);
  const seen = [];
  p.setEventMapper((doc) => {
    try {
      p.setEventMapper(null);
    } catch (e) {
      seen.push(e);
    }
    doc.context = { ...doc.context, mapped: true };
    return doc;
  });
  p.startView('v', 'Nested');
  p.addAction('tap', 'first');
  p.addAction('tap', 'second');
  assert.equal(p.flush(), true);
  assert.equal(seen.length, 2, 'thrown at each attempt');
  for (const e of seen) {
    assert.equal(e.constructor, Error, `a plain Error, not a ${e.constructor.name}: the arguments were fine`);
    assert.match(e.message, /setEventMapper: cannot be called from inside the event mapper/);
  }
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.deepEqual(actions.map((a) => a.context.mapped), [true, true], 'the mapper stayed installed');
});
