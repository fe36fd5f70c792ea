// One sample: one scenario, one variant, in a fresh process (main.mjs spawns this file once per
// sample). argv[2] is a JSON spec; the result is written as JSON to spec.resultPath, and the exit
// code is 0 only if the sample completed.
//
// Every scenario calls the same `burst` function, so the loop body is identical for every variant;
// what differs is only the object whose addAction it calls.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { buildAttributes, scenarioByName, SCALE_STORAGE } from './scenarios.mjs';
import { cpuNow, cpuSince, MAIN_THREAD_SOURCE } from './cpu.mjs';
import { createTarget, loadNative, plain, REQUIRED_METHODS } from './variants.mjs';
import { startFrameTicker, startGapTicker, startMajorGcObserver, sleep } from './ticker.mjs';
import { Uploader } from './intake.mjs';

/** The timed loop. `from` lets the rate scenario send its due actions a few at a time. */
function burst(sdk, to, attrs, from = 0) {
  for (let i = from; i < to; i++) sdk.addAction('custom', 'sync message ' + i, attrs);
}

/** Resolves at the start of a fresh macrotask, so the loop after it is one uninterrupted turn. */
const nextTurn = () => new Promise((r) => setTimeout(r, 0));

const WARM_UP_MS = 100;

function setUp(spec, storage = scenarioByName(spec.scenario).storage) {
  const target = createTarget(spec.variant, { storageDir: spec.storageDir, libPath: spec.libPath, storage });
  target.startView('main', 'MessageListPage', { 'view.kind': 'list' });
  return { target, attrs: buildAttributes() };
}

function finish(target, extra = {}) {
  const stats = target.variant === 'native' || target.variant === 'jsqueue' ? target.stats() : undefined;
  target.stop();
  return { ...extra, stats };
}

/**
 * What the variant has written once flushed: `written_mb` (bytes appended to batch files, all
 * files, counted by the SDK: stats().bytesWritten; 1 MB = 10^6 bytes) and, as a cross-check, the
 * sum of the storage directory's files now (smaller once batches were evicted or uploaded).
 * Nothing for the floor, which writes nothing.
 */
function written(target, spec) {
  const bytes = target.bytesWritten();
  if (typeof bytes !== 'number') return { metrics: {}, details: {} };
  const documents = target.stats().documentsWritten;
  return {
    metrics: { written_mb: bytes / 1e6 },
    details: { bytes_written: bytes, documents_written: typeof documents === 'number' ? documents : null, storage_dir_bytes: dirBytes(spec.storageDir) },
  };
}

function dirBytes(dir) {
  let sum = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sum += dirBytes(p);
    else if (e.isFile()) sum += fs.statSync(p).size;
  }
  return sum;
}

/**
 * The burst as one uninterrupted turn after the warm-up, watched by `ticker` (a gap ticker started
 * before the warm-up) until the queue has drained; then the flush.
 */
async function watchedBurst(target, attrs, actions, ticker) {
  await sleep(WARM_UP_MS);
  await nextTurn();
  ticker.reset();
  const t0 = performance.now();
  burst(target.sdk, actions, attrs);
  const loopMs = performance.now() - t0;
  await target.settle();
  const drainedMs = performance.now() - t0;
  await ticker.ticks(2);
  const seen = ticker.stop();
  const flush = target.flush(); // after the ticker: flush() blocks on the writer by design
  return { loopMs, drainedMs, seen, flush };
}

/**
 * The SDK's code run before the measured burst: `rounds` loops of `actions` calls, each followed by
 * the SDK's own slices until it is idle (no drain), then a flush, so the burst starts with nothing
 * queued and the code compiled.
 */
async function warmUp(target, attrs, { rounds, actions }) {
  for (let r = 0; r < rounds; r++) {
    await nextTurn();
    burst(target.sdk, actions, attrs);
    await target.settle();
  }
  target.flush();
}

async function runLoop(scenario, spec) {
  const { target, attrs } = setUp(spec);
  if (scenario.warmUp) await warmUp(target, attrs, scenario.warmUp);
  const ticker = startGapTicker({ timeline: Boolean(scenario.timeline) });
  const { loopMs, drainedMs, seen, flush } = await watchedBurst(target, attrs, scenario.actions, ticker);
  const w = written(target, spec);
  return finish(target, {
    metrics: { longest_stall_ms: seen.longestMs, drained_ms: drainedMs, ...w.metrics },
    details: { loop_ms: loopMs, ticks: seen.ticks, flush, ...w.details },
    timeline: seen.timeline,
  });
}

