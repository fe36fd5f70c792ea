// Bad input (docs/interface.md "Bad arguments"): a wrong type throws a TypeError, a bad value a
// RangeError, whose message names the method and the argument; the call then has no effect, and
// the pipeline keeps working. Documented conversions: undefined members skipped, Dates → epoch ms,
// Map attributes accepted.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';

import {
  assertArgError,
  callsAccepted,
  childScript,
  loadNative,
  ofType,
  openPipeline,
  pipelineOptions,
  readBatchFiles,
  runNode,
  tmpDir,
} from './lib/helpers.mjs';

const EVENT_MAX = 4096;
const T = TypeError;
const R = RangeError;
// A cyclic object: JSON.stringify calls it a TypeError, a depth limit a RangeError; either is fine.
const TR = [TypeError, RangeError];

function cyclic() {
  const o = { a: 1 };
  o.self = o;
  return o;
}
const throwingGetter = () => ({
  ok: 1,
  get boom() {
    throw new Error('getter exploded');
  },
});
const throwingOwnKeys = () =>
  new Proxy(
    {},
    {
      ownKeys() {
        throw new Error('ownKeys trap exploded');
      },
    },
  );
const throwingGet = () =>
  new Proxy(
    { a: 1 },
    {
      get() {
        throw new Error('get trap exploded');
      },
    },
  );

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

// A Map-like as the binding recognises one (callable entries and get, a numeric size), with
// whatever else `extra` gives it (a forEach).
const mapLike = (pairs, extra = {}) => ({
  size: pairs.length,
  get: (k) => pairs.find(([key]) => key === k)?.[1],
  entries: () => pairs[Symbol.iterator](),
  ...extra,
});

