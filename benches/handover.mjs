// The capture candidates of docs/benchmarks.md ("Capture in JS: the candidates"), in one Node.js
// process against the real library, the burst's arguments (3,700 calls a sample, samples
// alternating between candidates): what each costs the JS thread per call, median and p95,
// with its ratio to the floor (a loop that only snapshots the arguments in JS).
//   floor        timestamp + shallow copy of the attributes pushed on an array, no crossing
//   buffer       CallBuffer.addAction (the HAR's capture code): checks, deep copy, stamp, push
//   +stringify   buffer, then the run serialized as one JSON.stringify text (no crossing)
//   +encodeInto  buffer + stringify, then the text written as UTF-8 into one ArrayBuffer
//                (TextEncoder.encodeInto), the bytes form a handover could take instead
//   +ingest      buffer + stringify + RumPipeline.ingest: the whole handover, processing included
//   per call     RumPipeline.addAction once per call (the earlier path: one crossing a call)
// Usage: node benches/handover.mjs [--samples 15] [--calls 3700]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { loadNative } from '../tests/shared/native.mjs';
import { buildAttributes } from './burst/scenarios.mjs';
import { bufferFor, loadCallBuffer } from './capture-code.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SAMPLES = arg('samples', 15);
const CALLS = arg('calls', 3700);

const CallBuffer = await loadCallBuffer();
const native = loadNative();
const attrs = buildAttributes();
const dirs = [];
const pipeline = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rum-handover-'));
  dirs.push(dir);
  const p = new native.RumPipeline({ storageDir: dir, applicationId: '6c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f', trackingConsent: 'granted', diskQuotaBytes: 256 * 1024 * 1024 });
  p.startView('main', 'Main');
  return p;
};

/** A buffer whose handovers go nowhere until `drain` runs (so a sample times the calls only). */
function heldBuffer() {
  const held = [];
  const cb = bufferFor(CallBuffer, { ingest: (text) => (held.push(text), false) }, { capacity: CALLS + 1 });
  return { cb, held };
}

const encoder = new TextEncoder();
const CANDIDATES = {
  floor() {
    const kept = [];
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) kept.push(['custom', `sync message ${i}`, { ...attrs }, Date.now()]);
    return performance.now() - t0;
  },
  buffer() {
    const { cb } = heldBuffer();
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) cb.addAction('custom', `sync message ${i}`, attrs);
    return performance.now() - t0;
  },
  '+stringify'() {
    const { cb, held } = heldBuffer();
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) cb.addAction('custom', `sync message ${i}`, attrs);
    cb.handOverAll();
    const ms = performance.now() - t0;
    if (held.length !== 1) throw new Error(`${held.length} handovers`);
    return ms;
  },
  '+encodeInto'() {
    const { cb, held } = heldBuffer();
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) cb.addAction('custom', `sync message ${i}`, attrs);
    cb.handOverAll();
    const bytes = new Uint8Array(held[0].length * 3);
    encoder.encodeInto(held[0], bytes);
    return performance.now() - t0;
  },
  '+ingest'() {
    const p = pipeline();
    const cb = bufferFor(CallBuffer, p, { capacity: CALLS + 1 });
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) cb.addAction('custom', `sync message ${i}`, attrs);
    cb.handOverAll();
    const ms = performance.now() - t0;
    p.stop();
    return ms;
  },
  'per call'() {
    const p = pipeline();
    const t0 = performance.now();
    for (let i = 0; i < CALLS; i++) p.addAction('custom', `sync message ${i}`, attrs);
    const ms = performance.now() - t0;
    p.stop();
    return ms;
  },
};

const names = Object.keys(CANDIDATES);
const samples = Object.fromEntries(names.map((n) => [n, []]));
for (let s = 0; s < SAMPLES; s++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + s) % names.length];
    samples[name].push(CANDIDATES[name]());
    await new Promise((r) => setTimeout(r, 5));
  }
}
dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};
const floor = pct(samples.floor, 0.5);
console.log(`${CALLS} calls a sample, ${SAMPLES} samples each, alternating; Node ${process.version}`);
console.log('| candidate | median ms | p95 ms | µs per call | × floor |');
console.log('|---|---:|---:|---:|---:|');
for (const n of names) {
  const m = pct(samples[n], 0.5);
  console.log(`| ${n} | ${m.toFixed(2)} | ${pct(samples[n], 0.95).toFixed(2)} | ${((m * 1000) / CALLS).toFixed(2)} | ${(m / floor).toFixed(2)} |`);
}
