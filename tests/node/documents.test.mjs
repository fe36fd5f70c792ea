// The whole interface end to end: every call of the JS interface, the RUM documents it leaves in
// the batch files after flush() (docs/design.md "Documents"), and the upload API (nextBatch /
// completeBatch, "Upload side").

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { declaredUnion } from '../shared/dts.mjs';

import {
  APP_ID,
  actionSeqs,
  batchText,
  burst,
  busyWait,
  canonical,
  checkBatchShape,
  drainBatches,
  ofType,
  openPipeline,
  parseNdjson,
  range,
  readBatchFiles,
} from './lib/helpers.mjs';

/** Fields every document has (docs/design.md "Documents"). */
function checkCommon(d, { sessionId, service = 'node-tests', version = '0.0.1' } = {}) {
  const where = `${d.type} document ${JSON.stringify(d).slice(0, 160)}`;
  assert.ok(['view', 'action', 'error', 'resource'].includes(d.type), `${where}: type`);
  assert.ok(Number.isInteger(d.date), `${where}: date is integer ms`);
  assert.equal(d._dd?.format_version, 2, `${where}: _dd.format_version`);
  assert.equal(d._dd?.session?.plan, 1, `${where}: _dd.session.plan`);
  assert.deepEqual(d.application, { id: APP_ID }, `${where}: application`);
  assert.equal(typeof d.session?.id, 'string', `${where}: session.id`);
  assert.ok(d.session.id.length > 0, `${where}: session.id not empty`);
  assert.equal(d.session.type, 'user', `${where}: session.type`);
  if (sessionId) assert.equal(d.session.id, sessionId, `${where}: session.id is sessionId()`);
  assert.equal(typeof d.source, 'string', `${where}: source`);
  assert.ok(d.source.length > 0, `${where}: source not empty`);
  assert.equal(d.service, service, `${where}: service`);
  assert.equal(d.version, version, `${where}: version`);
  assert.equal(typeof d.context, 'object', `${where}: context`);
  assert.ok(d.context !== null && !Array.isArray(d.context), `${where}: context is an object`);
  if (d.type !== 'view') {
    assert.equal(typeof d.view?.id, 'string', `${where}: view.id`);
    assert.equal(typeof d.view?.name, 'string', `${where}: view.name`);
    assert.equal(typeof d.view?.url, 'string', `${where}: view.url`);
  }
}

