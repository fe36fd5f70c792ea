// The storage contract through the real library (docs/design.md "Storage rules"): the disk
// quota and file cap are never exceeded and evictions are counted by reason; old batches are
// deleted, not uploaded; an active batch rolls after the batch window so uploads are not starved;
// oversize documents never reach a batch; write errors are counted, never thrown, and recovered.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  actionSeqs,
  attachPipeline,
  batchText,
  burst,
  ofType,
  openPipeline,
  pipelineOptions,
  range,
  readBatchFiles,
  sleep,
  tmpDir,
  until,
} from './lib/helpers.mjs';

const keysLike = (s, prefix, reason) =>
  Object.keys(s).filter((k) => k.toLowerCase().startsWith(prefix) && k.toLowerCase().includes(reason));
const sumLike = (s, prefix, reason) => keysLike(s, prefix, reason).reduce((n, k) => n + s[k], 0);

test('the disk quota is never exceeded; the oldest batches are evicted and counted', (t) => {
  const quota = 16 * 1024;
  const { p, dir } = openPipeline(t, { eventMaxBytes: 4096, batchMaxBytes: 4096, diskQuotaBytes: quota });
  p.startView('v', 'Quota');
  let seq = 0;
  for (let round = 0; round < 10; round++) {
    seq = burst(p, 30, { start: seq });
    assert.equal(p.flush(), true);
    const onDisk = readBatchFiles(dir, { includeClaimed: true }).files.reduce((n, f) => n + f.bytes, 0);
    assert.ok(onDisk <= quota, `round ${round}: ${onDisk} bytes on disk, quota ${quota}`);
    assert.ok(p.stats().bytesOnDisk <= quota, `round ${round}: bytesOnDisk ${p.stats().bytesOnDisk} within quota`);
  }
  const s = p.stats();
  assert.ok(sumLike(s, 'evicted', 'quota') > 0, `quota evictions counted: ${JSON.stringify(s)}`);
  const seqs = actionSeqs(readBatchFiles(dir).docs);
  assert.ok(seqs.includes(seq - 1), 'the newest action is kept');
  assert.ok(!seqs.includes(0), 'the oldest action was evicted');
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], 'what is kept is in order');
});

test('the batch file cap is never exceeded; evictions counted by count', (t) => {
  const { p, dir } = openPipeline(t, {
    eventMaxBytes: 4096,
    batchMaxBytes: 4096,
    diskQuotaBytes: 16 * 1024 * 1024,
    maxBatchFiles: 3,
  });
  p.startView('v', 'Count');
  let seq = 0;
  for (let round = 0; round < 8; round++) {
    seq = burst(p, 20, { start: seq });
    assert.equal(p.flush(), true);
    const n = readBatchFiles(dir, { includeClaimed: true }).files.length;
    assert.ok(n <= 3, `round ${round}: ${n} batch files, cap 3`);
  }
  assert.ok(sumLike(p.stats(), 'evicted', 'count') > 0, 'count evictions counted');
  assert.ok(actionSeqs(readBatchFiles(dir).docs).includes(seq - 1), 'the newest action is kept');
});

test('no document over eventMaxBytes reaches a batch; an oversize document is refused or dropped and counted', (t) => {
  const max = 2048;
  const { p, dir } = openPipeline(t, { eventMaxBytes: max });
  p.startView('v', 'Oversize');
  p.addAction('tap', 'small');
  let refused = false;
  try {
    // Attributes just under the limit: the whole document (common fields added) is over it.
    p.addAction('tap', 'big', { blob: 'b'.repeat(max - 100) });
  } catch (e) {
    assert.ok(e instanceof RangeError, `refused with a RangeError (${e})`);
    refused = true;
  }
  p.addAction('tap', 'small-after');
  assert.equal(p.flush(), true);
  const { docs } = readBatchFiles(dir);
  for (const d of docs) assert.ok(Buffer.byteLength(JSON.stringify(d)) <= max, `a ${d.type} document over ${max} bytes was written`);
  const names = ofType(docs, 'action').map((a) => a.action.target.name);
  assert.deepEqual(names, ['small', 'small-after']);
  if (!refused) assert.ok(sumLike(p.stats(), 'dropped', 'oversize') > 0, 'the dropped oversize document is counted');
});

