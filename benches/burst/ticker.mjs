// Main-thread observers. Both run on the thread they measure, so they see exactly what a frame
// callback would: a synchronous loop, a 4 ms slice, a blocking fs call or a GC pause all show up
// as a late tick.

import { constants, PerformanceObserver } from 'node:perf_hooks';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * V8's full (mark-compact) collections while it runs: how many and the longest. The engine's memory
 * reducer starts one when the JS heap allocates little for a while, which is what a variant that
 * keeps its work off the JS heap (native, the floor) gets at a trickle: that pause, not the
 * module's own work, can be the busiest frame there. Entries arrive asynchronously, so `stop`
 * waits one turn for the last of them.
 */
export function startMajorGcObserver() {
  let count = 0;
  let longest = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      count += 1;
      if (e.duration > longest) longest = e.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      await sleep(0);
      observer.disconnect();
      return { count, longestMs: longest };
    },
  };
}

/**
 * A 1 ms ticker (a setTimeout(0) chain; Node clamps it to 1 ms). A gap is the time between two
 * consecutive ticks; the longest gap is the longest main-thread stall. With `timeline`, every gap
 * is kept as [end time, length] relative to `origin` (for stalls.svg).
 */
export function startGapTicker({ timeline = false } = {}) {
  let last = performance.now();
  let longest = 0;
  let ticks = 0;
  let origin = last;
  let running = true;
  let timer = null;
  const points = timeline ? [] : null;
  const waiters = [];
  const tick = () => {
    const now = performance.now();
    const gap = now - last;
    if (gap > longest) longest = gap;
    if (points) points.push([now, gap]);
    last = now;
    ticks += 1;
    while (waiters.length && waiters[0].at <= ticks) waiters.shift().resolve();
    if (running) timer = setTimeout(tick, 0);
  };
  timer = setTimeout(tick, 0);
  return {
    /** Forgets what was seen so far (warm-up) and makes `at` the zero of the timeline. */
    reset(at = performance.now()) {
      longest = 0;
      origin = at;
      if (points) points.length = 0;
    },
    /** Resolves after `n` more ticks, so a stall that just ended has been seen. */
    ticks(n = 1) {
      return new Promise((resolve) => waiters.push({ at: ticks + n, resolve }));
    },
    stop() {
      running = false;
      clearTimeout(timer);
      const now = performance.now();
      longest = Math.max(longest, now - last); // a stall still in progress counts too
      const gaps = points ? points.map(([t, g]) => [round3(t - origin), round3(g)]) : null;
      return { longestMs: longest, ticks, timeline: gaps };
    },
  };
}

/**
 * A 60 Hz frame ticker: a drift-corrected setTimeout chain due every 1000/60 ms. For each frame it
 * records the main thread's busy time since the previous tick (performance.eventLoopUtilization:
 * time not spent waiting in the event loop's poll). A frame is "over 16 ms" when the thread was busy
 * for more than 16 ms of it, the host analogue of a frame that misses its vsync on the phone.
 */
export function startFrameTicker({ budgetMs = 16 } = {}) {
  const period = 1000 / 60;
  const t0 = performance.now();
  let k = 0;
  let lastElu = performance.eventLoopUtilization();
  let lastT = t0;
  let over = 0;
  let frames = 0;
  let busiest = 0;
  let longestGap = 0;
  let running = true;
  let timer = null;
  const schedule = () => {
    k += 1;
    const now = performance.now();
    // A late tick skips the frames it missed instead of firing them back to back.
    k = Math.max(k, Math.floor((now - t0) / period) + 1);
    timer = setTimeout(tick, Math.max(0, t0 + k * period - now));
  };
  const tick = () => {
    const now = performance.now();
    const elu = performance.eventLoopUtilization();
    const busy = elu.active - lastElu.active;
    const gap = now - lastT;
    frames += 1;
    if (busy > budgetMs) over += 1;
    if (busy > busiest) busiest = busy;
    if (gap > longestGap) longestGap = gap;
    lastElu = elu;
    lastT = now;
    if (running) schedule();
  };
  schedule();
  return {
    stop() {
      running = false;
      clearTimeout(timer);
      tick(); // the last, partial frame counts too
      return { frames, framesOver: over, busiestMs: busiest, longestGapMs: longestGap };
    },
  };
}

export { sleep };

function round3(x) {
  return Math.round(x * 1000) / 1000;
}
