// Memory a queued backlog holds: 5,000 queued `addAction` calls (the queue's default bound), their
// attributes taking a known number of JSON bytes, against the resident memory the backlog adds.
//
//   node --expose-gc benches/backlog-memory.mjs
//
// The same attribute object is passed to every call, so the JS heap does not grow with the loop:
// what grows is the captured copies (the native side). Printed: attribute bytes, RSS added, and
// their ratio (the target is at most 1.5x), median over a few fresh runs. No figure is asserted.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadNative } from '../tests/shared/native.mjs';

const EVENTS = 5_000;
const RUNS = 5;

function child() {
  const { RumPipeline } = loadNative();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rum-backlog-'));
  const p = new RumPipeline({ storageDir: dir, applicationId: 'backlog', turnBudgetMs: 1, queueCapacity: EVENTS + 100, diskQuotaBytes: 1 << 30 });
  p.startView('v', 'V');
  const attrs = { message: 'm'.repeat(350), screen: 'home', seq: 12345, ok: true };
  const attrBytes = Buffer.byteLength(JSON.stringify(attrs)) + Buffer.byteLength('customsync message');
  // Spend the turn's budget so that every measured call is queued.
  const start = Date.now();
  while (Date.now() - start < 3) p.addAction('custom', 'warm', attrs);
  const queuedBefore = p.stats().queueLength;
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  for (let i = 0; i < EVENTS; i++) p.addAction('custom', 'sync message', attrs);
  globalThis.gc?.();
  const after = process.memoryUsage().rss;
  const queued = p.stats().queueLength - queuedBefore;
  process.stdout.write(JSON.stringify({ queued, attrBytes: attrBytes * queued, rss: after - before }));
  p.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

if (process.argv[2] === '--child') {
  child();
} else {
  const results = [];
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    results.push(JSON.parse(r.stdout));
  }
  const ratios = results.map((r) => r.rss / r.attrBytes).sort((a, b) => a - b);
  const med = ratios[Math.floor(ratios.length / 2)];
  const r0 = results[0];
  console.log(`queued backlog of ${r0.queued} actions: attributes and strings ${(r0.attrBytes / 1024).toFixed(0)} KiB`);
  console.log(`RSS added, ${RUNS} fresh processes: ${results.map((r) => (r.rss / 1024).toFixed(0) + ' KiB').join(', ')}`);
  console.log(`ratio RSS / argument bytes: median ${med.toFixed(2)}x (min ${ratios[0].toFixed(2)}, max ${ratios.at(-1).toFixed(2)}); target at most 1.5x: ${med <= 1.5 ? 'met' : 'NOT met'}`);
}
