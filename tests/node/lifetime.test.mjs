// Lifetime: pipelines created and dropped in a loop leak no threads or file handles; a script
// that never calls stop() still exits by itself once its queued work is done, with every
// document on disk.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { batchFileText } from '../shared/util.mjs';

import {
  APP_ID,
  actionSeqs,
  attachPipeline,
  childScript,
  drainBatches,
  loadNative,
  pipelineOptions,
  range,
  readBatchFiles,
  runNode,
  tmpDir,
} from './lib/helpers.mjs';

test('pipelines created and dropped in a loop leak no threads or file handles', async (t) => {
  loadNative(); // fail here, clearly, if the library is missing
  const base = tmpDir(t);
  const r = await runNode(['--expose-gc', childScript('child-lifetime.mjs'), base, APP_ID, '30'], { timeoutMs: 60_000 });
  assert.equal(r.timedOut, false, `the child exited by itself (stdout: ${r.stdout}, stderr: ${r.stderr.slice(0, 2000)})`);
  assert.equal(r.code, 0, `the child succeeded (stderr: ${r.stderr.slice(0, 2000)})`);
  const { before, after, cycles } = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.equal(cycles, 34);
  assert.ok(after.threads <= before.threads + 2, `threads: ${before.threads} before, ${after.threads} after 30 pipelines`);
  assert.ok(after.fds <= before.fds + 4, `file descriptors: ${before.fds} before, ${after.fds} after 30 pipelines`);
  // Dropped pipelines lose nothing: flushed or not, stopped or not, every action is in a batch.
  for (let i = 0; i < cycles; i++) {
    const seqs = readBatchFiles(path.join(base, `p${i}`)).docs.filter((d) => d.type === 'action').map((d) => d.context.i);
    assert.deepEqual(seqs, range(0, 2000), `pipeline ${i} (flushed: ${i % 3 === 0}, stopped: ${i % 2 === 0}) wrote every action`);
  }
});

test('a script that never calls stop() exits once its queued work is done, documents on disk', async (t) => {
  loadNative();
  const dir = tmpDir(t);
  // A quota the burst cannot reach: every document must stay on disk.
  const options = pipelineOptions(dir, { diskQuotaBytes: 64 * 1024 * 1024 });
  const r = await runNode([childScript('child-no-stop.mjs'), JSON.stringify(options), '3700'], { timeoutMs: 30_000 });
  assert.equal(r.timedOut, false, 'the child exited by itself within 30 s (something keeps its event loop alive)');
  assert.equal(r.code, 0, `the child succeeded (stderr: ${r.stderr.slice(0, 2000)})`);
  const queued = Number(/queued (\d+)/.exec(r.stdout)?.[1]);
  assert.ok(queued > 0, `the burst left work queued when the script returned (queueLength ${queued})`);

  // On disk, before anything reopens the directory: every line of every file in rum/ parses.
  const rum = path.join(dir, 'rum');
  const raw = [];
  for (const name of fs.readdirSync(rum)) {
    if (!fs.statSync(path.join(rum, name)).isFile()) continue;
    const text = batchFileText(path.join(rum, name));
    for (const line of text.split('\n').filter(Boolean)) {
      let doc;
      assert.doesNotThrow(() => (doc = JSON.parse(line)), `${name}: a line does not parse`);
      if (doc.type === 'action') raw.push(doc.context.seq);
    }
  }
  assert.deepEqual([...raw].sort((a, b) => a - b), range(0, 3700), 'every action is on disk after the child exited');

  const p = attachPipeline(t, options);
  assert.deepEqual(actionSeqs(drainBatches(p).flatMap((b) => b.docs)), range(0, 3700), 'and readable, in order, through nextBatch');
});

test('a pipeline collected with events queued calls no JS from its finalizer and loses nothing', async (t) => {
  loadNative();
  const dir = tmpDir(t);
  const r = await runNode(['--expose-gc', childScript('child-finalizer.mjs'), dir], { timeoutMs: 30_000 });
  assert.equal(r.timedOut, false, `the child exited by itself (stderr: ${r.stderr.slice(0, 2000)})`);
  assert.equal(r.code, 0, `the child succeeded (signal ${r.signal}, stderr: ${r.stderr.slice(0, 2000)})`);
  const res = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.ok(res.queued > 0, 'events were queued when the pipeline was dropped');
  assert.deepEqual(res.setTimeoutAfterDrop, [], 'the finalizer scheduled no timer (it called into JS)');
  assert.equal(res.written, res.called, 'every action called before the drop is on disk');
});

test('the directory of a collected pipeline can be opened again while its writer finishes', async (t) => {
  loadNative();
  const dir = tmpDir(t);
  const r = await runNode(['--expose-gc', childScript('child-reopen.mjs'), dir], { timeoutMs: 60_000 });
  assert.equal(r.timedOut, false, `the child exited by itself (stderr: ${r.stderr.slice(0, 2000)})`);
  assert.equal(r.code, 0, `the child succeeded (signal ${r.signal}, stderr: ${r.stderr.slice(0, 2000)})`);
  const res = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.equal(res.error, undefined, `new RumPipeline on the same directory threw: ${res.error?.message}`);
  assert.equal(res.attachedToOld, false, 'the old pipeline was collected before the reopen (the case under test)');
  assert.equal(res.flushed, true);
  assert.equal(res.actions, res.count, 'every action of the collected pipeline is readable after the reopen');
  assert.equal(res.inOrder, true, 'each exactly once');
});
