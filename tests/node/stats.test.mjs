// stats(): every documented counter exists, is a number, and moves as expected (DESIGN.md "The JS /
// ArkTS interface"). The eviction, drop and write-error counters move in storage.test.mjs.

import assert from 'node:assert/strict';
import { test } from 'node:test';

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
  assert.equal(s4.documentsWritten, lines, 'documentsWritten = lines in the batch files');
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
