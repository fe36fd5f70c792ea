// ArkTS checks with ohos-typescript, the TypeScript fork DevEco's compiler is built on.
//
// With a real SDK (lib/sdk.mjs finds one): the program ets-loader's ets_checker builds — its
// tsconfig.json compiler options (the `ets` block describes ArkUI syntax), its component
// declarations as roots, `@kit.*` / `@ohos.*` / `@arkts.*` / `@system.*` resolved into the SDK's
// kits/, api/, arkts/ — over every .ets file of the HAR and the HAP, UI pages included, with the
// options the compiler sets for this project (compatibleSdkVersion from build-profile.json5): `needDoArkTsLinter: true` and
// `isCompatibleVersion: false` (ets_checker sets it true only in the linter's compatible mode,
// for old API levels; ohos-typescript reads a `.so` import's index.d.ts only when it is false,
// and types the module as `any` with warning 28014 otherwise).
//   lint()        — ArkTSLinter_1_1.runArkTSLinter: the `arkts-*` rules and strict type errors;
//   sdkTypecheck() — the program's diagnostics, errors and warnings (28040 "Function may throw
//                   exceptions" for SDK calls with `@throws` outside a try/catch, ...).
// Every diagnostic in our files, error or warning, is a problem.
//
// Without an SDK: the linter over the non-UI .ets files against the stand-ins in sdk/.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { HAR_PACKAGE, NATIVE_DTS, REPO_ROOT, SDK_DIR, etsFiles, nonUiEtsFiles, rel } from './files.mjs';
import { describeSdk, etsLoaderCompilerOptions, etsLoaderDeclarations, findSdk } from './sdk.mjs';
import { apiLevel, projectSdkVersions } from './since.mjs';

const require = createRequire(import.meta.url);
const ts = require('ohos-typescript');

/** The API level the linter assumes: the project's compatibleSdkVersion (build-profile.json5). */
const COMPATIBLE_SDK_VERSION = apiLevel(projectSdkVersions().compatible);

function standInProgram() {
  const files = nonUiEtsFiles();
  const options = {
    target: ts.ScriptTarget.ES2021,
    module: ts.ModuleKind.ES2020,
    moduleResolution: ts.ModuleResolutionKind.NodeJs,
    lib: ['lib.es2021.d.ts'],
    types: [],
    strict: true,
    noEmit: true,
    experimentalDecorators: true,
    allowSyntheticDefaultImports: true,
    skipLibCheck: true,
    baseUrl: REPO_ROOT,
    paths: {
      '@kit.*': [join(SDK_DIR, '@kit.*')],
      '@ohos.*': [join(SDK_DIR, '@ohos.*')],
      '@arkts.*': [join(SDK_DIR, '@arkts.*')],
      'librum_native.so': [NATIVE_DTS],
      [HAR_PACKAGE]: [join(REPO_ROOT, 'ets', 'Index.ets')]
    },
    compatibleSdkVersion: COMPATIBLE_SDK_VERSION,
    packageManagerType: 'ohpm'
  };
  const host = ts.createIncrementalCompilerHost(options);
  const roots = [...files, join(SDK_DIR, 'globals.d.ts')];
  const builder = ts.createEmitAndSemanticDiagnosticsBuilderProgram(roots, options, host);
  return { builder, files, what: `${files.length} non-UI .ets files, SDK stand-ins` };
}

export function sdkProgram(sdk) {
  const etsDir = sdk.etsDir;
  const converted = ts.convertCompilerOptionsFromJson(etsLoaderCompilerOptions(etsDir), etsDir);
  if (converted.errors.length > 0) {
    throw new Error(`ets-loader tsconfig.json: ${converted.errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, ' ')).join('; ')}`);
  }
  const files = etsFiles();
  const options = {
    ...converted.options,
    // As ets_checker's setCompilerOptions, plus strict (ArkTS is strict TypeScript).
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.NodeJs,
    target: ts.ScriptTarget.ES2021,
    lib: ['lib.es2021.d.ts'],
    types: [],
    allowJs: true,
    checkJs: false,
    noEmit: true,
    strict: true,
    baseUrl: REPO_ROOT,
    paths: {
      '@kit.*': [join(etsDir, 'kits', '@kit.*')],
      '@ohos.*': [join(etsDir, 'api', '@ohos.*')],
      '@system.*': [join(etsDir, 'api', '@system.*')],
      '@arkts.*': [join(etsDir, 'arkts', '@arkts.*')],
      // The ohpm `file:` dependencies: ets/oh-package.json5 names the native library's types
      // folder, entry/oh-package.json5 the HAR.
      'librum_native.so': [NATIVE_DTS],
      [HAR_PACKAGE]: [join(REPO_ROOT, 'ets', 'Index.ets')]
    },
    etsLoaderPath: join(etsDir, 'build-tools', 'ets-loader'),
    needDoArkTsLinter: true,
    isCompatibleVersion: false,
    compatibleSdkVersion: COMPATIBLE_SDK_VERSION,
    packageManagerType: 'ohpm'
  };
  const host = ts.createIncrementalCompilerHost(options);
  const roots = [...files, ...etsLoaderDeclarations(etsDir)];
  const builder = ts.createEmitAndSemanticDiagnosticsBuilderProgram(roots, options, host);
  const ui = files.length - nonUiEtsFiles().length;
  return { builder, files, what: `${files.length} .ets files (${ui} UI) of ets/ and entry/, ${describeSdk()}` };
}

function report(diagnostics, files) {
  const ours = new Set(files);
  const problems = [];
  let errors = 0;
  let warnings = 0;
  for (const d of diagnostics) {
    if (!d.file || !ours.has(d.file.fileName)) {
      continue;
    }
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    const level = d.category === ts.DiagnosticCategory.Error ? 'error' : 'warning';
    if (level === 'error') {
      errors++;
    } else {
      warnings++;
    }
    problems.push(`${rel(d.file.fileName)}:${line + 1}:${character + 1}: ${level} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
  }
  return { problems, counts: `${errors} error(s), ${warnings} warning(s)` };
}

/** The ArkTS linter (ArkTSLinter_1_1), against the real SDK when there is one. */
export function lint() {
  const sdk = findSdk();
  const { builder, files, what } = sdk === null ? standInProgram() : sdkProgram(sdk);
  const diagnostics = ts.ArkTSLinter_1_1.runArkTSLinter(builder, undefined, undefined, '1.1');
  const { problems, counts } = report(diagnostics, files);
  return { problems, summary: `${what}; ohos-typescript ${ts.version} ArkTS 1.1 rules; ${counts}` };
}

/**
 * The native library's index.d.ts checked on its own, declarations included: the SDK program
 * skips library checks (as ets-loader does), so a name the file uses but never declares would
 * pass there and fail in a user's project that checks it.
 */
function nativeDtsProgram() {
  const options = { target: ts.ScriptTarget.ES2021, lib: ['lib.es2021.d.ts'], types: [], strict: true, noEmit: true, skipLibCheck: false };
  return ts.createProgram([NATIVE_DTS], options);
}

/** The real SDK's type check of every .ets file (ETS mode, UI components included), or null. */
export function sdkTypecheck() {
  const sdk = findSdk();
  if (sdk === null) {
    return null;
  }
  const { builder, files, what } = sdkProgram(sdk);
  const program = builder.getProgram();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...ts.getPreEmitDiagnostics(nativeDtsProgram())];
  const { problems, counts } = report(diagnostics, [...files, NATIVE_DTS]);
  return { problems, summary: `${what}, and index.d.ts with its declarations checked; ohos-typescript ${ts.version}; ${counts}` };
}
