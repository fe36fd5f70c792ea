// Runs the host burst demo once (`scripts/burst --quick`: builds the release library unless
// RUM_NATIVE_LIB is set, one sample per variant) and checks what it wrote: the report's schema, the
// chart, the table (baseline, JS queue, native, floor, with native's ratios against the baseline and
// the JS queue), the UI-thread / process CPU and bytes-written columns, the JS-queue targets, and
// that every action the native and JS-queue variants sent reached the loopback intake.
// It asserts no timing: timings are measured and reported, never judged by a test.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rum-burst-test-'));
const TIMEOUT_MS = 15 * 60_000; // includes `cargo build --release` on a cold target/

const RATE = ['frames_over_16ms', 'longest_frame_busy_ms', 'ui_thread_cpu_ms', 'process_cpu_ms', 'written_mb', 'major_gcs', 'longest_major_gc_ms'];
const CPU = ['sdk_cpu_ms', 'ui_thread_cpu_ms', 'written_mb'];
const SCALE = ['longest_stall_ms', 'peak_rss_mb', 'actions_lost', 'written_mb'];
const METRICS = {
  'loop-1000': ['longest_stall_ms', 'written_mb'],
  'loop-3700': ['longest_stall_ms', 'written_mb'],
  'loop-3700-warm': ['longest_stall_ms'],
  'rate-300-12s': RATE,
  'rate-3000-12s': RATE,
  'cpu-1000': CPU,
  'cpu-3700': CPU,
  'cpu-37000': CPU,
  'intake-3700': ['actions_at_intake', 'written_mb'],
  'loop-37000': SCALE,
  'loop-100000': SCALE,
};
const WITHOUT_FLOOR = new Set(['intake-3700']);
const NO_FLOOR_METRICS = new Set(['actions_lost', 'written_mb']); // the floor writes nothing
const JS_QUEUE_TARGETS = ['1000', '3700', '37000', '300-per-s', '3000-per-s'].map((x) => `ahead-of-jsqueue-${x}`);

let run;
let report;