// [label, call, error class(es), method, argument]
const CASES = [
  // addAction
  ['addAction() no arguments', (p) => p.addAction(), T, 'addAction', 'type'],
  ['addAction type number', (p) => p.addAction(1, 'bad'), T, 'addAction', 'type'],
  ['addAction type symbol', (p) => p.addAction(Symbol('tap'), 'bad'), T, 'addAction', 'type'],
  ['addAction type unknown', (p) => p.addAction('poke', 'bad'), R, 'addAction', 'type'],
  ['addAction type wrong case', (p) => p.addAction('Tap', 'bad'), R, 'addAction', 'type'],
  ['addAction name missing', (p) => p.addAction('tap'), T, 'addAction', 'name'],
  ['addAction name function', (p) => p.addAction('tap', () => 'bad'), T, 'addAction', 'name'],
  ['addAction name BigInt', (p) => p.addAction('tap', 10n), T, 'addAction', 'name'],
  ['addAction name over eventMaxBytes', (p) => p.addAction('tap', 'n'.repeat(EVENT_MAX + 1)), R, 'addAction', 'name'],
  ['addAction attributes number', (p) => p.addAction('tap', 'bad', 5), T, 'addAction', 'attributes'],
  ['addAction attributes string', (p) => p.addAction('tap', 'bad', 'k=v'), T, 'addAction', 'attributes'],
  ['addAction attributes array', (p) => p.addAction('tap', 'bad', [1, 2]), T, 'addAction', 'attributes'],
  ['addAction attribute NaN', (p) => p.addAction('tap', 'bad', { n: NaN }), R, 'addAction', 'attributes'],
  ['addAction attribute Infinity', (p) => p.addAction('tap', 'bad', { n: Infinity }), R, 'addAction', 'attributes'],
  ['addAction attribute -Infinity nested', (p) => p.addAction('tap', 'bad', { a: { b: [-Infinity] } }), R, 'addAction', 'attributes'],
  ['addAction attribute BigInt', (p) => p.addAction('tap', 'bad', { n: 10n }), T, 'addAction', 'attributes'],
  ['addAction attribute function', (p) => p.addAction('tap', 'bad', { f() {} }), T, 'addAction', 'attributes'],
  ['addAction attribute Symbol', (p) => p.addAction('tap', 'bad', { s: Symbol('s') }), T, 'addAction', 'attributes'],
  ['addAction attribute invalid Date', (p) => p.addAction('tap', 'bad', { d: new Date(NaN) }), R, 'addAction', 'attributes'],
  ['addAction attributes cyclic', (p) => p.addAction('tap', 'bad', cyclic()), TR, 'addAction', 'attributes'],
  ['addAction attributes throwing getter', (p) => p.addAction('tap', 'bad', throwingGetter()), TR, 'addAction', 'attributes'],
  ['addAction attributes proxy ownKeys throws', (p) => p.addAction('tap', 'bad', throwingOwnKeys()), TR, 'addAction', 'attributes'],
  ['addAction attributes proxy get throws', (p) => p.addAction('tap', 'bad', throwingGet()), TR, 'addAction', 'attributes'],
  [
    'addAction attributes over eventMaxBytes',
    (p) => p.addAction('tap', 'bad', { a: 'a'.repeat(EVENT_MAX / 2), b: 'b'.repeat(EVENT_MAX / 2) }),
    R,
    'addAction',
    'attributes',
  ],
  [
    'addAction Map attributes with a bad value',
    (p) => p.addAction('tap', 'bad', new Map([['n', NaN]])),
    R,
    'addAction',
    'attributes',
  ],
  [
    'addAction Map attributes with a bad value after good ones',
    (p) => p.addAction('tap', 'bad', new Map([['a', 1], ['b', 'x'], ['n', Infinity], ['c', 2]])),
    R,
    'addAction',
    'attributes',
  ],
  [
    'addAction Map-like whose forEach throws after an entry',
    (p) =>
      p.addAction('tap', 'bad', mapLike([['a', 1]], { forEach(visit) { visit(1, 'a'); throw new Error('forEach exploded'); } })),
    T,
    'addAction',
    'attributes',
  ],
  [
    'addAction Map-like whose forEach gives a number key',
    (p) => p.addAction('tap', 'bad', mapLike([], { forEach: (visit) => visit('v', 5) })),
    T,
    'addAction',
    'attributes',
  ],
  [
    'addAction Map-like whose forEach never ends',
    (p) =>
      p.addAction('tap', 'bad', mapLike([], { forEach: (visit) => { for (let i = 0; ; i++) visit('v', `k${i}`); } })),
    R,
    'addAction',
    'attributes',
  ],
  // addActions
  ['addActions not an array', (p) => p.addActions('tap'), T, 'addActions', 'events'],
  ['addActions missing', (p) => p.addActions(), T, 'addActions', 'events'],
  ['addActions element not an object', (p) => p.addActions([5]), T, 'addActions', /type|events/],
  ['addActions element bad type', (p) => p.addActions([{ type: 'tap', name: 'bad' }, { type: 'poke', name: 'bad' }]), R, 'addActions', 'type'],
  ['addActions element name missing', (p) => p.addActions([{ type: 'tap' }]), T, 'addActions', 'name'],
  ['addActions element bad attributes', (p) => p.addActions([{ type: 'tap', name: 'bad', attributes: { n: NaN } }]), R, 'addActions', 'attributes'],
  [
    'addActions element throwing getter',
    (p) =>
      p.addActions([
        {
          type: 'tap',
          get name() {
            throw new Error('getter exploded');
          },
        },
      ]),
    TR,
    'addActions',
    'name',
  ],
  // views
  ['startView key missing', (p) => p.startView(), T, 'startView', 'key'],
  ['startView key number', (p) => p.startView(1, 'bad'), T, 'startView', 'key'],
  ['startView name missing', (p) => p.startView('k'), T, 'startView', 'name'],
  ['startView attributes BigInt', (p) => p.startView('k', 'bad', { n: 1n }), T, 'startView', 'attributes'],
  ['stopView key undefined', (p) => p.stopView(undefined), T, 'stopView', 'key'],
  ['stopView attributes cyclic', (p) => p.stopView('main', cyclic()), TR, 'stopView', 'attributes'],
  // errors
  ['addError message missing', (p) => p.addError(), T, 'addError', 'message'],
  ['addError message number', (p) => p.addError(1, 'source'), T, 'addError', 'message'],
  ['addError source missing', (p) => p.addError('bad'), T, 'addError', 'source'],
  ['addError source unknown', (p) => p.addError('bad', 'server'), R, 'addError', 'source'],
  ['addError stack number', (p) => p.addError('bad', 'custom', 5), T, 'addError', 'stack'],
  ['addError message over eventMaxBytes', (p) => p.addError('m'.repeat(EVENT_MAX + 1), 'custom'), R, 'addError', 'message'],
  ['addError attributes Symbol', (p) => p.addError('bad', 'custom', undefined, { s: Symbol() }), T, 'addError', 'attributes'],
  ['markCrash message missing', (p) => p.markCrash(), T, 'markCrash', 'message'],
  ['markCrash stack object', (p) => p.markCrash('bad', {}), T, 'markCrash', 'stack'],
  ['markCrash details not an object', (p) => p.markCrash('bad', undefined, 'TypeError'), T, 'markCrash', 'details'],
  ['markCrash details.isCrash false', (p) => p.markCrash('bad', undefined, { isCrash: false }), R, 'markCrash', 'details.isCrash'],
  ['addError details.category unknown', (p) => p.addError('bad', 'source', undefined, undefined, { category: 'Hang' }), R, 'addError', 'details.category'],
  ['addError details.handling unknown', (p) => p.addError('bad', 'source', undefined, undefined, { handling: 'caught' }), R, 'addError', 'details.handling'],
  ['addError details.date NaN', (p) => p.addError('bad', 'source', undefined, undefined, { date: NaN }), R, 'addError', 'details.date'],
  ['addError details.date negative', (p) => p.addError('bad', 'source', undefined, undefined, { date: -1 }), R, 'addError', 'details.date'],
  ['addError details.type number', (p) => p.addError('bad', 'source', undefined, undefined, { type: 7 }), T, 'addError', 'details.type'],
  ['addError details.isCrash string', (p) => p.addError('bad', 'source', undefined, undefined, { isCrash: 'yes' }), T, 'addError', 'details.isCrash'],
  // resources
  ['startResource method number', (p) => p.startResource('r', 5, 'https://x'), T, 'startResource', 'method'],
  ['startResource url missing', (p) => p.startResource('r', 'GET'), T, 'startResource', 'url'],
  ['startResource key BigInt', (p) => p.startResource(1n, 'GET', 'https://x'), T, 'startResource', 'key'],
  ['stopResource statusCode string', (p) => p.stopResource('r0', '200', 'fetch'), T, 'stopResource', 'statusCode'],
  ['stopResource statusCode missing', (p) => p.stopResource('r0'), T, 'stopResource', 'statusCode'],
  ['stopResource statusCode NaN', (p) => p.stopResource('r0', NaN, 'fetch'), R, 'stopResource', 'statusCode'],
  ['stopResource statusCode too big', (p) => p.stopResource('r0', 70_000, 'fetch'), R, 'stopResource', 'statusCode'],
  ['stopResource statusCode fraction', (p) => p.stopResource('r0', 200.5, 'fetch'), R, 'stopResource', 'statusCode'],
  ['stopResource kind unknown', (p) => p.stopResource('r0', 200, 'graphql'), R, 'stopResource', 'kind'],
  ['stopResource kind number', (p) => p.stopResource('r0', 200, 3), T, 'stopResource', 'kind'],
  ['stopResource sizeBytes negative', (p) => p.stopResource('r0', 200, 'fetch', -1), R, 'stopResource', 'sizeBytes'],
  ['stopResource sizeBytes Infinity', (p) => p.stopResource('r0', 200, 'fetch', Infinity), R, 'stopResource', 'sizeBytes'],
  ['stopResource sizeBytes string', (p) => p.stopResource('r0', 200, 'fetch', '12'), T, 'stopResource', 'sizeBytes'],
  // the rest of the interface
  ['addTiming name number', (p) => p.addTiming(5), T, 'addTiming', 'name'],
  ['addTiming name missing', (p) => p.addTiming(), T, 'addTiming', 'name'],
  ['addAttribute key number', (p) => p.addAttribute(5, 'v'), T, 'addAttribute', 'key'],
  ['addAttribute value Symbol', (p) => p.addAttribute('k', Symbol()), T, 'addAttribute', 'value'],
  ['addAttribute value BigInt', (p) => p.addAttribute('k', 5n), T, 'addAttribute', 'value'],
  ['addAttribute value NaN', (p) => p.addAttribute('k', NaN), R, 'addAttribute', 'value'],
  ['addAttribute value function', (p) => p.addAttribute('k', () => 1), T, 'addAttribute', 'value'],
  ['addAttribute value cyclic', (p) => p.addAttribute('k', cyclic()), TR, 'addAttribute', 'value'],
  ['addAttribute value over eventMaxBytes', (p) => p.addAttribute('k', 'v'.repeat(EVENT_MAX + 1)), R, 'addAttribute', 'value'],
  ['removeAttribute key number', (p) => p.removeAttribute(1), T, 'removeAttribute', 'key'],
  ['setUser number', (p) => p.setUser(5), T, 'setUser', null],
  ['setUser string', (p) => p.setUser('u1'), T, 'setUser', null],
  ['setUser id number', (p) => p.setUser({ id: 5 }), T, 'setUser', 'id'],
  ['setUser email Symbol', (p) => p.setUser({ email: Symbol() }), T, 'setUser', 'email'],
  ['setUser extra BigInt', (p) => p.setUser({ id: 'u', extra: { n: 1n } }), T, 'setUser', 'extra'],
  ['setUser throwing getter', (p) => p.setUser({ get id() { throw new Error('getter exploded'); } }), TR, 'setUser', 'id'],
  ['setTrackingConsent unknown', (p) => p.setTrackingConsent('maybe'), R, 'setTrackingConsent', null],
  ['setTrackingConsent boolean', (p) => p.setTrackingConsent(true), T, 'setTrackingConsent', null],
  ['setTrackingConsent missing', (p) => p.setTrackingConsent(), T, 'setTrackingConsent', null],
  ['setEventMapper number', (p) => p.setEventMapper(5), T, 'setEventMapper', null],
  ['setEventMapper object', (p) => p.setEventMapper({}), T, 'setEventMapper', null],
  ['completeBatch delivered not boolean', (p) => p.completeBatch('x', 'yes'), T, 'completeBatch', /delivered|id/],
  ['completeBatch id missing', (p) => p.completeBatch(), T, 'completeBatch', 'id'],
];

