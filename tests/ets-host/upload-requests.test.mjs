// What RumUploader puts on the wire and what each answer does, against the loopback intake:
// gzip bodies built on the TaskPool, DD-REQUEST-ID / DD-IDEMPOTENCY-KEY / User-Agent / ddsource,
// and the status classes (2xx delivered; 400/401/403/413 and unknown codes dropped; 408/429/5xx
// and network errors retried, then delivered).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { fakeContext, loadFacade, startIntake, tempDir } from './lib/harness.mjs';
import { zlib } from './stubs/kit.BasicServicesKit.mjs';

let h;
before(async () => {
  h = await loadFacade();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const sha1 = (bytes) => createHash('sha1').update(bytes).digest('hex');

/** A monitor holding `count` synced-message actions, flushed into batches of ~`batchMaxBytes`. */
async function filledMonitor(t, count, batchMaxBytes = 16 * 1024, batchEncoding = 'identity') {
  // Plain batches by default here, so the uploader's own compression (on a TaskPool thread) is
  // what these tests see; the pipeline's gzip batches are tested at the end.
  const m = h.facade.RumMonitor.create(fakeContext(tempDir()), {
    applicationId: 'app-upload-requests',
    keepAliveIntervalMs: 0,
    pipeline: { batchMaxBytes, eventMaxBytes: 4096, batchEncoding }
  });
  t.after(() => m.stop());
  m.startView('inbox', 'Inbox');
  m.addActions(await h.facade.buildActionsOnTaskPool(count));
  assert.equal(m.flush(), true);
  return m;
}

async function intake(t, respond) {
  const server = await startIntake(respond);
  t.after(() => server.close());
  return server;
}

/** Runs cycles until one delivers nothing and fails nothing (everything sent). */
async function drain(uploader) {
  for (let i = 0; i < 100; i++) {
    const c = await uploader.uploadNow();
    if (c.delivered === 0 && c.rejected === 0 && !c.failed) {
      return;
    }
  }
  throw new Error('the uploader never drained');
}

const logged = (needle) => h.hilog.records.filter((r) => r.tag === 'RumUploader' && r.message.includes(needle));

test('requests carry gzip NDJSON, a fresh UUID request id, the SHA-1 idempotency key, User-Agent and ddsource', async (t) => {
  const server = await intake(t);
  const m = await filledMonitor(t, 400);
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 'pub-token' });
  const tasksBefore = h.taskpool.executed.length;
  const streamsBefore = zlib.streams.length;
  await drain(uploader);

  assert.ok(server.requests.length > 2, 'several batches');
  const ids = new Set();
  for (const r of server.requests) {
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.match(r.headers['content-type'], /^text\/plain;charset=UTF-8$/);
    assert.deepEqual([...r.raw.subarray(0, 2)], [0x1f, 0x8b], 'a gzip stream');
    assert.deepEqual(gunzipSync(r.raw), r.body);
    assert.ok(r.body.toString('utf8').endsWith('\n') && r.docs.length > 0, 'decompresses to the NDJSON batch');
    assert.match(r.headers['dd-request-id'], UUID);
    ids.add(r.headers['dd-request-id']);
    assert.equal(r.headers['dd-idempotency-key'], sha1(r.body), 'SHA-1 hex of the batch body');
    assert.equal(r.headers['user-agent'], 'rum-native/0.1.0 (HarmonyOS; HarmonyOS-5.0.0.120; API 12; HUAWEI ALN-AL00)');
    assert.equal(r.headers['dd-api-key'], 'pub-token');
    const source = new Set(r.docs.map((d) => d.source));
    assert.deepEqual([...source], ['harmony'], 'the documents say source harmony');
    assert.equal(r.url, '/api/v2/rum?ddsource=harmony', 'ddsource matches the documents');
    assert.equal(r.headers['dd-evp-origin'], 'harmony');
    assert.equal(r.headers['dd-evp-origin-version'], '0.1.0');
  }
  assert.equal(ids.size, server.requests.length, 'one request id per request');
  assert.equal(uploader.userAgentHeader, server.requests[0].headers['user-agent']);

  // The hashing and compression ran in TaskPool tasks, one per request, in gzip format.
  const tasks = h.taskpool.executed.slice(tasksBefore).filter((task) => task.function.name === 'prepareUploadBody');
  assert.equal(tasks.length, server.requests.length, 'one TaskPool task per request');
  const streams = zlib.streams.slice(streamsBefore);
  assert.equal(streams.length, server.requests.length);
  assert.ok(streams.every((s) => s.windowBits === 31), 'deflate with a gzip wrapper');
  assert.equal(uploader.deliveredBatches, server.requests.length);
});

