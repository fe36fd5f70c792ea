// Order, exactly-once and coalescing through the real library; every synchronous drain point;
// user and consent semantics; the inline path after stop() (docs/design.md "Dispatch rules",
// "Storage rules": consent).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  actionSeqs,
  burst,
  burstUntilQueued,
  busyWait,
  drainBatches,
  ofType,
  openPipeline,
  range,
  readBatchFiles,
  until,
  waitDrained,
} from './lib/helpers.mjs';

const BIG_QUOTA = { diskQuotaBytes: 64 * 1024 * 1024 };

test('a 3,700-action burst: every action once, in call order, views coalesced', async (t) => {
  const { p, dir } = openPipeline(t, BIG_QUOTA);
  p.startView('list', 'List');
  const tStart = Date.now();
  burst(p, 3700);
  const tEnd = Date.now();
  await waitDrained(p);
  assert.equal(p.flush(), true);

  const { docs } = readBatchFiles(dir);
  const actions = ofType(docs, 'action');
  assert.deepEqual(actionSeqs(docs), range(0, 3700), 'every action exactly once, in call order');
  assert.deepEqual(
    actions.map((a) => a.action.target.name),
    range(0, 3700).map((i) => `a${i}`),
  );
  assert.equal(new Set(actions.map((a) => a.action.id)).size, 3700, 'action ids unique');
  for (let i = 1; i < actions.length; i++) {
    assert.ok(actions[i].date >= actions[i - 1].date, 'dates follow call order');
  }
  assert.ok(actions[0].date >= tStart && actions.at(-1).date <= tEnd, 'dates are call times within the loop');

  const views = ofType(docs, 'view');
  assert.ok(views.length < actions.length, `fewer view documents (${views.length}) than actions (${actions.length})`);
  const s = p.stats();
  assert.ok(s.viewWritesSaved > 0, `coalescing saved view writes (viewWritesSaved ${s.viewWritesSaved})`);
  const versions = views.map((v) => v._dd.document_version);
  for (let i = 1; i < versions.length; i++) assert.ok(versions[i] > versions[i - 1], 'document_version increases');
  assert.equal(views.at(-1).view.action.count, 3700, 'the last view document counts every action');
});

test('queued events keep their call-time date, not their processing time', (t) => {
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  p.startView('v', 'Dates');
  const tStart = Date.now();
  const n = burstUntilQueued(p, { min: 200 });
  const tEnd = Date.now();
  // Hold the thread: nothing queued can be processed before flush() below.
  busyWait(40);
  assert.ok(p.stats().queueLength >= 200);
  assert.equal(p.flush(), true);
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.equal(actions.length, n);
  for (const a of actions) {
    assert.ok(a.date >= tStart && a.date <= tEnd, `action ${a.context.seq} dated ${a.date}, called in [${tStart}, ${tEnd}]`);
  }
});

test('the queue never exceeds queueCapacity and nothing is dropped at the bound', async (t) => {
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, queueCapacity: 50, ...BIG_QUOTA });
  p.startView('v', 'Bound');
  burst(p, 3000);
  const s = p.stats();
  assert.ok(s.queueHighWater <= 50, `queueHighWater ${s.queueHighWater} ≤ queueCapacity 50`);
  assert.ok(s.queueHighWater > 0, 'the queue was used');
  await waitDrained(p);
  assert.equal(p.flush(), true);
  assert.deepEqual(actionSeqs(readBatchFiles(dir).docs), range(0, 3000), 'nothing dropped at the bound, order kept');
});

// Each drain point, after a burst that queued events, leaves the queue empty synchronously.
const DRAIN_POINTS = {
  addError: (p) => p.addError('drain', 'custom'),
  markCrash: (p) => p.markCrash('drain'),
  keepAlive: (p) => p.keepAlive(),
  flush: (p) => p.flush(),
  stop: (p) => p.stop(),
  sessionId: (p) => p.sessionId(),
  stopSession: (p) => p.stopSession(),
  setUser: (p) => p.setUser({ id: 'drain' }),
  setTrackingConsent: (p) => p.setTrackingConsent('granted'),
  // The view stopped behind the queue: this action will open a launch view.
  'addAction (opening a launch view)': (p) => {
    p.stopView('v');
    p.addAction('custom', 'after the view', { seq: 1e9 });
  },
};

for (const [name, call] of Object.entries(DRAIN_POINTS)) {
  test(`${name.includes(' ') ? name : `${name}()`} drains the queue synchronously`, async (t) => {
    const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
    p.startView('v', 'Drain');
    const n = burstUntilQueued(p, { min: 100 });
    const before = p.stats();
    assert.ok(before.queueLength >= 100);
    call(p);
    const after = p.stats();
    assert.equal(after.queueLength, 0, `${name}() left ${after.queueLength} events queued`);
    assert.ok(after.drains > before.drains, `${name}() counts a drain (drains ${before.drains} → ${after.drains})`);
    if (name !== 'stop') assert.equal(p.flush(), true);
    // stop() may hand the last writes to the writer without waiting: give it a moment.
    if (name === 'stop') await until(() => actionSeqs(readBatchFiles(dir).docs).length >= n, 5000, 'the writes after stop()');
    const docs = readBatchFiles(dir).docs;
    const expected = name.startsWith('addAction') ? [...range(0, n), 1e9] : range(0, n);
    assert.deepEqual(actionSeqs(docs), expected, `${name}(): every queued action written, in order`);
    if (name === 'addError' || name === 'markCrash') {
      const errIdx = docs.findIndex((d) => d.type === 'error');
      assert.ok(errIdx >= 0, 'the error is written');
      assert.equal(ofType(docs.slice(0, errIdx), 'action').length, n, `${name}() sees every earlier call`);
    }
  });
}

