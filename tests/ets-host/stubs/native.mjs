// Run-time stand-in for `import rum from 'librum_native.so'`: the real library, loaded into Node
// with process.dlopen (Node-API is the ABI ArkTS implements).
//   RUM_NATIVE_LIB=debug|release  → target/<profile>/librum_native.so (under CARGO_TARGET_DIR if set)
//   RUM_NATIVE_LIB=<path>         → that file (relative paths from the repository root)
//   unset                          → target/release/librum_native.so (what scripts/test.sh builds)
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export function nativeLibraryPath() {
  const setting = process.env.RUM_NATIVE_LIB ?? 'release';
  if (setting === 'debug' || setting === 'release') {
    const targetDir = process.env.CARGO_TARGET_DIR
      ? resolve(REPO_ROOT, process.env.CARGO_TARGET_DIR)
      : join(REPO_ROOT, 'target');
    return join(targetDir, setting, 'librum_native.so');
  }
  return isAbsolute(setting) ? setting : resolve(REPO_ROOT, setting);
}

const path = nativeLibraryPath();
if (!existsSync(path)) {
  throw new Error(
    `librum_native.so not found at ${path}. Build it first: \`cargo build --release\`, or ` +
    '`cargo build` and RUM_NATIVE_LIB=debug; RUM_NATIVE_LIB may also name the file.'
  );
}
const loaded = { exports: {} };
try {
  process.dlopen(loaded, path);
} catch (e) {
  const hint = /did not self-register/.test(e.message)
    ? ' It was built without the `napi` feature (`cargo test --no-default-features` writes the same file): ' +
      'run `cargo build --release` (or `cargo build` with RUM_NATIVE_LIB=debug).'
    : '';
  throw new Error(`loading ${path} failed: ${e.message.replace(/\.$/, '')}.${hint}`);
}
if (typeof loaded.exports.RumPipeline !== 'function') {
  throw new Error(`${path} loaded but exports no RumPipeline class (exports: ${Object.keys(loaded.exports).join(', ')})`);
}

export default loaded.exports;
