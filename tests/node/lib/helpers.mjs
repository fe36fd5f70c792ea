// Shared helpers of the Node suite: temp dirs, pipelines, bursts, reading batch files and the
// upload API, child processes. Every reader here checks the storage format strictly (NDJSON, one
// document a line, `\n`-terminated), so a test that reads documents also checks the format.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

import { parseNdjson, sleep, tmpDir, until } from '../../shared/util.mjs';
import { libraryPath, loadNative, REPO_ROOT } from './native.mjs';

export { libraryPath, loadNative, parseNdjson, REPO_ROOT, sleep, tmpDir, until };

export const LIB_DIR = path.dirname(fileURLToPath(import.meta.url));
export const APP_ID = 'app-node-tests';
export const PAD_350 = 'x'.repeat(350);

export function pipelineOptions(storageDir, extra = {}) {
  return { storageDir, applicationId: APP_ID, service: 'node-tests', version: '0.0.1', ...extra };
}

/**
 * A pipeline on a directory the caller owns (one a child process wrote, or one shared with
 * workers); stopped after the test.
 */
export function attachPipeline(t, options) {
  const { RumPipeline } = loadNative();
  const p = new RumPipeline(options);
  t.after(() => p.stop());
  return p;
}

/** A pipeline on a fresh directory; stopped and removed after the test. */
export function openPipeline(t, extra = {}) {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(null);
  let p;
  try {
    p = new RumPipeline(pipelineOptions(dir, extra));
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  t.after(() => {
    try {
      p.stop();
    } catch {
      // A test may already have stopped it.
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { p, dir, RumPipeline };
}

// Sealed batches are stored gzip-compressed (`.ndjson.gz`) unless `batchEncoding: 'identity'`;
// the active batch (and any batch left by an earlier version) is plain.
const BATCH_NAME = /^batch-(\d+)-(\d+)\.ndjson(\.gz)?$/;
const CLAIMED_NAME = /^batch-(\d+)-(\d+)\.ndjson(\.gz)?\.(\d+)\.uploading$/;

/** A nextBatch() body as NDJSON text, decompressed when its encoding is gzip. */
export function batchText(b) {
  assert.ok(['gzip', 'identity'].includes(b.encoding), `batch encoding is gzip or identity, got ${b.encoding}`);
  const body = Buffer.from(b.body);
  return (b.encoding === 'gzip' ? gunzipSync(body) : body).toString('utf8');
}

/** The batch files of a storage dir, oldest first, with their parsed documents. */
export function readBatchFiles(dir, { includeClaimed = false } = {}) {
  const rum = path.join(dir, 'rum');
  const names = fs.existsSync(rum) ? fs.readdirSync(rum) : [];
  const files = [];
  for (const name of names) {
    const m = BATCH_NAME.exec(name) ?? (includeClaimed ? CLAIMED_NAME.exec(name) : null);
    if (!m) continue;
    const raw = fs.readFileSync(path.join(rum, name));
    const text = (m[3] ? gunzipSync(raw) : raw).toString('utf8');
    files.push({
      name,
      created: Number(m[1]),
      seq: Number(m[2]),
      gzip: Boolean(m[3]),
      // On disk (the compressed size once sealed compressed), as bytesOnDisk counts it.
      bytes: raw.length,
      docs: parseNdjson(text, `${rum}/${name}`),
    });
  }
  // Creation order is the file seq (names.rs): `created_ms` is the writer's clock, which may be
  // read a few ms before a batch another step of the same drain opened.
  files.sort((a, b) => a.seq - b.seq);
  return { files, docs: files.flatMap((f) => f.docs), names };
}

/** Claims every batch through the upload API, checks its shape, and completes it as delivered. */
export function drainBatches(p, { deliver = true, max = 10_000 } = {}) {
  const batches = [];
  const notReadyUntil = Date.now() + 10_000;
  for (let i = 0; i < max; i++) {
    const b = p.nextBatch();
    if (b === null && p.pendingBatches() > 0 && Date.now() < notReadyUntil) {
      // Not ready yet (batches found at open, still being checked by the writer): ask again
      // shortly, as RumUploader does.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      i--;
      continue;
    }
    if (b === null) return batches;
    checkBatchShape(b);
    const docs = parseNdjson(batchText(b), `nextBatch() ${String(b.id)}`);
    batches.push({ id: b.id, docs, eventCount: b.eventCount, bytes: b.bytes, encoding: b.encoding });
    if (deliver) p.completeBatch(b.id, true);
  }
  assert.fail(`nextBatch() did not return null after ${max} batches`);
}

export function checkBatchShape(b) {
  assert.equal(typeof b, 'object', 'nextBatch() returns an object or null');
  assert.ok(['string', 'number'].includes(typeof b.id), `batch id is a string or number, got ${typeof b.id}`);
  assert.ok(b.body instanceof ArrayBuffer, `batch body is an ArrayBuffer, got ${Object.prototype.toString.call(b.body)}`);
  assert.equal(typeof b.eventCount, 'number', 'eventCount is a number');
  assert.equal(typeof b.bytes, 'number', 'bytes is a number');
}

/** The integers from `a` up to, not including, `b`. */
export const range = (a, b) => Array.from({ length: b - a }, (_, i) => a + i);

export const ofType = (docs, type) => docs.filter((d) => d.type === type);
export const actionSeqs = (docs) => ofType(docs, 'action').map((d) => d.context?.seq);

/** addAction × n with a `seq` attribute (and a 350-character pad by default). */
export function burst(p, n, { start = 0, type = 'custom', pad = PAD_350, extra = {} } = {}) {
  for (let i = start; i < start + n; i++) {
    p.addAction(type, `a${i}`, { seq: i, pad, ...extra });
  }
  return start + n;
}

/**
 * Bursts until at least `min` events wait in the queue (checking every 50 calls), so a test of a
 * drain point knows it had something to drain. Returns the next seq.
 */
export function burstUntilQueued(p, { start = 0, min = 100, max = 30_000, extra = {} } = {}) {
  let seq = start;
  while (seq - start < max) {
    seq = burst(p, 50, { start: seq, extra });
    if (p.stats().queueLength >= min) return seq;
  }
  assert.fail(`queueLength stayed under ${min} after ${max} actions: the queued path never engaged`);
}

export function busyWait(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // Holding the thread on purpose.
  }
}

/** Waits for the queue to empty through its scheduled slices (no drain point called). */
export const waitDrained = (p, timeoutMs = 30_000) =>
  until(() => p.stats().queueLength === 0, timeoutMs, 'the queue to drain through slices');

/** JSON with sorted keys, to compare documents whatever the serializer's key order. */
export function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Sum of calls the dispatcher accepted, inline or queued. */
export const callsAccepted = (s) => s.callsInline + s.callsQueued;

export const CHILD_ENV = () => ({ ...process.env, RUM_NATIVE_QUIET: '1', RUM_NATIVE_LIB: libraryPath() });

/**
 * Runs `node ...args`; resolves with { code, signal, stdout, stderr, timedOut }. `onLine` sees each
 * stdout line as it arrives and gets the child to kill it.
 */
export function runNode(args, { timeoutMs = 30_000, onLine, env = CHILD_ENV() } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let pending = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        onLine?.(line, child);
      }
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

export const childScript = (name) => path.join(LIB_DIR, name);

/**
 * Asserts `fn` throws `Ctor` (or one of `Ctor`s) whose message names the method and the argument.
 */
export function assertArgError(fn, Ctors, method, arg, label = `${method}(${arg})`) {
  const list = Array.isArray(Ctors) ? Ctors : [Ctors];
  let thrown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown !== undefined, `${label}: expected ${list.map((c) => c.name).join(' or ')}, nothing was thrown`);
  assert.ok(
    list.some((C) => thrown instanceof C),
    `${label}: expected ${list.map((c) => c.name).join(' or ')}, got ${thrown?.constructor?.name}: ${thrown?.message}`,
  );
  const re = (x) => (x instanceof RegExp ? x : new RegExp(`\\b${x}\\b`));
  assert.match(thrown.message, re(method), `${label}: the message names the method`);
  if (arg) assert.match(thrown.message, re(arg), `${label}: the message names the argument`);
  return thrown;
}
