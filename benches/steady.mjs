#!/usr/bin/env node
// Steady-state cost of the native module (issue 25): actions at a steady rate (30 and 300 per
// second; every 10 ms, the actions due by then, as scripts/burst's rate scenarios), measured
// beside the floor (a JS loop that only snapshots the arguments) and the two plain-JS
// peers of scripts/burst (the JS queue, the pre-queue baseline SDK) in the same run, each sample in
// a fresh process, variants alternating.
//
//   node benches/steady.mjs [--samples 5] [--seconds 6] [--rates 30,300] [--no-strace]
//                           [--lib PATH] [--before PATH [--before-capture FILE]]
//
// --before PATH adds a variant "before" (another build of the library, e.g. the previous commit's)
// so that before and after are measured in the same run; --before-capture FILE gives that variant
// another build of the capture code too (a CallBuffer.js built by benches/capture-code.mjs from the
// earlier commit's ets/).
//
// Per action, medians and p95 over the samples:
//   - process CPU (process.cpuUsage: every thread) and UI-thread CPU (/proc/self/task/<pid>/schedstat),
//     the variant's and beyond the floor's median;
//   - the writer thread ("rum-writer", found by name in /proc/self/task/*/comm): its CPU
//     (schedstat) and its voluntary context switches (/proc/self/task/<tid>/status): wake-ups;
//   - system calls per action (one more sample per variant and rate under `strace -f -ff -ttt`,
//     counted within the measured window): the whole process and the writer thread, by name;
//   - idle: the writer's wake-ups during 1 s with no event after the run (and its flush);
//   - JS timers: the setTimeout calls the SDK made (native: turn ends, slices, views due; the JS
//     queue: its turn ends and slices);
//   - the calls alone, in one process: ticks of native addAction and of the floor take turns
//     (and of "before", its library and capture code loaded beside, when --before is given), the
//     wall time inside the calls per action (the UI thread runs throughout a call), so the
//     process-to-process spread of the per-thread CPU figures does not enter this one; and in the
//     same process the UI thread's CPU (schedstat, brought up to date at each tick's start) from
//     one tick's start to the next's, charged to the tick's variant, each SDK timer's callback
//     measured and charged to the variant that scheduled it. With three variants taking turns
//     each sees a third of the rate.
// Nothing asserts a time; the targets are printed as met / NOT met.

import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { libraryPath, loadNative } from '../tests/shared/native.mjs';
import { createTarget } from './burst/variants.mjs';
import { buildAttributes } from './burst/scenarios.mjs';
import { bufferFor, buildCaptureCode } from './capture-code.mjs';

const SELF = fileURLToPath(import.meta.url);
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const flag = (name) => args.includes(`--${name}`);


// ---------------------------------------------------------------------------------------------
// One sample, in its own process.

function taskDir(tid) {
  return `/proc/self/task/${tid}`;
}

