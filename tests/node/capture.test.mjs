// The capture buffer the HAR ships (ets/src/main/ets/capture/CallBuffer.ets, built from ets/ by
// benches/capture-code.mjs) in front of the real library: each rule of docs/design.md it must keep
// (docs/how-it-works.md, "Capture in JS"); its copies of the arguments are capture-copy.test.mjs's.
// Runs in both Node runs (the ArkTS-semantics build too).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { bufferFor } from '../../benches/capture-code.mjs';
import { SCHEMAS_MISSING_NOTE, schemaValidator } from '../shared/schema.mjs';
import { actionNames, CallBuffer, CAPTURE_LINGER_MS, captured, docsOf, nextTurn } from './lib/capture.mjs';
import { childScript, ofType, openPipeline, pipelineOptions, attachPipeline, tmpDir } from './lib/helpers.mjs';

/** Runs `fn` with the global setTimeout counting the timers it is asked for. */
async function countingTimers(fn) {
  const timers = [];
  const original = globalThis.setTimeout;
  globalThis.setTimeout = (...a) => (timers.push(a), original(...a));
  try {
    await fn();
  } finally {
    globalThis.setTimeout = original;
  }
  return timers;
}

test('a drain right after a burst: every buffered call is handed over first, in call order', (t) => {
  const { p, calls } = captured(t);
  calls.startView('v', 'V');
  for (let i = 0; i < 3700; i++) calls.addAction('custom', `a-${i}`, { i });
  assert.equal(p.stats().queueLength, 0, 'nothing has crossed yet: the calls are in the buffer');
  assert.equal(calls.stats().buffered, 3701);
  calls.handOverAll();
  assert.equal(p.flush(), true);
  const names = actionNames(docsOf(p));
  assert.deepEqual(names, Array.from({ length: 3700 }, (_, i) => `a-${i}`));
});

test('a bad argument in the middle of a burst throws at its call and records nothing of it', async (t) => {
  const { p, calls } = captured(t);
  calls.startView('v', 'V');
  for (let i = 0; i < 50; i++) calls.addAction('custom', `ok-${i}`, { i });
  const buffered = calls.stats().buffered;
  assert.throws(() => calls.addAction('custom', 'bad', { n: NaN }), { name: 'RangeError', message: 'addAction: attributes.n must be finite, got NaN' });
  assert.throws(() => calls.addAction('custom', 'bad', { n: -Infinity }), { name: 'RangeError', message: 'addAction: attributes.n must be finite, got -Infinity' });
  assert.throws(() => calls.addAction('poke', 'bad'), { name: 'RangeError', message: /^addAction: type must be one of tap, .*got "poke"$/ });
  assert.throws(() => calls.addAction('tap', 7), { name: 'TypeError', message: 'addAction: name must be a string, got a number' }); // the native call's message
  assert.throws(() => calls.addAction('tap', 'bad', { deep: { f: () => 1 } }), { name: 'TypeError', message: 'addAction: attributes.deep.f cannot be a function: attribute values must be JSON-like' });
  assert.throws(() => calls.addAction('tap', 'bad', { list: [1, Symbol('s')] }), { name: 'TypeError', message: /^addAction: attributes\.list\[1\] cannot be a symbol/ });
  assert.throws(() => calls.addAction('tap', 'bad', [1]), { name: 'TypeError', message: 'addAction: attributes must be an object of attributes, got an array' });
  assert.throws(() => calls.stopResource('r', 1000, 'xhr'), { name: 'RangeError', message: /^stopResource: statusCode must be an integer from 0 to 999/ });
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  assert.throws(() => calls.addAction('tap', 'bad', cyclic), { name: 'RangeError', message: /attributes(\.self)+\.a nests deeper than 16 levels/ });
  assert.equal(calls.stats().buffered, buffered, 'a refused call changes nothing');
  for (let i = 50; i < 100; i++) calls.addAction('custom', `ok-${i}`, { i });
  await nextTurn();
  calls.handOverAll();
  p.flush();
  assert.deepEqual(actionNames(docsOf(p)), Array.from({ length: 100 }, (_, i) => `ok-${i}`));
  assert.equal(calls.stats().handoverErrors, 0);
});

