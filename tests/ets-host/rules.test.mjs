// The checks of lib/rules.mjs on small inputs: each rule flags what the real toolchain rejects
// and lets through what it accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concurrentProblems, keepProblems, keptNames } from './lib/rules.mjs';

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
