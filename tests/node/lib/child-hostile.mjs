// A child process for bad-input.test.mjs: runs one hostile argument (one that could crash or hang
// the process if the binding trusted its size) against a fresh pipeline, then checks the
// pipeline still works. Prints one JSON line. Usage: node child-hostile.mjs <storageDir> <case>

import { loadNative } from './native.mjs';

const [dir, which] = process.argv.slice(2);
const { RumPipeline } = loadNative();
const p = new RumPipeline({ storageDir: dir, applicationId: 'hostile', eventMaxBytes: 4096 });
p.startView('v', 'Hostile');

const endlessMapLike = () => ({
  size: 1,
  get() {},
  entries() {
    let i = 0;
    return { next: () => ({ done: false, value: [`k${i++}`, 'v'] }) };
  },
});

export const CASES = {
  // A sparse array: its length says 4 billion elements, it holds none.
  sparseArrayAttribute: () => p.addAction('tap', 'bad', { a: new Array(2 ** 32 - 1) }),
  // An array-like as a collections.Array arrives: only `length` is read before the elements.
  hugeArrayLike: () => p.addActions({ length: 2 ** 32 - 1 }),
  bigArrayLike: () => p.addActions({ length: 1e9 }),
  // A Map-like whose iterator never ends: an attribute map over any eventMaxBytes.
  endlessMapLike: () => p.addAction('tap', 'bad', endlessMapLike()),
};

const result = {};
try {
  CASES[which]();
  result.returned = true;
} catch (e) {
  result.error = { name: e?.constructor?.name, message: String(e?.message) };
}
p.addAction('tap', 'after');
result.flushed = p.flush();
result.callsAccepted = p.stats().callsInline + p.stats().callsQueued;
process.stdout.write(`${JSON.stringify(result)}\n`);
p.stop();
