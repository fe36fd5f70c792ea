// Stages the non-UI .ets files as TypeScript and compiles them with npm `typescript` against the
// SDK stand-ins (sdk/) and the native module's index.d.ts:
//   typecheck() — check 4, `tsc --noEmit` semantics (every diagnostic is a failure);
//   build()     — emits ES modules whose `@kit.*` and `librum_native.so` imports point at the
//                 run-time stand-ins (stubs/), for the node tests of check 3.
// ArkTS-only syntax in these files is limited to decorators: `@Sendable` is a class decorator
// (a global stand-in returns the class) and `@Concurrent` on functions is blanked out.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HAR_PACKAGE, NATIVE_DTS, REPO_ROOT, SDK_DIR, STUBS_DIR, nonUiEtsFiles, read, rel } from './files.mjs';

const require = createRequire(import.meta.url);
const ts = require('typescript');

/** Same length, so diagnostics keep their line and column. */
function blankConcurrent(text) {
  return text.replace(/@Concurrent\b/g, (m) => ' '.repeat(m.length));
}

function stage(outDir) {
  const srcDir = join(outDir, 'src');
  const sdkDir = join(outDir, 'sdk');
  mkdirSync(sdkDir, { recursive: true });
  for (const name of readdirSync(SDK_DIR)) {
    // TypeScript reads `.d.ets` declarations (the SDK's ArkTS-only modules) as `.d.ts`.
    copyFileSync(join(SDK_DIR, name), join(sdkDir, name.replace(/\.d\.ets$/, '.d.ts')));
  }
  const staged = new Map();
  for (const f of nonUiEtsFiles()) {
    const target = join(srcDir, rel(f).replace(/\.ets$/, '.ts'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, blankConcurrent(read(f)));
    staged.set(target, f);
  }
  return { srcDir, sdkDir, staged };
}

/** The compiler options every host check starts from: strict ES2022 modules, no ambient types. */
export const STRICT_ES2022 = Object.freeze({
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ES2022,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  lib: ['lib.es2022.d.ts'],
  types: [],
  strict: true,
  noImplicitReturns: true
});

function compilerOptions(outDir, sdkDir, srcDir) {
  return {
    ...STRICT_ES2022,
    noFallthroughCasesInSwitch: true,
    experimentalDecorators: true,
    allowSyntheticDefaultImports: true,
    forceConsistentCasingInFileNames: true,
    skipLibCheck: false,
    baseUrl: outDir,
    paths: {
      '@kit.*': [`${relative(outDir, sdkDir)}/@kit.*`],
      '@ohos.*': [`${relative(outDir, sdkDir)}/@ohos.*`],
      '@arkts.*': [`${relative(outDir, sdkDir)}/@arkts.*`],
      'librum_native.so': [NATIVE_DTS],
      [HAR_PACKAGE]: [join(srcDir, 'ets', 'Index.ts')]
    },
    outDir: join(outDir, 'js'),
    rootDir: srcDir,
    noEmitOnError: false
  };
}

function program(outDir) {
  const { srcDir, sdkDir, staged } = stage(outDir);
  const options = compilerOptions(outDir, sdkDir, srcDir);
  const roots = [...staged.keys(), join(sdkDir, 'globals.d.ts')];
  return { program: ts.createProgram(roots, options), staged, options };
}

function describe(d, staged) {
  const msg = ts.flattenDiagnosticMessageText(d.messageText, ' ');
  if (!d.file) {
    return `TS${d.code}: ${msg}`;
  }
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
  const source = staged.get(d.file.fileName);
  const where = source ? rel(source) : relative(REPO_ROOT, d.file.fileName);
  return `${where}:${line + 1}:${character + 1}: TS${d.code}: ${msg}`;
}

/** Check 4: the staged sources type-check against the SDK stand-ins and index.d.ts. */
export function typecheck() {
  const outDir = mkdtempSync(join(tmpdir(), 'rum-ets-typecheck-'));
  const { program: p, staged } = program(outDir);
  const problems = ts.getPreEmitDiagnostics(p).map((d) => describe(d, staged));
  return { problems, summary: `${staged.size} non-UI .ets files, TypeScript ${ts.version}` };
}

/**
 * Rewrites emitted import specifiers for Node: stand-ins for the platform (`nativeStub` for
 * librum_native.so), the built HAR's Index module (`harIndex`) for the demo's 'rum-native', `.js`
 * for relatives.
 */
function rewriteSpecifiers(code, nativeStub, harIndex) {
  return code.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\2/g, (all, lead, q, spec) => {
    let target = spec;
    if (spec.startsWith('@kit.') || spec.startsWith('@ohos.') || spec.startsWith('@arkts.')) {
      target = pathToFileURL(join(STUBS_DIR, `${spec.replace(/^@/, '')}.mjs`)).href;
    } else if (spec === 'librum_native.so') {
      target = pathToFileURL(nativeStub).href;
    } else if (spec === HAR_PACKAGE) {
      target = pathToFileURL(harIndex).href;
    } else if (spec.startsWith('.') && !spec.endsWith('.js')) {
      target = `${spec}.js`;
    }
    return `${lead}${q}${target}${q}`;
  });
}

/**
 * Check 3's build: emits the HAR's non-UI sources as ES modules into a fresh temporary folder and
 * returns the file URL of the HAR's Index module there. `nativeStub`: the module that stands in
 * for librum_native.so (default stubs/native.mjs, the real library).
 */
export function build({ nativeStub = join(STUBS_DIR, 'native.mjs') } = {}) {
  const outDir = mkdtempSync(join(tmpdir(), 'rum-ets-host-'));
  const { program: p, staged, options } = program(outDir);
  const harIndex = join(options.outDir, 'ets', 'Index.js');
  const written = [];
  const result = p.emit(undefined, (fileName, text) => {
    mkdirSync(dirname(fileName), { recursive: true });
    writeFileSync(fileName, rewriteSpecifiers(text, nativeStub, harIndex));
    written.push(fileName);
  });
  const errors = result.diagnostics.map((d) => describe(d, staged));
  if (errors.length > 0) {
    throw new Error(`emitting the facade failed:\n${errors.join('\n')}`);
  }
  writeFileSync(join(options.outDir, 'package.json'), '{ "type": "module" }\n');
  return {
    outDir,
    indexUrl: pathToFileURL(harIndex).href,
    files: written.length
  };
}
