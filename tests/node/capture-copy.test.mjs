// The capture buffer's copies of a call's arguments (ets/src/main/ets/capture/CallChecks.ets) in
// front of the real library: a later change to the host's objects changes nothing, sizes and
// values are checked at the call, Maps, getters and calls made inside a copy, and the handover's
// keys and values (docs/how-it-works.md, "Capture in JS"). Runs in both Node runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { actionNames, CallBuffer, captured, docsOf, nextTurn } from './lib/capture.mjs';
import { ofType, openPipeline } from './lib/helpers.mjs';

test('a later change to the attributes, nested values included, changes nothing recorded', async (t) => {
  const { p, calls } = captured(t);
  calls.startView('v', 'V');
  const attrs = { plan: 'pro', nested: { tags: ['a', 'b'], n: 1 }, when: new Date(5) };
  calls.addAction('tap', 'buy', attrs);
  attrs.plan = 'free';
  attrs.nested.tags.push('c');
  attrs.nested.n = 2;
  attrs.added = true;
  await nextTurn();
  calls.handOverAll(); // a slow first turn leaves them to a slice, which may come after this turn
  p.flush();
  const [action] = ofType(docsOf(p), 'action');
  assert.deepEqual(action.context, { plan: 'pro', nested: { tags: ['a', 'b'], n: 1 }, when: 5 });
});

test('the size of strings and attributes is checked at the call, as eventMaxBytes bounds it', (t) => {
  const { calls } = captured(t, {}, { eventMaxBytes: 1024 });
  assert.throws(() => calls.addAction('tap', 'é'.repeat(600)), { name: 'RangeError', message: 'addAction: name is 1200 bytes, more than the 1024 allowed' });
  assert.throws(() => calls.addAction('tap', 'a', { big: 'x'.repeat(1100) }), { name: 'RangeError', message: 'addAction: attributes makes the event larger than eventMaxBytes (1024 bytes)' });
  calls.addAction('tap', 'a', { fits: 'x'.repeat(900) });
  assert.equal(calls.stats().buffered, 1);
});

test('attributes given as a Map are copied as a Map; an object with a forEach member stays an object', async (t) => {
  const { p, calls } = captured(t, {}, { eventMaxBytes: 1024 });
  calls.startView('v', 'V');
  calls.addAction('tap', 'map', new Map([['m1', 'v1'], ['m2', { x: [2] }]]));
  calls.addAction('tap', 'members', { forEach: 'each', size: 3 });
  assert.throws(() => calls.addAction('tap', 'bad', { forEach: () => 1 }),
    { name: 'TypeError', message: 'addAction: attributes.forEach cannot be a function: attribute values must be JSON-like' });
  assert.throws(() => calls.addAction('tap', 'bad', new Map([[1, 'x']])),
    { name: 'TypeError', message: 'addAction: attributes must be a Map with string keys' });
  // The size verdict is exact whatever the estimate: a member whose JSON text makes the call's
  // attributes exactly eventMaxBytes long is taken, one byte more is refused.
  const fits = { s: 'x'.repeat(1024 - '{"s":""}'.length) };
  calls.addAction('tap', 'fits', fits);
  assert.throws(() => calls.addAction('tap', 'over', { s: `${fits.s}x` }), { name: 'RangeError', message: /larger than eventMaxBytes/ });
  calls.handOverAll();
  p.flush();
  const contexts = Object.fromEntries(ofType(docsOf(p), 'action').map((d) => [d.action.target.name, d.context]));
  assert.deepEqual(contexts.map, { m1: 'v1', m2: { x: [2] } });
  assert.deepEqual(contexts.members, { forEach: 'each', size: 3 });
  assert.equal(contexts.fits.s, fits.s);
  assert.deepEqual(Object.keys(contexts).sort(), ['fits', 'map', 'members']);
});

test('a run\'s repeated keys cross once (a shape), and every call keeps its own attributes', (t) => {
  const { p } = openPipeline(t);
  const texts = [];
  const sink = (text, ...rest) => (texts.push(text), p.ingest(text, ...rest));
  const calls = new CallBuffer(sink, { eventMaxBytes: 4096, turnBudgetMs: 4, capacity: 100 }, Date.now);
  calls.startView('v', 'V', { screen: 'inbox' });
  calls.addAction('tap', 'a1', { id: 1, tag: 'x' });
  calls.addAction('tap', 'a2', { id: 2, tag: 'y', gone: undefined });
  calls.addAction('tap', 'b', { other: { deep: [1, null] } });
  calls.addAction('tap', 'none');
  calls.addAction('tap', 'a3', new Map([['id', 3], ['tag', 'z']]));
  calls.stopView('v', { screen: 'inbox' });
  calls.handOverAll();
  assert.equal(texts.length, 1);
  const keysOf = (call) => call[[4, 4, 3, 5, 6][call[0]]];
  assert.deepEqual(JSON.parse(texts[0]).slice(1).map(keysOf),
    [['screen'], ['id', 'tag'], 1, ['other'], null, 1, 0],
    'a call with the keys of one of the last keys arrays carries its index among the run\'s keys arrays');
  p.flush();
  const docs = docsOf(p);
  const contexts = Object.fromEntries(ofType(docs, 'action').map((d) => [d.action.target.name, d.context ?? null]));
  assert.deepEqual(contexts, {
    a1: { id: 1, tag: 'x' }, a2: { id: 2, tag: 'y' }, b: { other: { deep: [1, null] } }, none: {}, a3: { id: 3, tag: 'z' },
  });
  assert.deepEqual(ofType(docs, 'view').at(-1).context, { screen: 'inbox' });
});

