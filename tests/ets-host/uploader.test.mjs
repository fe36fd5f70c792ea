// RumUploader over the real pipeline, with the HTTP client stand-in and a loopback intake.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { fakeContext, loadFacade, startIntake, tempDir, until } from './lib/harness.mjs';

let h;
before(async () => {
  h = await loadFacade();
});

/** A monitor holding `count` synced-message actions, flushed into batches of ~`batchMaxBytes`. */
async function filledMonitor(t, count, batchMaxBytes) {
  const m = h.facade.RumMonitor.create(fakeContext(tempDir()), {
    applicationId: 'app-upload',
    keepAliveIntervalMs: 0,
    // Small batches: the pipeline accepts batchMaxBytes down to eventMaxBytes (synced-message
    // documents are ~1.3 KB with the device and app context). 3,700 of them are ~4.9 MB, above
    // the default 4 MiB disk quota: room for all, as the test wants every one delivered.
    pipeline: { batchMaxBytes, eventMaxBytes: 4096, diskQuotaBytes: 8 * 1024 * 1024 }
  });
  t.after(() => m.stop());
  m.startView('inbox', 'Inbox');
  m.addActions(await h.facade.buildActionsOnTaskPool(count));
  assert.equal(m.flush(), true);
  return m;
}

const actionIndexes = (docs) => docs.filter((d) => d.type === 'action').map((d) => d.context.message_index);
const range = (n) => Array.from({ length: n }, (_, i) => i);

async function intake(t, respond) {
  const server = await startIntake(respond);
  t.after(() => server.close());
  return server;
}

test('cadence defaults are the reference SDK’s: 2,000 ms, 20 batches a cycle, backoff ×2 up to 60 s', () => {
  const { RumUploader } = h.facade;
  assert.equal(RumUploader.DEFAULT_INTERVAL_MS, 2000);
  assert.equal(RumUploader.DEFAULT_MAX_BATCHES_PER_CYCLE, 20);
  assert.equal(RumUploader.DEFAULT_MAX_BACKOFF_MS, 60000);
  const delays = [];
  let d = 2000;
  for (let i = 0; i < 6; i++) {
    d = RumUploader.nextDelay(d, true, 2000, 60000);
    delays.push(d);
  }
  assert.deepEqual(delays, [4000, 8000, 16000, 32000, 60000, 60000]);
  assert.equal(RumUploader.nextDelay(60000, false, 2000, 60000), 2000, 'a success restores the interval');
  const source = { nextBatch: () => null, completeBatch: () => {} };
  assert.equal(new RumUploader(source, { site: 'http://127.0.0.1:9', clientToken: 't' }).currentDelayMs, 2000);
});

test('every action reaches the intake once, in order, with the intake’s headers', async (t) => {
  const server = await intake(t);
  const m = await filledMonitor(t, 3700, 64 * 1024);
  const uploader = new h.facade.RumUploader(m, { site: `${server.site}/`, clientToken: 'pub-token', intervalMs: 20 });
  t.after(() => uploader.stop());
  assert.equal(uploader.currentDelayMs, 20);
  uploader.start();
  await until(() => actionIndexes(server.accepted()).length >= 3700, 30000, '3,700 actions at the intake');
  uploader.stop();
  await uploader.idle();

  assert.deepEqual(actionIndexes(server.accepted()), range(3700));
  assert.ok(server.requests.length > 1, 'several batches');
  for (const r of server.requests) {
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/api/v2/rum?ddsource=harmony');
    assert.equal(r.headers['dd-api-key'], 'pub-token');
    assert.match(r.headers['content-type'], /^text\/plain/);
    assert.ok(r.headers['dd-request-id'], 'each request names its batch');
  }
  assert.equal(uploader.deliveredEvents, server.accepted().length);
  assert.equal(uploader.deliveredBatches, server.requests.length);
  assert.equal(m.nextBatch(), null, 'delivered batches are deleted');
});