test('bad arguments throw TypeError/RangeError naming method and argument, with no effect', (t) => {
  const { p, dir } = openPipeline(t, { eventMaxBytes: EVENT_MAX });
  p.startView('main', 'Main');
  p.startResource('r0', 'GET', 'https://example.com/r0');
  p.addAction('tap', 'ok-before');
  const failures = [];
  for (const [label, call, Ctor, method, arg] of CASES) {
    const before = p.stats();
    try {
      assertArgError(() => call(p), Ctor, method, arg, label);
    } catch (e) {
      failures.push(e.message);
      continue;
    }
    const after = p.stats();
    if (callsAccepted(after) !== callsAccepted(before)) {
      failures.push(`${label}: the bad call was accepted (callsInline+callsQueued ${callsAccepted(before)} → ${callsAccepted(after)})`);
    }
  }
  // The pipeline keeps working, and nothing of the bad calls was recorded.
  p.addAction('tap', 'ok-after', { still: 'works' });
  p.stopResource('r0', 204, 'xhr');
  assert.equal(p.flush(), true, 'flush() still works after the bad calls');
  const docs = readBatchFiles(dir).docs;
  const names = ofType(docs, 'action').map((a) => a.action.target.name);
  assert.deepEqual(names, ['ok-before', 'ok-after'], 'only the good actions are written');
  assert.equal(ofType(docs, 'error').length, 0, 'no error document from the bad addError/markCrash calls');
  const res = ofType(docs, 'resource');
  assert.equal(res.length, 1, 'the resource was stopped once, by the good call');
  assert.equal(res[0].resource.status_code, 204);
  for (const d of docs) {
    assert.ok(!('k' in d.context), 'no global attribute from the bad addAttribute calls');
    assert.equal(d.usr, undefined, 'no user from the bad setUser calls');
  }
  assert.equal(failures.length, 0, `${failures.length} of ${CASES.length} bad calls misbehaved:\n  ${failures.join('\n  ')}`);
});