test('source and sdkVersion are options: ddsource, DD-EVP-ORIGIN, DD-EVP-ORIGIN-VERSION and the User-Agent follow', async (t) => {
  const server = await intake(t);
  const m = await filledMonitor(t, 20, 64 * 1024);
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't', source: 'flutter', sdkVersion: '2.3.4' });
  await drain(uploader);
  const r = server.requests[0];
  assert.equal(r.url, '/api/v2/rum?ddsource=flutter');
  assert.equal(r.headers['dd-evp-origin'], 'flutter');
  assert.equal(r.headers['dd-evp-origin-version'], '2.3.4');
  assert.match(r.headers['user-agent'], /^rum-native\/2\.3\.4 \(HarmonyOS; /);
});

test('a retry of the same batch keeps its idempotency key and gets a new request id', async (t) => {
  const server = await intake(t, (_r, i) => (i === 0 ? 503 : 202));
  const m = await filledMonitor(t, 100, 64 * 1024);
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't' });
  const first = await uploader.uploadNow();
  assert.equal(first.failed, true);
  await drain(uploader);
  const [failed, retried] = server.requests;
  assert.deepEqual(retried.body, failed.body, 'the same batch');
  assert.equal(retried.headers['dd-idempotency-key'], failed.headers['dd-idempotency-key']);
  assert.equal(retried.headers['dd-idempotency-key'], sha1(failed.body));
  assert.notEqual(retried.headers['dd-request-id'], failed.headers['dd-request-id']);
  assert.deepEqual(retried.raw, failed.raw, 'gzip is deterministic: the same bytes again');
});

test('2xx answers deliver the batch', async (t) => {
  for (const status of [200, 201, 202, 204]) {
    const server = await intake(t, () => status);
    const m = await filledMonitor(t, 60, 8 * 1024);
    const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't' });
    await drain(uploader);
    assert.equal(uploader.deliveredBatches, server.requests.length, `${status}`);
    assert.equal(uploader.droppedBatches, 0);
    assert.equal(uploader.retriedRequests, 0);
    assert.equal(m.nextBatch(), null, `${status}: delivered batches are deleted`);
  }
});

test('400, 401, 403 and 413 drop the batch (deleted), counted by status, logged once per status', async (t) => {
  for (const status of [400, 401, 403, 413]) {
    // The first two batches get `status`, the rest are accepted.
    const server = await intake(t, (_r, i) => (i < 2 ? status : 202));
    const m = await filledMonitor(t, 200, 8 * 1024);
    const logsBefore = logged(`answered ${status}`).length;
    const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 'wrong-token' });
    const cycle = await uploader.uploadNow();
    assert.equal(cycle.failed, false, `${status} is not retried`);
    assert.equal(cycle.rejected, 2);
    await drain(uploader);
    assert.equal(uploader.droppedBatches, 2);
    assert.equal(uploader.droppedByStatus().get(status), 2);
    assert.equal(uploader.retriedRequests, 0);
    const droppedIds = new Set(server.requests.slice(0, 2).flatMap((r) => r.docs.map((d) => d.action?.id ?? d.view?.id)));
    const resent = server.requests.slice(2).flatMap((r) => r.docs).filter((d) => d.type === 'action' && droppedIds.has(d.action.id));
    assert.deepEqual(resent, [], `${status}: the dropped batches were deleted, never sent again`);
    assert.equal(m.nextBatch(), null);
    const lines = logged(`answered ${status}`).slice(logsBefore);
    assert.equal(lines.length, 1, `${status}: one log line for two dropped batches`);
    assert.equal(lines[0].level, 'error');
    if (status === 401 || status === 403) {
      assert.match(lines[0].message, /client token/);
    }
  }
});

test('408, 429 and 5xx are retried with backoff, then the same batch is delivered', async (t) => {
  for (const status of [408, 429, 500, 502, 503, 504, 507]) {
    const server = await intake(t, (_r, i) => (i === 0 ? status : 202));
    const m = await filledMonitor(t, 60, 8 * 1024);
    const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't', intervalMs: 100 });
    const first = await uploader.uploadNow();
    assert.equal(first.failed, true, `${status} ends the cycle`);
    assert.equal(first.delivered, 0);
    assert.equal(first.nextDelayMs, 200, `${status}: the delay doubles`);
    await drain(uploader);
    assert.equal(uploader.retriedRequests, 1);
    assert.equal(uploader.retriedByStatus().get(status), 1);
    assert.equal(uploader.droppedBatches, 0);
    assert.deepEqual(server.requests[1].body, server.requests[0].body, `${status}: the same batch came again`);
    assert.equal(server.requests[1].headers['dd-idempotency-key'], server.requests[0].headers['dd-idempotency-key']);
    assert.equal(uploader.deliveredBatches, server.requests.length - 1);
    assert.equal(m.nextBatch(), null);
  }
});

