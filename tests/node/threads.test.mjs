// Two worker_threads and the main thread writing to one storageDir with the same options attach
// to one pipeline (docs/design.md "Dispatch rules", Threads): every document exactly once, each thread's in its call
// order, batch files valid NDJSON.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { actionSeqs, attachPipeline, childScript, ofType, pipelineOptions, range, readBatchFiles, sleep, tmpDir } from './lib/helpers.mjs';

const PER_THREAD = 1500;
const CHUNK = 100;

function startWorker(options, tag, extra = {}) {
  const w = new Worker(childScript('worker-writer.mjs'), { workerData: { options, tag, count: PER_THREAD, chunk: CHUNK, ...extra } });
  const errors = [];
  let onReady;
  let onDone;
  let fail;
  const failed = new Promise((_, reject) => (fail = reject));
  failed.catch(() => {});
  const ready = Promise.race([new Promise((r) => (onReady = r)), failed]);
  const done = Promise.race([new Promise((r) => (onDone = r)), failed]);
  w.on('error', (e) => {
    errors.push(e);
    fail(new Error(`worker ${tag} failed: ${e?.stack ?? e}`));
  });
  w.on('message', (m) => (m.kind === 'ready' ? onReady(m) : onDone(m)));
  const exit = once(w, 'exit').then(([code]) => code);
  return { w, tag, errors, ready, done, exit };
}

async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test('main thread and two workers write to one storageDir: every document exactly once', async (t) => {
  const dir = tmpDir(t);
  const options = pipelineOptions(dir, { turnBudgetMs: 2, diskQuotaBytes: 64 * 1024 * 1024, batchMaxBytes: 128 * 1024 });
  const p = attachPipeline(t, options);
  p.startView('shared', 'Shared');

  const workers = [startWorker(options, 'w1'), startWorker(options, 'w2')];
  t.after(() => workers.forEach(({ w }) => w.terminate()));

  await withTimeout(Promise.all(workers.map((x) => x.ready)), 30_000, 'the workers to attach');
  // The main thread writes at the same time, yielding between chunks so the workers interleave.
  const pad = 'm'.repeat(200);
  for (let seq = 0; seq < PER_THREAD; ) {
    for (let i = 0; i < CHUNK; i++, seq++) p.addAction('custom', `main-${seq}`, { thread: 'main', seq, pad });
    await sleep(0);
  }

  const reports = await withTimeout(Promise.all(workers.map((x) => x.done)), 60_000, 'the workers to finish');
  for (const { tag, errors } of workers) assert.deepEqual(errors, [], `worker ${tag} raised no error`);
  for (const r of reports) assert.equal(r.flushed, true, `worker ${r.tag}: flush() returned true`);
  assert.equal(p.flush(), true, 'main: flush() returned true');

  const { docs, files } = readBatchFiles(dir);
  assert.ok(files.length >= 2, 'several batch files, all valid NDJSON');
  const actions = ofType(docs, 'action');
  const byThread = { main: [], w1: [], w2: [] };
  for (const a of actions) {
    assert.ok(a.context.thread in byThread, `unexpected thread ${a.context.thread}`);
    byThread[a.context.thread].push(a.context.seq);
  }
  const expected = range(0, PER_THREAD);
  for (const [thread, seqs] of Object.entries(byThread)) {
    assert.equal(seqs.length, PER_THREAD, `${thread}: ${seqs.length} actions written, ${PER_THREAD} called`);
    assert.deepEqual(seqs, expected, `${thread}: every action exactly once, in its call order`);
  }
  assert.equal(actions.length, 3 * PER_THREAD, 'no other action');
  const sessions = new Set(docs.map((d) => d.session.id));
  assert.equal(sessions.size, 1, `one session across threads (got ${[...sessions]})`);
  for (const r of reports) assert.equal(r.sessionId, [...sessions][0], `worker ${r.tag} sees the same session`);
  assert.ok(actions.every((a) => a.view.name === 'Shared'), 'workers attach to the same scopes (the view started on main)');

  // A worker whose work is done exits by itself.
  const codes = await withTimeout(Promise.all(workers.map((x) => x.exit)), 15_000, 'the workers to exit by themselves');
  assert.deepEqual(codes, [0, 0], 'workers exit cleanly');
});

test('a worker terminated with events queued does not break the pipeline of the other threads', async (t) => {
  const dir = tmpDir(t);
  const options = pipelineOptions(dir, { turnBudgetMs: 1, diskQuotaBytes: 64 * 1024 * 1024 });
  const p = attachPipeline(t, options);
  p.startView('shared', 'Shared');
  const w = startWorker(options, 'doomed', { spinAfterBurst: true });
  t.after(() => w.w.terminate());
  const report = await withTimeout(w.done, 30_000, 'the worker burst');
  assert.ok(report.queueLength > 0, `the worker had events queued when terminated (${report.queueLength})`);
  await withTimeout(w.w.terminate(), 15_000, 'terminate()');
  assert.deepEqual(w.errors, [], 'the worker raised no error');

  p.addAction('custom', 'main-after', { thread: 'main', seq: 0 });
  assert.equal(p.flush(), true, 'the main thread still flushes');
  assert.equal(p.stats().queueLength, 0, "the terminated worker's queue no longer counts");
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  const doomed = actionSeqs(actions.filter((a) => a.context.thread === 'doomed'));
  for (let i = 0; i < doomed.length; i++) assert.equal(doomed[i], i, "the worker's written actions are a prefix of its calls, once each");
  assert.equal(actions.at(-1).action.target.name, 'main-after', 'the main thread writes after the termination');
  t.diagnostic(`${doomed.length} of ${PER_THREAD} actions of the terminated worker were written`);
});
