// The scenarios of docs/benchmarks.md ("Scenarios"), shared by the orchestrator (main.mjs) and the sample
// process (sample.mjs). A scenario lists the variants it applies to and the metrics it reports;
// the first metric of each scenario is its row in the headline table unless `table` says otherwise.

/** Every variant, in the table's column order (variants.mjs says what each is). */
export const VARIANTS = ['baseline', 'jsqueue', 'native', 'floor', 'copy'];
const SDKS = ['baseline', 'jsqueue', 'native']; // the variants that write documents

export const VARIANT_LABELS = { baseline: 'Baseline', jsqueue: 'JS queue', native: 'Native', floor: 'Floor (JS snapshot)', copy: 'Per-property copy' };

/** The reference SDK's upload cadence (docs/benchmarks.md, "Scenarios"): every 2 s, 20 batches, backoff ×2 ≤ 60 s. */
export const UPLOADER = { periodMs: 2_000, maxBatchesPerCycle: 20, backoffFactor: 2, maxBackoffMs: 60_000 };

/** The reference SDK's storage limits, which the baseline reimplements (docs/design.md, "Storage rules"). */
export const BASELINE_LIMITS = { batchMaxBytes: 512 * 1024, diskQuotaBytes: 4 * 1024 * 1024 };

/**
 * Scale scenarios run under the default storage limits (4 MiB quota, 200 files): 100,000 actions are
 * about 100 MB of NDJSON, and what each variant keeps of them with no uploader running, then hands
 * to the uploader once it runs, is what they measure ("actions lost": evicted or dropped). Only the
 * flush gets longer to wait, since the writer may still be working through the burst.
 */
export const SCALE_STORAGE = { flushTimeoutMs: 60_000 };

/**
 * The 100,000-action loop measures what the pipeline itself loses, not the quota: its ~92 MB of
 * documents are far past what 4 MiB keeps as plain NDJSON (the JS peers' form), and near what it
 * keeps compressed, so every variant gets 1 GiB and "lost" means "not written".
 */
export const BIG_STORAGE = { diskQuotaBytes: 1024 * 1024 * 1024, maxBatchFiles: 100_000, flushTimeoutMs: 60_000 };

/** Length of JSON.stringify(attributes) for every action (the seed measured ~350-character attributes). */
export const ATTRIBUTE_CHARS = 350;

const stall = { key: 'longest_stall_ms', unit: 'ms', better: 'lower' };
/** Bytes appended to batch files (stats().bytesWritten of every SDK variant), in 10^6 bytes. */
const written = (what, table = false) => ({ key: 'written_mb', unit: 'MB', better: 'lower', table, floor: false, label: `${what}, bytes written` });
const cpu = (actions, storage) => ({
  name: `cpu-${actions}`, kind: 'cpu', actions, variants: VARIANTS, timeoutMs: actions > 10_000 ? 300_000 : 90_000, storage,
  metrics: [
    { key: 'sdk_cpu_ms', unit: 'ms', better: 'lower', label: `SDK CPU for the ${actions.toLocaleString('en-US')}-action burst, whole process (all threads)` },
    { key: 'ui_thread_cpu_ms', unit: 'ms', better: 'lower', label: `SDK CPU for the ${actions.toLocaleString('en-US')}-action burst, UI (main) thread` },
    written(`${actions.toLocaleString('en-US')}-action burst`, true),
    { key: 'flushed_ms', unit: 'ms', better: 'lower', table: false, label: `${actions.toLocaleString('en-US')}-action burst, loop start to flushed (wall)` },
  ],
});
const rate = (r) => {
  const what = `${r.toLocaleString('en-US')} actions/s${r === 3_000 ? ' (10×)' : ''} for 12 s`;
  return {
    name: `rate-${r}-12s`, kind: 'rate', rate: r, durationMs: 12_000, variants: VARIANTS, timeoutMs: 90_000,
    metrics: [
      { key: 'frames_over_16ms', unit: '', better: 'lower', label: `${what}, frames over 16 ms` },
      { key: 'longest_frame_busy_ms', unit: 'ms', better: 'lower', label: `${what}, busiest 60 Hz frame (main-thread stall)` },
      { key: 'ui_thread_cpu_ms', unit: 'ms', better: 'lower', label: `${what}, UI (main) thread CPU, whole run` },
      { key: 'process_cpu_ms', unit: 'ms', better: 'lower', label: `${what}, process CPU (all threads), whole run` },
      written(what, true),
      // Why a busiest frame is what it is (ticker.mjs, startMajorGcObserver): the engine's, not the SDK's.
      { key: 'major_gcs', unit: '', better: 'lower', table: false, label: `${what}, V8 full GCs during the run` },
      { key: 'longest_major_gc_ms', unit: 'ms', better: 'lower', table: false, label: `${what}, longest V8 full GC pause` },
    ],
  };
};