test('a lone call: handed over at the end of its turn in one crossing, with no timer of its own', async (t) => {
  let now = 1_000;
  const { p, calls, crossings } = captured(t, {}, {}, () => now);
  calls.startView('v', 'V');
  await nextTurn();
  now += CAPTURE_LINGER_MS; // nothing handed over for a linger: the next call is a lone one
  const before = crossings.n;
  const timers = await countingTimers(async () => {
    calls.addAction('tap', 'lone', { k: 1 });
    await Promise.resolve();
    await Promise.resolve();
  });
  assert.equal(crossings.n - before, 1, 'one ingest for the call');
  assert.equal(calls.stats().buffered, 0, 'handed over within the turn');
  assert.equal(timers.length, 0, 'the buffer scheduled no timer');
  assert.equal(p.stats().callsInline >= 2, true, 'processed inline, not queued');
  assert.equal(p.stats().callsParsedAhead, 0, 'parsed on its turn, no other thread waited for');
});

test('a stream: calls on turns within the linger wait for one timer and cross together, in order', async (t) => {
  const lingerMs = 40;
  const { p, calls, crossings } = captured(t, {}, { lingerMs });
  calls.startView('v', 'V');
  await nextTurn(); // the view crosses at the end of its turn: the calls below are a stream
  const before = crossings.n;
  let firstAt = 0;
  const timers = await countingTimers(async () => {
    for (let i = 0; i < 5; i++) {
      if (i === 0) firstAt = performance.now();
      calls.addAction('tap', `s-${i}`, { i });
      await nextTurn();
    }
  });
  assert.equal(timers.filter(([, ms]) => ms === lingerMs).length, 1, 'one linger timer for the five turns');
  assert.equal(crossings.n - before, 0, 'nothing crossed on their turns');
  assert.equal(calls.stats().buffered, 5);
  while (calls.stats().buffered > 0) await nextTurn();
  assert.ok(performance.now() - firstAt >= lingerMs - 1, 'not before the linger');
  assert.equal(crossings.n - before, 1, 'the five calls crossed in one ingest');
  p.flush();
  assert.deepEqual(actionNames(docsOf(p)), ['s-0', 's-1', 's-2', 's-3', 's-4']);
});

test('with a linger on, a sparse stream (a call 50 ms or more after the last handover) still crosses at the end of its turn', async (t) => {
  let now = 1_000;
  const { calls, crossings } = captured(t, {}, { lingerMs: 10_000 }, () => now);
  calls.startView('v', 'V');
  await nextTurn();
  now += 49;
  calls.addAction('tap', 'dense');
  await nextTurn();
  assert.equal(calls.stats().buffered, 1, '49 ms after the last handover: a stream, it waits');
  calls.handOverAll();
  const before = crossings.n;
  now += 50;
  const timers = await countingTimers(async () => {
    calls.addAction('tap', 'sparse');
    await Promise.resolve();
    await Promise.resolve();
  });
  assert.equal(crossings.n - before, 1, '50 ms after it: crossed at the end of its turn');
  assert.equal(timers.length, 0, 'with no timer');
});

/** A pipeline whose buffer holds one call waiting for a long linger: a stream's second turn. */

async function withLingeringCall(t, name) {
  const c = captured(t, {}, { lingerMs: 10_000 });
  c.calls.startView('v', 'V');
  await nextTurn(); // the view crosses at the end of its turn
  c.calls.addAction('tap', name);
  await nextTurn();
  assert.equal(c.calls.stats().buffered, 1, 'a stream: the call waits for the linger');
  return c;
}

test('a burst out of a stream crosses at its turn\'s end as the budget allows, and a drain takes a lingering stream at once', async (t) => {
  const { p, calls, crossings } = await withLingeringCall(t, 'lingering');
  const before = crossings.n;
  for (let i = 0; i < 200; i++) calls.addAction('custom', `b-${i}`);
  await Promise.resolve();
  await Promise.resolve();
  assert.ok(crossings.n - before >= 1, 'the burst did not wait for the linger');
  while (calls.stats().buffered > 0) await nextTurn();
  calls.addAction('tap', 'after');
  await nextTurn();
  assert.equal(calls.stats().buffered, 1, 'a stream again: the call waits');
  const drained = crossings.n;
  calls.handOverAll(); // what every drain (addError, flush, stop, background, a crash) runs first
  assert.equal(calls.stats().buffered, 0);
  assert.equal(crossings.n - drained, 1);
  p.flush();
  assert.deepEqual(actionNames(docsOf(p)), ['lingering', ...Array.from({ length: 200 }, (_, i) => `b-${i}`), 'after']);
});

