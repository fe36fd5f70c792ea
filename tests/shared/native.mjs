// The one loader of the built cdylib, for the Node tests, the ArkTS facade run on the host and the
// benchmarks: loaded once per process (main thread, worker or child) with process.dlopen, as
// docs/interface.md ("Loading") says Node loads it (Node-API is the ABI ArkTS implements).
//
// Which library:
//   RUM_NATIVE_LIB=debug|release  → target/<profile>/librum_native.so (under CARGO_TARGET_DIR if set)
//   RUM_NATIVE_LIB=<path>         → that file (a relative path from the current directory)
//   unset                          → target/release/librum_native.so, else target/debug/…
// A missing or incomplete library is an error, never a skip: a suite must fail loudly.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const targetDir = () =>
  process.env.CARGO_TARGET_DIR ? path.resolve(REPO_ROOT, process.env.CARGO_TARGET_DIR) : path.join(REPO_ROOT, 'target');

/** The absolute path of the library this process loads (children get the same through the env). */
export function libraryPath() {
  const setting = process.env.RUM_NATIVE_LIB;
  if (setting === 'debug' || setting === 'release') return path.join(targetDir(), setting, 'librum_native.so');
  if (setting) return path.resolve(setting);
  const candidates = ['release', 'debug'].map((p) => path.join(targetDir(), p, 'librum_native.so'));
  return candidates.find((p) => fs.existsSync(p)) ?? candidates[0];
}

// The library logs to stderr on the host; tests and benchmarks run quiet unless asked.
process.env.RUM_NATIVE_QUIET ??= '1';

const loaded = new Map();

/**
 * The exports of the library at `lib` (default: `libraryPath()`), loaded once per process; throws
 * a clear error when the library is missing or lacks RumPipeline.
 */
export function loadNative(lib = libraryPath()) {
  lib = path.resolve(lib);
  if (loaded.has(lib)) return loaded.get(lib);
  if (!fs.existsSync(lib)) {
    throw new Error(
      `rum-native library not found at ${lib}. Build it first (cargo build --release --lib) ` +
        'or point RUM_NATIVE_LIB at it (debug, release or a path).',
    );
  }
  const m = { exports: {} };
  try {
    process.dlopen(m, lib);
  } catch (e) {
    const hint = /self-register/.test(e.message)
      ? ' (built without the napi feature, e.g. by cargo test --no-default-features? run cargo build --release)'
      : '';
    throw new Error(`cannot load ${lib}: ${e.message}${hint}`);
  }
  if (typeof m.exports.RumPipeline !== 'function') {
    throw new Error(
      `${lib} loaded but exports no RumPipeline class (exports: ${Object.keys(m.exports).join(', ') || 'none'}). ` +
        'Is this a stale build?',
    );
  }
  loaded.set(lib, m.exports);
  return m.exports;
}
