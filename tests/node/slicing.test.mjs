// Slicing really yields: a burst past the turn budget is processed in slices on later turns, and
// other work of the event loop runs between them (docs/design.md "Dispatch rules").
//
// On the host a slice is fast: a release build processes a few thousand queued actions in one
// 4 ms slice, so the reference 3,700-action burst may drain in a single slice. The tests that need
// several slices make each document cost more on the JS thread with an event mapper (its time
// counts against the budget, docs/design.md), which is what a slower phone looks like to the budget.
//
// The structural checks (slices > 1, the ticker runs between them, order) hold on every run. The
// time bound is generous, and a run that breaks it is repeated (3 runs at most): on a loaded
// 2-core machine the scheduler can hold the thread for tens of ms inside any slice, but not in
// every run, whereas a slice that ignores the budget breaks the bound every time.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { actionSeqs, burst, busyWait, openPipeline, range, readBatchFiles, waitDrained } from './lib/helpers.mjs';

const BUDGET_MS = 4;
const SLACK_MS = 25;
const BOUND_US = (BUDGET_MS + SLACK_MS) * 1000;
const ATTEMPTS = 3;
const BIG_QUOTA = { diskQuotaBytes: 64 * 1024 * 1024 };

/** An event mapper that costs `us` microseconds per document on the JS thread. */
const costlyMapper = (us) => (doc) => {
  busyWait(us / 1000);
  return doc;
};

/**
 * One burst of `n` actions (350-character attributes) on a fresh pipeline, with a ticker on the
 * event loop, until the queue has drained through its slices. Returns what the checks need.
 */
async function runBurst(t, { n, mapperUs = 0, schedule = setImmediate }) {
  const { p, dir } = openPipeline(t, BIG_QUOTA);
  if (mapperUs) p.setEventMapper(costlyMapper(mapperUs));
  p.startView('feed', 'Feed');
  const before = p.stats();

  let running = true;
  let ticks = 0;
  let ticksWhileQueued = 0;
  const slicesSeen = new Set();
  const tick = () => {
    ticks++;
    const s = p.stats();
    if (s.queueLength > 0) {
      ticksWhileQueued++;
      slicesSeen.add(s.slicesRun);
    }
    if (running) schedule(tick, 0);
  };
  schedule(tick, 0);

  const loopStart = performance.now();
  burst(p, n);
  const loopMs = performance.now() - loopStart;
  const ticksDuringLoop = ticks;
  const afterLoop = p.stats();
  await waitDrained(p, 60_000);
  running = false;
  const after = p.stats();
  assert.equal(p.flush(), true);
  const seqs = actionSeqs(readBatchFiles(dir).docs);
  return { before, afterLoop, after, loopMs, ticks, ticksDuringLoop, ticksWhileQueued, slicesSeen, seqs };
}

/** Runs `scenario` until its longest slice and inline turn are within the bound (or 3 runs). */
async function withinBound(scenario) {
  const seen = [];
  for (let i = 0; i < ATTEMPTS; i++) {
    const r = await scenario();
    const { longestSliceUs, longestInlineTurnUs } = r.after;
    seen.push(`longestSliceUs ${longestSliceUs}, longestInlineTurnUs ${longestInlineTurnUs}, loop ${r.loopMs.toFixed(1)} ms`);
    if (longestSliceUs < BOUND_US && longestInlineTurnUs < BOUND_US) return;
  }
  assert.fail(`the longest slice or inline turn broke ${BOUND_US} µs (the ${BUDGET_MS} ms budget + ${SLACK_MS} ms slack) in every run:\n  ${seen.join('\n  ')}`);
}

test('a 3,700-action burst with 350-character attributes returns early and drains in budgeted slices on later turns', async (t) => {
  await withinBound(async () => {
    const r = await runBurst(t, { n: 3700 });
    const { before, afterLoop, after: s } = r;
    assert.ok(afterLoop.queueLength > 0, `the loop returns with events still queued (queueLength ${afterLoop.queueLength})`);
    assert.ok(afterLoop.callsQueued - before.callsQueued > 0, 'calls were queued');
    assert.equal(afterLoop.slicesRun, before.slicesRun, "no slice runs inside the caller's loop (the queue stays under its capacity)");
    assert.equal(s.drains, before.drains, 'the queue drained through scheduled slices, not a synchronous drain');
    assert.ok(s.slicesRun >= 1, `slices ran (slicesRun ${s.slicesRun})`);
    assert.equal(s.callsInline - before.callsInline + s.callsQueued - before.callsQueued, 3700, 'each call counted once, inline or queued');
    assert.ok(s.longestSliceUs > 0, 'longestSliceUs is measured');
    assert.ok(s.longestInlineTurnUs > 0, 'longestInlineTurnUs is measured');
    assert.ok(s.queueHighWater >= afterLoop.queueLength, 'queueHighWater covers the queue seen after the loop');
    assert.deepEqual(r.seqs, range(0, 3700), 'every action once, in order');
    return r;
  });
});

for (const [label, schedule] of [
  ['setImmediate', setImmediate],
  ['setTimeout(0)', setTimeout],
]) {
  test(`a ${label} ticker runs between slices while a 3,700-action burst drains`, async (t) => {
    await withinBound(async () => {
      const r = await runBurst(t, { n: 3700, mapperUs: 20, schedule });
      const { afterLoop, after: s } = r;
      assert.equal(r.ticksDuringLoop, 0, 'the ticker cannot run during the synchronous loop');
      assert.ok(afterLoop.queueLength > 0, `the loop returns with events still queued (queueLength ${afterLoop.queueLength})`);
      assert.ok(s.callsQueued > 0, `calls were queued (callsQueued ${s.callsQueued})`);
      assert.ok(s.slicesRun > 1, `the queue drained over several slices (slicesRun ${s.slicesRun})`);
      assert.ok(
        r.ticksWhileQueued >= 2 && r.slicesSeen.size >= 2,
        `the ticker ran between slices (${r.ticksWhileQueued} ticks with a non-empty queue, seen after ${r.slicesSeen.size} different slice counts; ${r.ticks} ticks in all)`,
      );
      assert.deepEqual(r.seqs, range(0, 3700), 'every action once, in order');
      return r;
    });
  });
}
