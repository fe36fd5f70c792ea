// Device and app context, connectivity, source, session sampling and HTTP methods through the
// real binding: what each option and setter writes, and the errors bad values get.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { assertArgError, burst, CHILD_ENV, libraryPath, openPipeline, readBatchFiles, runNode, tmpDir } from './lib/helpers.mjs';

const CONTEXT = {
  buildVersion: '2048',
  device: { type: 'tablet', brand: 'HUAWEI', model: 'GOT-W09', name: 'MatePad Pro' },
  os: { name: 'HarmonyOS', version: '5.0.0', versionMajor: '5' },
  viewport: { width: 2560, height: 1600 },
  locale: 'en-GB',
  connectivity: { status: 'connected', interfaces: ['ethernet'] },
};

test('the context options land in every document; setConnectivity changes later ones only', (t) => {
  const { p, dir } = openPipeline(t, { ...CONTEXT, source: 'android', sessionSampleRate: 100 });
  p.startView('v', 'V');
  p.addAction('tap', 'before');
  p.setConnectivity({ status: 'not_connected' });
  p.addAction('tap', 'after');
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  for (const d of docs) {
    assert.equal(d.source, 'android');
    assert.equal(d.build_version, '2048');
    assert.deepEqual(d.device, { type: 'tablet', name: 'MatePad Pro', model: 'GOT-W09', brand: 'HUAWEI' });
    assert.deepEqual(d.os, { name: 'HarmonyOS', version: '5.0.0', version_major: '5' });
    assert.deepEqual(d.display, { viewport: { width: 2560, height: 1600 } });
    assert.equal(d.application.current_locale, 'en-GB');
    assert.deepEqual(d._dd.configuration, { session_sample_rate: 100 });
  }
  const actions = docs.filter((d) => d.type === 'action');
  assert.deepEqual(actions.map((a) => [a.action.target.name, a.connectivity]), [
    ['before', { status: 'connected', interfaces: ['ethernet'] }],
    ['after', { status: 'not_connected' }],
  ]);
  const lastView = docs.filter((d) => d.type === 'view').at(-1);
  assert.deepEqual(lastView.connectivity, { status: 'not_connected' }, 'the view carries the latest connectivity');
});

test('bad context values are refused with the option named, and nothing is opened', (t) => {
  const { dir, RumPipeline } = openPipeline(t);
  const base = { storageDir: `${dir}-bad`, applicationId: 'a' };
  const cases = [
    [{ device: { type: 'phone' } }, RangeError, 'device.type'],
    [{ device: 'HUAWEI' }, TypeError, 'device'],
    [{ os: { name: 'HarmonyOS', version: '5' } }, TypeError, 'os.versionMajor'],
    [{ viewport: { width: -1, height: 10 } }, RangeError, 'viewport'],
    [{ viewport: { width: NaN, height: 10 } }, RangeError, 'viewport.width'],
    [{ connectivity: { status: 'online' } }, RangeError, 'connectivity.status'],
    [{ connectivity: { status: 'connected', interfaces: ['5g'] } }, RangeError, 'connectivity.interfaces'],
    [{ sessionSampleRate: 101 }, RangeError, 'sessionSampleRate'],
    [{ sessionSampleRate: -1 }, RangeError, 'sessionSampleRate'],
    [{ source: '' }, RangeError, 'source'],
  ];
  for (const [extra, Ctor, arg] of cases) {
    assertArgError(() => new RumPipeline({ ...base, ...extra }), Ctor, 'RumPipeline', `options.${arg}`);
  }
});

