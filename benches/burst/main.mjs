// scripts/burst's orchestrator: probes the native module, runs every sample of every scenario in
// its own child process (sample.mjs), alternating variants, and writes the table (stdout), the
// report (report.json), the chart (stalls.svg) and the table alone (table.md) for pasting.
// Progress goes to stderr. See docs/benchmarks.md for the method.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync } from 'node:child_process';
import { buildCaptureCode } from '../capture-code.mjs';
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { SCENARIOS, UPLOADER, BASELINE_LIMITS, SCALE_STORAGE, ATTRIBUTE_CHARS, VARIANTS, scenarioByName } from './scenarios.mjs';
import { JS_QUEUE_LIMITS } from './jsqueue.mjs';
import { MAIN_THREAD_SOURCE } from './cpu.mjs';
import { REPO_ROOT, defaultLibraryPath } from './variants.mjs';
import { startIntake } from './intake.mjs';
import { buildEntries, distributionLines, headlineTable, judgeTargets, jsQueueTargetLines, targetLines, summarize } from './report.mjs';
import { stallsSvg } from './svg.mjs';

const SAMPLE_JS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sample.mjs');
const QUICK_RATE_MS = 1_000;

const USAGE = `usage: scripts/burst [--quick] [--samples N] [--only a,b] [--out DIR] [--storage DIR] [--check]

Measures the RUM burst scenarios (docs/benchmarks.md) in Node.js against
target/release/librum_native.so (or $RUM_NATIVE_LIB), side by side with the pure-JS
baseline (the pre-queue SDK), the JS queue (the reference change's dispatch queue and
view coalescing in plain JS) and the copy-only floor, and prints the table: stalls,
frames, CPU of the UI (main) thread and of the whole process, bytes written, intake
delivery, RSS and loss, with native's ratios against the baseline and the JS queue.

  --quick        1 sample per variant; the 12 s rate scenarios run for ${QUICK_RATE_MS / 1000} s
  --samples N    samples per variant (default 5)
  --only LIST    only these scenarios (${SCENARIOS.map((s) => s.name).join(', ')})
  --out DIR      where report.json, stalls.svg and table.md go (default target/burst)
  --storage DIR  where the samples' batch files go (default <out>/work)
  --check        exit with status 3 when a target is not met`;

function options() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      samples: { type: 'string' },
      only: { type: 'string' },
      out: { type: 'string' },
      storage: { type: 'string' },
      check: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const samples = values.samples !== undefined ? Number(values.samples) : values.quick ? 1 : 5;
  if (!Number.isInteger(samples) || samples < 1) throw new Error(`--samples must be a positive integer, not '${values.samples}'`);
  const scenarios = values.only ? values.only.split(',').map((n) => scenarioByName(n.trim())) : SCENARIOS;
  const out = path.resolve(values.out ?? path.join(REPO_ROOT, 'target', 'burst'));
  return {
    quick: values.quick, samples, scenarios, out, check: values.check,
    storage: path.resolve(values.storage ?? path.join(out, 'work')),
    rateDurationMs: values.quick ? QUICK_RATE_MS : undefined,
  };
}

/** Runs one child; never throws: a crash, a timeout or a missing result is a failed sample. */
function runChild(spec, timeoutMs) {
  return new Promise((resolve) => {
    const resultPath = path.join(spec.storageDir, '..', `${path.basename(spec.storageDir)}.result.json`);
    fs.rmSync(spec.storageDir, { recursive: true, force: true });
    fs.mkdirSync(spec.storageDir, { recursive: true });
    fs.rmSync(resultPath, { force: true });
    const t0 = performance.now();
    const child = spawn(process.execPath, [SAMPLE_JS, JSON.stringify({ ...spec, resultPath })], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    const keep = (s, chunk) => (s + chunk).slice(-4_000);
    child.stdout.on('data', (c) => { stdout = keep(stdout, c); });
    child.stderr.on('data', (c) => { stderr = keep(stderr, c); });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let result = null;
      try {
        result = JSON.parse(fs.readFileSync(resultPath, 'utf8'));
      } catch { /* reported below */ }
      fs.rmSync(resultPath, { force: true });
      fs.rmSync(spec.storageDir, { recursive: true, force: true });
      const wallMs = performance.now() - t0;
      const ok = code === 0 && !timedOut && result && !result.error;
      const error = ok ? null
        : timedOut ? `timed out after ${timeoutMs} ms`
          : result?.error ?? `exited with ${signal ? `signal ${signal}` : `status ${code}`} and no result`;
      resolve({ ok: Boolean(ok), result, error, code, signal, wallMs, stderr: stderr.trim(), stdout: stdout.trim() });
    });
  });
}