test('every call of the interface leaves RUM-format documents in the batch files after flush()', (t) => {
  const { p, dir } = openPipeline(t, { service: 'shop', version: '4.5.6', env: 'staging' });

  p.addAttribute('g', 'global');
  p.addAttribute('shared', 'from-global');
  const tViewStart = Date.now();
  p.startView('home-key', 'Home', { viewAttr: 1 });

  const t0 = Date.now();
  p.addAction('tap', 'Buy', { shared: 'from-call', n: 1 });
  const t1 = Date.now();

  p.setUser({ id: 'u1', name: 'Ann', email: 'ann@example.com', extra: { plan: 'pro' } });
  p.addAction('custom', 'After user');

  p.startResource('r1', 'GET', 'https://api.example.com/items', { res: true });
  busyWait(6);
  p.stopResource('r1', 200, 'fetch', 1234);

  const tErr = Date.now();
  p.addError('boom', 'network', 'at f (a.js:1:1)', { e: 1 });
  p.addTiming('first_content');

  p.removeAttribute('g');
  p.addActions([
    { type: 'click', name: 'Batch 1', attributes: { k: 'b1' } },
    { type: 'swipe', name: 'Batch 2' },
  ]);
  p.setUser(null);
  p.addAction('back', 'No user');

  const sessionId = p.sessionId();
  assert.equal(typeof sessionId, 'string', 'sessionId() returns the session id');
  busyWait(3);
  p.stopView('home-key');
  const tViewEnd = Date.now();

  assert.equal(p.flush(), true, 'flush() returns true once everything is written');
  const { docs, files } = readBatchFiles(dir);
  assert.ok(files.length >= 1, 'flush() leaves at least one sealed batch file');
  for (const d of docs) checkCommon(d, { sessionId, service: 'shop', version: '4.5.6' });
  for (const d of docs) {
    assert.equal(d.env, undefined, 'no top-level env: the format has none');
    assert.match(d.ddtags, /(^|,)env:staging(,|$)/, `env is in ddtags when set (${d.ddtags})`);
    assert.match(d.ddtags, /(^|,)service:shop(,|$)/, `service in ddtags (${d.ddtags})`);
    assert.match(d.ddtags, /(^|,)version:4\.5\.6(,|$)/, `version in ddtags (${d.ddtags})`);
    assert.match(d.ddtags, /(^|,)sdk_version:\d+\.\d+\.\d+/, `sdk_version in ddtags (${d.ddtags})`);
  }

  // Actions, in call order.
  const actions = ofType(docs, 'action');
  assert.deepEqual(
    actions.map((a) => [a.action.type, a.action.target.name]),
    [
      ['tap', 'Buy'],
      ['custom', 'After user'],
      ['click', 'Batch 1'],
      ['swipe', 'Batch 2'],
      ['back', 'No user'],
    ],
  );
  for (const a of actions) {
    assert.equal(typeof a.action.id, 'string', 'action.id');
    assert.equal(a.view.name, 'Home', 'an action carries its view');
  }
  assert.equal(new Set(actions.map((a) => a.action.id)).size, actions.length, 'action ids are unique');
  const [buy, afterUser, batch1, batch2, noUser] = actions;
  assert.ok(buy.date >= t0 && buy.date <= t1, `action date ${buy.date} is the call time [${t0}, ${t1}]`);
  assert.deepEqual(buy.context, { g: 'global', shared: 'from-call', n: 1 }, 'context = globals merged with the call (call wins)');
  assert.equal(buy.usr, undefined, 'no usr before setUser');
  assert.deepEqual(afterUser.usr, { id: 'u1', name: 'Ann', email: 'ann@example.com', plan: 'pro' }, 'usr with extra');
  assert.deepEqual(batch1.context, { shared: 'from-global', k: 'b1' }, 'removeAttribute removes the global');
  assert.deepEqual(batch2.context, { shared: 'from-global' });
  assert.equal(noUser.usr, undefined, 'setUser(null) clears the user');

  // The resource.
  const [res] = ofType(docs, 'resource');
  assert.ok(res, 'a resource document');
  assert.equal(typeof res.resource.id, 'string');
  assert.equal(res.resource.type, 'fetch');
  assert.equal(res.resource.url, 'https://api.example.com/items');
  assert.equal(res.resource.method, 'GET');
  assert.equal(res.resource.status_code, 200);
  assert.equal(res.resource.size, 1234);
  assert.ok(res.resource.duration >= 5e6, `resource.duration is ns and covers the 6 ms between the calls: ${res.resource.duration}`);
  assert.ok(res.resource.duration < 60e9, `resource.duration is not absurd: ${res.resource.duration}`);
  assert.equal(res.context.res, true, 'startResource attributes land in context');

  // The error.
  const [err] = ofType(docs, 'error');
  assert.ok(err, 'an error document');
  assert.equal(typeof err.error.id, 'string');
  assert.equal(err.error.message, 'boom');
  assert.equal(err.error.source, 'network');
  assert.equal(err.error.stack, 'at f (a.js:1:1)');
  assert.equal(err.error.is_crash, false);
  assert.equal(err.error.handling, 'handled');
  assert.ok(err.date >= tErr, 'error date is its call time');
  assert.deepEqual(err.context, { g: 'global', shared: 'from-global', e: 1 });
  assert.deepEqual(err.usr, { id: 'u1', name: 'Ann', email: 'ann@example.com', plan: 'pro' });

  // The view: increasing document_version, final counts, inactive after stopView.
  const views = ofType(docs, 'view');
  // A sealed batch keeps the highest version of each view (superseded ones are dropped at seal):
  // one per view per batch, at least the last one.
  assert.ok(views.length >= 1, 'the view is written');
  assert.ok(views.length <= files.length, `at most one version of the view per batch (${views.length} in ${files.length})`);
  assert.ok(p.stats().viewsSuperseded > 0, 'the versions the view went through were superseded at seal');
  const viewId = views[0].view.id;
  assert.equal(typeof viewId, 'string');
  for (const v of views) {
    assert.equal(v.view.id, viewId, 'one view in this test');
    assert.equal(v.view.name, 'Home');
    assert.equal(typeof v.view.url, 'string');
    assert.equal(typeof v.view.time_spent, 'number');
    assert.equal(typeof v.view.is_active, 'boolean');
    for (const k of ['action', 'error', 'resource']) assert.equal(typeof v.view[k]?.count, 'number', `view.${k}.count`);
    assert.equal(typeof v._dd.document_version, 'number');
  }
  const versions = views.map((v) => v._dd.document_version);
  for (let i = 1; i < versions.length; i++) {
    assert.ok(versions[i] > versions[i - 1], `_dd.document_version increases in file order: ${versions}`);
  }
  const last = views.at(-1);
  assert.equal(last.view.is_active, false, 'the last view document after stopView is inactive');
  assert.equal(last.view.action.count, 5);
  assert.equal(last.view.error.count, 1);
  assert.equal(last.view.resource.count, 1);
  assert.ok(last.view.time_spent >= 9e6, `time_spent is ns and covers the 9 ms busy in the view: ${last.view.time_spent}`);
  assert.ok(
    last.view.time_spent <= (tViewEnd - tViewStart + 5) * 1e6,
    `time_spent ${last.view.time_spent} ns is within the view's wall time ${tViewEnd - tViewStart} ms`,
  );
  // Its versions from before stopView were superseded in the same batch; while started it was
  // active (tests/scope_documents.rs checks every version).
  if (views.length > 1) assert.ok(views[0].view.is_active, 'the view is active while started');
  assert.ok(views.every((v) => v.date >= tViewStart && v.date <= tViewEnd), 'view date is the view start');

  // Actions and the error reference the same view id as the view documents.
  for (const d of [...actions, err, res]) assert.equal(d.view.id, viewId);
});