test('events queued before setUser carry the old user, later ones the new user', (t) => {
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  p.setUser({ id: 'old' });
  p.startView('v', 'Users');
  const n = burstUntilQueued(p, { min: 200 });
  assert.ok(p.stats().queueLength >= 200);
  p.setUser({ id: 'new', name: 'New' });
  const m = burst(p, 300, { start: n });
  p.setUser(null);
  burst(p, 10, { start: m });
  assert.equal(p.flush(), true);
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.deepEqual(actionSeqs(actions), range(0, m + 10));
  for (const a of actions) {
    const seq = a.context.seq;
    if (seq < n) assert.deepEqual(a.usr, { id: 'old' }, `action ${seq} was called before setUser`);
    else if (seq < m) assert.deepEqual(a.usr, { id: 'new', name: 'New' }, `action ${seq} was called after setUser`);
    else assert.equal(a.usr, undefined, `action ${seq} was called after setUser(null)`);
  }
});

test('pending consent: nothing in batches until granted, then everything', (t) => {
  const { p, dir } = openPipeline(t, { trackingConsent: 'pending', turnBudgetMs: 1, ...BIG_QUOTA });
  p.startView('v', 'Consent');
  const n = burstUntilQueued(p, { min: 100 });
  assert.equal(p.flush(), true);
  assert.equal(readBatchFiles(dir).docs.length, 0, 'no document in batch files while consent is pending');
  assert.equal(p.nextBatch(), null, 'no batch to upload while consent is pending');

  p.setTrackingConsent('granted');
  const m = burst(p, 20, { start: n });
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  assert.deepEqual(actionSeqs(docs), range(0, m), 'every pre-consent action once, in order, then the later ones');
  assert.ok(ofType(docs, 'view').length > 0, 'view documents kept too');
  const uploaded = drainBatches(p).flatMap((b) => b.docs);
  assert.deepEqual(actionSeqs(uploaded), range(0, m), 'and through the upload API');
});

test('not_granted drops the pre-consent buffer and new events', (t) => {
  const { p, dir } = openPipeline(t, { trackingConsent: 'pending' });
  p.startView('v', 'Consent');
  burst(p, 30, { start: 0 }); // buffered, then dropped
  p.setTrackingConsent('not_granted');
  burst(p, 30, { start: 1000 }); // dropped
  assert.equal(p.flush(), true);
  assert.equal(readBatchFiles(dir).docs.length, 0, 'nothing written under not_granted');
  assert.equal(p.nextBatch(), null);
  const s = p.stats();
  const droppedConsent = Object.entries(s).filter(([k]) => /^dropped/i.test(k) && /consent/i.test(k));
  assert.ok(droppedConsent.length > 0, `stats() has a dropped-for-consent counter (keys: ${Object.keys(s)})`);
  assert.ok(
    droppedConsent.some(([, v]) => v > 0),
    `a dropped-for-consent counter grew: ${JSON.stringify(Object.fromEntries(droppedConsent))}`,
  );

  p.setTrackingConsent('granted');
  burst(p, 5, { start: 2000 });
  assert.equal(p.flush(), true);
  assert.deepEqual(actionSeqs(readBatchFiles(dir).docs), range(2000, 2005), 'only events called after granting are written');
});

test('events queued while granted are kept when consent is withdrawn', (t) => {
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, ...BIG_QUOTA });
  p.startView('v', 'Consent');
  const n = burstUntilQueued(p, { min: 100 });
  p.setTrackingConsent('not_granted');
  burst(p, 50, { start: n });
  assert.equal(p.flush(), true);
  assert.deepEqual(actionSeqs(readBatchFiles(dir).docs), range(0, n), 'queued events keep the consent of their call');
});

test('after stop() every call is processed inline', (t) => {
  const { p } = openPipeline(t, { turnBudgetMs: 1 });
  p.startView('v', 'Stopped');
  burstUntilQueued(p, { min: 50 });
  p.stop();
  const before = p.stats();
  assert.equal(before.queueLength, 0);
  burst(p, 2000, { start: 100_000 });
  const after = p.stats();
  assert.equal(after.callsQueued, before.callsQueued, 'callsQueued does not grow after stop()');
  assert.equal(after.queueLength, 0, 'nothing waits in the queue after stop()');
  assert.equal(after.callsInline - before.callsInline, 2000, 'every call after stop() is processed inline');
});
