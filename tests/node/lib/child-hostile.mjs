// A child process for bad-input.test.mjs: runs one hostile argument (one that could crash or hang
// the process if the binding trusted its size) against a fresh pipeline, then checks the
// pipeline still works. Prints one JSON line. Usage:
//   node child-hostile.mjs <storageDir> <case> [eventMaxBytes, default 4096]
// A constructor that refuses eventMaxBytes prints { ctorError } instead.

import { loadNative } from './native.mjs';

const [dir, which, eventMaxBytes = '4096'] = process.argv.slice(2);
const { RumPipeline } = loadNative();
let p;
try {
  p = new RumPipeline({ storageDir: dir, applicationId: 'hostile', eventMaxBytes: Number(eventMaxBytes) });
} catch (e) {
  process.stdout.write(`${JSON.stringify({ ctorError: { name: e?.constructor?.name, message: String(e?.message) } })}\n`);
  process.exit(0);
}
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
  // A sparse array short enough for a large eventMaxBytes, but its holes are `null`s in JSON.
  sparseArray16M: () => p.addAction('tap', 'bad', { a: new Array(2 ** 24) }),
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