test('markCrash writes a crash error that sees every earlier call', (t) => {
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1 });
  p.startView('v', 'Crashing');
  const next = burst(p, 500);
  p.markCrash('fatal: out of cheese', 'at main (app.js:9:9)');
  assert.equal(p.flush(), true);
  const { docs } = readBatchFiles(dir);
  const errors = ofType(docs, 'error');
  assert.equal(errors.length, 1);
  const [crash] = errors;
  assert.equal(crash.error.message, 'fatal: out of cheese');
  assert.equal(crash.error.stack, 'at main (app.js:9:9)');
  assert.equal(crash.error.is_crash, true);
  assert.equal(typeof crash.error.handling, 'string');
  assert.ok(declaredUnion('ErrorSource').includes(crash.error.source), `crash source ${crash.error.source}`);
  const idx = docs.indexOf(crash);
  const actionsBefore = ofType(docs.slice(0, idx), 'action').length;
  assert.equal(actionsBefore, next, 'every action called before markCrash is written before the crash');
});

test('error details: type, category, handling, a late crash with its own date', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('v', 'Details');
  const happened = Date.now() - 3_600_000;
  p.addError('SIGSEGV', 'source', '#00 pc 0 libc.so', { signo: 11 },
    { type: 'SIGSEGV', isCrash: true, date: happened });
  p.addError('THREAD_BLOCK_6S', 'source', undefined, undefined,
    { type: 'THREAD_BLOCK_6S', category: 'App Hang', handling: 'unhandled' });
  p.addError('plain', 'custom', undefined, undefined, null);
  p.markCrash('boom', 'at f (a.js:1:1)', { type: 'TypeError' });
  assert.equal(p.flush(), true);
  const { docs } = readBatchFiles(dir);
  const [late, hang, plain, crash] = ofType(docs, 'error');
  assert.equal(late.error.type, 'SIGSEGV');
  assert.equal(late.error.is_crash, true);
  assert.equal(late.error.handling, 'unhandled', 'a crash is unhandled unless told otherwise');
  assert.equal(late.date, happened, 'the date is when it happened, not the call');
  assert.equal(hang.error.category, 'App Hang');
  assert.equal(hang.error.is_crash, false);
  assert.equal(hang.error.handling, 'unhandled');
  assert.ok(hang.date >= happened + 3_000_000, 'without a date, the call time');
  assert.equal(plain.error.type, undefined);
  assert.equal(plain.error.category, undefined);
  assert.equal(plain.error.handling, 'handled');
  assert.equal(crash.error.type, 'TypeError');
  assert.equal(crash.error.is_crash, true);
  // A late crash is not this process's: it neither counts on the current view nor closes it; the
  // markCrash after it does both.
  const last = ofType(docs, 'view').at(-1);
  assert.equal(last.view.crash.count, 1);
  assert.equal(last.view.error.count, 4);
});