test('a write error is counted, never thrown, and the writer recovers', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('v', 'Faults');
  burst(p, 10);
  assert.equal(p.flush(), true);
  // Replace the batch directory with a file: every write fails until it is removed.
  const rum = path.join(dir, 'rum');
  fs.rmSync(rum, { recursive: true, force: true });
  fs.writeFileSync(rum, 'not a directory');
  let flushed;
  assert.doesNotThrow(() => {
    burst(p, 10, { start: 100 });
    flushed = p.flush();
  }, 'a write error does not reach the caller');
  assert.equal(typeof flushed, 'boolean', 'flush() returns a boolean');
  const s = p.stats();
  assert.ok(s.writeErrors > 0, `writeErrors counted (${s.writeErrors})`);
  assert.equal(flushed, false, 'flush() reports that not everything was written');

  fs.rmSync(rum, { force: true });
  burst(p, 10, { start: 200 });
  assert.equal(p.flush(), true, 'the writer recovers, recreating the directory');
  const seqs = actionSeqs(readBatchFiles(dir).docs);
  assert.deepEqual(seqs.filter((x) => x >= 200), range(200, 210), 'writes after the fault land on disk');
});

test('batches older than batchMaxAgeMs are deleted, not uploaded, and counted', async (t) => {
  const { p, dir } = openPipeline(t, { batchMaxAgeMs: 200 });
  p.startView('v', 'Old');
  burst(p, 5);
  assert.equal(p.flush(), true);
  assert.ok(readBatchFiles(dir).files.length > 0, 'a sealed batch is on disk');
  await sleep(400);
  assert.equal(p.nextBatch(), null, 'a batch older than batchMaxAgeMs is not handed out');
  assert.equal(readBatchFiles(dir, { includeClaimed: true }).files.length, 0, 'and it is deleted');
  assert.ok(sumLike(p.stats(), 'evicted', 'age') > 0, 'age evictions counted');
});

test('an active batch older than batchWindowMs becomes available to the uploader without flush()', async (t) => {
  const WINDOW_MS = 300;
  const { p } = openPipeline(t, { batchWindowMs: WINDOW_MS });
  const opened = Date.now();
  p.startView('v', 'Window');
  burst(p, 5);
  const early = p.nextBatch();
  // Judged only while the window has surely not passed: a loaded machine may pause this thread.
  if (Date.now() - opened < WINDOW_MS) {
    assert.equal(early, null, 'the active batch is not handed out before it is sealed');
  } else if (early !== null) {
    p.completeBatch(early.id, false);
  }
  const b = await until(() => p.nextBatch(), 5000, 'the active batch to roll after batchWindowMs');
  const docs = batchText(b).trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(actionSeqs(docs), [0, 1, 2, 3, 4], 'the rolled batch holds the actions written before it');
  p.completeBatch(b.id, true);
});

test('a file operation of the upload side that fails is counted and logged, never thrown', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('v', 'Faults');
  burst(p, 5);
  assert.equal(p.flush(), true);
  const rum = path.join(dir, 'rum');
  const [sealed] = readBatchFiles(dir).files;
  assert.ok(sealed, 'a sealed batch');

  // A directory where the batch file was: claiming works (a rename), reading fails.
  const batchPath = path.join(rum, sealed.name);
  fs.rmSync(batchPath);
  fs.mkdirSync(batchPath);
  assert.equal(p.nextBatch(), null, 'nextBatch returns null instead of throwing');
  assert.equal(p.stats().uploadErrors, 1);

  // It stays claimed, so the next call goes on with the next batch.
  burst(p, 5, { start: 5 });
  assert.equal(p.flush(), true);
  const b = p.nextBatch();
  assert.ok(b, 'the next sealed batch is claimed');
  const stuck = fs.readdirSync(rum).find((n) => n.startsWith(sealed.name) && n.endsWith('.uploading'));
  assert.ok(stuck, 'the unreadable batch is left claimed');
  fs.rmdirSync(path.join(rum, stuck));

  // A claimed batch whose file became a directory with something in it: deleting it fails.
  const claimed = fs.readdirSync(rum).find((n) => n.startsWith(b.id) && n.endsWith('.uploading'));
  assert.ok(claimed, `a claimed file for ${b.id}`);
  fs.rmSync(path.join(rum, claimed));
  fs.mkdirSync(path.join(rum, claimed));
  fs.writeFileSync(path.join(rum, claimed, 'in-the-way'), '');
  assert.doesNotThrow(() => p.completeBatch(b.id, true), 'completeBatch does not throw a disk fault');
  assert.equal(p.stats().uploadErrors, 2);
  assert.throws(() => p.completeBatch('batch-1-2.ndjson', true), RangeError, 'an unknown id is still a RangeError');
  fs.rmSync(path.join(rum, claimed), { recursive: true });
});