test('after afterStop (RumMonitor.stop) no call waits for a linger or a slice: each crosses at the end of its turn', async (t) => {
  const { p, calls, crossings } = await withLingeringCall(t, 'waits');
  calls.afterStop();
  assert.equal(calls.stats().buffered, 0, 'what waited is handed over');
  const before = crossings.n;
  calls.addAction('tap', 'after');
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(crossings.n - before, 1, 'crossed at the end of its turn');
  for (let i = 0; i < 100; i++) {
    calls.addAction('custom', `late-${i}`);
    if (i === 0) for (const until = performance.now() + 10; performance.now() < until;); // past the budget
  }
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(calls.stats().buffered, 0, 'a burst after stop crosses at its turn\'s end too, budget or not');
  p.flush();
  assert.deepEqual(actionNames(docsOf(p)), ['waits', 'after', ...Array.from({ length: 100 }, (_, i) => `late-${i}`)]);
});

test('a burst beyond the turn budget crosses in slices, one crossing each, nothing lost', async (t) => {
  const { p, calls, crossings } = captured(t, {}, { turnBudgetMs: 1 });
  calls.startView('v', 'V');
  for (let i = 0; i < 20_000; i++) calls.addAction('custom', `s-${i}`, { i, pad: 'p'.repeat(100) });
  const afterLoop = crossings.n;
  for (let i = 0; i < 2000 && calls.stats().buffered + p.stats().queueLength > 0; i++) await nextTurn();
  assert.equal(calls.stats().buffered, 0);
  assert.ok(crossings.n - afterLoop > 2, `handed over in several slices: ${crossings.n - afterLoop}`);
  assert.ok(crossings.n < 20_000 / 10, `far fewer crossings than calls: ${crossings.n}`);
  p.flush();
  assert.deepEqual(actionNames(docsOf(p)), Array.from({ length: 20_000 }, (_, i) => `s-${i}`));
  // The slices' texts were parsed on the parse thread, the turn's own handover where it was made.
  const { callsParsedAhead, callsProcessedAhead, handoversRefused } = p.stats();
  assert.ok(callsParsedAhead > 20_000 / 2 && callsParsedAhead <= 20_001, `calls parsed off the JS thread: ${callsParsedAhead}`);
  // No event mapper: the slices' calls were processed there too, none queued for a JS-thread slice.
  assert.equal(callsProcessedAhead, callsParsedAhead, 'every call parsed off the JS thread was processed there');
  assert.equal(handoversRefused, 0);
});

test('with an event mapper, a burst\'s slices are processed on the JS thread, every document mapped there', async (t) => {
  const { p, calls } = captured(t, {}, { turnBudgetMs: 1 });
  const js = { mapped: 0 };
  p.setEventMapper((doc) => {
    if (doc.type === 'action') js.mapped += 1;
    doc.context.mapped = true;
    return doc;
  });
  calls.startView('v', 'V');
  for (let i = 0; i < 8_000; i++) calls.addAction('custom', `m-${i}`, { i, pad: 'p'.repeat(100) });
  for (let i = 0; i < 2000 && calls.stats().buffered + p.stats().queueLength > 0; i++) await nextTurn();
  p.flush();
  const actions = docsOf(p).filter((d) => d.type === 'action');
  assert.deepEqual(actions.map((d) => d.action.target.name), Array.from({ length: 8_000 }, (_, i) => `m-${i}`));
  assert.ok(actions.every((d) => d.context.mapped === true), 'every action went through the mapper');
  assert.equal(js.mapped, 8_000);
  const { callsParsedAhead, callsProcessedAhead } = p.stats();
  assert.ok(callsParsedAhead > 0, 'the slices were still parsed off the JS thread');
  assert.equal(callsProcessedAhead, 0, 'and processed on it, where the mapper runs');
});

