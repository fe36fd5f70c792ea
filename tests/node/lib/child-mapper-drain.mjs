// A child process for mapper.test.mjs, run with a small --max-old-space-size: a large queue is
// drained through the event mapper in one flush(). Each mapped document is garbage once the mapper
// returned; a drain that kept every one alive until it ends runs the JS heap out of memory.
// Prints one JSON line. Usage: node --max-old-space-size=<MB> child-mapper-drain.mjs <storageDir> <count>

import { loadNative } from './native.mjs';

const [dir, count] = process.argv.slice(2);
const N = Number(count);
const { RumPipeline } = loadNative();
const p = new RumPipeline({
  storageDir: dir,
  applicationId: 'mapper-drain',
  turnBudgetMs: 1,
  queueCapacity: N,
  diskQuotaBytes: 2 ** 32,
  batchMaxBytes: 2 ** 24,
  flushTimeoutMs: 60_000,
});
let mapped = 0;
p.setEventMapper((doc) => {
  mapped++;
  return doc;
});
p.startView('v', 'Drain');
for (let seq = 0; seq < N; seq++) p.addAction('tap', `a${seq}`, { seq });
const queued = p.stats().queueLength;
const flushed = p.flush();
const s = p.stats();
process.stdout.write(`${JSON.stringify({ queued, flushed, mapped, mapperErrors: s.mapperErrors, heapUsedMB: Math.round(process.memoryUsage().heapUsed / 1e6) })}\n`);
p.stop();
