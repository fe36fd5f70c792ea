// One sample: one scenario, one variant, in a fresh process (main.mjs spawns this file once per
// sample). argv[2] is a JSON spec; the result is written as JSON to spec.resultPath, and the exit
// code is 0 only if the sample completed.
//
// Every scenario calls the same `burst` function, so the loop body is identical for the three
// variants; what differs is only the object whose addAction it calls.

import fs from 'node:fs';
import { buildAttributes, scenarioByName, SCALE_STORAGE } from './scenarios.mjs';
import { createTarget, loadNative, plain, REQUIRED_METHODS } from './variants.mjs';
import { startFrameTicker, startGapTicker, sleep } from './ticker.mjs';
import { Uploader } from './intake.mjs';

/** The timed loop. `from` lets the rate scenario send its due actions a few at a time. */
function burst(sdk, to, attrs, from = 0) {
  for (let i = from; i < to; i++) sdk.addAction('custom', 'sync message ' + i, attrs);
}

/** Resolves at the start of a fresh macrotask, so the loop after it is one uninterrupted turn. */
const nextTurn = () => new Promise((r) => setTimeout(r, 0));

const WARM_UP_MS = 100;

function setUp(spec, storage) {
  const target = createTarget(spec.variant, { storageDir: spec.storageDir, libPath: spec.libPath, storage });
  target.startView('main', 'MessageListPage', { 'view.kind': 'list' });
  return { target, attrs: buildAttributes() };
}

function finish(target, extra = {}) {
  const stats = target.variant === 'native' ? target.stats() : undefined;
  target.stop();
  return { ...extra, stats };
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

async function runLoop(scenario, spec) {
  const { target, attrs } = setUp(spec);
  const ticker = startGapTicker({ timeline: Boolean(scenario.timeline) });
  const { loopMs, drainedMs, seen, flush } = await watchedBurst(target, attrs, scenario.actions, ticker);
  return finish(target, {
    metrics: { longest_stall_ms: seen.longestMs, drained_ms: drainedMs },
    details: { loop_ms: loopMs, ticks: seen.ticks, flush },
    timeline: seen.timeline,
  });
}

async function runRate(scenario, spec) {
  const { target, attrs } = setUp(spec);
  const durationMs = spec.rateDurationMs ?? scenario.durationMs;
  const total = Math.round((scenario.rate * durationMs) / 1000);
  await sleep(WARM_UP_MS);
  const frames = startFrameTicker();
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
  return finish(target, {
    metrics: { frames_over_16ms: seen.framesOver, longest_frame_busy_ms: seen.busiestMs },
    details: { sent, duration_ms: durationMs, send_ms: sendMs, frames: seen.frames, longest_frame_gap_ms: seen.longestGapMs, flush },
  });
}

async function runCpu(scenario, spec) {
  const { target, attrs } = setUp(spec);
  await sleep(WARM_UP_MS);
  await nextTurn();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  burst(target.sdk, scenario.actions, attrs);
  await target.settle();
  const flush = target.flush();
  const c1 = process.cpuUsage(c0);
  const wallMs = performance.now() - t0;
  // Idle control: what this process burns doing nothing for as long (capped at 2 s, then scaled).
  const idleMs = Math.min(Math.max(wallMs, 50), 2_000);
  const c2 = process.cpuUsage();
  const i0 = performance.now();
  await sleep(idleMs);
  const idle = process.cpuUsage(c2);
  const idleWall = performance.now() - i0;
  const cpuMs = (c1.user + c1.system) / 1000;
  const idleCpuMs = ((idle.user + idle.system) / 1000) * (wallMs / idleWall);
  return finish(target, {
    metrics: { sdk_cpu_ms: cpuMs - idleCpuMs, flushed_ms: wallMs },
    details: { process_cpu_ms: cpuMs, user_ms: c1.user / 1000, system_ms: c1.system / 1000, idle_control_cpu_ms: idleCpuMs, idle_control_wall_ms: idleWall, flush },
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
  return finish(target, {
    metrics: { delivered_ms: lastUpload ? lastUpload.end - t0 : null },
    details: {
      sent: scenario.actions, loop_ms: loopMs, flushed_ms: flushedAt - t0, flush,
      batches_uploaded: uploader.batchesSent, upload_failures: uploader.failures,
      cycles: uploader.cycles.map((c) => ({ at_ms: Math.round(c.at - t0), sent: c.sent, empty: c.empty, failed: c.failed })),
    },
  });
}

async function runScale(scenario, spec) {
  const { target, attrs } = setUp(spec, SCALE_STORAGE);
  const { loopMs, drainedMs, seen, flush } = await watchedBurst(target, attrs, scenario.actions, startGapTicker());
  const peakRssMb = process.resourceUsage().maxRSS / 1024; // before the read-back below
  const metrics = { longest_stall_ms: seen.longestMs, peak_rss_mb: peakRssMb };
  let readBack = null;
  if (target.variant !== 'floor') {
    readBack = readAll(target);
    metrics.actions_lost = scenario.actions - readBack.actions;
  }
  return finish(target, { metrics, details: { loop_ms: loopMs, drained_ms: drainedMs, flush, read_back: readBack } });
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
    for (const line of bodyText(b.body).split('\n')) {
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

function bodyText(body) {
  if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return String(body);
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
    const text = bodyText(b.body);
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