test('addActions is all or nothing: one bad element rejects the whole call', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('main', 'Main');
  assert.throws(
    () => p.addActions([{ type: 'tap', name: 'first-good' }, { type: 'poke', name: 'bad' }, { type: 'tap', name: 'third-good' }]),
    (e) => e instanceof RangeError && /addActions/.test(e.message),
  );
  p.addActions([]);
  p.addActions([{ type: 'tap', name: 'later' }]);
  assert.equal(p.flush(), true);
  assert.deepEqual(
    ofType(readBatchFiles(dir).docs, 'action').map((a) => a.action.target.name),
    ['later'],
  );
});

test('documented conversions: undefined skipped, Dates → epoch ms, Map attributes', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('main', 'Main');
  p.addAction('tap', 'undef', { u: undefined, k: 1, nested: { gone: undefined, kept: null } });
  p.addAction('tap', 'date', { when: new Date(1_700_000_000_123), deep: { at: new Date(0) } });
  p.addAction('tap', 'map', new Map([['m1', 'v1'], ['m2', { x: 2 }]]));
  p.addAction('tap', 'nullish-attrs', null);
  p.addAction('tap', 'undefined-attrs', undefined);
  p.addAction('tap', 'numbers', { i: 3, f: 1.5, neg: -0.25, big: 2 ** 53 - 1 });
  p.addAttribute('globalDate', new Date(42));
  p.setUser({ id: 'u', name: undefined, extra: new Map([['tier', 'gold']]) });
  p.addAction('tap', 'with-global');
  assert.equal(p.flush(), true);
  const byName = Object.fromEntries(ofType(readBatchFiles(dir).docs, 'action').map((a) => [a.action.target.name, a]));
  assert.deepEqual(byName.undef.context, { k: 1, nested: { kept: null } }, 'undefined members are skipped');
  assert.deepEqual(byName.date.context, { when: 1_700_000_000_123, deep: { at: 0 } }, 'Dates become epoch ms');
  assert.deepEqual(byName.map.context, { m1: 'v1', m2: { x: 2 } }, 'Map attributes are accepted');
  assert.deepEqual(byName['nullish-attrs'].context, {});
  assert.deepEqual(byName['undefined-attrs'].context, {});
  assert.deepEqual(byName.numbers.context, { i: 3, f: 1.5, neg: -0.25, big: 2 ** 53 - 1 });
  assert.equal(byName['with-global'].context.globalDate, 42);
  assert.equal(byName['with-global'].usr.id, 'u');
  assert.ok(!('name' in byName['with-global'].usr), 'an undefined user field is skipped');
});