test('every action type and error source of the interface is accepted and written as given', (t) => {
  const { p, dir } = openPipeline(t);
  const actionTypes = declaredUnion('ActionType');
  assert.ok(actionTypes.length >= 6, `action types from index.d.ts: ${actionTypes}`);
  const errorSources = declaredUnion('ErrorSource');
  p.startView('v', 'Enums');
  for (const type of actionTypes) p.addAction(type, `act-${type}`);
  for (const source of errorSources) p.addError(`err-${source}`, source);
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  assert.deepEqual(
    ofType(docs, 'action').map((a) => [a.action.type, a.action.target.name]),
    actionTypes.map((type) => [type, `act-${type}`]),
  );
  assert.deepEqual(
    ofType(docs, 'error').map((e) => [e.error.source, e.error.message]),
    errorSources.map((source) => [source, `err-${source}`]),
  );
});

test('text round-trips as UTF-8: emoji, CJK, Cyrillic keys; a lone surrogate becomes U+FFFD', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('v', '视图 🚀');
  p.addAction('tap', '点击 😀', { e: '🎉', ключ: 'значение', lone: 'a\uD800b', quote: '"\\\n\t' });
  assert.equal(p.flush(), true);
  const [a] = ofType(readBatchFiles(dir).docs, 'action');
  assert.equal(a.action.target.name, '点击 😀');
  assert.equal(a.view.name, '视图 🚀');
  assert.deepEqual(a.context, { e: '🎉', ключ: 'значение', lone: 'a\uFFFDb', quote: '"\\\n\t' });
});

test('sessionId() matches the documents; stopSession() starts a new session for later events', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('v1', 'One');
  p.addAction('tap', 'first');
  const s1 = p.sessionId();
  assert.equal(typeof s1, 'string');
  p.stopSession();
  p.startView('v2', 'Two');
  p.addAction('tap', 'second');
  const s2 = p.sessionId();
  assert.equal(typeof s2, 'string');
  assert.notEqual(s2, s1, 'a new session after stopSession()');
  assert.equal(p.flush(), true);
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.equal(actions.length, 2);
  assert.equal(actions[0].session.id, s1);
  assert.equal(actions[1].session.id, s2);
});

test('keepAlive() and addTiming() are accepted and leave the pipeline writing', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('v', 'Timed');
  p.addTiming('hero_image');
  p.keepAlive();
  p.addAction('scroll', 'list');
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  assert.equal(ofType(docs, 'action').length, 1);
  assert.ok(ofType(docs, 'view').length >= 1);
});

test('attributes are copied at call time: later mutation does not change the event', (t) => {
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, diskQuotaBytes: 64 * 1024 * 1024 });
  p.startView('v', 'Copy');
  const attrs = { nested: { value: 'original' }, list: [1, 2] };
  // Queue it behind a burst so it is processed after the mutation below.
  const next = burst(p, 2000);
  p.addAction('tap', 'copied', attrs);
  attrs.nested.value = 'mutated';
  attrs.list.push(3);
  attrs.added = true;
  p.flush();
  const a = ofType(readBatchFiles(dir).docs, 'action').find((d) => d.action.target.name === 'copied');
  assert.ok(a, 'the action is written');
  assert.deepEqual(a.context, { nested: { value: 'original' }, list: [1, 2] });
  assert.ok(next > 0);
});

