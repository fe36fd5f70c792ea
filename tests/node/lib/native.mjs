// Loads the built cdylib once per process (main thread, worker or child).
//
// The library is found at $RUM_NATIVE_LIB (absolute, or relative to the current directory), else
// target/release/librum_native.so, else target/debug/librum_native.so under the repository root.
// A missing or incomplete library is an error, never a skip: the suite must fail loudly.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The absolute path of the library this process loads (children get the same through the env). */
export function libraryPath() {
  if (process.env.RUM_NATIVE_LIB) return path.resolve(process.env.RUM_NATIVE_LIB);
  const candidates = ['release', 'debug'].map((p) => path.join(REPO_ROOT, 'target', p, 'librum_native.so'));
  return candidates.find((p) => fs.existsSync(p)) ?? candidates[0];
}

// The library logs to stderr on the host; the suite (and its workers) run quiet unless asked.
process.env.RUM_NATIVE_QUIET ??= '1';

let loaded;

/** The module's exports; throws a clear error when the library is missing or lacks RumPipeline. */
export function loadNative() {
  if (loaded) return loaded;
  const lib = libraryPath();
  if (!fs.existsSync(lib)) {
    throw new Error(
      `rum-native library not found at ${lib}. Build it first (cargo build --release --lib) ` +
        'or point RUM_NATIVE_LIB at it. The Node tests do not skip without it.',
    );
  }
  const m = { exports: {} };
  try {
    process.dlopen(m, lib);
  } catch (e) {
    const hint = /self-register/.test(e.message) ? ' (built without the napi feature, e.g. by cargo test --no-default-features?)' : '';
    throw new Error(`cannot load ${lib}: ${e.message}${hint}`);
  }
  if (typeof m.exports.RumPipeline !== 'function') {
    throw new Error(
      `${lib} loaded but exports no RumPipeline class (exports: ${Object.keys(m.exports).join(', ') || 'none'}). ` +
        'Is this a stale build?',
    );
  }
  loaded = m.exports;
  return loaded;
}