export const SCENARIOS = [
  {
    name: 'loop-1000', kind: 'loop', actions: 1_000, variants: VARIANTS, timeoutMs: 60_000,
    metrics: [{ ...stall, label: '1,000 actions in one loop, longest main-thread stall' },
      { key: 'drained_ms', unit: 'ms', better: 'lower', table: false, label: '1,000 actions in one loop, loop start to SDK idle' },
      written('1,000 actions in one loop')],
  },
  {
    name: 'loop-3700', kind: 'loop', actions: 3_700, variants: VARIANTS, timeoutMs: 60_000, timeline: true,
    metrics: [{ ...stall, label: '3,700 actions in one loop, longest main-thread stall' },
      { key: 'drained_ms', unit: 'ms', better: 'lower', table: false, label: '3,700 actions in one loop, loop start to SDK idle' },
      written('3,700 actions in one loop')],
  },
  {
    // The same burst in a process whose SDK code has run before (WARM_UP: what an app that has
    // been in use sends before a burst): the JIT has compiled the capture code by then, as ArkTS's
    // AOT compiler compiles an app's hot functions after its first runs. The cold loop above stays
    // the target's measure; this one says what the loop costs once the code is compiled.
    name: 'loop-3700-warm', kind: 'loop', actions: 3_700, variants: VARIANTS, timeoutMs: 90_000, warmUp: { rounds: 10, actions: 500 },
    metrics: [{ ...stall, label: '3,700 actions in one loop after 5,000 earlier ones (code compiled), longest main-thread stall' }],
  },
  rate(300),
  rate(3_000),
  cpu(1_000),
  cpu(3_700),
  cpu(37_000, SCALE_STORAGE),
  {
    name: 'intake-3700', kind: 'intake', actions: 3_700, variants: SDKS, timeoutMs: 120_000,
    metrics: [{ key: 'actions_at_intake', unit: '', better: 'higher', label: '3,700 actions within one second, actions that reached the intake' },
      { key: 'duplicate_actions', unit: '', better: 'lower', table: false, label: '3,700 actions within one second, duplicate actions at the intake' },
      { key: 'delivered_ms', unit: 'ms', better: 'lower', table: false, label: '3,700 actions within one second, burst start to last upload' },
      written('3,700 actions within one second')],
  },
  {
    name: 'loop-37000', kind: 'scale', actions: 37_000, variants: VARIANTS, timeoutMs: 300_000,
    metrics: [{ ...stall, label: '37,000 actions in one loop, longest main-thread stall' },
      { key: 'peak_rss_mb', unit: 'MB', better: 'lower', label: '37,000 actions in one loop, peak RSS' },
      { key: 'actions_lost', unit: '', better: 'lower', label: '37,000 actions in one loop, actions lost under the 4 MiB quota', floor: false },
      written('37,000 actions in one loop')],
  },
  {
    name: 'loop-100000', kind: 'scale', actions: 100_000, variants: VARIANTS, timeoutMs: 300_000, storage: BIG_STORAGE,
    metrics: [{ ...stall, label: '100,000 actions in one loop, longest main-thread stall' },
      { key: 'peak_rss_mb', unit: 'MB', better: 'lower', label: '100,000 actions in one loop, peak RSS' },
      { key: 'actions_lost', unit: '', better: 'lower', label: '100,000 actions in one loop, actions lost (1 GiB quota)', floor: false },
      written('100,000 actions in one loop')],
  },
];

export function scenarioByName(name) {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new Error(`unknown scenario '${name}' (known: ${SCENARIOS.map((x) => x.name).join(', ')})`);
  return s;
}

/**
 * The attributes every action carries: a plain object whose JSON is exactly ATTRIBUTE_CHARS long,
 * shaped like what a messaging app attaches to "one action per synced message". Built once, before
 * any timed loop, as the reference did.
 */
export function buildAttributes(chars = ATTRIBUTE_CHARS) {
  const attrs = { 'sync.source': 'inbox', 'sync.page': 17, 'sync.encrypted': true, 'message.kind': 'text', 'message.preview': '' };
  const filler = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ';
  const short = chars - JSON.stringify(attrs).length;
  if (short < 0) throw new Error(`attributes cannot be ${chars} characters`);
  attrs['message.preview'] = filler.repeat(Math.ceil(short / filler.length) + 1).slice(0, short);
  return attrs;
}