test('completeBatch() refuses an id nextBatch() did not return (.gz taken out or added), naming it as given; nothing changes', (t) => {
  for (const batchEncoding of ['gzip', 'identity']) {
    const { p, dir } = openPipeline(t, { batchEncoding });
    p.startView('v', 'NearMiss');
    burst(p, 5);
    assert.equal(p.flush(), true);
    const b = p.nextBatch();
    assert.equal(b.encoding, batchEncoding);
    const rum = path.join(dir, 'rum');
    const before = fs.readdirSync(rum).sort();
    const near =
      batchEncoding === 'gzip' ? b.id.replace('.ndjson.gz.', '.ndjson.') : b.id.replace('.ndjson.', '.ndjson.gz.');
    assert.notEqual(near, b.id);
    for (const delivered of [true, false]) {
      assert.throws(
        () => p.completeBatch(near, delivered),
        (e) => e instanceof RangeError && e.message.includes(JSON.stringify(near)),
        `${batchEncoding}: ${near} (delivered ${delivered})`,
      );
      assert.deepEqual(fs.readdirSync(rum).sort(), before, `${near} changed nothing on disk`);
    }
    const s = p.stats();
    assert.deepEqual([s.batchesDelivered, s.batchesReleased], [0, 0]);
    p.completeBatch(b.id, true);
    assert.equal(p.stats().batchesDelivered, 1, 'the claim is still there for its own id');
  }
});

test('right after open, pendingBatches() tells "not ready yet" from "nothing to send" while the writer checks compressed batches', async (t) => {
  // One compressed batch, copied under 625 names into a fresh directory: all found at open.
  const { p, dir } = openPipeline(t);
  p.startView('v', 'Pending');
  burst(p, 20);
  assert.equal(p.flush(), true);
  const [sealed] = readBatchFiles(dir).files;
  assert.ok(sealed?.gzip, 'a sealed compressed batch');
  const raw = fs.readFileSync(path.join(dir, 'rum', sealed.name));
  const other = tmpDir(null);
  t.after(() => fs.rmSync(other, { recursive: true, force: true }));
  fs.mkdirSync(path.join(other, 'rum'), { mode: 0o700 });
  const COUNT = 625;
  for (let i = 0; i < COUNT; i++) fs.writeFileSync(path.join(other, 'rum', `batch-${sealed.created}-${i}.ndjson.gz`), raw);

  const q = attachPipeline(t, pipelineOptions(other, { maxBatchFiles: 1000, diskQuotaBytes: 64 * 1024 * 1024 }));
  assert.equal(q.pendingBatches(), COUNT, 'every batch found at open is pending, checked or not');
  assert.equal(q.stats().batchesPending, COUNT);
  let delivered = 0;
  let notReady = 0;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const b = q.nextBatch();
    if (b !== null) {
      q.completeBatch(b.id, true);
      delivered++;
      continue;
    }
    if (q.pendingBatches() === 0) break;
    notReady++;
    assert.ok(Date.now() < deadline, `${COUNT - delivered} batches still pending after 30 s`);
    await sleep(2);
  }
  t.diagnostic(`nextBatch() returned null ${notReady} times while batches were pending`);
  assert.equal(delivered, COUNT, 'null with nothing pending came only after every batch');
  assert.equal(q.nextBatch(), null);
  assert.equal(q.stats().batchesPending, 0);
  assert.equal(q.stats().eventsDelivered, COUNT * sealed.docs.length);
});
