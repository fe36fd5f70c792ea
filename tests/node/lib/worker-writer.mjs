// A worker_threads body: attaches to the pipeline of `options.storageDir`, writes `count` actions
// tagged with its `tag` in chunks (yielding between them, so threads interleave), flushes, and
// reports; or, with `spinAfterBurst`, bursts at once and spins until terminated. With `capture`,
// the calls go through the HAR's capture buffer (CallBuffer.ets). Used by threads.test.mjs and
// capture.test.mjs.

import { parentPort, workerData } from 'node:worker_threads';

import { loadNative } from './native.mjs';

const { options, tag, count, chunk, spinAfterBurst, capture } = workerData;
const { RumPipeline } = loadNative();
const pipeline = new RumPipeline(options);
let p = pipeline;
if (capture) {
  const { bufferFor, loadCallBuffer } = await import('../../../benches/capture-code.mjs');
  const calls = bufferFor(await loadCallBuffer(), pipeline);
  p = {
    addAction: (type, name, attributes) => calls.addAction(type, name, attributes),
    flush: () => (calls.handOverAll(), pipeline.flush()),
    stats: () => pipeline.stats(),
    sessionId: () => (calls.handOverAll(), pipeline.sessionId()),
  };
}
const pad = 'w'.repeat(200);
let seq = 0;

function round() {
  for (let i = 0; i < chunk && seq < count; i++, seq++) {
    p.addAction('custom', `${tag}-${seq}`, { thread: tag, seq, pad });
  }
  if (seq < count) {
    setImmediate(round);
    return;
  }
  const flushed = p.flush();
  parentPort.postMessage({ kind: 'done', tag, flushed, stats: p.stats(), sessionId: p.sessionId() });
}

parentPort.postMessage({ kind: 'ready', tag });
if (spinAfterBurst) {
  // One synchronous burst, then hold the thread with the queue full until the parent terminates us.
  for (; seq < count; seq++) p.addAction('custom', `${tag}-${seq}`, { thread: tag, seq, pad });
  parentPort.postMessage({ kind: 'done', tag, queueLength: p.stats().queueLength });
  for (;;) {
    // Spinning on purpose: terminate() must stop a thread that never yields.
  }
} else {
  round();
}
