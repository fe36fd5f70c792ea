// Which HarmonyOS SDK the checks use, and the compiler options DevEco's compiler (ets-loader's
// ets_checker) would give ohos-typescript with it.
//
// An SDK is the `ets/` folder of a DevEco Studio / Command Line Tools SDK
// (`<sdk>/default/openharmony/ets`: api/, arkts/, kits/, component/, build-tools/ets-loader/).
// Looked for, first found wins:
//   RUM_OHOS_SDK          an SDK folder at any of the levels below, or `none` for the stand-ins
//   DEVECO_SDK_HOME       DevEco Studio's SDK (…/sdk, holding default/openharmony/ets)
//   OHOS_SDK_HOME, OHOS_BASE_SDK_HOME   the Command Line Tools' SDK
//   <repo>/../shared/ohos-sdk           the shared copy CI and this machine keep next to the repo
// Without one the checks fall back to the stand-ins in tests/ets-host/sdk/ and say so.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const HOST_DIR = resolve(fileURLToPath(new URL('..', import.meta.url)));
const REPO_ROOT = resolve(HOST_DIR, '..', '..');

/** The `ets` folder under `dir`, whichever level of the SDK `dir` names. */
function etsFolderUnder(dir) {
  const candidates = [
    dir,
    join(dir, 'ets'),
    join(dir, 'openharmony', 'ets'),
    join(dir, 'default', 'openharmony', 'ets'),
    join(dir, 'sdk', 'default', 'openharmony', 'ets')
  ];
  for (const c of candidates) {
    if (existsSync(join(c, 'api')) && existsSync(join(c, 'kits')) && existsSync(join(c, 'arkts'))) {
      return resolve(c);
    }
  }
  return null;
}

let found;

/** `{ etsDir, from }` of the SDK to use, or null for the stand-ins. */
export function findSdk() {
  if (found !== undefined) {
    return found;
  }
  found = null;
  const explicit = process.env.RUM_OHOS_SDK;
  if (explicit === 'none' || explicit === 'stand-ins') {
    return found;
  }
  const tries = [
    ['RUM_OHOS_SDK', explicit],
    ['DEVECO_SDK_HOME', process.env.DEVECO_SDK_HOME],
    ['OHOS_SDK_HOME', process.env.OHOS_SDK_HOME],
    ['OHOS_BASE_SDK_HOME', process.env.OHOS_BASE_SDK_HOME],
    ['../shared/ohos-sdk', join(REPO_ROOT, '..', 'shared', 'ohos-sdk')]
  ];
  for (const [from, dir] of tries) {
    if (!dir) {
      continue;
    }
    const etsDir = etsFolderUnder(resolve(REPO_ROOT, dir));
    if (etsDir !== null) {
      found = { etsDir, from };
      return found;
    }
    if (from === 'RUM_OHOS_SDK') {
      throw new Error(`RUM_OHOS_SDK=${dir} holds no SDK ets folder (api/, kits/, arkts/)`);
    }
  }
  return found;
}

/** One line naming the SDK the checks use. */
export function describeSdk() {
  const sdk = findSdk();
  return sdk === null
    ? 'stand-ins (tests/ets-host/sdk; no SDK found: set DEVECO_SDK_HOME or OHOS_SDK_HOME)'
    : `real SDK ${sdk.etsDir} (from ${sdk.from})`;
}

/** ets-loader's tsconfig.json `compilerOptions` (the `ets` block describes ArkUI syntax). */
export function etsLoaderCompilerOptions(etsDir) {
  const JSON5 = require('json5');
  const file = join(etsDir, 'build-tools', 'ets-loader', 'tsconfig.json');
  return JSON5.parse(readFileSync(file, 'utf8')).compilerOptions;
}

/** The declaration files ets-loader adds to every program (ArkUI components and decorators). */
export function etsLoaderDeclarations(etsDir) {
  const dir = join(etsDir, 'build-tools', 'ets-loader', 'declarations');
  if (!existsSync(dir)) {
    return [];
  }
  return readdirSync(dir).filter((f) => f.endsWith('.d.ts')).map((f) => join(dir, f)).filter((f) => statSync(f).isFile());
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `node lib/sdk.mjs`: prints the SDK folder (empty for the stand-ins) and, on stderr, the choice.
  const sdk = findSdk();
  console.error(`check-ets: ArkTS declarations: ${describeSdk()}`);
  console.log(sdk === null ? '' : sdk.etsDir);
}