function schedNs(tid) {
  try {
    return Number(fs.readFileSync(`${taskDir(tid)}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

function switches(tid) {
  try {
    const s = fs.readFileSync(`${taskDir(tid)}/status`, 'utf8');
    const v = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(s)?.[1]);
    const n = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(s)?.[1]);
    return { voluntary: v, nonvoluntary: n };
  } catch {
    return null;
  }
}

function writerTid() {
  for (const tid of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`${taskDir(tid)}/comm`, 'utf8').trim() === 'rum-writer') return tid;
    } catch {
      // the thread ended
    }
  }
  return null;
}

const settleCell = new Int32Array(new SharedArrayBuffer(4));
function reading(wtid) {
  Atomics.wait(settleCell, 0, 0, 0.1); // the main thread blocks: its schedstat is brought up to date
  const c = process.cpuUsage();
  return {
    processUs: c.user + c.system,
    uiNs: schedNs(process.pid),
    writerNs: wtid ? schedNs(wtid) : null,
    writerSw: wtid ? switches(wtid) : null,
    wallS: Date.now() / 1000,
  };
}

// The driver sleeps with the original setTimeout; every other call of the global (the SDK's timers:
// native's turn ends, slices and views due, taken at construction; the JS SDKs' at each call) is
// counted.
const setTimeoutOf = globalThis.setTimeout;
const sleep = (ms) => new Promise((r) => setTimeoutOf(r, ms));
const sdkTimers = { n: 0 };

/**
 * Actions at `rate`, as scripts/burst's rate scenarios: every 10 ms (drift-corrected), the actions
 * due by then, on `sdkOf(tick)`; `timed(tick, n, ms)` gets the wall time of each tick's calls, and
 * `ticked(tick, n)` is called as each tick starts, before its calls (`n`: the previous tick's actions).
 */
class Paced {
  constructor(rate, attrs) {
    this.rate = rate;
    this.attrs = attrs;
    this.i = 0;
  }

  /** Runs for `ms`; returns the actions sent. */
  async run(ms, sdkOf, timed = null, ticked = null) {
    const t0 = performance.now();
    let sent = 0;
    let previous = 0;
    for (let tick = 1; ; tick++) {
      if (ticked) ticked(tick, previous);
      const now = performance.now() - t0;
      if (now >= ms) break;
      const sdk = sdkOf(tick);
      const due = Math.floor((now * this.rate) / 1000) + 1;
      const n = due - sent;
      previous = n;
      const a = timed && performance.now();
      for (; sent < due; sent++, this.i++) sdk.addAction('custom', 'sync message ' + this.i, this.attrs);
      if (timed && n > 0) timed(tick, n, performance.now() - a);
      await sleep(Math.max(0, tick * 10 - (performance.now() - t0)));
    }
    return sent;
  }
}

async function child() {
  globalThis.setTimeout = function countSdkTimers(fn, ms, ...rest) {
    sdkTimers.n++;
    return setTimeoutOf(fn, ms, ...rest);
  };
  const variant = opt('variant');
  const rate = Number(opt('rate'));
  const seconds = Number(opt('seconds'));
  const lib = opt('lib');
  const attrs = buildAttributes();
  // The burst harness's targets (benches/burst/variants.mjs): the same options and SDKs as
  // scripts/burst; "before" is native from another build of the library.
  const kind = variant === 'before' ? 'native' : variant;
  const dir = kind === 'floor' ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'rum-steady-'));
  const target = createTarget(kind, { storageDir: dir, libPath: lib });
  target.startView('home', 'Home');
  const sdk = target.sdk;
  const hasWriter = kind === 'native';
  const paced = new Paced(rate, attrs);
  const run = (ms) => paced.run(ms, () => sdk);
  await run(1000); // warm-up: JIT, the writer's first batch
  const wtid = hasWriter ? writerTid() : null;
  const a = reading(wtid);
  const timersBefore = sdkTimers.n;
  const actions = await run(seconds * 1000);
  const timers = sdkTimers.n - timersBefore;
  const b = reading(wtid);
  let idle = null;
  if (hasWriter) {
    if (!target.flush().ok) throw new Error('flush did not finish');
    await sleep(100);
    const i0 = reading(wtid);
    await sleep(1000);
    const i1 = reading(wtid);
    idle = {
      wakeups: i1.writerSw && i0.writerSw ? i1.writerSw.voluntary - i0.writerSw.voluntary : null,
      writerCpuUs: i1.writerNs !== null && i0.writerNs !== null ? (i1.writerNs - i0.writerNs) / 1000 : null,
    };
  }
  target.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  const diff = (k) => (a[k] === null || b[k] === null ? null : b[k] - a[k]);
  const out = {
    variant,
    rate,
    actions,
    pid: process.pid,
    writerTid: wtid,
    window: [a.wallS, b.wallS],
    processUs: diff('processUs'),
    uiUs: diff('uiNs') === null ? null : diff('uiNs') / 1000,
    writerUs: diff('writerNs') === null ? null : diff('writerNs') / 1000,
    writerWakeups: a.writerSw && b.writerSw ? b.writerSw.voluntary - a.writerSw.voluntary : null,
    writerPreempted: a.writerSw && b.writerSw ? b.writerSw.nonvoluntary - a.writerSw.nonvoluntary : null,
    timers: kind === 'floor' ? null : timers,
    idle,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

/**
 * The calls alone: the floor's ticks and native's (and, with --before-lib, the earlier build's,
 * its own library and capture code loaded beside) taking turns in this process; µs per action of
 * each, and the UI thread's CPU charged to each.
 */
async function abChild() {
  const rate = Number(opt('rate'));
  const seconds = Number(opt('seconds'));
  // The SDK's timers (the capture buffer's linger and slices, native's turn ends and views due) run
  // on whichever tick's interval they fall in, another variant's as often as their own: each
  // callback's UI-thread CPU is measured, taken off that interval and charged to the variant whose
  // tick (or timer) scheduled it. What the measuring itself adds to a callback (its two reads),
  // found on empty callbacks first, is taken off each.
  let current = 'floor';
  let timerMs = {};
  let readingMs = 0;
  const measured = (owner, fn) => () => {
    const outer = current;
    current = owner;
    Atomics.wait(settleCell, 0, 0, 0.1); // brings this thread's schedstat up to date
    const a = schedNs(process.pid);
    try {
      fn();
    } finally {
      Atomics.wait(settleCell, 0, 0, 0.1);
      const b = schedNs(process.pid);
      if (a !== null && b !== null) timerMs[owner] = (timerMs[owner] ?? 0) + Math.max(0, (b - a) / 1e6 - readingMs);
      current = outer;
    }
  };
  const empty = [];
  for (let i = 0; i < 30; i++) {
    timerMs = {};
    await new Promise((r) => setTimeoutOf(measured('calibration', r), 1));
    empty.push(timerMs.calibration ?? 0);
  }
  readingMs = empty.sort((x, y) => x - y)[empty.length >> 1];
  timerMs = {};
  globalThis.setTimeout = function sdkTimer(fn, ms, ...rest) {
    return setTimeoutOf(measured(current, () => fn(...rest)), ms);
  };
  const dirs = [];
  const sdkDir = () => (dirs.push(fs.mkdtempSync(path.join(os.tmpdir(), 'rum-steady-ab-'))), dirs.at(-1));
  const targets = {
    floor: createTarget('floor', { libPath: opt('lib') }),
    native: createTarget('native', { storageDir: sdkDir(), libPath: opt('lib') }),
  };
  if (opt('before-lib', null)) targets.before = await beforeTarget(opt('before-lib'), opt('before-capture', null), sdkDir());
  const variants = Object.keys(targets);
  const attrs = buildAttributes();
  for (const v of variants) targets[v].startView('home', 'Home');
  const spent = Object.fromEntries(variants.map((v) => [v, []]));
  // The UI thread's CPU from one tick's start to the next one's: the tick's calls and what they
  // left for the event loop, by the variant of the tick; the timers' by their owner.
  const thread = Object.fromEntries(variants.map((v) => [v, []]));
  const timersMs = Object.fromEntries(variants.map((v) => [v, 0])); // of which the SDK's timers
  const paced = new Paced(rate, attrs);
  let record = false;
  let last = null;
  const variantOf = (tick) => variants[tick % variants.length];
  const run = (ms) =>
    paced.run(
      ms,
      (tick) => targets[variantOf(tick)].sdk,
      (tick, n, ms) => {
        if (record) spent[variantOf(tick)].push([ms, n]);
      },
      (tick, n) => {
        Atomics.wait(settleCell, 0, 0, 0.1); // brings this thread's schedstat up to date
        const ns = schedNs(process.pid);
        if (record && last !== null && ns !== null) {
          const ran = Object.values(timerMs).reduce((a, b) => a + b, 0);
          if (n > 0) thread[variantOf(tick - 1)].push([(ns - last) / 1e6 - ran, n]);
          for (const v of variants) {
            thread[v].push([timerMs[v] ?? 0, 0]);
            timersMs[v] += timerMs[v] ?? 0;
          }
        }
        timerMs = {};
        last = ns;
        current = variantOf(tick); // the tick about to run, and its microtasks
      },
    );
  await run(1000);
  record = true;
  await run(seconds * 1000);
  for (const v of variants.filter((x) => x !== 'floor')) {
    if (!targets[v].flush().ok) throw new Error(`${v}: flush did not finish`);
    targets[v].stop();
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  const actions = (xs) => xs.reduce((a, [, n]) => a + n, 0);
  const perAction = (xs) => (xs.reduce((a, [ms]) => a + ms, 0) * 1000) / actions(xs);
  const out = {};
  for (const v of variants) {
    out[v] = perAction(spent[v]);
    out[`ui_${v}`] = perAction(thread[v]);
    out[`timers_${v}`] = (timersMs[v] * 1000) / actions(thread[v]);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

/** The "before" build beside the current one: its library, and its capture code when given. */
async function beforeTarget(lib, capture, storageDir) {
  const { RumPipeline } = loadNative(path.resolve(lib));
  const { CallBuffer: Before } = capture ? await import(pathToFileURL(path.resolve(capture)).href) : { CallBuffer: null };
  const p = new RumPipeline({ storageDir, applicationId: '6c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f', service: 'burst', version: '0.0.0', env: 'bench', trackingConsent: 'granted' });
  const sdk = Before ? bufferFor(Before, p) : p;
  const handOver = () => sdk.handOverAll?.();
  return {
    sdk,
    startView: (key, name) => sdk.startView(key, name),
    flush: () => (handOver(), { ok: p.flush() === true }),
    stop: () => (handOver(), p.stop()),
  };
}

// ---------------------------------------------------------------------------------------------
// Orchestration.

/** The capture code of the "before" variant (--before-capture), or null: the current one. */
let beforeCapture = null;

function runChild(variant, rate, seconds, lib, strace, beforeLib = null) {
  const base = [SELF, '--child', '--variant', variant, '--rate', String(rate), '--seconds', String(seconds), '--lib', lib];
  if (beforeLib) base.push('--before-lib', beforeLib, ...(beforeCapture ? ['--before-capture', beforeCapture] : []));
  let cmd = process.execPath;
  let argv = base;
  let traceDir = null;
  if (strace) {
    traceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rum-strace-'));
    cmd = 'strace';
    argv = ['-f', '-ff', '-ttt', '-qq', '-o', path.join(traceDir, 't'), process.execPath, ...base];
  }
  const env = { ...process.env, RUM_NATIVE_QUIET: '1' };
  if (variant === 'before' && beforeCapture) env.RUM_CAPTURE_JS = beforeCapture;
  const r = spawnSync(cmd, argv, { encoding: 'utf8', env, timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${variant} at ${rate}/s failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const line = r.stdout.trim().split('\n').pop();
  const out = JSON.parse(line);
  if (traceDir) {
    out.syscalls = countTraces(traceDir, out);
    fs.rmSync(traceDir, { recursive: true, force: true });
  }
  return out;
}

/** System calls made within the measured window: { total, writer, byName, writerByName }. */
function countTraces(dir, out) {
  const [t0, t1] = out.window;
  const res = { total: 0, writer: 0, byName: {}, writerByName: {} };
  for (const f of fs.readdirSync(dir)) {
    const tid = f.split('.').pop();
    const isWriter = String(tid) === String(out.writerTid);
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const m = /^(\d+\.\d+) (\w+)\(/.exec(line);
      if (!m) continue;
      const t = Number(m[1]);
      if (t < t0 || t > t1) continue;
      res.total++;
      res.byName[m[2]] = (res.byName[m[2]] ?? 0) + 1;
      if (isWriter) {
        res.writer++;
        res.writerByName[m[2]] = (res.writerByName[m[2]] ?? 0) + 1;
      }
    }
  }
  return res;
}

function stats(xs) {
  const v = xs.filter((x) => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return { median: null, p95: null };
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  const p95 = v[Math.min(v.length - 1, Math.ceil(0.95 * v.length) - 1)];
  return { median, p95 };
}

const fmt = (x, d = 2) => (x === null || x === undefined ? 'n/a' : x.toFixed(d));

function hasStrace() {
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function main() {
  const samples = Number(opt('samples', '5'));
  const seconds = Number(opt('seconds', '6'));
  const rates = opt('rates', '30,300').split(',').map(Number);
  const lib = path.resolve(opt('lib', libraryPath()));
  const before = opt('before', null);
  const variants = ['floor', 'native', 'jsqueue', 'baseline', ...(before ? ['before'] : [])];
  const libOf = (v) => (v === 'before' ? path.resolve(before) : lib);
  beforeCapture = before && opt('before-capture', null) ? path.resolve(opt('before-capture')) : null;
  const strace = !flag('no-strace') && hasStrace();
  console.log(
    `steady state: ${rates.join(' and ')} actions/s for ${seconds} s per sample (after 1 s of warm-up), ` +
      `${samples} samples per variant, fresh process each, variants alternating; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`,
  );
  console.log(
    `library: ${lib}${before ? `; before: ${path.resolve(before)}` : ''}${beforeCapture ? ` with the capture code ${beforeCapture}` : ''}; ` +
      `${os.cpus().length} CPUs, node ${process.version}`,
  );
  const results = {};
  for (let r = 0; r < samples; r++) {
    for (const rate of rates) {
      const order = variants.map((_, k) => variants[(k + r) % variants.length]);
      for (const v of order) {
        const out = runChild(v, rate, seconds, libOf(v), false);
        (results[`${v}@${rate}`] ??= []).push(out);
      }
    }
  }
  // The calls alone: one process per sample and rate, native and floor alternating inside it.
  const ab = {};
  for (let r = 0; r < samples; r++) {
    for (const rate of rates) (ab[rate] ??= []).push(runChild('ab', rate, seconds, lib, false, before ? path.resolve(before) : null));
  }
  const traced = {};
  if (strace) {
    for (const rate of rates) for (const v of variants) traced[`${v}@${rate}`] = runChild(v, rate, seconds, libOf(v), true);
  }
  const per = (o, k) => (o[k] === null ? null : o[k] / o.actions);
  const table = [];
  for (const rate of rates) {
    const floor = results[`floor@${rate}`];
    const fProc = stats(floor.map((o) => per(o, 'processUs'))).median;
    const fUi = stats(floor.map((o) => per(o, 'uiUs'))).median;
    const fSys = traced[`floor@${rate}`]?.syscalls ? traced[`floor@${rate}`].syscalls.total / traced[`floor@${rate}`].actions : null;
    console.log(`\n${rate} actions/s (per action; median [p95] of ${samples} samples)`);
    console.log(
      'variant   process µs       beyond floor   UI thread µs     beyond floor   writer µs        writer wake-ups  preempted  idle wake-ups/s  JS timers',
    );
    for (const v of variants) {
      const xs = results[`${v}@${rate}`];
      const p = stats(xs.map((o) => per(o, 'processUs')));
      const u = stats(xs.map((o) => per(o, 'uiUs')));
      const w = stats(xs.map((o) => per(o, 'writerUs')));
      const k = stats(xs.map((o) => per(o, 'writerWakeups')));
      const pre = stats(xs.map((o) => per(o, 'writerPreempted')));
      const idle = stats(xs.map((o) => o.idle?.wakeups ?? null));
      const tm = stats(xs.map((o) => per(o, 'timers')));
      const row = {
        rate,
        variant: v,
        process: p,
        process_beyond_floor: v === 'floor' ? null : p.median - fProc,
        ui: u,
        ui_beyond_floor: v === 'floor' ? null : u.median - fUi,
        writer: w,
        writer_wakeups: k,
        idle_wakeups: idle.median,
        timers: tm.median,
      };
      const t = traced[`${v}@${rate}`];
      if (t?.syscalls) {
        row.syscalls = t.syscalls.total / t.actions;
        row.syscalls_beyond_floor = v === 'floor' ? null : row.syscalls - fSys;
        row.writer_syscalls = t.syscalls.writer / t.actions;
        row.writer_by_name = Object.fromEntries(Object.entries(t.syscalls.writerByName).map(([n, c]) => [n, c / t.actions]));
        row.by_name = Object.fromEntries(Object.entries(t.syscalls.byName).map(([n, c]) => [n, c / t.actions]));
      }
      table.push(row);
      console.log(
        `${v.padEnd(9)} ${fmt(p.median).padStart(6)} [${fmt(p.p95).padStart(6)}]  ${v === 'floor' ? '           ' : fmt(row.process_beyond_floor).padStart(11)}    ` +
          `${fmt(u.median).padStart(6)} [${fmt(u.p95).padStart(6)}]  ${v === 'floor' ? '           ' : fmt(row.ui_beyond_floor).padStart(11)}    ` +
          `${fmt(w.median).padStart(6)} [${fmt(w.p95).padStart(6)}]  ${fmt(k.median, 3).padStart(6)} [${fmt(k.p95, 3).padStart(6)}]  ${fmt(pre.median, 3).padStart(9)}  ${fmt(idle.median, 0).padStart(6)}  ${fmt(tm.median, 3).padStart(15)}`,
      );
    }
    const abs = ab[rate];
    const abNative = stats(abs.map((o) => o.native));
    const abFloor = stats(abs.map((o) => o.floor));
    const abBeyond = stats(abs.map((o) => o.native - o.floor));
    table.push({ rate, variant: 'calls alone', native: abNative, floor: abFloor, beyond_floor: abBeyond });
    const uiNative = stats(abs.map((o) => o.ui_native));
    const uiFloor = stats(abs.map((o) => o.ui_floor));
    const uiBeyond = stats(abs.map((o) => o.ui_native - o.ui_floor));
    const uiTimers = stats(abs.map((o) => o.timers_native));
    table.push({ rate, variant: 'UI thread, one process', native: uiNative, floor: uiFloor, beyond_floor: uiBeyond, timers: uiTimers });
    const withBefore = abs.every((o) => typeof o.before === 'number');
    console.log(
      `one process, ${withBefore ? 'floor, native and before' : 'native and floor'} ticks taking turns (µs per action; median [p95] of ${samples} processes):\n` +
        `  the calls alone (wall time inside the calls): native ${fmt(abNative.median)} [${fmt(abNative.p95)}], ` +
        `floor ${fmt(abFloor.median)} [${fmt(abFloor.p95)}], beyond the floor ${fmt(abBeyond.median)} [${fmt(abBeyond.p95)}]\n` +
        `  UI-thread CPU from a tick's start to the next's, the SDK's timers charged to the variant that scheduled them: native ` +
        `${fmt(uiNative.median)} [${fmt(uiNative.p95)}] (its timers ${fmt(uiTimers.median)}), floor ${fmt(uiFloor.median)} [${fmt(uiFloor.p95)}], ` +
        `beyond the floor ${fmt(uiBeyond.median)} [${fmt(uiBeyond.p95)}]`,
    );
    if (withBefore) {
      const bCalls = stats(abs.map((o) => o.before - o.floor));
      const bUi = stats(abs.map((o) => o.ui_before - o.ui_floor));
      const bTimers = stats(abs.map((o) => o.timers_before));
      const diff = stats(abs.map((o) => o.ui_before - o.ui_native));
      table.push({ rate, variant: 'before, one process', calls_beyond_floor: bCalls, beyond_floor: bUi, timers: bTimers, before_minus_native: diff });
      console.log(
        `  before, in the same processes: the calls ${fmt(bCalls.median)} [${fmt(bCalls.p95)}] beyond the floor; UI thread ` +
          `${fmt(bUi.median)} [${fmt(bUi.p95)}] beyond the floor (its timers ${fmt(bTimers.median)}); before − native ${fmt(diff.median)} [${fmt(diff.p95)}]`,
      );
    }
    if (strace) {
      console.log(`system calls per action (one sample per variant under strace -f, within the measured window):`);
      for (const v of variants) {
        const row = table.find((x) => x.rate === rate && x.variant === v);
        const top = (m) =>
          Object.entries(m ?? {})
            .sort((a, b) => b[1] - a[1])
            .slice(0, 6)
            .map(([n, c]) => `${n} ${c.toFixed(2)}`)
            .join(', ');
        console.log(
          `  ${v.padEnd(7)} process ${fmt(row.syscalls)}${v === 'floor' ? '' : ` (beyond floor ${fmt(row.syscalls_beyond_floor)})`}` +
            (v === 'floor' ? '' : `; writer thread ${fmt(row.writer_syscalls)}: ${top(row.writer_by_name)}`),
        );
        if (v !== 'floor') console.log(`          process by name: ${top(row.by_name)}`);
      }
    } else {
      console.log('system calls: not counted (strace not available, or --no-strace)');
    }
  }
  const at = (rate, v) => table.find((x) => x.rate === rate && x.variant === v);
  const n300 = at(300, 'native');
  if (n300) {
    const line = (ok, text) => console.log(`${ok === null ? 'n/a    ' : ok ? 'met    ' : 'NOT met'} ${text}`);
    console.log('\ntargets at 300 actions/s (medians):');
    line(n300.process_beyond_floor <= 10, `whole process ≤ 10 µs per action beyond the floor: ${fmt(n300.process_beyond_floor)} µs`);
    line(n300.ui_beyond_floor <= 5, `UI thread ≤ 5 µs per action beyond the floor (separate processes): ${fmt(n300.ui_beyond_floor)} µs`);
    const ui300 = at(300, 'UI thread, one process');
    if (ui300) {
      line(ui300.beyond_floor.median <= 5, `UI thread ≤ 5 µs per action beyond the floor (one process, ticks alternating): ${fmt(ui300.beyond_floor.median)} µs`);
    }
    line(
      n300.syscalls_beyond_floor === undefined ? null : n300.syscalls_beyond_floor <= 3,
      `≤ 3 system calls per action beyond the floor's: ${fmt(n300.syscalls_beyond_floor)}`,
    );
    const naps = n300.writer_by_name ? (n300.writer_by_name.clock_nanosleep ?? 0) + (n300.writer_by_name.nanosleep ?? 0) : undefined;
    line(naps === undefined ? null : naps === 0, `no sleeps on the writer thread: ${fmt(naps)} per action`);
  }
  const outPath = opt('out', path.join(path.dirname(SELF), '..', 'target', 'steady.json'));
  fs.mkdirSync(path.dirname(outPath), { recursive: true });
  fs.writeFileSync(outPath, JSON.stringify({ samples, seconds, rates, lib, before, table, results, traced }, null, 1));
  console.log(`\nreport: ${outPath}`);
}

if (flag('child')) {
  await (opt('variant') === 'ab' ? abChild() : child());
} else {
  if (!process.env.RUM_CAPTURE_JS) {
    // The native variant runs the HAR's capture code: built once here, imported by every child.
    const built = await buildCaptureCode();
    process.env.RUM_CAPTURE_JS = built.file;
    process.on('exit', () => fs.rmSync(built.outDir, { recursive: true, force: true }));
  }
  main();
}
