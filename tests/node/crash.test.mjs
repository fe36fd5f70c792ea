// A child process killed with SIGKILL mid-burst: everything it flushed before the kill (it prints
// a line after each flush() that returned true) is readable after reopening a pipeline on the same
// directory, through nextBatch until null, and every line parses (docs/design.md "Storage rules", crash recovery).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';

import {
  actionSeqs,
  attachPipeline,
  CHILD_ENV,
  childScript,
  drainBatches,
  loadNative,
  pipelineOptions,
  REPO_ROOT,
  readBatchFiles,
  runNode,
  tmpDir,
} from './lib/helpers.mjs';

test('SIGKILL mid-burst: every flushed document survives, every line parses', async (t) => {
  loadNative(); // fail here, clearly, if the library is missing
  const dir = tmpDir(t);
  let lastFlushed = -1;
  let flushes = 0;
  let killed = false;
  // A quota the burst cannot reach: quota eviction of the oldest batches is not what this tests.
  const options = pipelineOptions(dir, { diskQuotaBytes: 256 * 1024 * 1024 });
  const r = await runNode([childScript('child-crash-writer.mjs'), JSON.stringify(options)], {
    timeoutMs: 60_000,
    onLine(line, child) {
      if (killed) return;
      const m = /^(flushed|unflushed) (\d+)$/.exec(line);
      if (m?.[1] === 'flushed') {
        lastFlushed = Number(m[2]);
        flushes++;
      } else if (m && flushes >= 3) {
        // After 3 flushes, once a burst went to the writer unflushed: the child is writing an
        // unsealed batch and starting its next burst.
        killed = true;
        child.kill('SIGKILL');
      }
    },
  });
  assert.equal(r.timedOut, false, `the child reached 3 flushes in time (stderr: ${r.stderr.slice(0, 2000)})`);
  assert.equal(r.signal, 'SIGKILL', `the child was killed (code ${r.code}, stderr: ${r.stderr.slice(0, 2000)})`);
  assert.ok(lastFlushed > 0, 'the child flushed something before the kill');

  const p = attachPipeline(t, options);
  // The writer checks and seals (compresses) the batches it recovered first thing: read after.
  assert.equal(p.flush(), true);

  // Recovery at open: the unsealed batch is sealed and a torn last line dropped, so the files
  // themselves are valid NDJSON now (readBatchFiles parses every line strictly).
  const onDisk = actionSeqs(readBatchFiles(dir).docs);
  assert.ok(onDisk.length > 0, 'batch files are on disk after reopening');

  const batches = drainBatches(p);
  const seqs = actionSeqs(batches.flatMap((b) => b.docs));
  const counts = new Map();
  for (const s of seqs) counts.set(s, (counts.get(s) ?? 0) + 1);
  const missing = [];
  for (let s = 0; s <= lastFlushed; s++) if (!counts.has(s)) missing.push(s);
  assert.deepEqual(missing.slice(0, 20), [], `${missing.length} actions flushed before the kill are missing (last flushed ${lastFlushed})`);
  const dupes = [...counts].filter(([, c]) => c > 1).map(([s]) => s);
  assert.deepEqual(dupes.slice(0, 20), [], `${dupes.length} actions appear more than once`);
  for (let i = 1; i < seqs.length; i++) {
    assert.ok(seqs[i] > seqs[i - 1], `actions come back in call order (at ${i}: ${seqs[i - 1]}, ${seqs[i]})`);
  }
  assert.equal(p.nextBatch(), null);
  t.diagnostic(`last flushed seq ${lastFlushed}; ${seqs.length} actions recovered in ${batches.length} batches (highest seq ${seqs.at(-1)})`);
});

test('a closed stderr never turns a log line into an exception', async (t) => {
  loadNative();
  const dir = tmpDir(t);
  // Logging on (not quiet), to a pipe nobody reads any more.
  const env = { ...CHILD_ENV() };
  delete env.RUM_NATIVE_QUIET;
  const child = spawn(process.execPath, [childScript('child-closed-stderr.mjs'), dir], { env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.destroy();
  let stdout = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (c) => (stdout += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code, signal] = await new Promise((r) => child.on('close', (c, s) => r([c, s])));
  clearTimeout(timer);
  assert.equal(signal, null, `the child died with ${signal}`);
  assert.equal(code, 0, `the child failed (stdout: ${stdout})`);
  const res = JSON.parse(stdout.trim().split('\n').at(-1));
  for (const [k, v] of Object.entries(res)) {
    assert.equal(typeof v, 'boolean', `${k}() returned a boolean instead of throwing: ${JSON.stringify(v)}`);
  }
});
