// A child process for crash.test.mjs: bursts actions with a `seq` attribute forever, in rounds;
// after each flush() that returned true it prints `flushed <last seq>`, so the parent knows what
// must survive a SIGKILL, and `unflushed <last seq>` after a burst it did not flush. Usage: node child-crash-writer.mjs '<pipeline options as JSON>'

import { loadNative } from './native.mjs';

const { RumPipeline } = loadNative();
const p = new RumPipeline(JSON.parse(process.argv[2]));
p.startView('crash', 'Crash');
const pad = 'c'.repeat(350);
const ROUND = 400;
let seq = 0;

function round() {
  for (let i = 0; i < ROUND; i++, seq++) p.addAction('custom', `a${seq}`, { seq, pad });
  // A round that is still being queued when the parent kills us is "mid-burst".
  if (p.flush()) process.stdout.write(`flushed ${seq - 1}\n`);
  // More actions, not flushed: the writer appends them to an unsealed batch (and some stay
  // queued) when the parent kills us after this line.
  for (let i = 0; i < ROUND; i++, seq++) p.addAction('custom', `a${seq}`, { seq, pad });
  process.stdout.write(`unflushed ${seq - 1}\n`);
  setImmediate(round);
}

round();
