// The demo's per-call cost measurement (entry/src/main/ets/scenarios/CallCosts.ets), built with the
// facade and run against the real library: every addAction round is timed on the queued path, and
// the three figures come out as the page shows them.
// Every addAction sample is timed with its calls still in the capture buffer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoScenario } from './lib/harness.mjs';

test('per-call costs: 21 rounds, every addAction sample buffered, median and p95 of three variants', async (t) => {
  const { scenario: { measureCallCosts }, monitor: m } = await demoScenario(t, 'CallCosts', 'app-call-costs');
  const attributes = { message_id: 'msg-1', message_index: 1, conversation_id: 'conv-1', preview: 'p'.repeat(300) };
  const result = await measureCallCosts(m, attributes);
  assert.equal(result.rounds, 21);
  assert.equal(result.callsPerSample, 200);
  assert.equal(result.bufferedRounds, 21, 'every addAction sample stays in the capture buffer until its turn ends');
  m.flush();
  const s = m.stats();
  assert.ok(s.callsInline + s.callsQueued >= 21 * 200, `every sample's calls reached the pipeline: ${s.callsInline} inline, ${s.callsQueued} queued`);
  assert.match(result.clock, /getUptime/);
  assert.deepEqual(result.figures.map((f) => f.label.split(' ')[0]), ['buffered', 'copyArgsFloor', 'ArkTS']);
  for (const f of result.figures) {
    assert.ok(f.medianUs > 0 && Number.isFinite(f.medianUs), `${f.label}: median ${f.medianUs}`);
    assert.ok(f.p95Us >= f.medianUs, `${f.label}: p95 ${f.p95Us} >= median ${f.medianUs}`);
  }
  assert.equal(m.stats().queueLength, 0, 'the queue drained between rounds');
});
