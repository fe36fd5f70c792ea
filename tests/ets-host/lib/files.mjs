// Which files of the hvigor project the host checks look at.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HOST_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = resolve(HOST_DIR, '..', '..');
export const SDK_DIR = join(HOST_DIR, 'sdk');
export const STUBS_DIR = join(HOST_DIR, 'stubs');
export const NATIVE_DTS = join(REPO_ROOT, 'ets', 'src', 'main', 'cpp', 'types', 'librum_native', 'index.d.ts');

/** The HAR package name a consumer imports (ets/oh-package.json5 `name`). */
export const HAR_PACKAGE = 'rum-native';

/** The hvigor modules and the project-level folders the checks cover. */
export const MODULE_DIRS = ['ets', 'entry'];
const PROJECT_DIRS = ['ets', 'entry', 'AppScope', 'hvigor'];
const SKIP_DIRS = new Set(['node_modules', 'oh_modules', 'build', 'libs', '.hvigor', '.preview', '.cxx', '.test']);

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) {
        walk(join(dir, e.name), out);
      }
    } else if (e.isFile()) {
      out.push(join(dir, e.name));
    }
  }
  return out;
}

/** Every file under the project folders (generated and ignored folders excluded), sorted. */
export function projectFiles() {
  const files = [];
  for (const d of PROJECT_DIRS) {
    walk(join(REPO_ROOT, d), files);
  }
  for (const f of ['build-profile.json5', 'oh-package.json5', 'hvigorfile.ts']) {
    try {
      if (statSync(join(REPO_ROOT, f)).isFile()) {
        files.push(join(REPO_ROOT, f));
      }
    } catch {
      // reported by the project check
    }
  }
  return files.sort();
}

export const etsFiles = () => projectFiles().filter((f) => f.endsWith('.ets') && !f.endsWith('.d.ets'));
export const json5Files = () => projectFiles().filter((f) => f.endsWith('.json5'));
export const jsonFiles = () => projectFiles().filter((f) => f.endsWith('.json'));

/** A UI file declares a component (`struct`); everything else must stay free of ArkUI. */
export function isUiSource(text) {
  return /^\s*(export\s+)?struct\s+\w+/m.test(text);
}

export const read = (f) => readFileSync(f, 'utf8');
export const rel = (f) => relative(REPO_ROOT, f).split(sep).join('/');

/** Non-UI .ets files: the HAR's sources and the demo's helpers. */
export function nonUiEtsFiles() {
  return etsFiles().filter((f) => !isUiSource(read(f)));
}

/** The HAR's .ets sources (Index.ets and src/main/ets). */
export function harEtsFiles() {
  return etsFiles().filter((f) => rel(f).startsWith('ets/'));
}