before(async () => {
  run = await new Promise((resolve, reject) => {
    const child = spawn(path.join(root, 'scripts', 'burst'), ['--quick', '--out', out], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
  assert.equal(run.status, 0, `scripts/burst --quick exited with ${run.status}:\n${run.stderr.slice(-4_000)}`);
  report = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
}, { timeout: TIMEOUT_MS });

after(() => fs.rmSync(out, { recursive: true, force: true }));

function assertVariant(v, where, samples) {
  assert.equal(typeof v, 'object', `${where} is missing`);
  for (const k of ['median', 'p95', 'max']) {
    assert.ok(v[k] === null || Number.isFinite(v[k]), `${where}.${k} is ${v[k]}`);
  }
  assert.ok(Array.isArray(v.samples), `${where}.samples is not an array`);
  assert.equal(v.samples.length, samples, `${where} has ${v.samples.length} samples, expected ${samples}`);
  for (const s of v.samples) assert.ok(s === null || Number.isFinite(s), `${where}.samples holds ${s}`);
  assert.equal(v.load1.length, samples, `${where}.load1 should hold one load average per sample`);
}

test('report.json has the documented schema', () => {
  assert.equal(typeof report.machine, 'object');
  assert.equal(typeof report.machine.cpus, 'number');
  assert.equal(typeof report.machine.node, 'string');
  assert.equal(typeof report.machine.library?.path, 'string');
  assert.equal(report.samples, 1);
  assert.equal(report.mode, 'quick');
  assert.equal(report.settings.rate_shortened, true, 'a quick run must say that it shortened the rate scenarios');
  assert.ok(Array.isArray(report.failed_samples));
  assert.ok(Array.isArray(report.scenarios));
  for (const e of report.scenarios) {
    assert.ok(e.name in METRICS, `unexpected scenario ${e.name}`);
    assert.equal(typeof e.metric, 'string');
  }
  for (const [name, metrics] of Object.entries(METRICS)) {
    for (const metric of metrics) {
      const e = report.scenarios.find((x) => x.name === name && x.metric === metric);
      assert.ok(e, `no entry for ${name} / ${metric}`);
      assertVariant(e.baseline, `${name}/${metric}.baseline`, report.samples);
      assertVariant(e.jsqueue, `${name}/${metric}.jsqueue`, report.samples);
      assertVariant(e.native, `${name}/${metric}.native`, report.samples);
      if (WITHOUT_FLOOR.has(name) || NO_FLOOR_METRICS.has(metric)) assert.equal(e.floor, null, `${name}/${metric}.floor should be null`);
      else assertVariant(e.floor, `${name}/${metric}.floor`, report.samples); // the floor must have run
      for (const k of ['ratio', 'ratio_jsqueue']) assert.ok(e[k] === null || Number.isFinite(e[k]), `${name}/${metric}.${k} is ${e[k]}`);
      assert.equal(typeof e.ratio_jsqueue_text, 'string', `${name}/${metric}.ratio_jsqueue_text`);
    }
  }
  assert.deepEqual(report.settings.js_queue_limits, { turnBudgetMs: 4, queueCapacity: 5_000 });
  assert.ok(Array.isArray(report.targets) && report.targets.length >= 6);
  for (const t of report.targets) {
    assert.ok([true, false, null].includes(t.pass), `target ${t.id} pass is ${t.pass}`);
    assert.equal(typeof t.measured, 'string');
  }
  for (const id of JS_QUEUE_TARGETS) {
    const t = report.targets.find((x) => x.id === id);
    assert.ok(t, `no target ${id}`);
    assert.match(t.measured, /stall .*; UI-thread CPU .*; total CPU .*; bytes written /, `target ${id} lacks a figure: ${t.measured}`);
  }
});

test('CPU: the UI thread and the whole process are measured separately, in every variant that runs', () => {
  for (const name of ['cpu-1000', 'cpu-3700', 'cpu-37000']) {
    for (const variant of ['baseline', 'jsqueue', 'native', 'floor', 'copy']) {
      const [s] = report.sample_details[name][variant];
      assert.ok(s.ok, `${name} ${variant} failed`);
      const d = s.details;
      if (process.platform === 'linux') {
        assert.ok(['schedstat', 'stat'].includes(d.main_thread_cpu_source), `${name} ${variant}: main-thread source ${d.main_thread_cpu_source}`);
        assert.ok(Number.isFinite(d.main_thread_cpu_ms) && d.main_thread_cpu_ms > 0, `${name} ${variant}: main thread ${d.main_thread_cpu_ms}`);
        // The process's figure covers every thread, the main one included. Slack of 1 ms: the two
        // clocks are read a moment apart, and getrusage's total is rounded differently from
        // schedstat's (a 3 ms floor sample once read 2.65 against 3.27 ms).
        assert.ok(d.process_cpu_ms + 1 >= d.main_thread_cpu_ms, `${name} ${variant}: process ${d.process_cpu_ms} < main thread ${d.main_thread_cpu_ms}`);
      }
    }
  }
});

test('bytes written: every SDK variant reports what it appended, the floor nothing', () => {
  for (const variant of ['baseline', 'jsqueue', 'native']) {
    const [s] = report.sample_details['cpu-3700'][variant];
    assert.ok(Number.isInteger(s.details.bytes_written) && s.details.bytes_written > 0, `cpu-3700 ${variant}: bytes_written ${s.details.bytes_written}`);
    assert.equal(s.metrics.written_mb, s.details.bytes_written / 1e6);
    // Nothing was uploaded or read back, so the directory holds at most what was appended.
    assert.ok(s.details.storage_dir_bytes <= s.details.bytes_written, `cpu-3700 ${variant}: directory ${s.details.storage_dir_bytes} > written ${s.details.bytes_written}`);
  }
  assert.equal(report.sample_details['cpu-3700'].floor[0].metrics.written_mb, undefined);
});

test('the JS queue queues past its budget and coalesces views; at scale only the quota costs it actions, native none', () => {
  const st = report.jsqueue_stats['loop-3700'];
  assert.ok(st, 'no JS queue stats for loop-3700');
  assert.equal(st.callsInline + st.callsQueued, 3_701, 'the view and 3,700 actions'); // startView + the loop
  assert.ok(st.callsQueued > 0 && st.slicesRun > 0, `nothing was queued: ${JSON.stringify(st)}`);
  assert.ok(st.viewWritesSaved > 0, 'no view write was coalesced');
  assert.equal(st.queueLength, 0);
  // The scale scenarios run under the default 4 MiB quota: the JS queue's plain batches are evicted
  // (what it loses is what its quota evicted, nothing else), native's gzip batches all fit.
  const lost = report.scenarios.find((x) => x.name === 'loop-37000' && x.metric === 'actions_lost');
  const big = report.jsqueue_stats['loop-37000'];
  assert.ok(big, 'no JS queue stats for loop-37000');
  assert.ok(lost.jsqueue.samples[0] <= big.evictedEventsQuota, `JS queue lost ${lost.jsqueue.samples[0]}, evicted ${big.evictedEventsQuota}`);
  assert.deepEqual(lost.native.samples, [0], 'native keeps all 37,000 actions under the default quota');
});

test('every action the native and JS-queue variants sent reached the intake, once', () => {
  const at = report.scenarios.find((x) => x.name === 'intake-3700' && x.metric === 'actions_at_intake');
  const dup = report.scenarios.find((x) => x.name === 'intake-3700' && x.metric === 'duplicate_actions');
  const why = JSON.stringify(report.failed_samples.filter((f) => f.scenario === 'intake-3700'), null, 2);
  for (const variant of ['native', 'jsqueue']) {
    const sent = report.sample_details['intake-3700'][variant].map((s) => s.details?.sent);
    assert.deepEqual(sent, [3_700], `${variant} intake sample did not complete: ${why}`);
    assert.deepEqual(at[variant].samples, [3_700], `${variant}: actions at the intake: ${at[variant].samples}; ${why}`);
    assert.deepEqual(dup[variant].samples, [0]);
  }
});

test('stdout has the table and the targets; stalls.svg and table.md are written', () => {
  assert.match(run.stdout, /\| Scenario .*\| Baseline \| JS queue \| Native \| Floor \(JS snapshot\) \| Per-property copy \| Ratio \(baseline : native\) \| Ratio \(JS queue : native\) \|/);
  assert.match(run.stdout, /3,700 actions in one loop, longest main-thread stall/);
  assert.match(run.stdout, /SDK CPU for the 3,700-action burst, UI \(main\) thread/);
  assert.match(run.stdout, /SDK CPU for the 3,700-action burst, whole process \(all threads\)/);
  assert.match(run.stdout, /3,700-action burst, bytes written/);
  assert.match(run.stdout, /Targets/);
  assert.match(run.stdout, /Native ahead of the JS queue on stall, UI-thread CPU, total CPU and bytes written/);
  assert.match(run.stdout, /^(met|NOT met|no data) +3,700 actions — stall /m);
  const svg = fs.readFileSync(path.join(out, 'stalls.svg'), 'utf8');
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /baseline/);
  assert.match(svg, /JS queue/);
  assert.match(svg, /native/);
  assert.match(svg, /<\/svg>\s*$/);
  assert.match(fs.readFileSync(path.join(out, 'table.md'), 'utf8'), /^\| Scenario/);
});