test('upload API: nextBatch claims the oldest sealed batch, view documents reduced, completeBatch deletes or releases', (t) => {
  // Small batches, so the burst spans several files.
  const { p, dir } = openPipeline(t, { batchMaxBytes: 64 * 1024, diskQuotaBytes: 64 * 1024 * 1024 });
  p.startView('v1', 'First');
  let seq = burst(p, 300);
  p.startView('v2', 'Second');
  seq = burst(p, 300, { start: seq });
  assert.equal(p.flush(), true);

  const raw = readBatchFiles(dir);
  assert.ok(raw.files.length >= 3, `the burst spans several batch files (got ${raw.files.length})`);
  // Non-view documents of each raw file, canonical, to find the file a claimed body came from.
  const rawByKey = new Map(
    raw.files.map((f) => [
      f.docs
        .filter((d) => d.type !== 'view')
        .map(canonical)
        .join('\n'),
      f,
    ]),
  );

  // Claim the first batch, release it, and get the same batch again.
  const first = p.nextBatch();
  assert.notEqual(first, null, 'a sealed batch is available after flush()');
  checkBatchShape(first);
  const claimed = fs.readdirSync(path.join(dir, 'rum')).filter((n) => /\.ndjson(\.gz)?\.\d+\.uploading$/.test(n));
  assert.equal(claimed.length, 1, `a claimed batch is renamed <name>.<claimed_ms>.uploading (<name> ends .ndjson.gz once sealed compressed) (files: ${claimed})`);
  const second = p.nextBatch();
  assert.notEqual(second, null);
  assert.notEqual(String(second.id), String(first.id), 'a claimed batch is not handed out twice');
  p.completeBatch(first.id, false);
  p.completeBatch(second.id, false);
  const again = p.nextBatch();
  assert.ok(Buffer.from(again.body).equals(Buffer.from(first.body)), 'a released batch is claimed again, oldest first');
  assert.equal(again.id.split('.ndjson')[0], first.id.split('.ndjson')[0], 'the same batch, in a claim of its own');
  assert.deepEqual(Buffer.from(again.body), Buffer.from(first.body), 'same body after a release');
  p.completeBatch(again.id, false);

  const batches = [];
  for (;;) {
    const b = p.nextBatch();
    if (b === null) break;
    checkBatchShape(b);
    const text = batchText(b);
    const docs = parseNdjson(text, `batch ${b.id}`);
    assert.equal(b.eventCount, docs.length, 'eventCount = lines in the body');
    assert.equal(b.bytes, b.body.byteLength, 'bytes = body length');

    // View documents: one per view id, the highest document_version of the raw file.
    const nonView = docs.filter((d) => d.type !== 'view');
    const source = rawByKey.get(nonView.map(canonical).join('\n'));
    assert.ok(source, `batch ${b.id}: its non-view documents are exactly those of one batch file, in order`);
    const views = ofType(docs, 'view');
    const ids = views.map((v) => v.view.id);
    assert.equal(new Set(ids).size, ids.length, `batch ${b.id}: one view document per view id (${ids})`);
    const highest = new Map();
    for (const v of ofType(source.docs, 'view')) {
      highest.set(v.view.id, Math.max(highest.get(v.view.id) ?? -Infinity, v._dd.document_version));
    }
    assert.deepEqual(new Set(ids), new Set(highest.keys()), `batch ${b.id}: every view of the file is kept`);
    for (const v of views) {
      assert.equal(v._dd.document_version, highest.get(v.view.id), `batch ${b.id}: view ${v.view.id} keeps its highest version`);
    }
    batches.push({ id: b.id, docs, source });
    p.completeBatch(b.id, true);
    assert.ok(!fs.readdirSync(path.join(dir, 'rum')).some((n) => n.startsWith(source.name)), `batch ${source.name} is deleted when delivered`);
  }
  assert.equal(batches.length, raw.files.length, 'every sealed batch is handed out once');
  assert.deepEqual(
    batches.map((b) => b.source.name),
    raw.files.map((f) => f.name),
    'batches are handed out oldest first',
  );
  assert.deepEqual(
    actionSeqs(batches.flatMap((b) => b.docs)),
    range(0, seq),
    'every action exactly once, in call order, through the upload API',
  );
  assert.equal(p.nextBatch(), null, 'nothing left');
  assert.equal(readBatchFiles(dir, { includeClaimed: true }).files.length, 0, 'no batch file left on disk');

  const unknown = typeof first.id === 'number' ? 987_654_321 : 'batch-0-0.ndjson.no-such-claim';
  assert.throws(() => p.completeBatch(unknown, true), /completeBatch/, 'completing an unknown id throws, naming completeBatch');
  assert.throws(() => p.completeBatch(first.id, true), /completeBatch/, 'completing an already completed id throws');
});

test('drainBatches helper agrees with the raw files', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('v', 'V');
  burst(p, 50);
  assert.equal(p.flush(), true);
  const raw = readBatchFiles(dir).docs.filter((d) => d.type !== 'view');
  const up = drainBatches(p).flatMap((b) => b.docs).filter((d) => d.type !== 'view');
  assert.deepEqual(up.map(canonical), raw.map(canonical));
});
