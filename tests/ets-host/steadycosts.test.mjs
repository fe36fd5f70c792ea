// The demo's steady-state measurement (entry/src/main/ets/scenarios/SteadyCosts.ets), built with
// the facade and run against the real library with few ticks: three loops alternating, process CPU
// per tick for each, and the two differences the page shows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoScenario, fakeContext, tempDir } from './lib/harness.mjs';

test('steady-state costs: floor, an addAction per tick and one timer per tick, alternating, per tick', async (t) => {
  const { scenario: { measureSteadyCosts }, monitor: m, facade } = await demoScenario(t, 'SteadyCosts', 'app-steady-costs');
  const attributes = { message_id: 'msg-1', message_index: 1, preview: 'p'.repeat(300) };
  const noLinger = facade.RumMonitor.create(fakeContext(tempDir()), {
    applicationId: 'app-steady-costs', keepAliveIntervalMs: 0, connectivityTracking: false, crashReporting: false,
    autoCapture: false, pipeline: { captureLingerMs: 0 }
  });
  t.after(() => noLinger.stop());
  const before = m.stats();
  const other = noLinger.stats();
  const result = await measureSteadyCosts(m, attributes, noLinger, 20, 2);
  assert.equal(result.ticks, 20);
  assert.equal(result.rounds, 2);
  const after = m.stats();
  const reached = after.callsInline + after.callsQueued - before.callsInline - before.callsQueued;
  assert.equal(reached, 2 + 2 * 20, 'startView, stopView and one action per tick, each once');
  // A call per 10 ms tick is a stream: the capture buffer hands it over once per linger (100 ms),
  // each handover a slice of its own, not once per tick.
  const handovers = after.slicesRun - before.slicesRun;
  assert.ok(handovers >= 1 && handovers <= 10, `the 40 ticks' actions crossed in ${handovers} lingers`);
  // Without the linger every tick's call crossed at the end of its tick: inline, no slice.
  const unlingered = noLinger.stats();
  assert.equal(unlingered.callsInline - other.callsInline, 2 + 2 * 20, 'startView, stopView and one action per tick, inline');
  assert.equal(unlingered.slicesRun - other.slicesRun, 0);
  assert.deepEqual(result.figures.map((f) => f.label.split(' ')[0]), ['floor', 'addAction', 'floor', 'addAction']);
  assert.match(result.figures[3].label, /no capture linger/);
  for (const f of result.figures) {
    assert.ok(f.medianUs >= 0 && Number.isFinite(f.medianUs), `${f.label}: median ${f.medianUs}`);
    assert.ok(f.p95Us >= f.medianUs, `${f.label}: p95 ${f.p95Us} >= median ${f.medianUs}`);
  }
  assert.equal(result.actionBeyondFloorUs, Math.round((result.figures[1].medianUs - result.figures[0].medianUs) * 10) / 10);
  assert.equal(result.timerBeyondFloorUs, Math.round((result.figures[2].medianUs - result.figures[0].medianUs) * 10) / 10);
  assert.equal(result.noLingerBeyondFloorUs, Math.round((result.figures[3].medianUs - result.figures[0].medianUs) * 10) / 10);
});
