// A child process for lifetime.test.mjs, run with --expose-gc: a pipeline is collected with a large
// backlog (its writer outlives the short flushTimeoutMs and finishes in the background), then the
// same directory is opened again at once. Prints one JSON line.
// Usage: node --expose-gc child-reopen.mjs <storageDir>

import { gunzipSync } from 'node:zlib';

import { loadNative } from './native.mjs';

/** The body as NDJSON text (gzip unless batchEncoding: 'identity'). */
const batchText = (b) => {
  const body = Buffer.from(b.body);
  return (b.encoding === 'gzip' ? gunzipSync(body) : body).toString('utf8');
};

const [dir] = process.argv.slice(2);
const { RumPipeline } = loadNative();
const options = {
  storageDir: dir,
  applicationId: 'reopen',
  flushTimeoutMs: 1,
  turnBudgetMs: 1,
  queueCapacity: 1e6,
  diskQuotaBytes: 2 ** 28,
  batchMaxBytes: 2 ** 20,
};
const COUNT = 30_000;
let p = new RumPipeline(options);
p.startView('v', 'Reopen');
const pad = 'r'.repeat(500);
for (let seq = 0; seq < COUNT; seq++) p.addAction('tap', `a${seq}`, { seq, pad });
p = null;
const tick = () => new Promise((r) => setImmediate(r));
for (let i = 0; i < 5; i++) {
  globalThis.gc();
  await tick();
}
const result = { count: COUNT };
try {
  const q = new RumPipeline({ ...options, flushTimeoutMs: 10_000 });
  result.reopened = true;
  result.attachedToOld = q.stats().callsQueued > 0;
  result.flushed = q.flush();
  let seqs = [];
  for (let b = q.nextBatch(); b !== null; b = q.nextBatch()) {
    for (const line of batchText(b).split('\n')) {
      if (line.includes('"type":"action"')) seqs.push(JSON.parse(line).context.seq);
    }
    q.completeBatch(b.id, true);
  }
  seqs = seqs.sort((a, b) => a - b);
  result.actions = seqs.length;
  result.inOrder = seqs.every((s, i) => s === i);
  q.stop();
} catch (e) {
  result.error = { name: e?.constructor?.name, message: String(e?.message) };
}
process.stdout.write(`${JSON.stringify(result)}\n`);
