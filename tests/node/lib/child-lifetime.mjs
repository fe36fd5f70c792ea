// A child process for lifetime.test.mjs, run with --expose-gc: creates and drops pipelines in a
// loop (flushed or not, stopped or not) and reports the thread and file-descriptor counts of the
// process before and after, once garbage collection has had the chance to finalize them.
// Usage: node --expose-gc child-lifetime.mjs <baseDir> <applicationId> <iterations>

import fs from 'node:fs';
import path from 'node:path';

import { loadNative } from './native.mjs';

const [base, applicationId, iterations] = process.argv.slice(2);
const { RumPipeline } = loadNative();
const counts = () => ({
  threads: fs.readdirSync('/proc/self/task').length,
  fds: fs.readdirSync('/proc/self/fd').length,
});
const tick = () => new Promise((r) => setTimeout(r, 20));

let n = 0;
async function cycle() {
  const dir = path.join(base, `p${n}`);
  fs.mkdirSync(dir);
  let p = new RumPipeline({ storageDir: dir, applicationId, service: 'lifetime', version: '1' });
  p.startView('v', 'V');
  for (let i = 0; i < 2000; i++) p.addAction('tap', `a${i}`, { i, pad: 'l'.repeat(100) });
  // Some are flushed, some stopped, some just dropped with an open batch file and queued work.
  if (n % 3 === 0 && !p.flush()) throw new Error(`flush() failed in cycle ${n}`);
  if (n % 2 === 0) p.stop();
  p = null;
  n++;
  globalThis.gc();
  await tick();
}

async function settle() {
  for (let i = 0; i < 10; i++) {
    globalThis.gc();
    await tick();
  }
}

// Warm up: anything the library or Node creates once per process is counted in the baseline.
for (let i = 0; i < 4; i++) await cycle();
await settle();
const before = counts();
for (let i = 0; i < Number(iterations); i++) await cycle();
// Finalizers and thread joins may take a moment: poll for up to 5 s.
let after = counts();
for (let i = 0; i < 50 && (after.threads > before.threads || after.fds > before.fds); i++) {
  await settle();
  after = counts();
}
process.stdout.write(`${JSON.stringify({ before, after, cycles: n })}\n`);