test('a flush right after a burst\'s last slice, that slice likely still in parse: every call, in call order', async (t) => {
  const { p, calls } = captured(t, {}, { turnBudgetMs: 1 });
  calls.startView('v', 'V');
  for (let i = 0; i < 8_000; i++) calls.addAction('custom', `m-${i}`, { i, pad: 'p'.repeat(100) });
  for (let i = 0; i < 2000 && calls.stats().buffered > 0; i++) await nextTurn();
  assert.equal(calls.stats().buffered, 0, 'all handed over, the last of it on the turn before');
  assert.equal(p.flush(), true); // the pipeline's own drain, nothing left in the buffer to hand over
  assert.deepEqual(actionNames(docsOf(p)), Array.from({ length: 8_000 }, (_, i) => `m-${i}`));
  assert.ok(p.stats().callsParsedAhead > 0, 'some slices were parsed on the parse thread');
});

const BUDGET_MS = 4;

/**
 * A capture buffer on a virtual clock, with no pipeline: each handover advances the clock by what
 * `costMs(calls, slice)` says it took, and is recorded in `runs`; the capture itself costs
 * nothing. `wholeMs`: the buffer reads the clock in whole ms, as the HAR's Date.now.
 */

function virtualBuffer(costMs, { wholeMs = false } = {}) {
  const clock = { now: 1_000 };
  const runs = [];
  const sink = (text, slice) => {
    const n = JSON.parse(text).length - 1;
    const ms = costMs(n, slice);
    runs.push({ n, slice, ms });
    clock.now += ms;
    return false;
  };
  const limits = { eventMaxBytes: 1 << 20, turnBudgetMs: BUDGET_MS, capacity: 100_000 };
  const calls = new CallBuffer(sink, limits, () => (wholeMs ? Math.floor(clock.now) : clock.now));
  return { calls, runs, clock };
}

test('stamps and the handover\'s moment are ms from the buffer\'s start: small integers, not 13-digit clock readings', async (t) => {
  const { p } = openPipeline(t);
  const clock = { now: 1_765_000_000_000 }; // a Date.now() reading
  const texts = [];
  const sink = (text, ...rest) => (texts.push(text), p.ingest(text, ...rest));
  const calls = new CallBuffer(sink, { eventMaxBytes: 4096, turnBudgetMs: 4, capacity: 100 }, () => clock.now);
  clock.now += 5;
  calls.startView('v', 'V');
  clock.now += 2;
  calls.handOverAll();
  assert.deepEqual(JSON.parse(texts[0]), [7, [1, 5, 'v', 'V', null, null]]);
  p.flush();
  const [view] = ofType(docsOf(p), 'view');
  assert.ok(Math.abs(view.date - Date.now()) < 60_000, 'the documents\' times are still the wall clock\'s');
});

/** Turns go by until the buffer has handed everything over. */

async function handedOver(calls) {
  for (let i = 0; i < 10_000 && calls.stats().buffered > 0; i++) await nextTurn();
  assert.equal(calls.stats().buffered, 0);
}

test('a turn\'s handover is sized from what turn handovers cost, not from the cheaper slices (parsed off the JS thread)', async () => {
  // A call costs 0.01 ms to hand over at a turn's end (parsed there), 0.001 ms in a slice (parsed
  // on the parse thread).
  const { calls, runs, clock } = virtualBuffer((n, slice) => n * (slice ? 0.001 : 0.01));
  const burst = async (tag, n) => {
    for (let i = 0; i < n; i++) calls.addAction('custom', `${tag}-${i}`, null);
    await handedOver(calls);
  };
  await burst('a', 20_000); // teaches the buffer both costs
  clock.now += 1_000;
  const first = runs.length;
  await burst('b', 5_000);
  const turnRun = runs[first];
  assert.equal(turnRun.slice, false, 'the second burst starts with its turn\'s handover');
  // The budget's 4 ms at about 0.01 ms a call: a few hundred calls, not the thousands a slice's cost would give.
  assert.ok(turnRun.n <= 800, `the turn handed over ${turnRun.n} calls, ${(turnRun.n * 0.01).toFixed(1)} ms at its cost`);
  assert.ok(runs.slice(first + 1).every((r) => r.slice), 'the rest in slices');
});

