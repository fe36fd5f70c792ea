// The checks of lib/rules.mjs on small inputs: each rule flags what the real toolchain rejects
// and lets through what it accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { etsFiles, read } from './lib/files.mjs';
import { concurrentProblems, keepProblems, keptNames, threadImportProblems } from './lib/rules.mjs';

const concurrent = (body) => concurrentProblems('/x/Task.ets', `import { taskpool } from '@kit.ArkTS';
const LIMIT: number = 31;
function helper(): number { return 1; }
interface Shape { n: number }
@Concurrent
export function work(n: number): number {
${body}
}
`);

test('a @Concurrent function may not use a constant or function of its own file', () => {
  const found = concurrent('  return n + LIMIT + helper();');
  assert.equal(found.length, 2, found.join('\n'));
  assert.match(found[0], /Task\.ets:7: @Concurrent function work uses 'LIMIT'/);
  assert.match(found[1], /uses 'helper'/);
});

test('imports, parameters, its own locals, property names and types are allowed', () => {
  const ok = concurrent(`  const LIMIT: number = 2;
  const s: Shape = { n: n };
  const o: Record<string, number> = { helper: 1 };
  taskpool.getTaskPoolInfo();
  return s.n + LIMIT + o.helper;`);
  assert.deepEqual(ok, []);
});

const DTS = `export interface Claimed { body: ArrayBuffer; encoding: string }
export declare class RumPipeline { constructor(o: object); nextBatch(): Claimed | null }
`;

test('keep lists must name every property, method and class of index.d.ts', () => {
  const full = '# kept\n-keep-property-name\nbody\nencoding\nnextBatch\nRumPipeline\n';
  assert.deepEqual(keepProblems(DTS, [['full.txt', full]]), []);
  const lacking = full.replace('encoding\n', '');
  const found = keepProblems(DTS, [['lacking.txt', lacking]]);
  assert.equal(found.length, 1);
  assert.match(found[0], /lacking\.txt: .* lacks 1 name\(s\) .*: encoding$/);
});

test('only the names under -keep-property-name count', () => {
  assert.deepEqual([...keptNames('-keep-file-name\nbody\n-keep-property-name\n# c\nencoding\n\n')], ['encoding']);
});

// librum_native.so on TaskPool/Worker threads: fixtures of in-memory files under /p.
const files = (entries) => new Map(Object.entries(entries).map(([name, text]) => [`/p/${name}`, text]));
const TASK = `import { helper } from './Helper';
@Concurrent
export function work(n: number): number { return helper(n); }
`;

test('a value import of librum_native.so reachable from a @Concurrent function is refused, with the chain', () => {
  const found = threadImportProblems(files({
    'Task.ets': TASK,
    'Helper.ets': `import { ActionType } from 'librum_native.so';\nexport function helper(n: number): number { return n; }\n`
  }));
  assert.equal(found.length, 1, found.join('\n'));
  assert.match(found[0], /Helper\.ets:1: imports librum_native\.so as a value, so every TaskPool\/Worker thread that loads .*Task\.ets \(@Concurrent function work\) loads the native module \(.*Task\.ets -> .*Helper\.ets\)/);
});

test('import type passes; import { type T }, default imports, re-exports and import() do not', () => {
  const helper = (imp) => files({ 'Task.ets': TASK, 'Helper.ets': `${imp}\nexport function helper(n: number): number { return n; }\n` });
  assert.deepEqual(threadImportProblems(helper(`import type { ActionType } from 'librum_native.so';`)), []);
  for (const bad of [
    `import { type ActionType } from 'librum_native.so';`,
    `import rum from 'librum_native.so';`,
    `export { ActionType } from 'librum_native.so';`,
    `import 'librum_native.so';`,
    `function load(): void { import('librum_native.so'); }`
  ]) {
    assert.equal(threadImportProblems(helper(bad)).length, 1, bad);
  }
});

test('a @Sendable class module counts as loaded on other threads; type-only imports are not followed', () => {
  const sendable = `@Sendable\nexport class Ev { n: number = 0; }\n`;
  const found = threadImportProblems(files({ 'Ev.ets': `import rum from 'librum_native.so';\n${sendable}` }));
  assert.equal(found.length, 1);
  assert.match(found[0], /\(@Sendable class Ev\)/);
  // Reached only through `import type`: that import is erased, the module never loaded there.
  assert.deepEqual(threadImportProblems(files({
    'Ev.ets': `import type { Monitor } from './Monitor';\n${sendable}`,
    'Monitor.ets': `import rum from 'librum_native.so';\nexport class Monitor {}\n`
  })), []);
  // A module no worker loads may import it as a value (where the pipeline is created).
  assert.deepEqual(threadImportProblems(files({ 'Monitor.ets': `import rum from 'librum_native.so';\nexport class Monitor {}\n` })), []);
});

test('the project itself: no file loaded on a worker thread imports librum_native.so as a value', () => {
  const all = new Map(etsFiles().map((f) => [f, read(f)]));
  assert.deepEqual(threadImportProblems(all), []);
  // RumEvents.ets (Sendable events) and SyncedMessageActions.ets (@Concurrent) are among the roots:
  // their import turned back into a value import is caught.
  const events = [...all.keys()].find((f) => f.endsWith('events/RumEvents.ets'));
  all.set(events, all.get(events).replace(/import type \{([^}]*)\} from 'librum_native\.so'/, "import {$1} from 'librum_native.so'"));
  const found = threadImportProblems(all);
  assert.ok(found.some((p) => /RumEvents\.ets:\d+: .*SyncedMessageActions\.ets -> /.test(p)), found.join('\n'));
});