async function runRate(scenario, spec) {
  const { target, attrs } = setUp(spec);
  const durationMs = spec.rateDurationMs ?? scenario.durationMs;
  const total = Math.round((scenario.rate * durationMs) / 1000);
  await sleep(WARM_UP_MS);
  const frames = startFrameTicker();
  const gcs = startMajorGcObserver();
  const c0 = cpuNow();
  const t0 = performance.now();
  let sent = 0;
  // Every 10 ms, send the actions due by now: a steady rate however late the timer fires.
  await new Promise((resolve) => {
    const generate = () => {
      const due = Math.min(total, Math.floor((scenario.rate * (performance.now() - t0)) / 1000));
      burst(target.sdk, due, attrs, sent);
      sent = due;
      if (sent >= total) resolve();
      else setTimeout(generate, 10);
    };
    setTimeout(generate, 10);
  });
  const sendMs = performance.now() - t0;
  await target.settle();
  const seen = frames.stop();
  const flush = target.flush();
  const cpu = cpuSince(c0); // the whole run: the generator and the frame ticker (the same for every variant) included
  const major = await gcs.stop();
  const w = written(target, spec);
  return finish(target, {
    metrics: {
      frames_over_16ms: seen.framesOver, longest_frame_busy_ms: seen.busiestMs,
      ui_thread_cpu_ms: cpu.threadMs, process_cpu_ms: cpu.processMs, major_gcs: major.count,
      longest_major_gc_ms: major.longestMs, ...w.metrics,
    },
    details: {
      sent, duration_ms: durationMs, send_ms: sendMs, frames: seen.frames, longest_frame_gap_ms: seen.longestGapMs, flush,
      main_thread_cpu_source: MAIN_THREAD_SOURCE, ...w.details,
    },
  });
}

/** The native variant's capture buffer after a burst: its crossings and their time on the main thread. */
const captureDetails = (c) => ({ capture_handovers: c.handovers, capture_handover_ms: c.handoverMs });

async function runCpu(scenario, spec) {
  const { target, attrs } = setUp(spec);
  await sleep(WARM_UP_MS);
  await nextTurn();
  const c0 = cpuNow();
  const u0 = process.cpuUsage();
  const t0 = performance.now();
  burst(target.sdk, scenario.actions, attrs);
  const loop = cpuSince(c0);
  await target.settle();
  const flush = target.flush();
  const u1 = process.cpuUsage(u0);
  const used = cpuSince(c0);
  const wallMs = performance.now() - t0;
  const w = written(target, spec);
  // Idle control: what this process burns doing nothing for as long (capped at 2 s, then scaled).
  const idleMs = Math.min(Math.max(wallMs, 50), 2_000);
  const i0 = performance.now();
  const c2 = cpuNow();
  await sleep(idleMs);
  const idle = cpuSince(c2);
  const scale = wallMs / (performance.now() - i0);
  const idleProcessMs = idle.processMs * scale;
  const idleThreadMs = idle.threadMs === null ? null : idle.threadMs * scale;
  return finish(target, {
    metrics: {
      sdk_cpu_ms: used.processMs - idleProcessMs,
      ui_thread_cpu_ms: used.threadMs === null ? null : used.threadMs - idleThreadMs,
      flushed_ms: wallMs, ...w.metrics,
    },
    details: {
      process_cpu_ms: used.processMs, main_thread_cpu_ms: used.threadMs, other_threads_cpu_ms: used.threadMs === null ? null : used.processMs - used.threadMs,
      main_thread_cpu_source: MAIN_THREAD_SOURCE, user_ms: u1.user / 1000, system_ms: u1.system / 1000,
      // The main thread in the loop (the capture) and after it (the handovers and their slices):
      // CPU and minor page faults, the idle control not taken off (it is small against a burst).
      loop_main_thread_cpu_ms: loop.threadMs, main_thread_minor_faults: used.threadFaults, loop_main_thread_minor_faults: loop.threadFaults,
      ...(target.variant === 'native' ? captureDetails(target.sdk.stats()) : {}),
      idle_control_cpu_ms: idleProcessMs, idle_control_main_thread_cpu_ms: idleThreadMs, idle_control_wall_ms: performance.now() - i0, flush, ...w.details,
    },
  });
}

async function runIntake(scenario, spec) {
  const { target, attrs } = setUp(spec);
  const uploader = new Uploader(target, spec.intakeUrl);
  await sleep(WARM_UP_MS);
  await nextTurn();
  uploader.start();
  const t0 = performance.now();
  burst(target.sdk, scenario.actions, attrs); // the whole burst is sent within the first second
  const loopMs = performance.now() - t0;
  await target.settle();
  const flush = target.flush();
  const flushedAt = performance.now();
  try {
    await uploader.drained(flushedAt, { timeoutMs: 60_000 });
  } finally {
    uploader.stop();
  }
  const lastUpload = uploader.cycles.filter((c) => c.sent > 0).at(-1);
  const w = written(target, spec);
  return finish(target, {
    metrics: { delivered_ms: lastUpload ? lastUpload.end - t0 : null, ...w.metrics },
    details: {
      sent: scenario.actions, loop_ms: loopMs, flushed_ms: flushedAt - t0, flush, ...w.details,
      batches_uploaded: uploader.batchesSent, upload_failures: uploader.failures,
      cycles: uploader.cycles.map((c) => ({ at_ms: Math.round(c.at - t0), sent: c.sent, empty: c.empty, failed: c.failed })),
    },
  });
}

