// ArkTS strict-mode rules on the non-UI .ets files: the ArkTS linter that ships inside
// ohos-typescript (ArkTSLinter_1_1, the one DevEco's compiler runs), against the SDK stand-ins
// in sdk/ and the native module's index.d.ts. It reports the `arkts-*` rules (no any/unknown,
// typed object literals, no destructuring, Sendable constraints, ...) and strict type errors.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { HAR_PACKAGE, NATIVE_DTS, REPO_ROOT, SDK_DIR, nonUiEtsFiles, rel } from './files.mjs';

const require = createRequire(import.meta.url);
const ts = require('ohos-typescript');

/** The API level the checks assume (the project's compatibleSdkVersion is 26.0.0). */
const COMPATIBLE_SDK_VERSION = 26;

export function lint() {
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
  const diagnostics = ts.ArkTSLinter_1_1.runArkTSLinter(builder, undefined, undefined, '1.1');
  const ours = new Set(files);
  const problems = [];
  for (const d of diagnostics) {
    if (d.file && !ours.has(d.file.fileName)) {
      continue;
    }
    const where = d.file
      ? (() => {
        const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${rel(d.file.fileName)}:${line + 1}:${character + 1}`;
      })()
      : '(project)';
    const level = d.category === ts.DiagnosticCategory.Error ? 'error' : 'warning';
    problems.push(`${where}: ${level}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
  }
  return { problems, summary: `${files.length} non-UI .ets files, ohos-typescript ${ts.version} ArkTS 1.1 rules` };
}
