// The demo's steady-state measurement (entry/src/main/ets/scenarios/SteadyCosts.ets), built with
// the facade and run against the real library with few ticks: three loops alternating, process CPU
// per tick for each, and the two differences the page shows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoScenario, fakeContext, tempDir } from './lib/harness.mjs';

test('steady-state costs: floor, an addAction per tick and one timer per tick, alternating, per tick', async (t) => {
  const { scenario: { measureSteadyCosts }, monitor: m, facade } = await demoScenario(t, 'SteadyCosts', 'app-steady-costs');
  const attributes = { message_id: 'msg-1', message_index: 1, preview: 'p'.repeat(300) };
  const lingering = facade.RumMonitor.create(fakeContext(tempDir()), {
    applicationId: 'app-steady-costs', keepAliveIntervalMs: 0, connectivityTracking: false, crashReporting: false,
    autoCapture: false, pipeline: { captureLingerMs: 100 }
  });
  t.after(() => lingering.stop());
  const before = m.stats();
  const other = lingering.stats();
  const otherCrossings = lingering.captureStats().handovers;
  const result = await measureSteadyCosts(m, attributes, lingering, 20, 2);
  assert.equal(result.ticks, 20);
  assert.equal(result.rounds, 2);
  const after = m.stats();
  // By default every tick's call crossed at the end of its tick: inline, no slice.
  assert.equal(after.callsInline - before.callsInline, 2 + 2 * 20, 'startView, stopView and one action per tick, inline');
  assert.equal(after.slicesRun - before.slicesRun, 0);
  // With the linger a call per 10 ms tick is a stream: handed over once per 100 ms, each
  // handover a slice of its own (processed on the parse thread), not once per tick.
  const lingered = lingering.stats();
  const reached = lingered.callsInline + lingered.callsQueued - other.callsInline - other.callsQueued;
  assert.equal(reached, 2 + 2 * 20, 'startView, stopView and one action per tick, each once');
  const handovers = lingering.captureStats().handovers - otherCrossings;
  assert.ok(handovers >= 1 && handovers <= 10, `the 40 ticks' actions crossed in ${handovers} handovers`);
  assert.ok(lingered.callsProcessedAhead > other.callsProcessedAhead, 'the lingers were slices, processed off the UI thread');
  assert.deepEqual(result.figures.map((f) => f.label.split(' ')[0]), ['floor', 'addAction', 'floor', 'addAction']);
  assert.match(result.figures[3].label, /capture linger 100 ms/);
  for (const f of result.figures) {
    assert.ok(f.medianUs >= 0 && Number.isFinite(f.medianUs), `${f.label}: median ${f.medianUs}`);
    assert.ok(f.p95Us >= f.medianUs, `${f.label}: p95 ${f.p95Us} >= median ${f.medianUs}`);
  }
  assert.equal(result.actionBeyondFloorUs, Math.round((result.figures[1].medianUs - result.figures[0].medianUs) * 10) / 10);
  assert.equal(result.timerBeyondFloorUs, Math.round((result.figures[2].medianUs - result.figures[0].medianUs) * 10) / 10);
  assert.equal(result.lingerBeyondFloorUs, Math.round((result.figures[3].medianUs - result.figures[0].medianUs) * 10) / 10);
});