test('slices keep to the budget: the first sized by a pessimistic guess, each after one whose cost rose by that cost', async () => {
  // A slice's call costs 0.006 ms to hand over (a cold first burst on the development VM: above
  // the 0.004 ms the buffer once guessed), then 0.002, then 0.008.
  let perCall = 0.006;
  const slices = [];
  const { calls, runs } = virtualBuffer((n, slice) => {
    if (slice) slices.push({ n, ms: n * perCall, perCall });
    return n * (slice ? perCall : 0.01);
  });
  const burst = async (n, cost) => {
    perCall = cost;
    for (let i = 0; i < n; i++) calls.addAction('custom', `c-${i}`, null);
    await handedOver(calls);
  };
  await burst(3_000, 0.006);
  await burst(6_000, 0.002);
  await burst(3_000, 0.008);
  assert.ok(slices[0].ms <= BUDGET_MS, `the first slice: ${slices[0].n} calls, ${slices[0].ms.toFixed(2)} ms`);
  for (let i = 1; i < slices.length; i++) {
    if (slices[i].perCall !== slices[i - 1].perCall) continue; // sized by the cost before the change
    assert.ok(slices[i].ms <= BUDGET_MS + 1e-9, `slice ${i}: ${slices[i].n} calls, ${slices[i].ms.toFixed(2)} ms`);
  }
  const cheap = slices.filter((s) => s.perCall === 0.002);
  assert.ok(Math.max(...cheap.map((s) => s.n)) > 1_000, 'a cheaper cost is learned too: slices grow again');
  // What the demo HAP shows on a device: the longest handover's time on the JS thread.
  const longestMs = Math.max(...runs.map((r) => r.ms));
  assert.ok(Math.abs(calls.stats().longestHandoverMs - longestMs) < 1e-6,
    `longestHandoverMs ${calls.stats().longestHandoverMs}, the longest handover took ${longestMs} ms`);
  // And all of them together: what the handovers cost the JS thread beside the loops.
  const allMs = runs.reduce((sum, r) => sum + r.ms, 0);
  assert.ok(Math.abs(calls.stats().handoverMs - allMs) < 1e-6, `handoverMs ${calls.stats().handoverMs}, the handovers took ${allMs} ms`);
});

test('on a clock of whole milliseconds (the HAR\'s Date.now) a handover read as 0 ms teaches nothing: no slice runs past the budget by more than a tick', async () => {
  // The slices' calls really cost 0.003 ms each; the buffer reads the time in whole ms. The first
  // slice (250 calls at the first guess, 0.75 ms) reads as 0 ms: taken as a cost near 0, it sized
  // the next slice at the most a slice takes (4,096 calls, 12 ms).
  // The turn's 250 calls end on a whole ms: the first slice starts on one.
  const { calls, runs } = virtualBuffer((n, slice) => n * (slice ? 0.003 : 0.012), { wholeMs: true });
  for (let i = 0; i < 20_000; i++) calls.addAction('custom', `c-${i}`, null);
  await handedOver(calls);
  const slices = runs.filter((r) => r.slice);
  const tickMs = 1;
  const longest = slices.reduce((a, s) => (s.ms > a.ms ? s : a));
  assert.ok(longest.ms <= BUDGET_MS + tickMs, `the longest slice: ${longest.n} calls, ${longest.ms.toFixed(2)} ms`);
  assert.ok(slices.length < 20_000 / 250, `slices grew past the first guess's size once measured: ${slices.length} slices`);
});

test('a process\'s first turn handover, its cost not measured yet, keeps to what the turn has left', async () => {
  // Parsed and processed on the turn, cold: 0.05 ms a call (the development VM: 0.005 to 0.044).
  const { calls, runs } = virtualBuffer((n, slice) => n * (slice ? 0.004 : 0.05));
  for (let i = 0; i < 1_000; i++) calls.addAction('custom', `c-${i}`, null);
  await handedOver(calls);
  assert.equal(runs[0].slice, false, 'the turn\'s own handover first');
  assert.ok(runs[0].ms <= BUDGET_MS, `the first turn handed over ${runs[0].n} calls, ${runs[0].ms.toFixed(1)} ms`);
});

