// The HAR's hvigor task (ets/nativeLibraryTask.ts, registered by ets/hvigorfile.ts) run on the host
// against a stand-in of the hvigor API: a node that records registerTask() and a scheduler that runs
// a task's postDependencies edges the way hvigor does (a task runs before those that name it).
// Library absent → the build fails naming the file and the command, before default@PackageHar;
// present and current → it passes; older than a Rust source → rebuilt when OHOS_NDK_HOME is set,
// else the build fails.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './lib/files.mjs';
import { STRICT_ES2022 } from './lib/stage.mjs';

const require = createRequire(import.meta.url);
const ts = require('typescript');

const TASK_TS = join(REPO_ROOT, 'ets', 'nativeLibraryTask.ts');
const HVIGORFILE = join(REPO_ROOT, 'ets', 'hvigorfile.ts');

// The declarations the module is type-checked against: the subset of @ohos/hvigor it uses, as the
// real package declares it (HvigorTask.run receives a HvigorTaskContext with modulePath), and the
// Node built-ins it imports.
const DECLARATIONS = `
declare module '@ohos/hvigor' {
  export interface HvigorTaskContext { moduleName: string; modulePath: string; }
  export interface HvigorTask {
    name: string;
    run: (taskContext: HvigorTaskContext) => void | Promise<void>;
    dependencies?: (() => string[]) | string[];
    postDependencies?: (() => string[]) | string[];
  }
  export interface HvigorNode {
    getNodeName(): string;
    getNodePath(): string;
    registerTask(task: HvigorTask): void;
  }
  export interface HvigorPlugin { pluginId: string; apply(node: HvigorNode): void | Promise<void>; }
}
declare module 'node:fs' {
  export interface Dirent { name: string; isDirectory(): boolean; isFile(): boolean; }
  export interface Stats { mtimeMs: number; }
  export function statSync(path: string): Stats;
  export function readdirSync(path: string, options: { withFileTypes: true }): Dirent[];
}
declare module 'node:path' {
  export function join(...parts: string[]): string;
  export function dirname(p: string): string;
  export function relative(from: string, to: string): string;
}
declare module 'node:child_process' {
  export function spawnSync(command: string, args: string[], options: { cwd: string; env: Record<string, string | undefined>; stdio: 'inherit' }):
    { status: number | null; error?: Error };
}
declare const process: { env: Record<string, string | undefined> };
declare const console: { log(...values: unknown[]): void };
`;

let work;
let mod;

function transpile(file) {
  return ts.transpileModule(readFileSync(file, 'utf8'), {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 },
    fileName: file,
  }).outputText;
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'rum-hvigor-task-'));
  writeFileSync(join(work, 'nativeLibraryTask.mjs'), transpile(TASK_TS));
  mod = await import(pathToFileURL(join(work, 'nativeLibraryTask.mjs')).href);
});

after(() => {
  if (work) {
    rmSync(work, { recursive: true, force: true });
  }
});

test('nativeLibraryTask.ts type-checks against the hvigor API it registers with', () => {
  const decl = join(work, 'declarations.d.ts');
  writeFileSync(decl, DECLARATIONS);
  const program = ts.createProgram([TASK_TS, decl], { ...STRICT_ES2022, noEmit: true });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
  assert.deepEqual(diagnostics, []);
});

// ---- a stand-in of hvigor: nodes, tasks, and the order postDependencies impose ----

const HAR_PIPELINE = ['default@PreBuild', 'default@CompileArkTS', 'default@ProcessLibs', 'default@PackageHar'];

class StandInNode {
  constructor(path) {
    this.path = path;
    this.tasks = [];
  }
  getNodeName() {
    return 'rum_native';
  }
  getNodePath() {
    return this.path;
  }
  registerTask(task) {
    assert.equal(typeof task.name, 'string');
    assert.equal(typeof task.run, 'function');
    this.tasks.push(task);
  }
}

/** Runs the HAR's built-in pipeline; a registered task runs before every task its postDependencies names. */
async function runPipeline(node) {
  const ran = [];
  const done = new Set();
  for (const builtin of HAR_PIPELINE) {
    for (const task of node.tasks) {
      const post = typeof task.postDependencies === 'function' ? task.postDependencies() : task.postDependencies ?? [];
      if (post.includes(builtin) && !done.has(task.name)) {
        done.add(task.name);
        await task.run({ moduleName: node.getNodeName(), modulePath: node.getNodePath() });
        ran.push(task.name);
      }
    }
    ran.push(builtin);
  }
  return ran;
}

// ---- a repository in a temporary folder: Rust sources and the HAR module ----

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (seconds) => new Date(T0.getTime() + seconds * 1000);

