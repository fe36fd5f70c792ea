// A deterministic profile of the caller's cost: Node-API calls and instructions per call of
// `addAction` through the HAR's capture buffer (`buffered`: every Node-API call and native
// instruction on the JS thread of every handover, `ingest`, and of the dispatcher's timers, the
// slices, amortized over the burst's calls: the parse of a slice's text runs on the parse thread
// and is not counted; its instructions include processing, so only its Node-API calls compare), `addAction` (queued and inline), `addActions` (attributes as plain objects, and as Maps, the way
// Sendable events carry them) and the floor (`copyArgsFloor`, a native function that only copies
// the same arguments), counted by valgrind's callgrind, which counts instructions,
// not seconds, so the figures repeat whatever else the machine is doing.
//
//   node benches/napi-calls.mjs            (needs valgrind; apt-get install valgrind)
//
// `lone` is one buffered `addAction` a turn (each crosses at its turn's end, as at 300 calls a
// second) and `loneFloor` the same turns with only a JS snapshot of the arguments: both are counted
// on the whole JS thread, engine and event loop included, and their difference is what a lone call
// costs that thread beyond the floor (`NAPI_CALLS_ONLY=lone,loneFloor`).
//
// Each variant runs in its own process under callgrind twice, with N and 3N calls; the difference
// divided by 2N is the cost of one call, free of start-up and teardown. Only the native callback of
// the measured method is counted, on the JS thread (callgrind's --toggle-collect and per-thread
// profiles): the JS loop, the writer thread and the later processing of queued calls are not the
// caller's capture cost. `inline` includes the processing (it runs inside the call, by design).
// The children get a young generation large enough that no scavenge runs inside the measured
// calls: a GC's cost depends on what else is alive (the 3N run's longer list), which made the
// per-call figure move by a thousand instructions from run to run.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { libraryPath, loadNative } from '../tests/shared/native.mjs';
import { buildCaptureCode, bufferFor, loadCallBuffer } from './capture-code.mjs';

const SELF = fileURLToPath(import.meta.url);
/** The library measured, as callgrind names its object (whatever the file is called). */
const LIBRARY = fs.realpathSync(libraryPath());
const N = 2_000;

/** One variant's loop: `n` calls, the same arguments as scripts/burst's actions. */
async function child(variant, n) {
  const { RumPipeline, copyArgsFloor } = loadNative();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rum-napi-calls-'));
  const attrs = { seq: 1, screen: 'home', pad: 'x'.repeat(350), ok: true, list: [1, 2, 3] };
  // queued: a 1 ms budget that the first calls spend (then every call is queued, as in a burst);
  // inline: a budget no loop spends.
  // lone: the same, so that no turn looks busy under callgrind's slowdown (a lone call is far
  // below the budget at full speed, and schedules no timer).
  const roomy = variant === 'inline' || variant === 'lone';
  const p = new RumPipeline({ storageDir: dir, applicationId: 'napi-calls', turnBudgetMs: roomy ? 1000 : 1, diskQuotaBytes: 1 << 30, queueCapacity: 1_000_000, flushTimeoutMs: 60_000 });
  p.startView('v', 'V');
  const start = Date.now();
  // Through addActions, which is not counted here: the warm-up's varying number of calls would
  // otherwise land in the N and 3N runs unequally.
  while (variant === 'queued' && (Date.now() - start < 2 || p.stats().callsQueued === 0)) {
    p.addActions([{ type: 'tap', name: 'warm', attributes: attrs }]);
  }
  if (variant === 'lone' || variant === 'loneFloor') {
    // One call a turn, as at 300 calls a second: through the capture buffer (each crosses at its
    // turn's end, parsed there), or only snapshotted in JS (the floor of scripts/burst).
    const calls = variant === 'lone' ? bufferFor(await loadCallBuffer(), p, { turnBudgetMs: 1000 }) : null;
    const kept = [];
    for (let i = 0; i < n; i++) {
      if (calls) calls.addAction('tap', 'buy', attrs);
      else kept.push(['tap', 'buy', { ...attrs }, Date.now()]);
      await new Promise((r) => setTimeout(r, 0));
    }
  } else if (variant === 'buffered') {
    // A burst through the capture buffer, then its slices on later turns until all crossed.
    const calls = bufferFor(await loadCallBuffer(), p, { capacity: 1_000_000 });
    for (let i = 0; i < n; i++) calls.addAction('tap', 'buy', attrs);
    while (calls.stats().buffered > 0) await new Promise((r) => setTimeout(r, 0));
  } else if (variant === 'addActions' || variant === 'addActionsMap') {
    // addActionsMap: the attributes in a Map, as a Sendable RumAction carries them (collections.Map).
    const attributes = variant === 'addActionsMap' ? new Map(Object.entries(attrs)) : attrs;
    const list = Array.from({ length: n }, (_, i) => ({ type: 'tap', name: `a${i}`, attributes }));
    globalThis.__mark?.();
    p.addActions(list);
  } else if (variant === 'floor') {
    for (let i = 0; i < n; i++) copyArgsFloor('tap', 'buy', attrs);
  } else {
    for (let i = 0; i < n; i++) p.addAction('tap', 'buy', attrs);
  }
  // Under valgrind the writer is slow: stop() waits for it (flushTimeoutMs), the removal retries.
  p.stop();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
}