test('on a whole-millisecond clock, lone calls read as 0 ms do not make a later burst\'s turn hand over more than its budget allows', async () => {
  // The HAR's Date.now: a lone call's handover (0.05 ms) reads as 0 ms. Taken as a cost near 0, a
  // stream of them sized the next burst's turn-end handover at thousands of calls, each parsed
  // and processed on that turn (0.01 ms a call here): 30 ms on the UI thread.
  const { calls, runs, clock } = virtualBuffer((n, slice) => (slice ? n * 0.003 : 0.04 + n * 0.01), { wholeMs: true });
  for (let i = 0; i < 50; i++) {
    calls.addAction('tap', `lone-${i}`, null);
    await nextTurn();
    clock.now = Math.floor(clock.now) + 3.2; // the next call 3.2 ms later: each lone handover reads as 0 ms
  }
  const turns = () => runs.filter((r) => !r.slice);
  assert.ok(turns().length >= 50 && turns().every((t) => t.n === 1), 'each lone call crossed at its turn\'s end');
  const before = turns().length;
  for (let i = 0; i < 3_000; i++) calls.addAction('custom', `b-${i}`, null); // the loop reads as no time
  await handedOver(calls);
  const burstTurn = turns()[before];
  assert.ok(burstTurn.ms <= BUDGET_MS, `the burst's turn handed over ${burstTurn.n} calls, ${burstTurn.ms.toFixed(1)} ms on its turn`);
});

test('a slice whose crossing fills the budget whatever it carries still hands over 64 calls: no ratchet down to one a slice on a whole-millisecond clock', async () => {
  // With an event mapper set, a slice's crossing also runs the pipeline's own slice of the calls
  // queued before, which fills the budget: 4.2 ms, whatever the slice carries. Read per call, and
  // read as 5 ticks now and then, it shrank each next slice, down to one call (14,294 slices).
  const { calls, runs } = virtualBuffer((n, slice) => (slice ? BUDGET_MS + 0.2 : n * 0.01), { wholeMs: true });
  for (let i = 0; i < 20_000; i++) calls.addAction('custom', `c-${i}`, null);
  await handedOver(calls);
  const slices = runs.filter((r) => r.slice);
  assert.ok(slices.slice(0, -1).every((s) => s.n >= 64), `slices of ${Math.min(...slices.map((s) => s.n))} calls`);
  assert.ok(slices.length <= Math.ceil(20_000 / 64), `${slices.length} slices`);
});

test('the buffer is bounded: at its capacity a slice crosses on the caller\'s turn', (t) => {
  const { p, calls } = captured(t, {}, { capacity: 500 });
  calls.startView('v', 'V');
  for (let i = 0; i < 2000; i++) {
    calls.addAction('custom', `c-${i}`);
    assert.ok(calls.stats().buffered <= 500, `call ${i}: ${calls.stats().buffered} buffered`);
  }
  calls.handOverAll();
  p.flush();
  assert.deepEqual(actionNames(docsOf(p)), Array.from({ length: 2000 }, (_, i) => `c-${i}`));
});

test('a call ordered after buffered ones (a global attribute) is made after handing them over', (t) => {
  const { p, calls } = captured(t);
  calls.startView('v', 'V');
  calls.addAction('tap', 'before');
  calls.handOverAll();
  p.addAttribute('plan', 'pro');
  calls.addAction('tap', 'after');
  calls.handOverAll();
  p.flush();
  const actions = ofType(docsOf(p), 'action');
  assert.deepEqual(actions.map((a) => [a.action.target.name, a.context?.plan]), [['before', undefined], ['after', 'pro']]);
});

test('calls keep the times of their calls, not of their handover', async (t) => {
  const { p, calls } = captured(t);
  calls.startView('v', 'V');
  const t0 = Date.now();
  calls.addAction('tap', 'early');
  const waitUntil = performance.now() + 60;
  while (performance.now() < waitUntil);
  calls.addAction('tap', 'late');
  calls.handOverAll();
  p.flush();
  const [early, late] = ofType(docsOf(p), 'action');
  assert.ok(Math.abs(early.date - t0) <= 15, `early at ${early.date - t0} ms`);
  assert.ok(late.date - early.date >= 50, `the late call ${late.date - early.date} ms after the early one`);
});