test('Map-likes: read through forEach when they have one, else their iterator; a visitor called after the call writes nothing', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('main', 'Main');
  let kept;
  const keeper = mapLike([['a', 1]], {
    forEach(visit) {
      kept = visit;
      visit(1, 'a');
      visit({ deep: [true] }, 'b');
    },
  });
  p.addAction('tap', 'forEach', keeper);
  // Called after the call returned, it writes nothing; from inside another Map's forEach it is
  // that Map's visitor (one function serves every Map of a pipeline).
  assert.equal(kept('late', 'late'), undefined);
  p.addAction('tap', 'nested', mapLike([], { forEach: (visit) => { kept('inner', 'inner'); visit('x', 'own'); } }));
  p.addAction('tap', 'iterator', mapLike([['i1', 'v1'], ['i2', 2]]));
  p.addAction('tap', 'repeats', mapLike([], { forEach: (visit) => { visit(1, 'a'); visit(2, 'a'); } }));
  p.addAction('tap', 'escaped-repeats', mapLike([], {
    forEach: (visit) => { visit(1, 'q"\n'); visit(0, 'b'); visit(2, 'q"\n'); },
  }));
  const many = Array.from({ length: 40 }, (_, i) => [`k${i}`, i]);
  p.addAction('tap', 'many', mapLike([], { forEach: (visit) => many.forEach(([k, v]) => visit(v, k)) }));
  p.addAction('tap', 'empty', mapLike([], { forEach() {} }));
  // The visitor called again while an entry is being written (from a getter of its value).
  p.addAction('tap', 'reentrant', mapLike([], {
    forEach(visit) {
      visit({ get g() { visit('evil', 'evil'); return 1; } }, 'a');
    },
  }));
  // After the engine collected the visitor, the next Map gets a new one.
  gc();
  p.addAction('tap', 'after-gc', new Map([['g', 1]]));
  // A forEach that throws before it gives an entry (a platform refusing a native callback there):
  // the iterator is read instead.
  p.addAction('tap', 'refused', mapLike([['r', 1]], { forEach() { throw new Error('10200011'); } }));
  assert.equal(p.flush(), true);
  const byName = Object.fromEntries(ofType(readBatchFiles(dir).docs, 'action').map((a) => [a.action.target.name, a]));
  assert.deepEqual(byName.forEach.context, { a: 1, b: { deep: [true] } });
  assert.deepEqual(byName.nested.context, { inner: 'inner', own: 'x' });
  assert.deepEqual(byName.iterator.context, { i1: 'v1', i2: 2 });
  assert.deepEqual(byName.repeats.context, { a: 2 }, 'a repeated key: the last value');
  assert.deepEqual(byName['escaped-repeats'].context, { 'q"\n': 2, b: 0 });
  assert.deepEqual(byName.many.context, Object.fromEntries(many));
  assert.deepEqual(byName.empty.context, {});
  assert.deepEqual(byName.reentrant.context, { a: { g: 1 } });
  assert.deepEqual(byName['after-gc'].context, { g: 1 });
  assert.deepEqual(byName.refused.context, { r: 1 });
});

