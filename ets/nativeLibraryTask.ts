// The HAR's hvigor task that keeps it from being packaged without its native library: before
// default@PreBuild (so before anything is compiled or packaged) libs/arm64-v8a/librum_native.so must
// exist and be newer than the Rust sources (src/**, Cargo.toml, Cargo.lock, build.rs). When it is
// missing or older, the cross build runs if the HarmonyOS NDK is there (OHOS_NDK_HOME); otherwise
// the build fails with a message naming the file and the command that produces it.
//
// Plain TypeScript with only Node built-ins, so tests/ets-host/hvigor-task.test.mjs runs it on the
// host against a stand-in of the hvigor API. hvigorfile.ts registers it: plugins: [rumNativeLibraryPlugin()].
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HvigorNode, HvigorPlugin } from '@ohos/hvigor';

export const TASK_NAME = 'checkRumNativeLibrary';
/** The library the phone loads, relative to the HAR module. */
export const LIBRARY = path.join('libs', 'arm64-v8a', 'librum_native.so');
/** The one command that produces it (run at the repository root). */
export const BUILD_COMMAND = 'OHOS_NDK_HOME=<HarmonyOS SDK>/default/openharmony scripts/build-ohos.sh --libs-only --abi arm64-v8a';

/** Environment variables (process.env's shape). */
export type Env = Record<string, string | undefined>;

export type LibraryState =
  | { kind: 'missing'; library: string }
  | { kind: 'stale'; library: string; newerSource: string }
  | { kind: 'current'; library: string };

export interface EnsureOptions {
  /** The HAR module folder (hvigor's modulePath); the repository is its parent. */
  moduleDir: string;
  env: Env;
  /** Runs a command at `cwd`, output to the build log; returns its exit status. */
  run?: (command: string, args: string[], cwd: string, env: Env) => number;
  log?: (line: string) => void;
}

function errorCode(e: unknown): unknown {
  return typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
}

function mtimeOf(file: string): number | undefined {
  try {
    return fs.statSync(file).mtimeMs;
  } catch (e) {
    if (errorCode(e) === 'ENOENT') {
      return undefined;
    }
    throw new Error(`${TASK_NAME}: cannot read ${file}: ${(e as Error).message}`);
  }
}

/** Every file under `dir` (none when it does not exist). */
function filesUnder(dir: string, out: string[]): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if (errorCode(e) === 'ENOENT') {
      return out;
    }
    throw new Error(`${TASK_NAME}: cannot list ${dir}: ${(e as Error).message}`);
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      filesUnder(full, out);
    } else if (entry.isFile()) {
      out.push(full);
    }
  }
  return out;
}

/** The Rust sources the library is built from. */
export function rustSources(repoRoot: string): string[] {
  const files = filesUnder(path.join(repoRoot, 'src'), []);
  for (const name of ['Cargo.toml', 'Cargo.lock', 'build.rs']) {
    files.push(path.join(repoRoot, name));
  }
  return files;
}

export function libraryState(moduleDir: string): LibraryState {
  const library = path.join(moduleDir, LIBRARY);
  const built = mtimeOf(library);
  if (built === undefined) {
    return { kind: 'missing', library };
  }
  let newest: { file: string; mtime: number } | undefined;
  for (const source of rustSources(path.dirname(moduleDir))) {
    const mtime = mtimeOf(source);
    if (mtime !== undefined && mtime > built && (newest === undefined || mtime > newest.mtime)) {
      newest = { file: source, mtime };
    }
  }
  return newest ? { kind: 'stale', library, newerSource: newest.file } : { kind: 'current', library };
}

function describe(state: LibraryState, repoRoot: string): string {
  const lib = path.relative(repoRoot, state.library);
  if (state.kind === 'missing') {
    return `${lib} is missing (${state.library})`;
  }
  if (state.kind === 'stale') {
    return `${lib} is older than ${path.relative(repoRoot, state.newerSource)}: the Rust sources changed since it was built`;
  }
  return `${lib} is current`;
}

function runInherit(command: string, args: string[], cwd: string, env: Env): number {
  const result = spawnSync(command, args, { cwd, env, stdio: 'inherit' });
  if (result.error) {
    throw new Error(`${TASK_NAME}: could not run ${command} ${args.join(' ')}: ${result.error.message}`);
  }
  return result.status ?? 1;
}

/**
 * Makes sure the HAR's library exists and is current: builds it when the NDK is there, otherwise
 * throws an Error naming the file and the command that produces it (hvigor fails the build with it).
 */
export function ensureNativeLibrary(options: EnsureOptions): void {
  const { moduleDir, env } = options;
  const run = options.run ?? runInherit;
  const log = options.log ?? ((line: string): void => console.log(line));
  const repoRoot = path.dirname(moduleDir);
  const state = libraryState(moduleDir);
  if (state.kind === 'current') {
    log(`${TASK_NAME}: ${describe(state, repoRoot)}`);
    return;
  }
  const ndk = env.OHOS_NDK_HOME;
  if (!ndk) {
    throw new Error(
      `${TASK_NAME}: ${describe(state, repoRoot)}, and without it the HAR is packaged with no native ` +
        `library (import rum from 'librum_native.so' then fails on the device).\n` +
        `Build it at ${repoRoot} with:\n  ${BUILD_COMMAND}\n` +
        `(or set OHOS_NDK_HOME before building, and this task runs it).`,
    );
  }
  const args = [path.join('scripts', 'build-ohos.sh'), '--libs-only', '--abi', 'arm64-v8a'];
  log(`${TASK_NAME}: ${describe(state, repoRoot)}; running bash ${args.join(' ')} (OHOS_NDK_HOME=${ndk})`);
  const status = run('bash', args, repoRoot, env);
  if (status !== 0) {
    throw new Error(`${TASK_NAME}: bash ${args.join(' ')} failed with exit status ${status}; its output is above.`);
  }
  const after = libraryState(moduleDir);
  if (after.kind !== 'current') {
    throw new Error(`${TASK_NAME}: bash ${args.join(' ')} succeeded, but ${describe(after, repoRoot)}.`);
  }
  log(`${TASK_NAME}: built ${path.relative(repoRoot, after.library)}`);
}

export interface PluginOptions {
  /** Where the variables come from (default: process.env). */
  env?: Env;
  /** The HAR module folder, for a module other than the HAR registering the plugin (e.g. a HAP
   *  that builds the HAR from source); default: the registering module's own folder. */
  harDir?: string;
}

/** The hvigor plugin: registers the task so that the module's default@PreBuild depends on it. */
export function rumNativeLibraryPlugin(options: PluginOptions = {}): HvigorPlugin {
  const env = options.env ?? process.env;
  return {
    pluginId: 'rumNativeLibraryPlugin',
    apply(node: HvigorNode): void {
      node.registerTask({
        name: TASK_NAME,
        run: (taskContext) => ensureNativeLibrary({ moduleDir: options.harDir ?? taskContext.modulePath, env }),
        postDependencies: ['default@PreBuild'],
      });
    },
  };
}