function fixture(name) {
  const root = join(work, name);
  mkdirSync(join(root, 'src', 'core'), { recursive: true });
  mkdirSync(join(root, 'ets'), { recursive: true });
  for (const f of ['Cargo.toml', 'Cargo.lock', 'build.rs', 'src/lib.rs', 'src/core/dispatch.rs']) {
    writeFileSync(join(root, f), '// source\n');
    utimesSync(join(root, f), T0, T0);
  }
  return { root, moduleDir: join(root, 'ets'), library: join(root, 'ets', 'libs', 'arm64-v8a', 'librum_native.so') };
}

function writeLibrary(fx, when) {
  mkdirSync(join(fx.moduleDir, 'libs', 'arm64-v8a'), { recursive: true });
  writeFileSync(fx.library, 'ELF');
  utimesSync(fx.library, when, when);
}

function pluginNode(fx, env) {
  const node = new StandInNode(fx.moduleDir);
  const plugin = mod.rumNativeLibraryPlugin({ env });
  assert.equal(typeof plugin.pluginId, 'string');
  plugin.apply(node);
  return node;
}

test('the plugin registers one task that default@PreBuild waits for', () => {
  const node = pluginNode(fixture('shape'), {});
  assert.equal(node.tasks.length, 1);
  assert.equal(node.tasks[0].name, 'checkRumNativeLibrary');
  assert.deepEqual(node.tasks[0].postDependencies, ['default@PreBuild']);
});

test('library absent, no NDK: the build fails before packaging, naming the file and the command', async () => {
  const fx = fixture('absent');
  const node = pluginNode(fx, {});
  let ran = [];
  await assert.rejects(
    async () => {
      ran = await runPipeline(node);
    },
    (e) => {
      assert.ok(e instanceof Error);
      assert.match(e.message, /ets\/libs\/arm64-v8a\/librum_native\.so is missing/);
      assert.ok(e.message.includes(fx.library), 'the absolute path too');
      assert.ok(
        e.message.includes('OHOS_NDK_HOME=<HarmonyOS SDK>/default/openharmony scripts/build-ohos.sh --libs-only --abi arm64-v8a'),
        e.message,
      );
      return true;
    },
  );
  assert.deepEqual(ran, [], 'nothing of the pipeline ran, default@PackageHar least of all');
});

test('library present and newer than every Rust source: the build goes on, nothing is run', async () => {
  const fx = fixture('current');
  writeLibrary(fx, at(10));
  const calls = [];
  const lines = [];
  const node = new StandInNode(fx.moduleDir);
  node.registerTask({
    name: 'checkRumNativeLibrary',
    run: (ctx) => mod.ensureNativeLibrary({ moduleDir: ctx.modulePath, env: { OHOS_NDK_HOME: '/sdk' }, run: (...a) => calls.push(a), log: (l) => lines.push(l) }),
    postDependencies: ['default@PreBuild'],
  });
  const ran = await runPipeline(node);
  assert.deepEqual(ran, ['checkRumNativeLibrary', ...HAR_PIPELINE]);
  assert.deepEqual(calls, [], 'no build when the library is current');
  assert.match(lines.join('\n'), /librum_native\.so is current/);
  // And through the plugin as hvigorfile.ts registers it.
  assert.deepEqual(await runPipeline(pluginNode(fx, {})), ['checkRumNativeLibrary', ...HAR_PIPELINE]);
});

test('library older than a Rust source, no NDK: the build fails naming the newer source', async () => {
  const fx = fixture('stale');
  writeLibrary(fx, at(10));
  utimesSync(join(fx.root, 'src', 'core', 'dispatch.rs'), at(20), at(20));
  await assert.rejects(runPipeline(pluginNode(fx, {})), (e) => {
    assert.match(e.message, /librum_native\.so is older than src\/core\/dispatch\.rs/);
    assert.match(e.message, /scripts\/build-ohos\.sh --libs-only --abi arm64-v8a/);
    return true;
  });
  utimesSync(join(fx.root, 'src', 'core', 'dispatch.rs'), T0, T0);
  utimesSync(join(fx.root, 'Cargo.lock'), at(30), at(30));
  assert.throws(() => mod.ensureNativeLibrary({ moduleDir: fx.moduleDir, env: {} }), /older than Cargo\.lock/);
});

test('library missing or stale with OHOS_NDK_HOME: build-ohos.sh runs, and its failure fails the build', () => {
  const fx = fixture('ndk');
  const env = { OHOS_NDK_HOME: '/opt/sdk/default/openharmony' };
  const calls = [];
  const lines = [];
  const building = (command, args, cwd, runEnv) => {
    calls.push({ command, args, cwd, ndk: runEnv.OHOS_NDK_HOME });
    writeLibrary(fx, at(100));
    return 0;
  };
  mod.ensureNativeLibrary({ moduleDir: fx.moduleDir, env, run: building, log: (l) => lines.push(l) });
  assert.deepEqual(calls, [{ command: 'bash', args: ['scripts/build-ohos.sh', '--libs-only', '--abi', 'arm64-v8a'], cwd: fx.root, ndk: env.OHOS_NDK_HOME }]);
  assert.match(lines.join('\n'), /built ets\/libs\/arm64-v8a\/librum_native\.so/);

  utimesSync(join(fx.root, 'build.rs'), at(200), at(200));
  assert.throws(
    () => mod.ensureNativeLibrary({ moduleDir: fx.moduleDir, env, run: () => 2, log: () => {} }),
    /scripts\/build-ohos\.sh --libs-only --abi arm64-v8a failed with exit status 2/,
  );
  assert.throws(
    () => mod.ensureNativeLibrary({ moduleDir: fx.moduleDir, env, run: () => 0, log: () => {} }),
    /succeeded, but ets\/libs\/arm64-v8a\/librum_native\.so is older than build\.rs/,
  );
});