test('objects read by their properties: class instances and array-likes (how ArkTS Sendable values arrive)', (t) => {
  const { p, dir } = openPipeline(t);
  class ActionEvent {
    constructor(type, name, attributes) {
      this.type = type;
      this.name = name;
      this.attributes = attributes;
    }
  }
  class Attrs {
    constructor() {
      this.screen = 'cart';
      this.count = 2;
    }
  }
  p.startView('main', 'Main');
  p.addAction('tap', 'instance-attrs', new Attrs());
  // A collections.Array reaches native code as an object with `length` and indices.
  const arrayLike = { length: 2, 0: new ActionEvent('tap', 'sendable-1', new Attrs()), 1: new ActionEvent('custom', 'sendable-2') };
  p.addActions(arrayLike);
  assert.equal(p.flush(), true);
  const actions = ofType(readBatchFiles(dir).docs, 'action');
  assert.deepEqual(
    actions.map((a) => [a.action.type, a.action.target.name, a.context]),
    [
      ['tap', 'instance-attrs', { screen: 'cart', count: 2 }],
      ['tap', 'sendable-1', { screen: 'cart', count: 2 }],
      ['custom', 'sendable-2', {}],
    ],
  );
});

const CTOR_CASES = [
  ['no options', () => undefined, T, 'options'],
  ['options a string', () => '/tmp/x', T, 'options'],
  ['storageDir missing', (dir) => ({ applicationId: 'a' }), T, 'storageDir'],
  ['storageDir number', () => ({ storageDir: 5, applicationId: 'a' }), T, 'storageDir'],
  ['storageDir empty', () => ({ storageDir: '', applicationId: 'a' }), R, 'storageDir'],
  ['applicationId missing', (dir) => ({ storageDir: dir }), T, 'applicationId'],
  ['applicationId empty', (dir) => ({ storageDir: dir, applicationId: '' }), R, 'applicationId'],
  ['service number', (dir) => pipelineOptions(dir, { service: 5 }), T, 'service'],
  ['env BigInt', (dir) => pipelineOptions(dir, { env: 5n }), T, 'env'],
  ['trackingConsent unknown', (dir) => pipelineOptions(dir, { trackingConsent: 'yes' }), R, 'trackingConsent'],
  ['turnBudgetMs 0', (dir) => pipelineOptions(dir, { turnBudgetMs: 0 }), R, 'turnBudgetMs'],
  ['turnBudgetMs NaN', (dir) => pipelineOptions(dir, { turnBudgetMs: NaN }), R, 'turnBudgetMs'],
  ['turnBudgetMs string', (dir) => pipelineOptions(dir, { turnBudgetMs: '4' }), T, 'turnBudgetMs'],
  ['queueCapacity negative', (dir) => pipelineOptions(dir, { queueCapacity: -1 }), R, 'queueCapacity'],
  ['queueCapacity 0', (dir) => pipelineOptions(dir, { queueCapacity: 0 }), R, 'queueCapacity'],
  ['batchMaxBytes Infinity', (dir) => pipelineOptions(dir, { batchMaxBytes: Infinity }), R, 'batchMaxBytes'],
  ['diskQuotaBytes below batchMaxBytes', (dir) => pipelineOptions(dir, { diskQuotaBytes: 1 }), R, 'diskQuotaBytes'],
  ['maxBatchFiles 1', (dir) => pipelineOptions(dir, { maxBatchFiles: 1 }), R, 'maxBatchFiles'],
  ['batchWindowMs 0', (dir) => pipelineOptions(dir, { batchWindowMs: 0 }), R, 'batchWindowMs'],
  ['batchMaxAgeMs boolean', (dir) => pipelineOptions(dir, { batchMaxAgeMs: true }), T, 'batchMaxAgeMs'],
  ['eventMaxBytes too small', (dir) => pipelineOptions(dir, { eventMaxBytes: 10 }), R, 'eventMaxBytes'],
  ['eventMaxBytes over 64 MiB', (dir) => pipelineOptions(dir, { eventMaxBytes: 2 ** 26 + 1 }), R, 'eventMaxBytes'],
  ['flushTimeoutMs Infinity', (dir) => pipelineOptions(dir, { flushTimeoutMs: Infinity }), R, 'flushTimeoutMs'],
  ['flushTimeoutMs fraction', (dir) => pipelineOptions(dir, { flushTimeoutMs: 1.5 }), R, 'flushTimeoutMs'],
  [
    'storageDir throwing getter',
    () => ({
      applicationId: 'a',
      get storageDir() {
        throw new Error('getter exploded');
      },
    }),
    TR,
    'storageDir',
  ],
];