test('setConnectivity and startResource refuse values outside the format, changing nothing', (t) => {
  const { p, dir } = openPipeline(t);
  p.startView('v', 'V');
  assertArgError(() => p.setConnectivity({ status: 'up' }), RangeError, 'setConnectivity', 'connectivity.status');
  assertArgError(() => p.setConnectivity('wifi'), TypeError, 'setConnectivity', 'connectivity');
  assertArgError(() => p.startResource('r', 'FETCH', 'https://x/r'), RangeError, 'startResource', 'method');
  p.startResource('r', 'patch', 'https://x/r');
  p.stopResource('r', 200, 'fetch');
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  assert.equal(docs.filter((d) => d.type === 'resource').length, 1, 'only the valid resource');
  assert.equal(docs.find((d) => d.type === 'resource').resource.method, 'PATCH', 'methods are written in upper case');
  assert.ok(docs.every((d) => d.connectivity === undefined), 'no connectivity was set');
});

test('sessionSampleRate 0: nothing is written, and event calls return before reading their arguments', (t) => {
  const { p, dir } = openPipeline(t, { sessionSampleRate: 0, turnBudgetMs: 1 });
  p.startView('v', 'V');
  burst(p, 2_000);
  // Not even read: a getter on the attributes never runs.
  let read = 0;
  p.addAction('tap', 'x', { get probe() { read++; return 1; } });
  p.addError('e', 'custom');
  p.startResource('r', 'GET', 'https://x/r');
  p.stopResource('r', 200, 'fetch');
  assert.equal(p.flush(), true);
  const s = p.stats();
  assert.equal(read, 0, 'the arguments of an untracked call are not read');
  assert.equal(s.sessionsUntracked, 1);
  assert.ok(s.callsUntracked >= 2_004, `calls skipped on the caller's turn (${s.callsUntracked})`);
  assert.equal(s.callsQueued, 0, 'nothing was queued');
  assert.equal(readBatchFiles(dir).docs.length, 0, 'an untracked session writes nothing');
  assert.equal(typeof p.sessionId(), 'string', 'the session exists; it is just not tracked');
});

test('sessionSampleRate 100 (the default) tracks every session; the rate is in every document', (t) => {
  const { p, dir } = openPipeline(t, { sessionSampleRate: 37.5 });
  // Whichever way this session was drawn, its documents are all there or none is.
  p.startView('v', 'V');
  p.addAction('tap', 'a');
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  const s = p.stats();
  if (s.sessionsUntracked === 1) assert.equal(docs.length, 0);
  else {
    assert.ok(docs.length >= 2);
    assert.ok(docs.every((d) => d._dd.configuration.session_sample_rate === 37.5));
  }
  const full = openPipeline(t);
  full.p.addAction('tap', 'a');
  full.p.flush();
  assert.equal(full.p.stats().sessionsUntracked, 0);
});

test('an applicationId that is not a UUID is accepted and logged once; a UUID is not logged', async (t) => {
  const dir = tmpDir(t);
  // A child with logging on: it opens a pipeline with each id, twice, and records an action.
  // The library is loaded directly: the shared loader turns logging off.
  const script = `
    const m = { exports: {} };
    process.dlopen(m, ${JSON.stringify(libraryPath())});
    const { RumPipeline } = m.exports;
    for (const [i, id] of ['app-not-a-uuid', '4b2f7c1e-9d3a-4e8b-a1c2-3d4e5f6a7b8c'].entries()) {
      const p = new RumPipeline({ storageDir: ${JSON.stringify(dir)} + '/' + i, applicationId: id });
      p.addAction('tap', 'a');
      const q = new RumPipeline({ storageDir: ${JSON.stringify(dir)} + '/' + i, applicationId: id });
      q.addAction('tap', 'b');
      p.stop();
      q.stop();
    }`;
  const env = { ...CHILD_ENV() };
  delete env.RUM_NATIVE_QUIET;
  const r = await runNode(['--input-type=module', '-e', script], { env });
  assert.equal(r.code, 0, r.stderr);
  const warnings = r.stderr.split('\n').filter((l) => /is not a UUID/.test(l));
  assert.equal(warnings.length, 1, `one warning, for the one pipeline opened with a non-UUID id: ${r.stderr}`);
  assert.match(warnings[0], /app-not-a-uuid/);
});
