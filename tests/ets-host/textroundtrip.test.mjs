// The demo's text round trip (entry/src/main/ets/scenarios/TextRoundTrip.ets), built with the
// facade and run against the real library: strings the two engines write differently cross in one
// handover (text and pieces in one string) and come back through the event mapper as sent, a lone
// surrogate as U+FFFD.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoScenario } from './lib/harness.mjs';

test('text round trip: every case comes back as sent, in one crossing', async (t) => {
  const { scenario: { checkTextRoundTrip }, monitor: m } = await demoScenario(t, 'TextRoundTrip', 'app-text-round-trip');
  const crossings = m.captureStats().handovers;
  const result = checkTextRoundTrip(m);
  assert.deepEqual(result.cases.filter((c) => !c.ok), [], 'no case failed');
  assert.equal(result.passed, 10);
  assert.equal(result.cases.length, 10);
  assert.equal(m.captureStats().handovers - crossings, 1, 'the view and every action crossed in one handover');
  assert.equal(m.stats().handoversRefused, 0);
  // The check itself: a monitor that changes what it records fails the case it changed.
  m.setEventMapper(null);
  const changed = checkTextRoundTrip(wrapped(m, (name, v) => (name === 'nul piece' ? v.replace('\u0000', ' ') : v)));
  assert.deepEqual(changed.cases.filter((c) => !c.ok).map((c) => c.label), ['U+0000 in a piece']);
  assert.match(changed.cases.find((c) => !c.ok).detail, /^at unit 1: U\+20 where U\+0 was sent/);
});

/** `m`, with each action's attribute `v` changed by `change` on its way in. */
function wrapped(m, change) {
  return new Proxy(m, {
    get(target, key) {
      if (key === 'addAction') return (type, name, attributes) => target.addAction(type, name, { v: change(name, attributes.v) });
      const value = target[key];
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
