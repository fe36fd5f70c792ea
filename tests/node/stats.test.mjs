// stats(): every documented counter exists, is a number, and moves as expected (docs/interface.md
// "`stats()`"). The eviction, drop and write-error counters move in storage.test.mjs.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { declaredFields } from '../shared/dts.mjs';
import { burst, burstUntilQueued, openPipeline, readBatchFiles, waitDrained } from './lib/helpers.mjs';

const NAMED = [
  'callsInline',
  'callsQueued',
  'queueLength',
  'queueHighWater',
  'slicesRun',
  'longestSliceUs',
  'longestInlineTurnUs',
  'drains',
  'documentsWritten',
  'viewWritesSaved',
  'bytesOnDisk',
  'batchesOnDisk',
  'writeErrors',
  'mapperErrors',
];

const keysLike = (s, prefix, reason) =>
  Object.keys(s).filter((k) => k.toLowerCase().startsWith(prefix) && k.toLowerCase().includes(reason));

test('stats() has every documented counter, camelCase, as numbers', (t) => {
  const { p } = openPipeline(t);
  const s = p.stats();
  for (const k of NAMED) {
    assert.ok(k in s, `stats().${k} exists (keys: ${Object.keys(s).join(', ')})`);
    assert.equal(typeof s[k], 'number', `stats().${k} is a number`);
    assert.ok(Number.isFinite(s[k]) && s[k] >= 0, `stats().${k} is a non-negative number (${s[k]})`);
  }
  for (const [k, v] of Object.entries(s)) {
    assert.match(k, /^[a-z][a-zA-Z0-9]*$/, `stats key ${k} is camelCase`);
    assert.equal(typeof v, 'number', `stats().${k} is a number`);
  }
  for (const reason of ['quota', 'count', 'age']) {
    assert.ok(keysLike(s, 'evicted', reason).length > 0, `an evicted… counter for reason "${reason}" (keys: ${Object.keys(s)})`);
  }
  for (const reason of ['consent', 'oversize']) {
    assert.ok(keysLike(s, 'dropped', reason).length > 0, `a dropped… counter for reason "${reason}" (keys: ${Object.keys(s)})`);
  }
  assert.equal(s.queueLength, 0);
  assert.equal(s.callsInline + s.callsQueued, 0, 'a fresh pipeline has accepted no call');
});

test('stats() move with a burst, its drain and its writes', async (t) => {
  const { p, dir } = openPipeline(t, { turnBudgetMs: 1, diskQuotaBytes: 64 * 1024 * 1024 });
  p.startView('v', 'Stats');
  // The burst starts a turn of its own: startView's turn may have spent the 1 ms budget already
  // on a loaded machine, and then no call of the burst would be inline.
  await new Promise((r) => setTimeout(r, 5));
  const s0 = p.stats();
  let maxSeen = 0;
  let seq = 0;
  for (let i = 0; i < 40; i++) {
    seq = burst(p, 50, { start: seq });
    maxSeen = Math.max(maxSeen, p.stats().queueLength);
  }
  const s1 = p.stats();
  assert.equal(s1.callsInline + s1.callsQueued - (s0.callsInline + s0.callsQueued), 2000, 'each call counted once');
  assert.ok(s1.callsQueued > 0, 'callsQueued grew');
  assert.ok(s1.callsInline > s0.callsInline, 'callsInline grew (the first calls of the turn)');
  assert.ok(s1.queueLength > 0, 'queueLength counts the waiting events');
  assert.ok(s1.queueHighWater >= maxSeen, `queueHighWater ${s1.queueHighWater} ≥ the largest queueLength seen ${maxSeen}`);
  assert.ok(s1.longestInlineTurnUs > 0, 'longestInlineTurnUs measured');

  await waitDrained(p);
  const s2 = p.stats();
  assert.ok(s2.slicesRun > s1.slicesRun, 'slices ran');
  assert.ok(s2.longestSliceUs > 0, 'longestSliceUs measured');
  assert.ok(s2.viewWritesSaved > 0, 'viewWritesSaved grew');
  assert.equal(s2.queueHighWater, s1.queueHighWater, 'the high-water mark does not drop when the queue empties');

  burstUntilQueued(p, { start: seq, min: 50 });
  const s3 = p.stats();
  assert.equal(p.flush(), true);
  const s4 = p.stats();
  assert.ok(s4.drains > s3.drains, 'a flush() with events queued counts a drain');
  assert.equal(s4.queueLength, 0);

  const { files } = readBatchFiles(dir);
  const lines = files.reduce((n, f) => n + f.docs.length, 0);
  const bytes = files.reduce((n, f) => n + f.bytes, 0);
  assert.equal(s4.documentsWritten, lines + s4.viewsSuperseded, 'documentsWritten = lines in the batch files + view versions superseded at seal');
  assert.equal(s4.batchesOnDisk, files.length, 'batchesOnDisk = batch files on disk');
  assert.equal(s4.bytesOnDisk, bytes, 'bytesOnDisk = bytes of the batch files');
  assert.equal(s4.writeErrors, 0);
  assert.equal(s4.mapperErrors, 0);

  // The upload side moves them back down.
  for (let b = p.nextBatch(); b !== null; b = p.nextBatch()) p.completeBatch(b.id, true);
  const s5 = p.stats();
  assert.equal(s5.batchesOnDisk, 0, 'delivered batches leave batchesOnDisk');
  assert.equal(s5.bytesOnDisk, 0, 'delivered batches leave bytesOnDisk');
});

