// The capture loop run cold, counted: the JS thread's instructions per call of a burst's loop in a
// fresh process, for the HAR's capture buffer (`capture`: CallBuffer.addAction, built from ets/ by
// capture-code.mjs) and for the floor (`snapshot`: a JS loop that only snapshots the arguments,
// scripts/burst's floor), with scripts/burst's arguments. This is the cost that decides a cold
// burst's stall (docs/benchmarks.md, "The capture, counted"): wall time on a shared VM moves by
// more than a 10% change, instructions do not.
//
//   node benches/cold-capture.mjs            (needs valgrind; apt-get install valgrind)
//
// Each row is one fresh process under callgrind, its JS thread only, collecting only inside the
// loop: the loop runs as the callback of a one-element `Array.prototype.forEach`, the one builtin
// the child calls nowhere else, and callgrind collects while that builtin is on the stack
// (--toggle-collect), so start-up, module loading and teardown are left out, and the engine's
// work the loop causes (lazy compiles, inline caches, scavenges on the JS thread) is in.
// Two tiers: V8 as it runs (TurboFan's background compiles finish at times the machine decides,
// so those rows are the median of RUNS processes), and `--no-opt` (interpreter and baseline code
// only: what the first two thousand or so calls of a cold burst run; one process, repeatable).
// Each row also gives the JS heap's growth across the loop per call (the median process): what a
// call allocates, the copy it keeps and its garbage, which later scavenges pay for.
// The children get a young generation large enough that no scavenge runs inside the loop: when
// one runs depends on how full the heap was when the loop began (module loading, the warm-up),
// which differs between the variants and moved a row by thousands of instructions a call; what a
// variant allocates still costs its scavenges later, outside the count.
// The capture's sink is a no-op: no handover happens inside the loop (they come at the turn's end
// and in later slices, which scripts/burst measures), so the native library is not loaded.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildAttributes } from './burst/scenarios.mjs';
import { buildCaptureCode, loadCallBuffer } from './capture-code.mjs';

const SELF = fileURLToPath(import.meta.url);
const SIZES = [1_000, 3_700];
/** Processes per row when TurboFan may run: its compiles finish at machine-dependent times. */
const RUNS = 3;

/** scripts/burst's loop body, on the variant's `addAction`. */
function burst(sdk, n, attrs) {
  for (let i = 0; i < n; i++) sdk.addAction('custom', 'sync message ' + i, attrs);
}

async function child(variant, n) {
  let sdk;
  if (variant === 'snapshot') {
    const kept = [];
    sdk = { addAction: (type, name, attributes) => kept.push([type, name, { ...attributes }, Date.now()]) };
  } else {
    const CallBuffer = await loadCallBuffer();
    const limits = { eventMaxBytes: 512 * 1024, turnBudgetMs: 4, capacity: 5000 };
    sdk = new CallBuffer(() => false, limits, Date.now); // the HAR's clock (RumMonitor)
    sdk.startView('main', 'MessageListPage', { 'view.kind': 'list' });
  }
  const attrs = buildAttributes();
  await new Promise((r) => setTimeout(r, 100)); // as scripts/burst's warm-up pause
  // scripts/burst reads the clock before its loop: Node loads its performance module on first use,
  // which would otherwise land in the floor's first call.
  performance.now();
  // The young generation holds the loop's allocations without a scavenge (see profile), so the
  // heap's growth across the loop is what the loop allocated, kept or not.
  const heapBefore = process.memoryUsage().heapUsed;
  [n].forEach((count) => burst(sdk, count, attrs));
  const heapAfter = process.memoryUsage().heapUsed;
  console.log(JSON.stringify({ bytesPerCall: (heapAfter - heapBefore) / n }));
}

function profile(variant, n, flags) {
  const out = path.join(os.tmpdir(), `rum-cold-capture-${variant}-${n}-${process.pid}.out`);
  const r = spawnSync('valgrind', ['--tool=callgrind', '--separate-threads=yes', '--toggle-collect=Builtins_ArrayForEach',
    `--callgrind-out-file=${out}`, process.execPath, '--min-semi-space-size=64', '--max-semi-space-size=64', ...flags, SELF, '--child', variant, String(n)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind ${variant} ${n} failed: ${r.stderr.slice(-2000)}`);
  const main = fs.existsSync(`${out}-01`) ? `${out}-01` : out;
  let total = 0;
  for (const line of fs.readFileSync(main, 'utf8').split('\n')) {
    if (line.startsWith('summary:') || line.startsWith('totals:')) total = Math.max(total, Number(line.split(/\s+/)[1]));
  }
  for (const f of fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(path.basename(out)))) fs.rmSync(path.join(os.tmpdir(), f));
  if (total === 0) throw new Error(`no instructions collected in ${main}: was the loop run inside Array.prototype.forEach?`);
  const line = r.stdout.split('\n').find((l) => l.startsWith('{"bytesPerCall"'));
  if (!line) throw new Error(`the child printed no bytesPerCall: ${r.stdout.slice(-500)}`);
  return { instructions: total / n, bytes: JSON.parse(line).bytesPerCall };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]));
} else {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    console.error('benches/cold-capture.mjs needs valgrind (apt-get install valgrind)');
    process.exit(2);
  }
  if (!process.env.RUM_CAPTURE_JS) process.env.RUM_CAPTURE_JS = (await buildCaptureCode()).file;
  console.log(`The capture loop run cold: JS-thread instructions per call, fresh processes (callgrind)\ncapture code: ${process.env.RUM_CAPTURE_JS}`);
  for (const [tier, flags, runs] of [['every tier', [], RUNS], ['--no-opt', ['--no-opt'], 1]]) {
    for (const n of SIZES) {
      const row = {};
      for (const variant of ['snapshot', 'capture']) {
        const all = Array.from({ length: runs }, () => profile(variant, n, flags));
        const instructions = all.map((x) => x.instructions);
        row[variant] = { median: median(instructions), all: instructions, bytes: median(all.map((x) => x.bytes)) };
      }
      const fmt = (v) => `${Math.round(row[v].median)}${runs > 1 ? ` [${row[v].all.map(Math.round).join(', ')}]` : ''} ` +
        `(${Math.round(row[v].bytes)} bytes allocated)`;
      console.log(`${tier.padEnd(10)} ${String(n).padStart(5)} calls: capture ${fmt('capture')}, snapshot floor ${fmt('snapshot')}: ` +
        `${(row.capture.median / row.snapshot.median).toFixed(2)}x the floor`);
    }
  }
}