async function probeModule(opts, libPath) {
  const run = await runChild({ probe: true, libPath, storageDir: path.join(opts.storage, 'probe') }, 60_000);
  const fail = (why) => {
    console.error(`scripts/burst: the native module at ${libPath} cannot be measured: ${why}`);
    if (run.stderr) console.error(run.stderr);
    process.exit(2);
  };
  if (!run.ok) fail(run.error.split('\n')[0]);
  const p = run.result.probe;
  if (p.missing.length) fail(`RumPipeline lacks ${p.missing.map((m) => `${m}()`).join(', ')}`);
  if (!p.queue_length_is_number) fail('stats().queueLength is not a number (the harness waits on it)');
  if (!p.flushed) fail('flush() did not return true after one action');
  if (!p.batch) fail('nextBatch() returned null after one action and flush()');
  if (p.batch.actions !== 1) fail(`the first batch holds ${p.batch.actions} action documents, expected 1`);
  if (p.batch.body_type !== '[object ArrayBuffer]') console.error(`scripts/burst: warning: nextBatch().body is ${p.batch.body_type}, the interface says ArrayBuffer`);
  if (!p.floor) console.error('scripts/burst: warning: the module exports no copyArgsFloor(); the floor is not measured and its target cannot pass');
  return p;
}

/** Round r runs every scenario once per variant, the variants' order rotating with r. */
function plan(opts, hasFloor) {
  const runs = [];
  for (let r = 0; r < opts.samples; r++) {
    for (const s of opts.scenarios) {
      const vs = s.variants.filter((v) => v !== 'copy' || hasFloor);
      for (let k = 0; k < vs.length; k++) runs.push({ scenario: s, variant: vs[(k + r) % vs.length], index: r });
    }
  }
  return runs;
}

function guessMs(s, opts) {
  if (s.kind === 'rate') return (opts.rateDurationMs ?? s.durationMs) + 1_000;
  if (s.kind === 'intake') return 4_500;
  if (s.kind === 'scale' || (s.kind === 'cpu' && s.actions > 10_000)) return s.actions / 10;
  return 1_500;
}

const clock = (ms) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