test('constructor options are validated the same way', (t) => {
  const { RumPipeline } = loadNative();
  const failures = [];
  for (const [label, make, Ctor, arg] of CTOR_CASES) {
    const dir = tmpDir(t);
    const opts = make(dir);
    try {
      assertArgError(() => new RumPipeline(opts), Ctor, /RumPipeline|constructor/, arg, `new RumPipeline: ${label}`);
    } catch (e) {
      failures.push(e.message);
    }
  }
  assert.equal(failures.length, 0, `${failures.length} of ${CTOR_CASES.length} bad options misbehaved:\n  ${failures.join('\n  ')}`);
});

test('RumPipeline called without new: a TypeError, and no pipeline is left behind', (t) => {
  const { RumPipeline } = loadNative();
  const base = tmpDir(t);
  const p = new RumPipeline(pipelineOptions(base));
  t.after(() => p.stop());
  const threads = () => fs.readdirSync('/proc/self/task').length;
  const before = threads();
  const errors = [];
  for (let i = 0; i < 10; i++) {
    const dir = path.join(base, `d${i}`);
    // Each would open its own directory and writer thread, then fail to wrap `this`.
    for (const call of [() => RumPipeline(pipelineOptions(dir)), () => RumPipeline.call(p, pipelineOptions(dir))]) {
      try {
        call();
        errors.push('returned');
      } catch (e) {
        errors.push(e.constructor.name);
      }
    }
  }
  assert.ok(!(globalThis instanceof RumPipeline), 'the global object did not become a pipeline');
  assert.deepEqual([...new Set(errors)], ['TypeError'], `every call without new throws a TypeError (${errors})`);
  assert.ok(threads() <= before + 1, `no writer thread is left behind: ${before} threads before, ${threads()} after`);
  p.addAction('tap', 'still works');
  assert.equal(p.flush(), true);
});

test('optional options may be undefined; a valid pipeline works after rejected constructions', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  assert.throws(() => new RumPipeline(pipelineOptions(dir, { turnBudgetMs: 0 })), RangeError);
  const p = new RumPipeline(pipelineOptions(dir, { service: undefined, turnBudgetMs: undefined, env: undefined }));
  t.after(() => p.stop());
  p.startView('v', 'V');
  p.addAction('tap', 'works');
  assert.equal(p.flush(), true);
  assert.equal(ofType(readBatchFiles(dir).docs, 'action').length, 1);
});

// Sizes a caller controls must not be trusted: each case runs in its own child process, because
// trusting them aborts the process (an allocation of 32 GiB) or hangs it while memory grows.
// A child that has not answered after HANG_MS hung: the slowest case takes about 1.5 s here, and a
// loaded CI machine must not turn that into a failure.
const HANG_MS = 30_000;
const HOSTILE = [
  ['sparseArrayAttribute', RangeError, 'addAction', 'attributes'],
  ['hugeArrayLike', [TypeError, RangeError], 'addActions', 'events'],
  ['bigArrayLike', [TypeError, RangeError], 'addActions', 'events'],
  ['endlessMapLike', RangeError, 'addAction', 'attributes'],
];