test('alternating keys (a resource\'s start and stop) are each written once; a keys array five sets back is written again', (t) => {
  const { p } = openPipeline(t);
  const texts = [];
  const sink = (text, ...rest) => (texts.push(text), p.ingest(text, ...rest));
  const calls = new CallBuffer(sink, { eventMaxBytes: 4096, turnBudgetMs: 4, capacity: 100 }, Date.now);
  calls.startView('v', 'V');
  for (let i = 0; i < 3; i++) {
    calls.startResource(`r${i}`, 'GET', 'https://x.example/a', { attempt: i });
    calls.stopResource(`r${i}`, 200, 'xhr', 10, { cache: 'miss', ms: i });
  }
  for (const k of ['a', 'b', 'c', 'd', 'e']) calls.addAction('tap', k, { [k]: 1 });
  calls.addAction('tap', 'a again', { a: 2 });
  calls.handOverAll();
  const keysOf = (call) => call[[4, 4, 3, 5, 6][call[0]]];
  assert.deepEqual(JSON.parse(texts[0]).slice(1).map(keysOf),
    [null, ['attempt'], ['cache', 'ms'], 0, 1, 0, 1, ['a'], ['b'], ['c'], ['d'], ['e'], ['a']]);
  p.flush();
  const docs = docsOf(p);
  assert.deepEqual(ofType(docs, 'resource').map((d) => [d.context?.attempt, d.context?.cache, d.context?.ms]),
    [[0, 'miss', 0], [1, 'miss', 1], [2, 'miss', 2]]);
  assert.deepEqual(ofType(docs, 'action').map((d) => d.context), [{ a: 1 }, { b: 1 }, { c: 1 }, { d: 1 }, { e: 1 }, { a: 2 }]);
});

test('a burst\'s calls share one keys array: each slice writes it once, with its mask, and every call keeps its values', async (t) => {
  const { p } = openPipeline(t);
  const texts = [];
  const sink = (calls, ...rest) => (texts.push(calls.split('\n')[0]), p.ingest(calls, ...rest));
  const calls = new CallBuffer(sink, { eventMaxBytes: 8192, turnBudgetMs: 1, capacity: 5000 }, Date.now);
  const long = (n) => `${'y'.repeat(40)} ${n}`;
  calls.startView('v', 'V');
  for (let i = 0; i < 300; i++) calls.addAction('tap', `x${i}`, { text: long(i), n: i });
  for (let i = 0; i < 1000 && calls.stats().buffered > 0; i++) await nextTurn();
  assert.equal(calls.stats().handoverErrors, 0);
  const runs = texts.map((text) => JSON.parse(text).slice(1).filter((call) => call[0] === 0).map((call) => call[4]));
  assert.ok(runs.length >= 2, `the burst crossed in slices: ${runs.length}`);
  for (const keys of runs) {
    assert.deepEqual(keys, [['text', 'n', 1], ...Array(keys.length - 1).fill(0)], 'a run writes the shared keys once, its mask after them');
  }
  p.flush();
  const docs = ofType(docsOf(p), 'action');
  assert.equal(docs.length, 300);
  assert.deepEqual(docs.map((d) => d.context), Array.from({ length: 300 }, (_, i) => ({ text: long(i), n: i })));
});

