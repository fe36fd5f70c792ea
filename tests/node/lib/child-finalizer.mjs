// A child process for lifetime.test.mjs, run with --expose-gc: a pipeline is collected with events
// queued after its turn ended, and must not call into JS from its finalizer (a GC finalizer may not
// run JS on ArkTS). The pipeline captures the global setTimeout when it is built: a stand-in that
// only records its callbacks lets the child fire the turn end by hand and see every later call.
// Prints one JSON line. Usage: node --expose-gc child-finalizer.mjs <storageDir>

import fs from 'node:fs';
import path from 'node:path';

import { batchFileText } from '../../shared/util.mjs';
import { loadNative } from './native.mjs';

const [dir] = process.argv.slice(2);
const { RumPipeline } = loadNative();
const realSetTimeout = globalThis.setTimeout;
const scheduled = [];
globalThis.setTimeout = (fn) => {
  scheduled.push(fn);
  return 0;
};
let p = new RumPipeline({ storageDir: dir, applicationId: 'finalizer', turnBudgetMs: 1 });
globalThis.setTimeout = realSetTimeout;

p.startView('v', 'Finalized');
let called = 0;
while (p.stats().queueLength === 0) p.addAction('tap', `a${called}`, { seq: called++ });
for (let i = 0; i < 100; i++) p.addAction('tap', `a${called}`, { seq: called++ });
const queued = p.stats().queueLength;
// The turn ends (its timer fires); the slice never runs: the queue is left for the finalizer.
const turnEnd = scheduled.find((f) => f.name === 'rumTurnEnd');
if (!turnEnd) throw new Error(`no turn-end timer was scheduled (${scheduled.map((f) => f.name)})`);
turnEnd();
const before = scheduled.length;
p = null;

const tick = () => new Promise((r) => setImmediate(r));
for (let i = 0; i < 20; i++) {
  globalThis.gc();
  await tick();
}
const written = [];
for (const name of fs.readdirSync(path.join(dir, 'rum'))) {
  const file = path.join(dir, 'rum', name);
  if (!fs.statSync(file).isFile()) continue;
  for (const line of batchFileText(file).split('\n')) {
    if (line.includes('"type":"action"')) written.push(JSON.parse(line).context.seq);
  }
}
const after = scheduled.slice(before).map((f) => f.name);
process.stdout.write(`${JSON.stringify({ called, queued, written: written.length, setTimeoutAfterDrop: after })}\n`);
