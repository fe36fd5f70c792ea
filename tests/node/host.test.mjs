// What the binding takes from its host: the JS thread's own global setTimeout for slices and the
// turn end (docs/design.md "Dispatch rules"), one pipeline per canonical storageDir however
// the path is spelled, and the phone build script's answer on a machine without the SDK.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import {
  actionSeqs,
  burst,
  burstUntilQueued,
  loadNative,
  ofType,
  pipelineOptions,
  range,
  readBatchFiles,
  REPO_ROOT,
  tmpDir,
  waitDrained,
} from './lib/helpers.mjs';

test("slices and the turn end are scheduled with the global object's setTimeout, taken at construction", async (t) => {
  const { RumPipeline } = loadNative();
  const original = globalThis.setTimeout;
  const scheduled = [];
  globalThis.setTimeout = function countingSetTimeout(fn, ms, ...rest) {
    scheduled.push({ name: fn?.name, ms });
    return original(fn, ms, ...rest);
  };
  // The pipeline stops before its directory goes (after-hooks run in the order they were added).
  const dir = tmpDir(null);
  let p;
  t.after(() => {
    p?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  try {
    p = new RumPipeline(pipelineOptions(dir, { turnBudgetMs: 1 }));
  } finally {
    globalThis.setTimeout = original;
  }
  p.startView('v', 'Timers');
  burstUntilQueued(p, { min: 50 });
  await waitDrained(p);
  const names = new Set(scheduled.map((s) => s.name));
  assert.ok(names.has('rumSlice'), `a slice went through the global setTimeout (saw ${[...names]})`);
  assert.ok(names.has('rumTurnEnd'), `the turn end went through the global setTimeout (saw ${[...names]})`);
  const turns = scheduled.filter((s) => s.name === 'rumSlice' || s.name === 'rumTurnEnd');
  assert.ok(turns.every((s) => s.ms === 0), 'slices and turn ends with a delay of 0');
  // A view held back by viewUpdateIntervalMs (default 1000) waits for the rest of its interval;
  // one a light turn (no awaited end) left owed and due goes out on the next turn (0).
  const due = scheduled.filter((s) => s.name === 'rumViewsDue');
  assert.ok(due.every((s) => s.ms >= 0 && s.ms <= 1000), `views due within the interval (saw ${due.map((s) => s.ms)})`);
});

test('a steady stream of lone actions reaches the batch file without a flush (the writer lingers, then writes)', async (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(null);
  // A long batch window: what is on disk is the active batch, written by the linger's end.
  const p = new RumPipeline(pipelineOptions(dir, { batchWindowMs: 600_000 }));
  t.after(() => {
    p.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  p.startView('v', 'Stream');
  // One action per 10 ms tick, each a light turn: after the second, the writer lingers.
  for (let i = 0; i < 30; i++) {
    p.addAction('tap', `a${i}`);
    await sleep(10);
  }
  const deadline = Date.now() + 10_000;
  while (ofType(readBatchFiles(dir).docs, 'action').length < 30) {
    assert.ok(Date.now() < deadline, `30 actions on disk without a flush (${ofType(readBatchFiles(dir).docs, 'action').length})`);
    await sleep(20);
  }
  assert.deepEqual(
    ofType(readBatchFiles(dir).docs, 'action').map((d) => d.action.target.name),
    range(0, 30).map((i) => `a${i}`),
    'in call order',
  );
});

test('one pipeline per directory however its path is spelled (a symlink, a .. segment)', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  const link = `${dir}-link`;
  fs.symlinkSync(dir, link);
  t.after(() => fs.rmSync(link, { force: true }));
  const sub = path.join(dir, 'sub');
  fs.mkdirSync(sub);
  const spellings = [dir, link, path.join(sub, '..')];
  const pipelines = spellings.map((storageDir) => new RumPipeline(pipelineOptions(storageDir)));
  t.after(() => pipelines.forEach((p) => p.stop()));

  const [first] = pipelines;
  first.startView('v', 'Shared');
  let next = 0;
  for (const p of pipelines) next = burst(p, 10, { start: next });
  const sessions = new Set(pipelines.map((p) => p.sessionId()));
  assert.equal(sessions.size, 1, 'one scope tree: the same session for every spelling');
  assert.equal(first.flush(), true);
  assert.deepEqual(actionSeqs(readBatchFiles(dir).docs), range(0, next), 'one writer: every action once, in order');
  assert.deepEqual(fs.readdirSync(dir).sort(), ['rum', 'sub'], 'nothing written under another spelling');
});

test('a second pipeline on a directory must bring the same options, or it throws and changes nothing', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  const first = new RumPipeline(pipelineOptions(dir, { diskQuotaBytes: 8 * 1024 * 1024 }));
  t.after(() => first.stop());
  for (const [option, value] of [['diskQuotaBytes', 16 * 1024 * 1024], ['sessionSampleRate', 50], ['batchEncoding', 'identity']]) {
    assert.throws(
      () => new RumPipeline(pipelineOptions(dir, { diskQuotaBytes: 8 * 1024 * 1024, [option]: value })),
      (e) => e instanceof Error && e.message.includes(`already open with another ${option}`),
      option,
    );
  }
  const same = new RumPipeline(pipelineOptions(dir, { diskQuotaBytes: 8 * 1024 * 1024 }));
  t.after(() => same.stop());
  same.startView('v', 'V');
  same.addAction('tap', 'a');
  assert.equal(first.flush(), true);
  assert.equal(ofType(readBatchFiles(dir).docs, 'action').length, 1, 'the same options share the writer');
});

test('build-ohos.sh without the HarmonyOS SDK stops with exit code 2 and says what is missing', () => {
  const env = { ...process.env };
  delete env.OHOS_NDK_HOME;
  const r = spawnSync('bash', [path.join(REPO_ROOT, 'scripts', 'build-ohos.sh')], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 2, `exit status (stderr: ${r.stderr})`);
  assert.match(r.stderr, /OHOS_NDK_HOME is not set/);
  assert.match(r.stderr, /export OHOS_NDK_HOME=/, 'and how to set it');

  env.OHOS_NDK_HOME = tmpDir(null);
  const r2 = spawnSync('bash', [path.join(REPO_ROOT, 'scripts', 'build-ohos.sh')], { env, encoding: 'utf8', timeout: 60_000 });
  fs.rmSync(env.OHOS_NDK_HOME, { recursive: true, force: true });
  assert.equal(r2.status, 2, `an SDK folder without native/: exit status (stderr: ${r2.stderr})`);
  assert.match(r2.stderr, /native\/llvm\/bin\/clang/);
});