/** Per-function call counts and the JS thread's instructions from a callgrind output file. */
function parse(file) {
  // Compressed names: `(id) name` the first time, `(id)` after; objects and functions have their
  // own id spaces.
  const spaces = { ob: new Map(), fn: new Map() };
  const name = (space, s) => {
    const m = s.match(/^\((\d+)\)(?: (.*))?$/);
    if (!m) return s;
    if (m[2]) spaces[space].set(m[1], m[2]);
    return spaces[space].get(m[1]) ?? m[1];
  };
  const calls = new Map();
  let total = 0;
  let callee = null;
  let obName = '';
  let inLib = false;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('ob=')) obName = name('ob', line.slice(3));
    else if (line.startsWith('cob=')) name('ob', line.slice(4));
    else if (line.startsWith('fn=')) {
      name('fn', line.slice(3));
      inLib = obName === LIBRARY;
    } else if (line.startsWith('cfn=')) callee = name('fn', line.slice(4));
    else if (line.startsWith('calls=') && callee !== null) {
      const n = Number(line.slice(6).split(' ')[0]);
      if (inLib && /^(napi_[a-z0-9_]+|malloc|realloc|calloc|free)$/.test(callee)) calls.set(callee, (calls.get(callee) ?? 0) + n);
      callee = null;
    } else if (line.startsWith('summary:') || line.startsWith('totals:')) {
      total = Math.max(total, Number(line.split(/\s+/)[1]));
    }
  }
  return { calls, total };
}

function profile(variant, n) {
  const out = path.join(os.tmpdir(), `rum-napi-calls-${variant}-${n}-${process.pid}.out`);
  // Only the native callback of the measured method is collected: the JS loop around it and the
  // engine's call into native code are the same for every variant, and later processing (slices,
  // the final drain) is not the caller's capture cost, except for `buffered`, whose handovers
  // leave their processing to the dispatcher's timers: those are collected too.
  // The methods' callbacks are the receiver-checked ones of src/napi/methods.rs (`on_prototype::<method>`).
  // `lone` and `loneFloor` collect the whole JS thread (engine, event loop and all): their
  // difference is all a lone call costs that thread beyond a JS snapshot.
  const collect = {
    lone: [],
    loneFloor: [],
    buffered: ['*on_prototype::ingest', '*HostScheduler::new::{{closure}}*'],
    floor: ['*copy_args_floor_c_callback*'],
    addActions: ['*on_prototype::add_actions'],
    addActionsMap: ['*on_prototype::add_actions'],
  }[variant] ?? ['*on_prototype::add_action'];
  const toggles = collect.map((c) => `--toggle-collect=${c}`);
  const r = spawnSync('valgrind', ['--tool=callgrind', '--separate-threads=yes', ...toggles, `--callgrind-out-file=${out}`, process.execPath, '--max-semi-space-size=64', SELF, '--child', variant, String(n)], {
    env: { ...process.env, RUM_NATIVE_LIB: libraryPath(), RUM_NATIVE_QUIET: '1' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`callgrind ${variant} ${n} failed: ${r.stderr.slice(-2000)}`);
  // The JS thread's file is the first (thread 1); the writer's is another.
  const main = `${out}-01`;
  const parsed = parse(fs.existsSync(main) ? main : out);
  if (parsed.calls.size === 0 && variant !== 'loneFloor') throw new Error(`no Node-API call or allocation of ${LIBRARY} found in ${main}`);
  for (const f of fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(path.basename(out)))) fs.rmSync(path.join(os.tmpdir(), f));
  return parsed;
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]));
} else {
  if (!process.env.RUM_CAPTURE_JS) process.env.RUM_CAPTURE_JS = (await buildCaptureCode()).file;
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    console.error('benches/napi-calls.mjs needs valgrind (apt-get install valgrind)');
    process.exit(2);
  }
  console.log(`Per call, JS thread only (callgrind, N = ${N} vs ${3 * N}): ${libraryPath()}`);
  const rows = [];
  // NAPI_CALLS_ONLY=queued,inline measures those (and the floor, which every ratio needs) only.
  const only = process.env.NAPI_CALLS_ONLY?.split(',');
  const variants = ['floor', 'buffered', 'queued', 'inline', 'addActions', 'addActionsMap', 'loneFloor', 'lone'].filter((v) => v === 'floor' || !only || only.includes(v));
  for (const variant of variants) {
    const [a, b] = [profile(variant, N), profile(variant, 3 * N)];
    const per = (x, y) => (y - x) / (2 * N);
    const fns = new Set([...a.calls.keys(), ...b.calls.keys()]);
    const napi = {};
    for (const f of fns) {
      const v = per(a.calls.get(f) ?? 0, b.calls.get(f) ?? 0);
      if (v >= 0.05) napi[f] = Math.round(v * 100) / 100;
    }
    const sum = (re) => Object.entries(napi).filter(([f]) => re.test(f)).reduce((s, [, v]) => s + v, 0);
    rows.push({ variant, instructions: Math.round(per(a.total, b.total)), napiCalls: sum(/^napi_/), allocs: sum(/^(malloc|realloc|calloc)$/), frees: sum(/^free$/), napi });
  }
  const floor = rows[0];
  for (const r of rows) {
    console.log(
      `\n${r.variant.padEnd(10)} ${String(r.instructions).padStart(8)} instructions (${(r.instructions / floor.instructions).toFixed(2)}x the floor), ` +
        `${r.napiCalls.toFixed(1)} Node-API calls, ${r.allocs.toFixed(1)} allocations and ${r.frees.toFixed(1)} frees on the caller's turn`,
    );
    for (const [f, v] of Object.entries(r.napi).sort((x, y) => y[1] - x[1])) console.log(`  ${String(v).padStart(6)}  ${f}`);
  }
  const [lone, loneFloor] = ['lone', 'loneFloor'].map((v) => rows.find((r) => r.variant === v));
  if (lone && loneFloor) {
    console.log(`\nA lone call (one a turn), the whole JS thread: ${lone.instructions - loneFloor.instructions} instructions beyond the JS snapshot's turn (${loneFloor.instructions} a turn)`);
  }
}