function machineInfo(libPath, probe) {
  const tryRun = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  const lib = fs.readFileSync(libPath);
  const cpus = os.cpus();
  return {
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu_model: cpus[0]?.model ?? null,
    cpus: cpus.length,
    total_mem_mb: Math.round(os.totalmem() / 2 ** 20),
    node: process.version,
    rustc: tryRun('rustc', ['--version']),
    git_commit: tryRun('git', ['rev-parse', '--short', 'HEAD']),
    git_dirty: (tryRun('git', ['status', '--porcelain']) ?? '').length > 0,
    library: {
      path: libPath.startsWith(REPO_ROOT + path.sep) ? path.relative(REPO_ROOT, libPath) : libPath,
      bytes: lib.length,
      sha256: createHash('sha256').update(lib).digest('hex').slice(0, 16),
      modified: fs.statSync(libPath).mtime.toISOString(),
    },
    module: probe,
    load_before: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

async function main() {
  let opts;
  try {
    opts = options();
  } catch (e) {
    console.error(`scripts/burst: ${e.message}\n\n${USAGE}`);
    process.exit(2);
  }
  const libPath = path.resolve(defaultLibraryPath());
  if (!fs.existsSync(libPath)) {
    console.error(`scripts/burst: native library not found at ${libPath}: run 'cargo build --release' or set RUM_NATIVE_LIB`);
    process.exit(2);
  }
  fs.mkdirSync(opts.storage, { recursive: true });
  if (!process.env.RUM_CAPTURE_JS) {
    // The native variant runs the HAR's capture code: built once here, imported by every sample.
    const built = await buildCaptureCode();
    process.env.RUM_CAPTURE_JS = built.file;
    process.on('exit', () => fs.rmSync(built.outDir, { recursive: true, force: true }));
  }
  const probe = await probeModule(opts, libPath);
  const machine = machineInfo(libPath, probe);
  const runs = plan(opts, probe.floor);
  const records = new Map(); // scenario name → { variant → [record] }
  const failed = [];
  const timelines = { baseline: [], jsqueue: [], native: [] };
  const nativeStats = {};
  const jsQueueStats = {};
  const spent = new Map();
  const started = performance.now();
  const tty = process.stderr.isTTY;
  console.error(`scripts/burst: ${runs.length} samples (${opts.samples} per variant${opts.quick ? ', quick' : ''}), each in a fresh process; library ${machine.library.path}`);

  for (const [i, run] of runs.entries()) {
    const { scenario: s, variant, index } = run;
    const load1 = Math.round(os.loadavg()[0] * 100) / 100;
    const left = runs.slice(i).reduce((a, r) => a + (spent.get(r.scenario.name) ?? guessMs(r.scenario, opts)), 0);
    const head = `[${String(i + 1).padStart(String(runs.length).length)}/${runs.length}] ${clock(performance.now() - started)} elapsed, ~${clock(left)} left · ${s.name} ${variant} #${index + 1} · load ${load1.toFixed(2)}`;
    if (tty) process.stderr.write(`\r\x1b[K${head}`);
    const intake = s.kind === 'intake' ? await startIntake() : null;
    const storageDir = path.join(opts.storage, `${s.name}-${variant}-${index + 1}`);
    const child = await runChild({
      scenario: s.name, variant, index, libPath, storageDir, intakeUrl: intake?.url, rateDurationMs: opts.rateDurationMs,
    }, s.timeoutMs);
    const result = child.result ?? {};
    const metrics = { ...(result.metrics ?? {}) };
    if (intake) {
      await intake.close();
      metrics.actions_at_intake = intake.counts.actions;
      metrics.duplicate_actions = intake.counts.duplicateActions;
      result.details = { ...result.details, intake: intake.counts };
    }
    const record = { index, load1, ok: child.ok, metrics, wall_ms: Math.round(child.wallMs), details: result.details, stats: result.stats, error: child.error };
    const bySc = records.get(s.name) ?? {};
    (bySc[variant] ??= []).push(record);
    records.set(s.name, bySc);
    spent.set(s.name, ((spent.get(s.name) ?? child.wallMs) + child.wallMs) / 2);
    if (!child.ok) {
      failed.push({ scenario: s.name, variant, index, load1, error: child.error, exit_code: child.code, signal: child.signal, stderr_tail: child.stderr.slice(-1_500), wall_ms: Math.round(child.wallMs) });
    }
    if (s.timeline && child.ok && timelines[variant]) timelines[variant].push({ longest: metrics.longest_stall_ms, points: result.timeline ?? [] });
    const primary = s.metrics[0].key;
    const shown = child.ok ? `${primary} ${Math.round((metrics[primary] ?? NaN) * 100) / 100}` : `FAILED: ${child.error.split('\n')[0]}`;
    if (!tty) console.error(`${head} → ${shown} (${(child.wallMs / 1000).toFixed(1)} s)`);
    else if (!child.ok) process.stderr.write(`\r\x1b[K${head} → ${shown}\n`);
  }
  if (tty) process.stderr.write('\r\x1b[K');

  const labelSuffix = (s) => (s.kind === 'rate' && opts.rateDurationMs ? ` (quick: ${opts.rateDurationMs / 1000} s)` : '');
  const scenarios = opts.scenarios.flatMap((s) => buildEntries(s, records.get(s.name) ?? {}, labelSuffix(s)));
  for (const [variant, into] of [['native', nativeStats], ['jsqueue', jsQueueStats]]) {
    for (const s of opts.scenarios) {
      const recs = records.get(s.name)?.[variant]?.filter((r) => r.ok && r.stats) ?? [];
      if (!recs.length) continue;
      const key = s.metrics[0].key;
      const med = summarize(recs.map((r) => r.metrics[key])).median;
      const pick = recs.reduce((a, r) => (Math.abs(r.metrics[key] - med) < Math.abs(a.metrics[key] - med) ? r : a));
      into[s.name] = { sample: pick.index + 1, ...pick.stats };
    }
  }
  const targets = judgeTargets(scenarios);
  machine.load_after = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const report = {
    tool: 'scripts/burst',
    generated_at: new Date().toISOString(),
    mode: opts.quick ? 'quick' : 'full',
    machine,
    samples: opts.samples,
    settings: {
      attribute_chars: ATTRIBUTE_CHARS,
      rate_duration_ms: opts.rateDurationMs ?? 12_000,
      rate_shortened: Boolean(opts.rateDurationMs),
      uploader: UPLOADER,
      baseline_limits: BASELINE_LIMITS,
      js_queue_limits: JS_QUEUE_LIMITS,
      main_thread_cpu: MAIN_THREAD_SOURCE === 'schedstat' ? '/proc/self/task/<pid>/schedstat (ns)'
        : MAIN_THREAD_SOURCE === 'stat' ? '/proc/self/task/<pid>/stat utime+stime (clock ticks)' : null,
      process_cpu: 'process.cpuUsage() (user + system, all threads)',
      bytes_written: 'stats().bytesWritten: bytes appended to batch files, all files (MB = 10^6 bytes)',
      scale_storage: SCALE_STORAGE,
      storage_dir: opts.storage,
      order: 'round-robin: each round runs every scenario once per variant, the variant order rotating per round',
    },
    scenarios,
    targets,
    native_stats: nativeStats,
    jsqueue_stats: jsQueueStats,
    failed_samples: failed,
    sample_details: Object.fromEntries([...records].map(([name, byV]) => [name, Object.fromEntries(Object.entries(byV).map(([v, rs]) => [v, rs.map((r) => ({ index: r.index, load1: r.load1, ok: r.ok, wall_ms: r.wall_ms, metrics: r.metrics, details: r.details }))]))])),
    duration_s: Math.round((performance.now() - started) / 100) / 10,
  };

  fs.mkdirSync(opts.out, { recursive: true });
  const table = headlineTable(scenarios, opts.samples);
  fs.writeFileSync(path.join(opts.out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(path.join(opts.out, 'table.md'), `${table}\n`);
  const median = (tl) => {
    if (!tl.length) return { longest: 0, points: [] };
    const m = summarize(tl.map((x) => x.longest)).median;
    return tl.reduce((a, x) => (Math.abs(x.longest - m) < Math.abs(a.longest - m) ? x : a));
  };
  const b = median(timelines.baseline);
  const q = median(timelines.jsqueue);
  const n = median(timelines.native);
  const svgWritten = opts.scenarios.some((s) => s.timeline);
  if (svgWritten) {
    fs.writeFileSync(path.join(opts.out, 'stalls.svg'), stallsSvg([
      { title: 'baseline — the pre-queue SDK in JS (serialize + open/append/close per document)', points: b.points, longestMs: b.longest },
      { title: 'JS queue — the reference change in JS (4 ms turn budget, 4 ms slices, one view per slice)', points: q.points, longestMs: q.longest },
      { title: 'native — librum_native.so (4 ms turn budget, queued slices, writer thread)', points: n.points, longestMs: n.longest },
    ], `Median-stall sample of ${timelines.native.length} (native), ${timelines.jsqueue.length} (JS queue) and ${timelines.baseline.length} (baseline); ${machine.cpus} CPUs, Node ${process.version}.`));
  }

  const loads = [...records.values()].flatMap((byV) => Object.values(byV).flat().map((r) => r.load1));
  console.log(`\nRUM burst on this host — ${machine.cpu_model ?? 'unknown CPU'} (${machine.cpus} CPUs), Node ${process.version}, ${machine.library.path} (sha256 ${machine.library.sha256})`);
  console.log(`${opts.samples} sample(s) per variant, each in a fresh process, variants alternating; 1-min load before samples ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}; ${failed.length} failed sample(s).`);
  if (opts.rateDurationMs) console.log(`Quick run: the rate scenarios ran for ${opts.rateDurationMs / 1000} s instead of 12 s.`);
  console.log(`\n${table}\n`);
  console.log(`Distribution (median / p95 / max, then every sample in run order):\n${distributionLines(scenarios)}\n`);
  console.log(`Targets (timings judged on medians, counts on every sample):\n${targetLines(targets)}\n`);
  console.log(`Native ahead of the JS queue on stall, UI-thread CPU, total CPU and bytes written (medians; native vs JS queue):\n${jsQueueTargetLines(targets)}\n`);
  for (const [name, st] of Object.entries(nativeStats)) {
    const pairs = Object.entries(st).filter(([k]) => k !== 'sample').map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`);
    console.log(`native stats, ${name} (sample ${st.sample}): ${pairs.join(' ')}`);
  }
  for (const [name, st] of Object.entries(jsQueueStats)) {
    const pairs = Object.entries(st).filter(([k]) => k !== 'sample').map(([k, v]) => `${k}=${v}`);
    console.log(`JS queue stats, ${name} (sample ${st.sample}): ${pairs.join(' ')}`);
  }
  const slow = scenarios.flatMap((e) => VARIANTS.flatMap((v) => (e[v]?.slow_samples?.length ? [`${e.name} ${e.metric} ${v} sample(s) ${e[v].slow_samples.map((x) => x + 1).join(',')}`] : [])));
  if (slow.length) console.log(`\nSamples over twice their median (kept): ${slow.join('; ')}`);
  for (const f of failed) console.log(`\nFAILED ${f.scenario} ${f.variant} #${f.index + 1} (load ${f.load1}): ${f.error}${f.stderr_tail ? `\n${f.stderr_tail}` : ''}`);
  console.log(`\nWrote ${path.relative(process.cwd(), path.join(opts.out, 'report.json'))}${svgWritten ? `, ${path.relative(process.cwd(), path.join(opts.out, 'stalls.svg'))}` : ''} and table.md in ${Math.round(report.duration_s)} s.`);
  if (opts.check && targets.some((t) => t.pass !== true)) process.exit(3);
}

main().catch((e) => {
  console.error(`scripts/burst: ${e?.stack ?? e}`);
  process.exit(1);
});
