// A burst of automatic taps against the same burst of addAction calls (issue: "a burst of 3,700
// automatic taps costs the UI thread no more than 3,700 addAction calls do"), with the JS snapshot
// floor beside them, in one process, alternating samples.
//
// Runs the HAR as the host checks build it (tests/ets-host: the facade from ets/, the real
// librum_native.so, the platform stand-ins). A tap is what ArkUI runs: the didClick listener the
// monitor registered, called with a prebuilt ClickEvent and FrameNode (the platform's own cost of
// making them is the same with or without RUM). Per sample and variant, a fresh monitor and a
// burst of N in one loop:
//   addAction  monitor.addAction('tap', name) N times
//   auto       the registered didClick listener N times (automatic capture's path)
//   floor      a JS loop that only snapshots the same arguments (timestamp, name) into an array
// Measured: the stall (the loop) and the UI thread's busy time until the monitor's buffer is
// empty (the loop plus its handovers on later turns: event-loop active time, ELU). Prints median
// and p95 of each and the auto/addAction ratios. No figure is asserted.
//
//   node benches/auto-taps.mjs [--samples 7] [--taps 3700]
import { performance } from 'node:perf_hooks';
import { fakeContext, importStub, loadFacade, tempDir } from '../tests/ets-host/lib/harness.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SAMPLES = arg('samples', 7);
const TAPS = arg('taps', 3700);

process.setMaxListeners(0);
const h = await loadFacade();
const { ui } = await importStub('kit.ArkUI.mjs');
const { UIContext } = await importStub('kit.ArkUI.mjs');

function monitor() {
  ui.reset();
  const context = fakeContext(tempDir('rum-bench-taps-'));
  const m = h.facade.RumMonitor.create(context, {
    applicationId: '4b2f7c1e-9d3a-4e8b-a1c2-3d4e5f6a7b8c', service: 'bench', version: '1',
    keepAliveIntervalMs: 0, connectivityTracking: false, crashReporting: false,
    autoCapture: { longTasks: false, launch: false }
  });
  const uiContext = new UIContext();
  m.trackUIContext(uiContext);
  m.startView('feed', 'Feed');
  return { m, listener: [...uiContext.getUIObserver().listeners.didClick][0] };
}

const names = Array.from({ length: TAPS }, (_, i) => `item_${i}`);
const nodes = names.map((id) => ({ getId: () => id, getUniqueId: () => 1, getNodeType: () => 'ListItem' }));
const event = { target: { area: {}, id: undefined }, timestamp: 0, x: 1, y: 1 };

const until = async (done) => {
  while (!done()) await new Promise((r) => setTimeout(r, 0));
};

async function sample(variant) {
  const { m, listener } = monitor();
  m.flush();
  await new Promise((r) => setTimeout(r, 5));
  const kept = [];
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  if (variant === 'addAction') {
    for (let i = 0; i < TAPS; i++) m.addAction('tap', names[i]);
  } else if (variant === 'auto') {
    for (let i = 0; i < TAPS; i++) listener(event, nodes[i]);
  } else {
    for (let i = 0; i < TAPS; i++) kept.push([Date.now(), 'tap', names[i]]);
  }
  const stall = performance.now() - t0;
  await until(() => m.stats().queueLength === 0);
  const busy = performance.eventLoopUtilization(elu0).active;
  m.stop();
  return { stall, busy, kept: kept.length };
}

const VARIANTS = ['addAction', 'auto', 'floor'];
const results = Object.fromEntries(VARIANTS.map((v) => [v, []]));
await sample('auto'); // warm the build and the library once
for (let s = 0; s < SAMPLES; s++) {
  for (const v of s % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) results[v].push(await sample(v));
}

const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const fmt = (x) => x.toFixed(2).padStart(8);
console.log(`${TAPS} taps in one loop, ${SAMPLES} alternating samples, one process (ms: median / p95)`);
console.log('variant       stall med    p95    UI busy med    p95');
for (const v of VARIANTS) {
  const st = results[v].map((r) => r.stall);
  const bu = results[v].map((r) => r.busy);
  console.log(`${v.padEnd(10)} ${fmt(q(st, 0.5))} ${fmt(q(st, 0.95))}   ${fmt(q(bu, 0.5))} ${fmt(q(bu, 0.95))}`);
}
const med = (v, k) => q(results[v].map((r) => r[k]), 0.5);
console.log(`auto / addAction: stall ${(med('auto', 'stall') / med('addAction', 'stall')).toFixed(2)}x, ` +
  `UI busy ${(med('auto', 'busy') / med('addAction', 'busy')).toFixed(2)}x (target: at most 1x); ` +
  `floor stall ${med('floor', 'stall').toFixed(2)} ms`);
process.exit(0);