test('untracked sessions: calls are skipped in JS before their arguments are read, and counted', async (t) => {
  const { p, calls, crossings } = captured(t, { sessionSampleRate: 0 });
  calls.addAction('tap', 'first');
  await nextTurn();
  const before = crossings.n;
  for (let i = 0; i < 100; i++) calls.addAction('tap', 'skipped', { bad: NaN });
  assert.equal(calls.stats().buffered, 0, 'nothing buffered, not even the bad argument checked');
  assert.equal(crossings.n, before);
  calls.startView('v', 'V'); // views are never skipped: the next handover reports the count
  calls.handOverAll();
  assert.ok(p.stats().callsUntracked >= 100, `callsUntracked ${p.stats().callsUntracked}`);
});

test('ingest refuses text that is not a capture buffer\'s handover, and records nothing', (t) => {
  const { p } = openPipeline(t);
  p.startView('v', 'V');
  for (const text of ['[1,[0,1,"tap","a",null,null],[7,1]]', 'not json', '[]', '[1,[0,1,"tap","a",[1],[1]]]',
    '[1,[0,1,"tap","a",0,[1]]]', '[1,[0,1,"tap","a",["k"],[1,2]]]', '[1,[0,1,"tap","a",null]]']) {
    assert.throws(() => p.ingest(text, false, 0, 0), { name: 'TypeError', message: /^ingest: calls is not a capture buffer's handover/ }, text);
  }
  // Pieces (after the text's first line feed) that do not match their values: too short, none,
  // one left over, a text cut short by a line feed of its own.
  const moved = '[1,[0,1,"tap","a",["k",1],[5]]]';
  assert.throws(() => p.ingest(`${moved}\nabc`, false, 0, 0), { name: 'TypeError', message: /piece 0 is not 5 units long/ });
  assert.throws(() => p.ingest(moved, false, 0, 0), { name: 'TypeError', message: /piece 0 is not 5 units long/ });
  const plain = '[1,[0,1,"tap","a",null,null]]';
  assert.throws(() => p.ingest(`${plain}\nabc`, false, 0, 0), { name: 'TypeError', message: /pieces left/ });
  assert.throws(() => p.ingest('[1,[0,1,"tap","a\nb",null,null]]', false, 0, 0), { name: 'TypeError', message: /calls is not a capture buffer's handover/ });
  // A slice's text is parsed on the parse thread: refused there, counted, and nothing recorded.
  assert.equal(p.ingest('[1,[0,1,"tap","a",null,null],[7,1]]', true, 0, 0), false);
  assert.throws(() => p.ingest('[1]', false, -1, 0), { name: 'RangeError', message: /spentMs/ });
  assert.throws(() => p.ingest(5, false, 0, 0), { name: 'TypeError', message: /calls must be a string/ });
  p.flush();
  assert.equal(ofType(docsOf(p), 'action').length, 0);
  assert.equal(p.stats().handoversRefused, 1);
});

/** Two threads, each making `count` calls through its capture buffer in rounds of `chunk`. */

async function twoThreads(t, count, chunk) {
  const dir = tmpDir(t);
  const options = pipelineOptions(dir, { diskQuotaBytes: 64 * 1024 * 1024 });
  const p = attachPipeline(t, options);
  const calls = bufferFor(CallBuffer, p);
  calls.startView('shared', 'Shared');
  calls.handOverAll();
  const w = new Worker(childScript('worker-writer.mjs'), { workerData: { options, tag: 'w', count, chunk, capture: true } });
  t.after(() => w.terminate());
  const done = new Promise((resolve, reject) => {
    w.on('message', (m) => m.kind === 'done' && resolve(m));
    w.on('error', reject);
  });
  for (let i = 0; i < count; ) {
    for (let j = 0; j < chunk && i < count; j++, i++) calls.addAction('custom', `m-${i}`, { thread: 'main', seq: i });
    await new Promise((r) => setImmediate(r));
  }
  const report = await done;
  assert.equal(report.flushed, true);
  calls.handOverAll();
  p.flush();
  await once(w, 'exit').catch(() => {});
  const names = actionNames(docsOf(p));
  for (const tag of ['m', 'w']) {
    const mine = names.filter((n) => n.startsWith(`${tag}-`));
    assert.deepEqual(mine, Array.from({ length: count }, (_, i) => `${tag}-${i}`), `thread ${tag}: each once, in call order`);
  }
  return p.stats();
}

test('two threads with their capture buffers on one pipeline: each thread\'s calls once, in call order', async (t) => {
  await twoThreads(t, 1000, 50);
});

test('two threads bursting at once, their slices parsed on each one\'s parse thread: each thread\'s calls once, in call order', async (t) => {
  const stats = await twoThreads(t, 12_000, 4_000);
  assert.ok(stats.callsParsedAhead > 0, `slices parsed off the JS threads: ${stats.callsParsedAhead}`);
});

test('every kind of document made from buffered calls validates against the RUM event format', async (t) => {
  const v = schemaValidator();
  if (!v) return t.skip(SCHEMAS_MISSING_NOTE);
  const { p, calls } = captured(t, { source: 'android', applicationId: '6c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f' });
  calls.startView('home', 'Home', { tab: 1 });
  calls.addAction('tap', 'buy', { sku: 'A-1', nested: { list: [1, 'x', null], when: new Date(7) } });
  calls.startResource('r1', 'get', 'https://example.com/a', { k: 'v' });
  calls.stopResource('r1', 200, 'xhr', 512, { done: true });
  calls.addTiming('first_item');
  for (let i = 0; i < 2000; i++) calls.addAction('scroll', `s-${i}`, { i });
  await nextTurn();
  calls.stopView('home', { left: true });
  calls.handOverAll();
  p.flush();
  const docs = docsOf(p);
  assert.deepEqual([...new Set(docs.map((d) => d.type))].sort(), ['action', 'resource', 'view']);
  const errors = docs.flatMap((d, i) => v.validate(d).map((e) => `#${i} (${d.type}): ${e}`));
  assert.deepEqual(errors, []);
});

test('a resource\'s details: the buffer refuses what the native call refuses, with its message, and hands the rest over', (t) => {
  const { p, calls } = captured(t);
  const trace = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
  const bad = [
    { timing: { dns: { start: -1, duration: 2 } } },
    { timing: { ssl: { start: 0, duration: NaN } } },
    { timing: { connect: { start: '0', duration: 2 } } },
    { timing: { firstByte: 5 } },
    { timing: { download: { start: 0, duration: 86400001 } } },
    { timing: 7 },
    7,
    { traceId: trace.traceId },
    { spanId: trace.spanId },
    { traceId: 5, spanId: trace.spanId },
    { traceId: '0'.repeat(32), spanId: trace.spanId },
    { traceId: trace.traceId, spanId: 'xyz' },
    { traceId: `${trace.traceId}0`, spanId: trace.spanId }
  ];
  p.startView('v', 'V');
  for (const details of bad) {
    p.startResource('direct', 'GET', 'https://x.example/');
    let native;
    try {
      p.stopResource('direct', 200, 'native', undefined, undefined, details);
    } catch (e) {
      native = e;
    }
    assert.ok(native, `the native call refuses ${JSON.stringify(details)}`);
    assert.throws(() => calls.stopResource('r', 200, 'native', undefined, undefined, details),
      { name: native.name, message: native.message });
  }
  calls.startView('v2', 'V2');
  calls.startResource('r', 'GET', 'https://x.example/ok', undefined);
  calls.stopResource('r', 200, 'native', 10, undefined,
    { timing: { dns: { start: 0, duration: 1.5 }, download: { start: 3, duration: 0.25 } }, ...trace });
  calls.handOverAll();
  p.flush();
  const [r] = ofType(docsOf(p), 'resource').filter((d) => d.resource.url.endsWith('/ok'));
  assert.deepEqual([r.resource.dns, r.resource.download], [{ start: 0, duration: 1500000 }, { start: 3000000, duration: 250000 }]);
  assert.equal(r.resource.connect, undefined);
  assert.deepEqual([r._dd.trace_id, r._dd.span_id], [trace.traceId, BigInt(`0x${trace.spanId}`).toString()]);
});