test('a retryable failure releases the batch, ends the cycle and doubles the delay', async (t) => {
  // The second and third requests fail with 503; everything else is accepted.
  const server = await intake(t, (_r, i) => (i === 1 || i === 2 ? 503 : 202));
  const m = await filledMonitor(t, 600, 16 * 1024);
  const uploader = new h.facade.RumUploader(m, {
    site: server.site, clientToken: 't', intervalMs: 100, maxBackoffMs: 250
  });

  const first = await uploader.uploadNow();
  assert.equal(first.delivered, 1);
  assert.equal(first.failed, true);
  assert.equal(first.nextDelayMs, 200);
  const second = await uploader.uploadNow();
  assert.equal(second.delivered, 0);
  assert.equal(second.nextDelayMs, 250, 'capped at maxBackoffMs');
  let last = await uploader.uploadNow();
  assert.equal(last.failed, false);
  assert.equal(last.nextDelayMs, 100, 'back to the interval after a success');
  while (last.delivered > 0) {
    last = await uploader.uploadNow();
  }
  assert.equal(uploader.failedRequests, 2);
  assert.deepEqual(actionIndexes(server.accepted()), range(600), 'the failed batch came again, nothing twice');
});

test('started, the uploader waits the backed-off delay between failed cycles, then recovers', async (t) => {
  // The first three requests fail with 503: the next cycles come 2×, 4× and (capped) 5× the
  // interval later. Only lower bounds are checked: a timer never fires early, a loaded machine
  // may fire it late.
  const INTERVAL = 40;
  const arrivals = [];
  const server = await intake(t, (_r, i) => {
    arrivals.push(performance.now());
    return i < 3 ? 503 : 202;
  });
  const m = await filledMonitor(t, 600, 16 * 1024);
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't', intervalMs: INTERVAL, maxBackoffMs: 200 });
  t.after(() => uploader.stop());
  uploader.start();
  await until(() => actionIndexes(server.accepted()).length >= 600, 30000, 'every action at the intake');
  uploader.stop();
  await uploader.idle();

  const gaps = [1, 2, 3].map((i) => arrivals[i] - arrivals[i - 1]);
  [80, 160, 200].forEach((delay, i) => {
    assert.ok(gaps[i] >= delay - 2, `cycle ${i + 2} came ${gaps[i].toFixed(1)} ms after the failure, before its ${delay} ms backoff`);
  });
  assert.equal(uploader.failedRequests, 3);
  assert.equal(uploader.currentDelayMs, INTERVAL, 'back to the interval after a success');
  assert.deepEqual(actionIndexes(server.accepted()), range(600), 'nothing lost, nothing twice');
});

test('a batch the intake refuses for good (4xx) is dropped, and the cycle goes on', async (t) => {
  const server = await intake(t, (_r, i) => (i === 0 ? 400 : 202));
  const m = await filledMonitor(t, 300, 16 * 1024);
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't' });
  const cycle = await uploader.uploadNow();
  assert.equal(cycle.rejected, 1);
  assert.equal(cycle.failed, false);
  assert.ok(cycle.delivered >= 1, 'later batches went out in the same cycle');
  assert.equal(uploader.rejectedBatches, 1);
  for (let c = cycle; c.delivered > 0;) {
    c = await uploader.uploadNow();
  }
  const refused = actionIndexes(server.requests[0].docs);
  assert.deepEqual(actionIndexes(server.accepted()), range(300).filter((i) => !refused.includes(i)));
  assert.equal(m.nextBatch(), null, 'the refused batch was deleted too');
});

test('a cycle sends at most 20 batches', async (t) => {
  const server = await intake(t);
  const m = await filledMonitor(t, 500, 8 * 1024);
  assert.ok(m.stats().batchesOnDisk > 20, 'more than 20 sealed batches');
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't' });
  const cycle = await uploader.uploadNow();
  assert.equal(cycle.delivered, 20);
  assert.equal(server.requests.length, 20);
});

test('a network error releases the batch for a later retry', async (t) => {
  const closed = await startIntake();
  await closed.close();
  const m = await filledMonitor(t, 50, 64 * 1024);
  const uploader = new h.facade.RumUploader(m, { site: closed.site, clientToken: 't', requestTimeoutMs: 2000 });
  const cycle = await uploader.uploadNow();
  assert.equal(cycle.failed, true);
  assert.equal(cycle.delivered, 0);
  const again = m.nextBatch();
  assert.notEqual(again, null, 'the released batch can be claimed again');
  m.completeBatch(again.id, false);
});

