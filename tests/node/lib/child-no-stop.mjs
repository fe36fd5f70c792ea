// A child process for lifetime.test.mjs: bursts `count` actions and returns without flush() or
// stop(). It must exit by itself once its queued work is done, with every document on disk.
// Usage: node child-no-stop.mjs '<pipeline options as JSON>' <count>

import { loadNative } from './native.mjs';

const [options, count] = process.argv.slice(2);
const { RumPipeline } = loadNative();
const p = new RumPipeline(JSON.parse(options));
p.startView('burst', 'Burst');
const pad = 'n'.repeat(350);
for (let seq = 0; seq < Number(count); seq++) p.addAction('custom', `a${seq}`, { seq, pad });
process.stdout.write(`queued ${p.stats().queueLength}\n`);