test('a network error (connection reset) is retried, then the same batch is delivered', async (t) => {
  const server = await intake(t, (_r, i) => (i === 0 ? 'reset' : 202));
  const m = await filledMonitor(t, 60, 8 * 1024);
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't', requestTimeoutMs: 2000 });
  const first = await uploader.uploadNow();
  assert.equal(first.failed, true);
  await drain(uploader);
  assert.equal(uploader.networkErrors, 1);
  assert.equal(uploader.retriedByStatus().get(-1), 1);
  assert.deepEqual(server.requests[1].body, server.requests[0].body);
  assert.equal(server.requests[1].headers['dd-idempotency-key'], server.requests[0].headers['dd-idempotency-key']);
  assert.equal(uploader.deliveredBatches, server.requests.length - 1);
});

test('3xx and other unknown statuses drop the batch as dd-sdk-android does, counted, logged once as a warning', async (t) => {
  for (const status of [302, 404, 418]) {
    const server = await intake(t, (_r, i) => (i === 0 ? status : 202));
    const m = await filledMonitor(t, 60, 8 * 1024);
    const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 't' });
    await drain(uploader);
    assert.equal(uploader.droppedByStatus().get(status), 1, `${status}`);
    assert.equal(uploader.retriedRequests, 0);
    const lines = logged(`unexpected status ${status}`);
    assert.equal(lines.length, 1);
    assert.equal(lines[0].level, 'warn');
  }
});

test('a batch that says encoding gzip is sent as it is, hashed on the TaskPool, not compressed again', async (t) => {
  const server = await intake(t);
  const ndjson = Buffer.from('{"type":"action","source":"harmony"}\n{"type":"view","source":"harmony"}\n');
  const gz = gzipSync(ndjson);
  const body = gz.buffer.slice(gz.byteOffset, gz.byteOffset + gz.byteLength);
  const completed = [];
  let handedOut = false;
  const source = {
    nextBatch: () => {
      if (handedOut) {
        return null;
      }
      handedOut = true;
      return { id: 'b-1', body, eventCount: 2, bytes: ndjson.length, encoding: 'gzip' };
    },
    completeBatch: (id, delivered) => completed.push([id, delivered])
  };
  const streamsBefore = zlib.streams.length;
  const tasksBefore = h.taskpool.executed.length;
  const uploader = new h.facade.RumUploader(source, { site: server.site, clientToken: 't' });
  const cycle = await uploader.uploadNow();
  assert.equal(cycle.delivered, 1);
  const [r] = server.requests;
  assert.deepEqual(r.raw, gz, 'the body as the batch had it');
  assert.equal(r.headers['content-encoding'], 'gzip');
  assert.equal(r.headers['dd-idempotency-key'], sha1(gz), 'SHA-1 of the batch body as handed out');
  assert.equal(r.docs.length, 2);
  assert.equal(zlib.streams.length, streamsBefore, 'not compressed again');
  assert.equal(h.taskpool.executed.length, tasksBefore + 1, 'hashed in a TaskPool task');
  assert.deepEqual(completed, [['b-1', true]]);
});

test('the pipeline’s gzip batches (its default) go out as they are: no compression stream, key = SHA-1 of the gzip body', async (t) => {
  const server = await intake(t);
  const m = await filledMonitor(t, 400, 16 * 1024, 'gzip');
  const uploader = new h.facade.RumUploader(m, { site: server.site, clientToken: 'pub-token' });
  const streamsBefore = zlib.streams.length;
  await drain(uploader);
  assert.ok(server.requests.length > 1, 'several batches');
  for (const r of server.requests) {
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.deepEqual([...r.raw.subarray(0, 2)], [0x1f, 0x8b], 'the stored gzip stream');
    assert.equal(r.headers['dd-idempotency-key'], sha1(r.raw), 'SHA-1 of the body as handed out');
    assert.ok(r.docs.length > 0);
  }
  assert.equal(zlib.streams.length, streamsBefore, 'nothing was compressed again');
  assert.equal(server.accepted().filter((d) => d.type === 'action').length, 400, 'every action delivered once');
});