test('uploadNow during a cycle joins it, and idle() waits for its last request', async (t) => {
  const server = await intake(t);
  const m = await filledMonitor(t, 200, 16 * 1024);
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't' });
  const first = uploader.uploadNow();
  assert.equal(uploader.uploadNow(), first, 'one cycle at a time: batches stay in order');
  await uploader.idle();
  const cycle = await first;
  assert.ok(cycle.delivered > 0);
  assert.equal(server.requests.length, cycle.delivered, 'every request of the cycle had completed');
  assert.equal(uploader.deliveredBatches, cycle.delivered);
});

test('batches pending but not ready yet: the next cycle comes after 50 ms, doubling up to the interval', async (t) => {
  const server = await intake(t);
  const ndjson = Buffer.from('{"type":"action","source":"harmony"}\n');
  const body = ndjson.buffer.slice(ndjson.byteOffset, ndjson.byteOffset + ndjson.byteLength);
  let ready = false;
  let pending = 1;
  const source = {
    // Not ready until `ready`, as right after open while the writer checks compressed batches.
    nextBatch: () => {
      if (!ready || pending === 0) return null;
      pending--;
      return { id: 'b-1', body, eventCount: 1, bytes: ndjson.length };
    },
    completeBatch: () => {},
    pendingBatches: () => pending
  };
  const uploader = new h.facade.RumUploader(source, { site: server.site, clientToken: 't', intervalMs: 300 });
  const delays = [];
  for (let i = 0; i < 5; i++) {
    const cycle = await uploader.uploadNow();
    assert.equal(cycle.notReady, true);
    assert.equal(cycle.failed, false);
    delays.push(cycle.nextDelayMs);
  }
  assert.deepEqual(delays, [50, 100, 200, 300, 300], 'soon, backing off to the interval');
  ready = true;
  const sent = await uploader.uploadNow();
  assert.deepEqual([sent.delivered, sent.notReady, sent.nextDelayMs], [1, false, 300], 'nothing pending: the interval');
  assert.equal(server.requests.length, 1);
  pending = 2;
  ready = false;
  assert.equal((await uploader.uploadNow()).nextDelayMs, 50, 'a success started the backoff over');

  // A source that cannot tell (no pendingBatches()): a null is "nothing to send".
  const plain = new h.facade.RumUploader({ nextBatch: () => null, completeBatch: () => {} }, { site: server.site, clientToken: 't', intervalMs: 300 });
  const idle = await plain.uploadNow();
  assert.deepEqual([idle.notReady, idle.nextDelayMs], [false, 300]);
});

test('a monitor opened on many compressed batches reports them pending before the writer has checked them', async (t) => {
  const server = await intake(t);
  const source = tempDir();
  const first = h.facade.RumMonitor.create(fakeContext(source), { applicationId: 'app-upload', keepAliveIntervalMs: 0 });
  t.after(() => first.stop());
  first.startView('inbox', 'Inbox');
  first.addActions(await h.facade.buildActionsOnTaskPool(20));
  assert.equal(first.flush(), true);
  const sealed = fs.readdirSync(path.join(source, 'rum')).find((n) => n.endsWith('.ndjson.gz'));
  assert.ok(sealed, 'a sealed compressed batch');
  const raw = fs.readFileSync(path.join(source, 'rum', sealed));
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, 'rum'), { mode: 0o700 });
  const created = /^batch-(\d+)-/.exec(sealed)[1];
  const COUNT = 400;
  for (let i = 0; i < COUNT; i++) fs.writeFileSync(path.join(dir, 'rum', `batch-${created}-${i}.ndjson.gz`), raw);
  const m = h.facade.RumMonitor.create(fakeContext(dir), {
    applicationId: 'app-upload',
    keepAliveIntervalMs: 0,
    pipeline: { maxBatchFiles: 1000, diskQuotaBytes: 64 * 1024 * 1024 }
  });
  t.after(() => m.stop());
  assert.equal(m.pendingBatches(), COUNT, 'known at open');
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't', intervalMs: 60000, maxBatchesPerCycle: 1000 });
  let cycles = 0;
  while (m.pendingBatches() > 0) {
    const cycle = await uploader.uploadNow();
    cycles++;
    assert.ok(cycle.notReady || m.pendingBatches() === 0, `a cycle ended with batches pending: ${JSON.stringify(cycle)}`);
    assert.ok(cycles < 1000, 'every batch delivered');
  }
  assert.equal(uploader.deliveredBatches, COUNT);
  assert.equal(m.nextBatch(), null);
});