test('stats() has exactly the counters index.d.ts declares, every core counter among them', (t) => {
  const { p } = openPipeline(t);
  const declared = declaredFields('PipelineStats');
  assert.ok(declared.length >= 57, `the core's 57 counters are declared (${declared.length})`);
  assert.deepEqual(Object.keys(p.stats()).sort(), [...declared].sort());
  // The terms of the conservation identity below are all there.
  for (const k of ['documentsReceived', 'eventsOnDisk', 'preConsentEvents', 'eventsDelivered', 'viewsSuperseded', 'lostEventsExternal']) {
    assert.ok(declared.includes(k), `${k} is declared`);
  }
});

/**
 * Every way a received document leaves storage other than on disk or delivered (droppedBacklog
 * counts documents the writer never received: they are refused at its door).
 */
const LOSSES = (s) =>
  Object.entries(s)
    .filter(([k]) => /^(evictedEvents|dropped(?!Backlog)|lostEvents)/.test(k))
    .reduce((n, [, v]) => n + v, 0);

test('conservation from JS: received = on disk + pre-consent + delivered + evicted + dropped, after bursts, evictions and drops', async (t) => {
  const { p } = openPipeline(t, {
    turnBudgetMs: 1,
    diskQuotaBytes: 256 * 1024,
    batchMaxBytes: 64 * 1024,
    maxBatchFiles: 4,
    eventMaxBytes: 2048,
  });
  const check = (label) => {
    assert.equal(p.flush(), true, `${label}: flush()`);
    const s = p.stats();
    const accounted = s.eventsOnDisk + s.preConsentEvents + s.eventsDelivered + s.viewsSuperseded + LOSSES(s);
    assert.equal(s.documentsReceived, accounted, `${label}: documentsReceived = accounted (${JSON.stringify(s)})`);
    assert.equal(
      s.documentsProduced,
      s.documentsReceived + s.mapperDropped + s.sinkErrors + s.droppedBacklog,
      `${label}: produced = received + mapper-dropped (+ refused at the writer's door)`,
    );
    return s;
  };
  p.startView('v', 'Conservation');
  let seq = burst(p, 3_000);
  await waitDrained(p);
  const evicted = check('a burst past the quota and the file cap');
  assert.ok(evicted.evictedEventsQuota + evicted.evictedEventsCount > 0, 'the burst evicted batches');

  // Oversize documents: attributes within eventMaxBytes, the document around them past it.
  for (let i = 0; i < 5; i++) p.addAction('tap', `big${i}`, { pad: 'y'.repeat(1900) });
  assert.ok(check('oversize documents').droppedOversize >= 5, 'oversize documents dropped');

  // The mapper drops some; consent not_granted drops others; pending buffers the rest.
  p.setEventMapper((d) => (d.type === 'action' && d.context?.seq % 2 === 0 ? null : d));
  seq = burst(p, 200, { start: seq });
  p.flush(); // the mapper runs when a document is processed: before it is removed
  p.setEventMapper(null);
  p.setTrackingConsent('not_granted');
  seq = burst(p, 100, { start: seq });
  p.setTrackingConsent('pending');
  seq = burst(p, 100, { start: seq });
  const dropped = check('mapper drops, not_granted and pending');
  assert.ok(dropped.mapperDropped >= 100, `mapperDropped ${dropped.mapperDropped}`);
  assert.ok(dropped.droppedConsent >= 100, `droppedConsent ${dropped.droppedConsent}`);
  assert.ok(dropped.preConsentEvents >= 100, `preConsentEvents ${dropped.preConsentEvents}`);

  // Granted: the buffer moves into batches; an uploader delivers some.
  p.setTrackingConsent('granted');
  // The writer moves the buffer into batches holding the store; on a loaded machine that can take
  // longer than nextBatch()'s 16 ms wait (it then answers null): claim once it is done.
  assert.equal(p.flush(), true);
  for (let i = 0, b = p.nextBatch(); b !== null && i < 2; i++, b = p.nextBatch()) p.completeBatch(b.id, true);
  const delivered = check('migration and delivery');
  assert.ok(delivered.eventsDelivered > 0 && delivered.preConsentEvents === 0);
});
