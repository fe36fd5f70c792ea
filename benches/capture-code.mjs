// The capture code the HAR ships (ets/src/main/ets/capture/CallBuffer.ets), built for Node by the
// same TypeScript staging the host checks use (tests/ets-host/lib/stage.mjs), so that the
// benchmarks measure what an app runs: one source, not a copy. The build takes seconds: a run
// builds it once and hands its path to the sample processes in RUM_CAPTURE_JS.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ETS_HOST = path.join(REPO_ROOT, 'tests', 'ets-host');

/** Builds the HAR's non-UI sources; returns the file path of the built CallBuffer module. */
export async function buildCaptureCode() {
  if (!fs.existsSync(path.join(ETS_HOST, 'node_modules', 'typescript'))) {
    throw new Error(`the capture code is built with tests/ets-host's TypeScript: run npm ci --prefix tests/ets-host`);
  }
  const { build } = await import(pathToFileURL(path.join(ETS_HOST, 'lib', 'stage.mjs')).href);
  const built = build();
  const file = path.join(fileURLToPath(new URL('.', built.indexUrl)), '..', 'ets', 'src', 'main', 'ets', 'capture', 'CallBuffer.js');
  if (!fs.existsSync(file)) throw new Error(`the build has no ${file}`);
  return { file, outDir: built.outDir };
}

/** The CallBuffer class: from RUM_CAPTURE_JS when a parent built it, else built now. */
export async function loadCallBuffer() {
  return (await loadCaptureModule()).CallBuffer;
}

/** The built CallBuffer module (the class and its exported constants). */
export async function loadCaptureModule() {
  globalThis.Sendable ??= (target) => target;
  let file = process.env.RUM_CAPTURE_JS;
  if (!file) {
    const built = await buildCaptureCode();
    process.on('exit', () => fs.rmSync(built.outDir, { recursive: true, force: true }));
    file = built.file;
  }
  const mod = await import(pathToFileURL(file).href);
  if (typeof mod.CallBuffer !== 'function') throw new Error(`${file} exports no CallBuffer`);
  return mod;
}

/**
 * A CallBuffer on `pipeline` with its default limits (`extra` overrides) and the clock the HAR's
 * RumMonitor gives it, `Date.now()` (or `clock`): what an app's capture runs, whole milliseconds
 * and all.
 */
export function bufferFor(CallBuffer, pipeline, extra = {}, clock = Date.now) {
  const limits = { eventMaxBytes: 512 * 1024, turnBudgetMs: 4, capacity: 5000, ...extra };
  return new CallBuffer((calls, slice, spentMs, skipped) => pipeline.ingest(calls, slice, spentMs, skipped), limits, clock);
}
