// Runs the host burst demo once (`scripts/burst --quick`: builds the release library unless
// RUM_NATIVE_LIB is set, one sample per variant) and checks what it wrote: the report's schema, the
// chart, the table, and that every action the native variant sent reached the loopback intake.
// It asserts no timing: timings are measured and reported, never judged by a test.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rum-burst-test-'));
const TIMEOUT_MS = 15 * 60_000; // includes `cargo build --release` on a cold target/

const METRICS = {
  'loop-1000': ['longest_stall_ms'],
  'loop-3700': ['longest_stall_ms'],
  'rate-300-12s': ['frames_over_16ms'],
  'rate-3000-12s': ['frames_over_16ms'],
  'cpu-3700': ['sdk_cpu_ms'],
  'intake-3700': ['actions_at_intake'],
  'loop-37000': ['longest_stall_ms', 'peak_rss_mb', 'actions_lost'],
  'loop-100000': ['longest_stall_ms', 'peak_rss_mb', 'actions_lost'],
};
const WITHOUT_FLOOR = new Set(['rate-300-12s', 'rate-3000-12s', 'intake-3700']);

let run;
let report;

before(async () => {
  run = await new Promise((resolve, reject) => {
    const child = spawn(path.join(root, 'scripts', 'burst'), ['--quick', '--out', out], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
  assert.equal(run.status, 0, `scripts/burst --quick exited with ${run.status}:\n${run.stderr.slice(-4_000)}`);
  report = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
}, { timeout: TIMEOUT_MS });

after(() => fs.rmSync(out, { recursive: true, force: true }));

function assertVariant(v, where, samples) {
  assert.equal(typeof v, 'object', `${where} is missing`);
  for (const k of ['median', 'p95', 'max']) {
    assert.ok(v[k] === null || Number.isFinite(v[k]), `${where}.${k} is ${v[k]}`);
  }
  assert.ok(Array.isArray(v.samples), `${where}.samples is not an array`);
  assert.equal(v.samples.length, samples, `${where} has ${v.samples.length} samples, expected ${samples}`);
  for (const s of v.samples) assert.ok(s === null || Number.isFinite(s), `${where}.samples holds ${s}`);
  assert.equal(v.load1.length, samples, `${where}.load1 should hold one load average per sample`);
}

test('report.json has the documented schema', () => {
  assert.equal(typeof report.machine, 'object');
  assert.equal(typeof report.machine.cpus, 'number');
  assert.equal(typeof report.machine.node, 'string');
  assert.equal(typeof report.machine.library?.path, 'string');
  assert.equal(report.samples, 1);
  assert.equal(report.mode, 'quick');
  assert.equal(report.settings.rate_shortened, true, 'a quick run must say that it shortened the rate scenarios');
  assert.ok(Array.isArray(report.failed_samples));
  assert.ok(Array.isArray(report.scenarios));
  for (const e of report.scenarios) {
    assert.ok(e.name in METRICS, `unexpected scenario ${e.name}`);
    assert.equal(typeof e.metric, 'string');
  }
  for (const [name, metrics] of Object.entries(METRICS)) {
    for (const metric of metrics) {
      const e = report.scenarios.find((x) => x.name === name && x.metric === metric);
      assert.ok(e, `no entry for ${name} / ${metric}`);
      assertVariant(e.baseline, `${name}/${metric}.baseline`, report.samples);
      assertVariant(e.native, `${name}/${metric}.native`, report.samples);
      if (WITHOUT_FLOOR.has(name) || metric === 'actions_lost') assert.equal(e.floor, null, `${name}/${metric}.floor should be null`);
      else assertVariant(e.floor, `${name}/${metric}.floor`, report.samples); // the floor must have run
    }
  }
  assert.ok(Array.isArray(report.targets) && report.targets.length >= 6);
  for (const t of report.targets) {
    assert.ok([true, false, null].includes(t.pass), `target ${t.id} pass is ${t.pass}`);
    assert.equal(typeof t.measured, 'string');
  }
});

test('every action the native variant sent reached the intake, once', () => {
  const sent = report.sample_details['intake-3700'].native.map((s) => s.details?.sent);
  const at = report.scenarios.find((x) => x.name === 'intake-3700' && x.metric === 'actions_at_intake');
  const dup = report.scenarios.find((x) => x.name === 'intake-3700' && x.metric === 'duplicate_actions');
  const why = JSON.stringify(report.failed_samples.filter((f) => f.scenario === 'intake-3700'), null, 2);
  assert.deepEqual(sent, [3_700], `native intake sample did not complete: ${why}`);
  assert.deepEqual(at.native.samples, [3_700], `actions at the intake: ${at.native.samples}; ${why}`);
  assert.deepEqual(dup.native.samples, [0]);
});

test('stdout has the table and the targets; stalls.svg and table.md are written', () => {
  assert.match(run.stdout, /\| Scenario .*\| Baseline \| Native \| Floor \| Ratio/);
  assert.match(run.stdout, /3,700 actions in one loop, longest main-thread stall/);
  assert.match(run.stdout, /Targets/);
  const svg = fs.readFileSync(path.join(out, 'stalls.svg'), 'utf8');
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /baseline/);
  assert.match(svg, /native/);
  assert.match(svg, /<\/svg>\s*$/);
  assert.match(fs.readFileSync(path.join(out, 'table.md'), 'utf8'), /^\| Scenario/);
});
