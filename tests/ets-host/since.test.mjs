// The API-level check of lib/since.mjs: on a small SDK written here (the tags as the real SDK
// writes them), then on the project against the real SDK.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from './lib/harness.mjs';
import { findSdk } from './lib/sdk.mjs';
import { apiLevel, projectSdkVersions, sinceLevel, sinceProblems } from './lib/since.mjs';

const require = createRequire(import.meta.url);
const ts = require('ohos-typescript');

test('version strings: "<x.y.z>(<api>)" below API 26, "<api>.0.0" from 26 on', () => {
  assert.equal(apiLevel('6.0.0(20)'), 20);
  assert.equal(apiLevel('5.0.0(12)'), 12);
  assert.equal(apiLevel('26.0.0'), 26);
  assert.equal(apiLevel(12), 12);
  assert.ok(Number.isNaN(apiLevel('26.0.0(26)')), 'hvigor refuses the API in parentheses from 26 on');
  assert.ok(Number.isNaN(apiLevel('6.0.0')), 'below 26 the API must be given');
  assert.ok(Number.isNaN(apiLevel(undefined)));
});

test('@since tags: numbers, dotted versions, dynamic counts, static does not', () => {
  assert.equal(sinceLevel('9'), 9);
  assert.equal(sinceLevel('26.0.0'), 26);
  assert.equal(sinceLevel('20 dynamic'), 20);
  assert.equal(sinceLevel('22 static'), null);
  assert.equal(sinceLevel('22 staticonly'), null);
});

const SDK_DECLARATIONS = `/**
 * @since 9
 */
declare namespace demo {
  /** @since 9 */
  function old(): void;
  /** @since 20 */
  function recent(): void;
  function inherits(): void;
  /** @since 9 */
  function over(a: string): void;
  /** @since 22 */
  function over(a: number): void;
  /**
   * @since 20 static
   */
  /**
   * @since 23 dynamic
   */
  function phases(): void;
  /** @since 26.0.0 */
  function newest(): void;
  /** @since 9 */
  interface Callback {
    /** @since 9 */
    first(): void;
    /** @since 21 */
    second?: () => void;
  }
  /** @since 9 */
  function take(c: Callback): void;
}
export default demo;
`;

/** Problems of `code` (one .ts file importing the fake SDK's demo module) at API `level`. */
function problemsOf(code, level) {
  const root = tempDir('rum-ets-since-');
  const sdkDir = join(root, 'sdk', 'default', 'openharmony', 'ets');
  mkdirSync(join(sdkDir, 'api'), { recursive: true });
  writeFileSync(join(sdkDir, 'api', '@ohos.demo.d.ts'), SDK_DECLARATIONS);
  const file = join(root, 'src', 'Use.ts');
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(file, `import demo from '../sdk/default/openharmony/ets/api/@ohos.demo';\n${code}\n`);
  const program = ts.createProgram([file], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2021, types: [] });
  return sinceProblems(program, [file], sdkDir, level);
}

test('a member newer than the level is refused; older members and inherited levels pass', () => {
  assert.deepEqual(problemsOf('demo.old(); demo.inherits();', 12).problems, []);
  const { problems, needed } = problemsOf('demo.old(); demo.recent();', 12);
  assert.equal(problems.length >= 1, true);
  assert.match(problems[0], /Use\.ts:2:\d+: 'demo\.recent' is @since 20 \(.*@ohos\.demo\.d\.ts\), above compatibleSdkVersion's API 12/);
  assert.equal(needed.level, 20);
  assert.deepEqual(problemsOf('demo.recent();', 20).problems, []);
});

test('the overload the checker picks decides; dynamic tags count, static ones do not; 26.0.0 is API 26', () => {
  assert.deepEqual(problemsOf("demo.over('a');", 12).problems, []);
  assert.match(problemsOf('demo.over(1);', 12).problems.join('\n'), /@since 22/);
  assert.deepEqual(problemsOf('demo.phases();', 23).problems, []);
  assert.match(problemsOf('demo.phases();', 22).problems.join('\n'), /'demo\.phases' is @since 23/);
  assert.match(problemsOf('demo.newest();', 24).problems.join('\n'), /@since 26/);
});

test('members of an object literal count as the members of the type it is written for', () => {
  assert.deepEqual(problemsOf('demo.take({ first: () => {} });', 12).problems, []);
  assert.match(problemsOf('demo.take({ first: () => {}, second: () => {} });', 12).problems.join('\n'),
    /'second' is @since 21/);
});

test('the project against the real SDK: i18n.System.getSystemLocaleInstance (API 20) is the highest, and caught below 20', async (t) => {
  const sdk = findSdk();
  if (sdk === null) {
    t.skip('no HarmonyOS SDK found (lib/sdk.mjs)');
    return;
  }
  const { sdkProgram } = await import('./lib/lint.mjs');
  const { builder, files } = sdkProgram(sdk);
  const program = builder.getProgram();
  const level = apiLevel(projectSdkVersions().compatible);
  const atCompatible = sinceProblems(program, files, sdk.etsDir, level);
  assert.deepEqual(atCompatible.problems, []);
  assert.equal(atCompatible.needed.level, level, 'compatibleSdkVersion is the highest level used');
  const below = sinceProblems(program, files, sdk.etsDir, 19);
  assert.ok(below.problems.some((p) => /DeviceContext\.ets:\d+:\d+: '.*getSystemLocaleInstance' is @since 20/.test(p)),
    below.problems.join('\n'));
});
