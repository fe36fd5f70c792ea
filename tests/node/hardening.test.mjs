// What an independent attempt to break the library found (issue 13), against the built library:
// links where the storage expects its own directory, directory modes whatever the umask,
// corrupt batch files, a method called on the wrong receiver.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { libraryPath, loadNative, openPipeline, pipelineOptions, tmpDir } from './lib/helpers.mjs';

const mode = (p) => fs.statSync(p).mode & 0o777;

test('a <storageDir>/rum that is a link is refused with a RangeError naming options.storageDir', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  const elsewhere = tmpDir(t);
  const stale = path.join(elsewhere, 'batch-1700000000000-0.ndjson');
  fs.writeFileSync(stale, '{"type":"action"}\n');
  fs.symlinkSync(elsewhere, path.join(dir, 'rum'));
  assert.throws(
    () => new RumPipeline(pipelineOptions(dir)),
    (e) => e instanceof RangeError && /options\.storageDir/.test(e.message) && /symbolic link/.test(e.message),
  );
  assert.deepEqual(fs.readdirSync(elsewhere), [path.basename(stale)], 'the link target is left alone');
});

test('a dangling link as storageDir says what is wrong', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  const link = path.join(dir, 'link');
  fs.symlinkSync(path.join(dir, 'nowhere'), link);
  assert.throws(
    () => new RumPipeline(pipelineOptions(link)),
    (e) => e instanceof RangeError && /options\.storageDir/.test(e.message) && /does not exist/.test(e.message),
  );
});

test('every directory the pipeline creates is 0700 whatever the umask', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  const storageDir = path.join(dir, 'a', 'b');
  const old = process.umask(0);
  let p;
  try {
    p = new RumPipeline(pipelineOptions(storageDir));
  } finally {
    process.umask(old);
  }
  t.after(() => p.stop());
  for (const d of [path.join(dir, 'a'), storageDir, path.join(storageDir, 'rum')]) {
    assert.equal(mode(d).toString(8), '700', d);
  }
});

// A method called on the wrong receiver: the library's own TypeError naming the method, not the
// engine's `Illegal invocation` (src/napi/receiver.rs replaces the prototype's methods).

/** The methods of RumPipeline.prototype, as JS sees them: every own function but the constructor. */
function prototypeMethods(RumPipeline) {
  const proto = RumPipeline.prototype;
  return Object.getOwnPropertyNames(proto).filter((k) => k !== 'constructor' && typeof proto[k] === 'function');
}

/**
 * A pipeline of another addon: a copy of the library loaded from another path is another module
 * (its own napi_env, its own class), whose objects Node-API wraps with the same per-isolate key.
 */
function foreignPipeline(t) {
  const copy = path.join(tmpDir(t), 'librum_native.so');
  fs.copyFileSync(libraryPath(), copy);
  const { RumPipeline: Other } = loadNative(copy);
  const p = new Other(pipelineOptions(tmpDir(t)));
  t.after(() => p.stop());
  return p;
}

test('every method called on a wrong receiver throws a TypeError naming RumPipeline.<method>', (t) => {
  const { RumPipeline } = loadNative();
  const methods = prototypeMethods(RumPipeline);
  assert.ok(methods.length >= 23, `only ${methods.length} methods: ${methods}`);
  const receivers = {
    '{}': {},
    undefined: undefined,
    null: null,
    42: 42,
    "'text'": 'text',
    'Object.create(RumPipeline.prototype)': Object.create(RumPipeline.prototype),
    'RumPipeline.prototype': RumPipeline.prototype,
    'a pipeline of another addon': foreignPipeline(t),
  };
  for (const m of methods) {
    const f = RumPipeline.prototype[m];
    for (const [label, receiver] of Object.entries(receivers)) {
      assert.throws(
        () => f.call(receiver, 'tap', 'x', {}),
        (e) => e instanceof TypeError && e.message === `RumPipeline.${m}: called on an object that is not a RumPipeline`,
        `${m} called on ${label}`,
      );
    }
  }
});