// The same with the largest eventMaxBytes a caller may ask for (or one past any sane limit, which
// the constructor may refuse instead): a length the budget allows must not be trusted either.
const EVENT_MAX_BYTES_CAP = 2 ** 26;
for (const [which, eventMaxBytes] of [
  ['sparseArrayAttribute', 2 ** 36],
  ['sparseArrayAttribute', EVENT_MAX_BYTES_CAP],
  ['sparseArray16M', EVENT_MAX_BYTES_CAP],
]) {
  test(`hostile size (${which}, eventMaxBytes ${eventMaxBytes}): refused, no crash, no hang`, async (t) => {
    loadNative();
    const dir = tmpDir(t);
    const r = await runNode([childScript('child-hostile.mjs'), dir, which, String(eventMaxBytes)], { timeoutMs: HANG_MS });
    assert.equal(r.timedOut, false, `${which}: the call hung (killed after ${HANG_MS / 1000} s)`);
    assert.equal(r.signal, null, `${which}: the process died with ${r.signal} (stderr: ${r.stderr.slice(0, 300)})`);
    assert.equal(r.code, 0, `${which}: the child failed (stderr: ${r.stderr.slice(0, 600)})`);
    const res = JSON.parse(r.stdout.trim().split('\n').at(-1));
    if (res.ctorError) {
      assert.ok(eventMaxBytes > EVENT_MAX_BYTES_CAP, `eventMaxBytes ${eventMaxBytes} is allowed, yet: ${res.ctorError.message}`);
      assert.equal(res.ctorError.name, 'RangeError');
      assert.match(res.ctorError.message, /\beventMaxBytes\b/);
      return;
    }
    assert.ok(res.error, `${which}: the call was accepted instead of throwing`);
    assert.equal(res.error.name, 'RangeError', res.error.message);
    assert.match(res.error.message, /\baddAction\b.*\battributes\b/);
    assert.equal(res.flushed, true, 'the pipeline works afterwards');
    assert.equal(res.callsAccepted, 2, 'only startView and the good action were accepted');
  });
}

for (const [which, Ctors, method, arg] of HOSTILE) {
  test(`hostile size (${which}): a ${[Ctors].flat().map((c) => c.name).join(' or ')}, no crash, no hang`, async (t) => {
    loadNative();
    const dir = tmpDir(t);
    const r = await runNode([childScript('child-hostile.mjs'), dir, which], { timeoutMs: HANG_MS });
    assert.equal(r.timedOut, false, `${which}: the call hung (killed after ${HANG_MS / 1000} s)`);
    assert.equal(r.signal, null, `${which}: the process died with ${r.signal} (stderr: ${r.stderr.slice(0, 300)})`);
    assert.equal(r.code, 0, `${which}: the child failed (stderr: ${r.stderr.slice(0, 600)})`);
    const res = JSON.parse(r.stdout.trim().split('\n').at(-1));
    assert.ok(res.error, `${which}: the call was accepted instead of throwing`);
    const names = [Ctors].flat().map((c) => c.name);
    assert.ok(names.includes(res.error.name), `${which}: expected ${names.join(' or ')}, got ${res.error.name}: ${res.error.message}`);
    assert.match(res.error.message, new RegExp(`\\b${method}\\b`));
    assert.match(res.error.message, new RegExp(`\\b${arg}\\b`));
    assert.equal(res.flushed, true, 'the pipeline works afterwards');
    assert.equal(res.callsAccepted, 2, 'only startView and the good action were accepted');
  });
}

test('global attributes may take half of eventMaxBytes: past it addAttribute throws and changes nothing', (t) => {
  const { p, dir } = openPipeline(t, { eventMaxBytes: 4096, batchMaxBytes: 64 * 1024 });
  p.startView('v', 'V');
  p.addAttribute('a', 'x'.repeat(1000));
  assert.throws(() => p.addAttribute('b', 'y'.repeat(1100)), (e) => e instanceof RangeError &&
    /^addAttribute: the global attributes would take \d+ bytes of every document, more than 2048/.test(e.message));
  p.addAction('tap', 'after the refusal');
  p.addAttribute('a', 'z'); // replacing a key gives its share back
  p.addAttribute('b', 'y'.repeat(1100));
  p.removeAttribute('b');
  p.addAttribute('c', 'w'.repeat(1500)); // and so does removing one
  p.addAction('tap', 'last');
  assert.equal(p.flush(), true);
  const [first, last] = ofType(readBatchFiles(dir).docs, 'action');
  assert.deepEqual(Object.keys(first.context).sort(), ['a'], 'the refused attribute never reached a document');
  assert.deepEqual(Object.keys(last.context).sort(), ['a', 'c']);
  assert.equal(p.stats().droppedOversize, 0);
});
