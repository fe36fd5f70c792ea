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

const EVENTS = Number(process.env.BACKLOG_EVENTS ?? 5_000);
const RUNS = 5;

function child(variant) {
  const { RumPipeline, copyArgsFloor } = loadNative();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rum-backlog-'));
  const p = new RumPipeline({ storageDir: dir, applicationId: 'backlog', turnBudgetMs: 1, queueCapacity: 1_000_000, diskQuotaBytes: 1 << 30 });
  p.startView('v', 'V');
  const attrs = { message: 'm'.repeat(350), screen: 'home', seq: 12345, ok: true };
  const attrBytes = Buffer.byteLength(JSON.stringify(attrs)) + Buffer.byteLength('customsync message');
  // Spend the turn's budget so that every measured call is queued.
  const start = Date.now();
  while (Date.now() - start < 3) p.addAction('custom', 'warm', attrs);
  const queuedBefore = p.stats().queueLength;
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  if (variant === 'floor') for (let i = 0; i < EVENTS; i++) copyArgsFloor('custom', 'sync message', attrs);
  else for (let i = 0; i < EVENTS; i++) p.addAction('custom', 'sync message', attrs);
  globalThis.gc?.();
  const after = process.memoryUsage().rss;
  const queued = variant === 'floor' ? EVENTS : p.stats().queueLength - queuedBefore;
  process.stdout.write(JSON.stringify({ queued, attrBytes: attrBytes * queued, rss: after - before }));
  p.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}

if (process.argv[2] === '--child') {
  child(process.argv[3]);
} else {
  // The floor's loop (the same calls, copying and dropping the arguments) measures what the loop
  // itself adds to the process (the engine's heap, allocator slack): subtracted from the backlog's.
  const run = (variant) => {
    const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', variant], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout);
  };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const queued = [];
  const floor = [];
  for (let i = 0; i < RUNS; i++) {
    queued.push(run('queued'));
    floor.push(run('floor'));
  }
  const kib = (b) => `${(b / 1024).toFixed(0)} KiB`;
  const held = median(queued.map((r) => r.rss)) - median(floor.map((r) => r.rss));
  const q0 = queued[0];
  console.log(`queued backlog of ${q0.queued} actions: attributes and strings ${kib(q0.attrBytes)}`);
  console.log(`RSS added, median of ${RUNS} fresh processes each: backlog ${kib(median(queued.map((r) => r.rss)))}, floor loop ${kib(median(floor.map((r) => r.rss)))}`);
  const ratio = held / q0.attrBytes;
  console.log(`held by the backlog (backlog - floor): ${kib(held)}, ${(held / q0.queued).toFixed(0)} bytes per event: ${ratio.toFixed(2)}x the argument bytes; target at most 1.5x: ${ratio <= 1.5 ? 'met' : 'NOT met'}`);
}