async function runScale(scenario, spec) {
  const { target, attrs } = setUp(spec, scenario.storage ?? SCALE_STORAGE);
  const { loopMs, drainedMs, seen, flush } = await watchedBurst(target, attrs, scenario.actions, startGapTicker());
  const peakRssMb = process.resourceUsage().maxRSS / 1024; // before the read-back below
  const w = written(target, spec); // before the read-back deletes the batches
  const metrics = { longest_stall_ms: seen.longestMs, peak_rss_mb: peakRssMb, ...w.metrics };
  let readBack = null;
  if (target.variant !== 'floor' && target.variant !== 'copy') {
    readBack = readAll(target);
    metrics.actions_lost = scenario.actions - readBack.actions;
  }
  return finish(target, { metrics, details: { loop_ms: loopMs, drained_ms: drainedMs, flush, read_back: readBack, ...w.details } });
}

const ACTION_LINE = /"type"\s*:\s*"action"/;

/** Claims every batch, counts distinct action ids in it, and acknowledges it. */
function readAll(target) {
  const ids = new Set();
  let duplicates = 0;
  let batches = 0;
  let documents = 0;
  for (let b = target.nextBatch(); b; b = target.nextBatch()) {
    batches += 1;
    for (const line of bodyText(b).split('\n')) {
      if (!line) continue;
      documents += 1;
      if (!ACTION_LINE.test(line)) continue;
      const doc = JSON.parse(line);
      if (doc.type !== 'action') continue;
      if (ids.has(doc.action?.id)) duplicates += 1;
      else ids.add(doc.action?.id);
    }
    target.completeBatch(b.id, true);
  }
  return { batches, documents, actions: ids.size, duplicates };
}

/** A batch's NDJSON text: the native pipeline's sealed batches come gzip-compressed. */
function bodyText({ body, encoding }) {
  let bytes;
  if (body instanceof ArrayBuffer) bytes = Buffer.from(body);
  else if (ArrayBuffer.isView(body)) bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  else return String(body);
  return (encoding === 'gzip' ? zlib.gunzipSync(bytes) : bytes).toString('utf8');
}

/** Checks the module before any sample: loads, one action end to end, and the floor function. */
async function probe(spec) {
  const native = loadNative(spec.libPath);
  const info = { exports: Object.keys(native).sort(), missing: [] };
  const p = new native.RumPipeline({ storageDir: spec.storageDir, applicationId: 'burst-probe', service: 'burst', version: '0.0.0', trackingConsent: 'granted' });
  info.missing = REQUIRED_METHODS.filter((m) => typeof p[m] !== 'function');
  if (info.missing.length) return info;
  p.startView('probe', 'ProbePage');
  p.addAction('custom', 'probe', buildAttributes());
  const stats0 = plain(p.stats());
  info.queue_length_is_number = typeof stats0.queueLength === 'number';
  info.flushed = p.flush();
  const stats = plain(p.stats());
  info.stats_keys = Object.keys(stats);
  const b = p.nextBatch();
  if (b) {
    const text = bodyText(b);
    info.batch = {
      keys: Object.keys(b), body_type: Object.prototype.toString.call(b.body),
      event_count: b.eventCount, bytes: b.bytes, actions: text.split('\n').filter((l) => ACTION_LINE.test(l)).length,
    };
    p.completeBatch(b.id, true);
  } else {
    info.batch = null;
  }
  p.stop();
  info.floor = typeof native.copyArgsFloor === 'function';
  if (info.floor) native.copyArgsFloor('custom', 'probe', buildAttributes());
  return info;
}

const RUNNERS = { loop: runLoop, rate: runRate, cpu: runCpu, intake: runIntake, scale: runScale };

async function main() {
  const spec = JSON.parse(process.argv[2]);
  const started = performance.now();
  try {
    const result = spec.probe
      ? { probe: await probe(spec) }
      : await RUNNERS[scenarioByName(spec.scenario).kind](scenarioByName(spec.scenario), spec);
    result.elapsed_ms = performance.now() - started;
    fs.writeFileSync(spec.resultPath, JSON.stringify(result));
    process.exit(0);
  } catch (e) {
    fs.writeFileSync(spec.resultPath, JSON.stringify({ error: String(e?.stack ?? e), elapsed_ms: performance.now() - started }));
    process.exit(1);
  }
}

main();