test('harDir: a module other than the HAR (a HAP building it from source) checks the HAR\'s library', async () => {
  const fx = fixture('hap');
  const node = new StandInNode(join(fx.root, 'entry'));
  mod.rumNativeLibraryPlugin({ env: {}, harDir: fx.moduleDir }).apply(node);
  await assert.rejects(runPipeline(node), /ets\/libs\/arm64-v8a\/librum_native\.so is missing/);
  writeLibrary(fx, at(10));
  assert.deepEqual(await runPipeline(node), ['checkRumNativeLibrary', ...HAR_PIPELINE]);
});

test('the command the task runs and names exists and takes those arguments', () => {
  const script = readFileSync(join(REPO_ROOT, 'scripts', 'build-ohos.sh'), 'utf8');
  assert.match(script, /--libs-only\)/);
  assert.match(script, /--abi\)/);
  assert.match(script, /arm64-v8a \| x86_64\) ABIS="\$2"/);
});

test('ets/hvigorfile.ts exports harTasks with the plugin in its plugins', async () => {
  const dir = join(work, 'hvigorfile');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'hvigor-ohos-plugin.mjs'), "export const harTasks = { standIn: 'harTasks' };\n");
  writeFileSync(join(dir, 'nativeLibraryTask.mjs'), transpile(TASK_TS));
  const js = transpile(HVIGORFILE)
    .replace(/from '@ohos\/hvigor-ohos-plugin'/, "from './hvigor-ohos-plugin.mjs'")
    .replace(/from '\.\/nativeLibraryTask'/, "from './nativeLibraryTask.mjs'");
  writeFileSync(join(dir, 'hvigorfile.mjs'), js);
  const config = (await import(pathToFileURL(join(dir, 'hvigorfile.mjs')).href)).default;
  assert.deepEqual(config.system, { standIn: 'harTasks' });
  const ids = config.plugins.map((p) => p.pluginId);
  assert.deepEqual(ids, ['rumNativeLibraryPlugin']);
  const node = new StandInNode(join(work, 'nowhere', 'ets'));
  config.plugins[0].apply(node);
  assert.deepEqual(node.tasks.map((t) => t.name), ['checkRumNativeLibrary']);
});

test('entry/hvigorfile.ts exports hapTasks with the same check against the HAR folder', async () => {
  const dir = join(work, 'entry-hvigorfile');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'hvigor-ohos-plugin.mjs'), "export const hapTasks = { standIn: 'hapTasks' };\n");
  writeFileSync(join(dir, 'nativeLibraryTask.mjs'), transpile(TASK_TS));
  // hvigor loads hvigorfile.ts as CommonJS, where __dirname is the module's folder: here a
  // project with no library, so the check must fail naming the HAR's file.
  const project = join(work, 'no-library-project');
  const js =
    `const __dirname = ${JSON.stringify(join(project, 'entry'))};\n` +
    transpile(join(REPO_ROOT, 'entry', 'hvigorfile.ts'))
      .replace(/from '@ohos\/hvigor-ohos-plugin'/, "from './hvigor-ohos-plugin.mjs'")
      .replace(/from '\.\.\/ets\/nativeLibraryTask'/, "from './nativeLibraryTask.mjs'")
      .replace(/from 'path'/, "from 'node:path'");
  writeFileSync(join(dir, 'hvigorfile.mjs'), js);
  const ndk = process.env.OHOS_NDK_HOME;
  delete process.env.OHOS_NDK_HOME; // no cross build: the task must stop the build
  try {
    const config = (await import(pathToFileURL(join(dir, 'hvigorfile.mjs')).href)).default;
    assert.deepEqual(config.system, { standIn: 'hapTasks' });
    assert.deepEqual(config.plugins.map((p) => p.pluginId), ['rumNativeLibraryPlugin']);
    const node = new StandInNode(join(project, 'entry'));
    config.plugins[0].apply(node);
    const [task] = node.tasks;
    assert.equal(task.name, 'checkRumNativeLibrary');
    assert.throws(
      () => task.run({ modulePath: join(project, 'entry') }),
      (e) => e.message.includes(join(project, 'ets', 'libs', 'arm64-v8a', 'librum_native.so')),
    );
  } finally {
    if (ndk !== undefined) process.env.OHOS_NDK_HOME = ndk;
  }
});
