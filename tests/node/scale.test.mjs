// Issue 11's end to end: 37,000 actions in one loop with no uploader running are all kept under
// the default 4 MiB quota (sealed batches are gzip-compressed), and all reach a loopback intake,
// once each, when an uploader then runs (the benchmarks' uploader: the seed SDK's cadence, gzip
// bodies sent as they are with Content-Encoding: gzip).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startIntake, Uploader } from '../../benches/burst/intake.mjs';
import { burst, openPipeline } from './lib/helpers.mjs';

test('37,000 actions with no uploader stay under the 4 MiB quota, then all reach the intake once', async (t) => {
  const { p } = openPipeline(t, { flushTimeoutMs: 60_000 });
  p.startView('inbox', 'Inbox');
  burst(p, 37_000);
  assert.equal(p.flush(), true);
  const s = p.stats();
  assert.ok(s.bytesOnDisk <= 4 * 1024 * 1024, `within the default quota: ${s.bytesOnDisk} bytes on disk`);
  const lost = Object.entries(s)
    .filter(([k]) => /^(evictedEvents|dropped|lostEvents)/.test(k))
    .reduce((n, [, v]) => n + v, 0);
  assert.equal(lost, 0, `nothing evicted or dropped: ${JSON.stringify(s)}`);
  assert.ok(s.eventsOnDisk >= 37_000, `every action is on disk (${s.eventsOnDisk} documents)`);

  const intake = await startIntake();
  t.after(() => intake.close());
  const uploader = new Uploader(p, intake.url);
  t.after(() => uploader.stop());
  const start = performance.now();
  uploader.start();
  await uploader.drained(start, { timeoutMs: 60_000 });
  assert.equal(intake.counts.malformed, 0, 'every line the intake received parses');
  assert.equal(intake.counts.actions, 37_000, 'every action reached the intake');
  assert.equal(intake.counts.duplicateActions, 0, 'none twice');
  assert.equal(p.stats().batchesOnDisk, 0, 'every batch was delivered and deleted');
});