test('a wrong receiver changes nothing, and the methods still work on pipelines and subclasses', (t) => {
  const { p, RumPipeline } = openPipeline(t);
  p.startView('v', 'V');
  const before = p.stats();
  assert.throws(() => RumPipeline.prototype.addAction.call({}, 'tap', 'x'), TypeError);
  assert.throws(() => RumPipeline.prototype.stopView.call(Object.create(p), 'v'), TypeError);
  assert.deepEqual(p.stats(), before);
  const calls = (st) => st.callsInline + st.callsQueued;
  RumPipeline.prototype.addAction.call(p, 'tap', 'x');
  assert.equal(calls(p.stats()), calls(before) + 1);

  class Sub extends RumPipeline {}
  const dir = tmpDir(t);
  const s = new Sub(pipelineOptions(dir));
  t.after(() => s.stop());
  s.addAction('tap', 'from a subclass');
  assert.equal(typeof s.sessionId(), 'string');
});

test('the methods keep their property attributes and are named as the methods', () => {
  const { RumPipeline } = loadNative();
  for (const m of prototypeMethods(RumPipeline)) {
    const d = Object.getOwnPropertyDescriptor(RumPipeline.prototype, m);
    assert.deepEqual([d.writable, d.enumerable, d.configurable], [true, true, true], m);
    assert.equal(typeof d.value, 'function', m);
    assert.equal(d.value.name, m);
    assert.equal(d.value.length, 0, m);
  }
});

/** Every own property of `from`, enumerable or not, symbols included, copied onto a plain object. */
function copyOwnProperties(from) {
  const to = {};
  for (const key of Reflect.ownKeys(from)) Object.defineProperty(to, key, Object.getOwnPropertyDescriptor(from, key));
  return to;
}

test('a copied wrapper is refused: an object holding a pipeline\'s own properties is not that pipeline', (t) => {
  // On ArkTS the native pointer sits in an ordinary property any script can copy (in this suite's
  // ArkTS-semantics run too): only the object that was wrapped is the pipeline.
  const { p, RumPipeline } = openPipeline(t);
  const copies = [copyOwnProperties(p), Object.assign({}, p), Object.create(p)];
  const withPrototype = copyOwnProperties(p);
  Object.setPrototypeOf(withPrototype, RumPipeline.prototype);
  copies.push(withPrototype);
  const before = p.stats();
  for (const copy of copies) {
    assert.throws(
      () => RumPipeline.prototype.addAction.call(copy, 'tap', 'through a copy'),
      (e) => e instanceof TypeError && e.message === 'RumPipeline.addAction: called on an object that is not a RumPipeline',
    );
  }
  assert.deepEqual(p.stats(), before);
  p.addAction('tap', 'the pipeline itself');
  assert.equal(p.stats().callsInline + p.stats().callsQueued, before.callsInline + before.callsQueued + 1);
});

test('a forged wrapper is refused: another copy\'s wrapper, or one made up, on any object', (t) => {
  const { p, RumPipeline } = openPipeline(t);
  const foreign = foreignPipeline(t);
  const forged = [copyOwnProperties(foreign), { _napiwrapper: {} }, { _napiwrapper: foreign }, { _napiwrapper: p }];
  // An object that already wraps something of another addon cannot become a pipeline either.
  assert.throws(() => RumPipeline.call(foreign, pipelineOptions(tmpDir(t))), TypeError);
  for (const o of forged) {
    assert.throws(() => RumPipeline.prototype.sessionId.call(o), TypeError);
  }
});

test('the wrapper of a collected pipeline is refused, not read', async (t) => {
  const v8 = await import('node:v8');
  const vm = await import('node:vm');
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  let copy;
  let collected = false;
  const registry = new FinalizationRegistry(() => {
    collected = true;
  });
  (() => {
    const p = new RumPipeline(pipelineOptions(dir));
    p.addAction('tap', 'before it is collected');
    p.stop();
    copy = copyOwnProperties(p);
    registry.register(p, 'pipeline');
  })();
  for (let i = 0; i < 50 && !collected; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  assert.ok(collected, 'the pipeline was not collected');
  // Node-API finalizers run after the engine's weak callbacks: give them their turns too.
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.throws(() => RumPipeline.prototype.addAction.call(copy, 'tap', 'after'), TypeError);
});

test('JSON.stringify of a pipeline, or of an object holding one, behaves as for any class instance', (t) => {
  const { p } = openPipeline(t);
  const own = (o) => Object.fromEntries(Object.entries(o));
  assert.equal(JSON.stringify(p), JSON.stringify(own(p)));
  const state = { monitor: p, screen: 'home' };
  assert.equal(JSON.stringify(state), JSON.stringify({ monitor: own(p), screen: 'home' }));
  assert.deepEqual(
    Object.keys(p).filter((k) => k !== '_napiwrapper'),
    [],
    'the library adds no enumerable property of its own to a pipeline',
  );
});
