// The burst report's target verdicts (benches/burst/report.mjs judgeTargets) on made-up medians:
// each of issue 12's thresholds is applied as the issue states it. No timing is measured here.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { judgeTargets } from '../../benches/burst/report.mjs';

const entry = (name, metric, medians) => ({
  name,
  metric,
  ...Object.fromEntries(Object.entries(medians).map(([v, m]) => [v, { median: m, samples: [m] }])),
});
const verdict = (entries, id) => judgeTargets(entries).find((t) => t.id === id);

test('the 100,000-action loop: at most 1 µs per action beyond the floor', () => {
  const at = (native) => verdict([entry('loop-100000', 'longest_stall_ms', { native, floor: 225 })], 'scale-1us');
  assert.equal(at(325).pass, true, '1.00 µs per action is within');
  assert.equal(at(326).pass, false, '1.01 µs per action is not');
  assert.match(at(440).measured, /^2\.15 µs per action/);
  assert.equal(verdict([], 'scale-1us').pass, null, 'no data, no verdict');
});

test('the 3,700-action loop: within 1 ms of the 4 ms budget plus the floor', () => {
  const at = (native) => verdict([entry('loop-3700', 'longest_stall_ms', { native, floor: 14.2, baseline: 121 })], 'stall-budget');
  assert.equal(at(19.2).pass, true);
  assert.equal(at(19.3).pass, false);
});