test('long string values cross beside the text (pieces), and documents hold them as they were given', (t) => {
  const { p } = openPipeline(t);
  const handed = [];
  const sink = (calls, ...rest) => {
    const end = calls.indexOf('\n'); // JSON.stringify writes no raw line feed: the first ends the text
    handed.push(end < 0 ? { text: calls, after: '' } : { text: calls.slice(0, end), after: calls.slice(end) });
    return p.ingest(calls, ...rest);
  };
  const calls = new CallBuffer(sink, { eventMaxBytes: 8192, turnBudgetMs: 4, capacity: 100 }, Date.now);
  const long = (tail) => `"quoted" \\ back\nslash\t\u0001 \u0000 é 😀 ${'x'.repeat(40)} ${tail}`;
  // A lone high surrogate ending one piece and a lone low one starting the next stay two U+FFFD.
  const high = `${'h'.repeat(40)}\ud83d`;
  const low = `\ude00${'l'.repeat(40)}`;
  const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i === 32 ? long('33rd') : i]));
  calls.startView('v', 'V');
  // A name past ASCII, with a line feed, which the text holds escaped.
  calls.addAction('tap', 'a é 😀\nx', { text: long('a'), n: 1, short: 'tiny' });
  calls.addAction('tap', 'b', { text: long('b'), n: 2, short: 'tiny' }); // the same shape and mask
  calls.addAction('tap', 'c', { text: 'now short', n: 3, short: long('c') }); // the same keys, another mask
  calls.addAction('tap', 'd', { hi: high, lo: low, nested: { deep: long('nested') } });
  calls.addAction('tap', 'e', many);
  calls.handOverAll();
  assert.equal(handed.length, 1);
  const [{ text, after }] = handed;
  assert.equal(after, '\n' + [long('a'), long('b'), long('c'), high, low].join('\n'),
    'the pieces follow the text, each after a line feed; a nested string and a 33rd value stay in the text');
  const run = JSON.parse(text).slice(1);
  assert.deepEqual(run.slice(1, 4).map((call) => [call[4], call[5]]), [
    [['text', 'n', 'short', 1], [long('a').length, 1, 'tiny']],
    [0, [long('b').length, 2, 'tiny']],
    [['text', 'n', 'short', 4], ['now short', 3, long('c').length]],
  ], 'a moved value is its length, the mask follows its shape\'s keys');
  p.flush();
  const contexts = Object.fromEntries(ofType(docsOf(p), 'action').map((d) => [d.action.target.name, d.context]));
  assert.deepEqual(contexts['a é 😀\nx'], { text: long('a'), n: 1, short: 'tiny' });
  assert.deepEqual(contexts.b, { text: long('b'), n: 2, short: 'tiny' });
  assert.deepEqual(contexts.c, { text: 'now short', n: 3, short: long('c') });
  assert.deepEqual(contexts.d, { hi: `${'h'.repeat(40)}\ufffd`, lo: `\ufffd${'l'.repeat(40)}`, nested: { deep: long('nested') } });
  assert.deepEqual(contexts.e, many);
});

test('a getter that removes a later member while the attributes are copied: the copy is what reading them by key gives', (t) => {
  const { p, calls } = captured(t);
  calls.startView('v', 'V');
  const attrs = { first: 1, second: 2, third: 3 };
  Object.defineProperty(attrs, 'first', { enumerable: true, get() { delete this.second; return 'one'; } });
  calls.addAction('tap', 'getter', attrs);
  attrs.third = 'later';
  calls.handOverAll();
  p.flush();
  const [action] = ofType(docsOf(p), 'action');
  assert.deepEqual(action.context, { first: 'one', third: 3 });
});

test('a copy made inside another (a getter that calls the SDK) leaves the outer one\'s size check whole', (t) => {
  const { p, calls } = captured(t, {}, { eventMaxBytes: 256 });
  calls.startView('v', 'V');
  const attrs = { nested: { s: 'x'.repeat(300) } };
  Object.defineProperty(attrs, 'g', { enumerable: true, get: () => (calls.addAction('tap', 'inner', { k: 1 }), 1) });
  assert.throws(() => calls.addAction('tap', 'outer', attrs), { name: 'RangeError', message: /eventMaxBytes \(256 bytes\)/ });
  calls.handOverAll();
  assert.ok(p.flush());
  assert.deepEqual(actionNames(docsOf(p)), ['inner']);
  assert.equal(calls.stats().handoverErrors, 0);
});

test('a call made inside another\'s copy (a getter that calls the SDK): each keeps its own attributes', (t) => {
  const { p, calls } = captured(t);
  calls.startView('v', 'V');
  const attrs = { a: 'x', nested: { n: 1 }, z: true };
  Object.defineProperty(attrs, 'g', { enumerable: true, get: () => (calls.addAction('tap', 'inner', new Map([['k', 1], ['m', 'q']])), 'got') });
  Object.defineProperty(attrs.nested, 'h', { enumerable: true, get: () => (calls.addAction('tap', 'deeper', { d: [1] }), 'had') });
  calls.addAction('tap', 'outer', attrs);
  calls.handOverAll();
  p.flush();
  const docs = docsOf(p);
  const contexts = Object.fromEntries(ofType(docs, 'action').map((d) => [d.action.target.name, d.context]));
  assert.deepEqual(contexts, {
    inner: { k: 1, m: 'q' }, deeper: { d: [1] }, outer: { a: 'x', nested: { n: 1, h: 'had' }, z: true, g: 'got' },
  });
  assert.deepEqual(actionNames(docs), ['inner', 'deeper', 'outer'], 'each call in the order it was made (its copy done)');
});

test('a lone surrogate in a string becomes U+FFFD, as the native copy makes it, and loses no call', (t) => {
  const { p, calls } = captured(t);
  calls.startView('v', 'V');
  calls.addAction('tap', 'lone \ud800 name', { s: 'a\udc00b', pair: '\ud83d\ude00' });
  calls.addAction('tap', 'next');
  calls.handOverAll();
  assert.equal(calls.stats().handoverErrors, 0);
  p.flush();
  const actions = ofType(docsOf(p), 'action');
  assert.deepEqual(actions.map((a) => a.action.target.name), ['lone \ufffd name', 'next']);
  assert.deepEqual(actions[0].context, { s: 'a\ufffdb', pair: '\ud83d\ude00' });
});
