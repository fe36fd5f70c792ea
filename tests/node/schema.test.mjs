// What reaches the intake: every line the pipeline writes, and every body nextBatch() hands out,
// validates against the RUM event format's schema for its `type` (Ajv 8 + ajv-formats, as the
// format validates itself). The sessions below use every kind of document and every option.
//
// With the default `source` ("harmony", not in the format's enum) the only error allowed is that
// one; with an enum `source` ("android") no error at all is allowed.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { declaredUnion } from '../shared/dts.mjs';
import { SCHEMAS_MISSING_NOTE, schemaValidator } from '../shared/schema.mjs';
import { burst, drainBatches, openPipeline, readBatchFiles, waitDrained } from './lib/helpers.mjs';

const APP_UUID = '4b2f7c1e-9d3a-4e8b-a1c2-3d4e5f6a7b8c';

/** Every option a host can set, device and app context included. */
const FULL_OPTIONS = {
  applicationId: APP_UUID,
  env: 'staging',
  buildVersion: '1024',
  device: { type: 'mobile', brand: 'HUAWEI', model: 'ALN-AL00', name: 'HUAWEI Mate 60 Pro', architecture: 'arm64-v8a' },
  os: { name: 'HarmonyOS', version: '5.0.1', versionMajor: '5' },
  viewport: { width: 1260, height: 2720 },
  locale: 'zh-Hans-CN',
  connectivity: { status: 'connected', interfaces: ['wifi'] },
  sessionSampleRate: 100,
  turnBudgetMs: 1,
};

/** A session that writes every kind of document, through every path. */
async function everyKindOfDocument(p) {
  // Before any view: a launch view opens for it.
  p.addAction('tap', 'before any view');
  p.addAttribute('tenant', 'acme');
  p.addAttribute('flags', { beta: true, cohort: [1, 2, 3] });
  p.setUser({ id: 'u-1', name: 'Ada', email: 'ada@example.com', extra: { plan: 'gold', seats: 3 } });
  p.startView('home', 'Home', { section: 'feed' });
  for (const type of declaredUnion('ActionType')) p.addAction(type, `act-${type}`, { n: 1 });
  p.addActions([
    { type: 'tap', name: 'batched 1' },
    { type: 'swipe', name: 'batched 2', attributes: { dir: 'left' } },
  ]);
  for (const source of declaredUnion('ErrorSource')) {
    p.addError(`error from ${source}`, source);
    p.addError(`error from ${source} with stack`, source, `Error: ${source}\n    at f (a.js:1:1)`, { code: 7 });
  }
  // `details`: every category, both handlings, a crash of an earlier process with its own date.
  for (const category of declaredUnion('ErrorCategory')) {
    p.addError(`a ${category}`, 'source', undefined, undefined, { type: 'Kind', category, handling: 'unhandled' });
  }
  p.addError('SIGSEGV at 0x0', 'source', '#00 pc 000a1b2c /system/lib64/libc.so', { signo: 11 },
    { type: 'SIGSEGV', isCrash: true, handling: 'unhandled', date: Date.now() - 60_000 });
  p.startResource('r1', 'get', 'https://api.example.com/feed');
  p.stopResource('r1', 200, 'fetch', 5120, { cached: false });
  p.startResource('r2', 'POST', 'https://api.example.com/order');
  p.stopResource('r2', 503, 'xhr');
  p.startResource('r3', 'Delete', 'https://api.example.com/item/1');
  p.stopResource('r3', 0, 'native');
  p.addTiming('first_content');
  p.setConnectivity({ status: 'not_connected', interfaces: [] });
  p.setConnectivity({ status: 'maybe', interfaces: ['cellular', 'wifi'] });
  // A queued burst: slices and coalesced view versions.
  burst(p, 1_500, { type: 'scroll' });
  await waitDrained(p);
  // The event mapper's output is what gets written.
  p.setEventMapper((d) => {
    if (d.type === 'action') d.context = { ...d.context, mapped: true };
    return d;
  });
  p.addAction('click', 'mapped');
  p.setEventMapper(null);
  p.startView('detail', 'Detail');
  p.stopView('detail', { closed: 'back' });
  p.startView('settings', 'Settings');
  p.setUser(null);
  p.markCrash('fatal: out of memory', 'OOM\n    at g (b.js:2:2)', { type: 'RangeError', category: 'Exception' });
  assert.equal(p.flush(), true);
}

/** Consent pending, then granted: the pre-consent buffer's documents move into batches. */
function preConsentMigration(p) {
  p.startView('consent', 'Consent');
  burst(p, 50);
  p.setTrackingConsent('granted');
  p.addAction('tap', 'after consent');
  assert.equal(p.flush(), true);
}

/** Validates every document; returns the errors other than those `allowed` accepts. */
function invalid(docs, where, allowed = () => false) {
  const v = schemaValidator();
  const errors = [];
  for (const [i, d] of docs.entries()) {
    for (const e of v.validate(d)) {
      if (!allowed(e)) errors.push(`${where} #${i} (${d.type}): ${e}`);
    }
  }
  return errors;
}

const kinds = (docs) => new Set(docs.map((d) => d.type));
const isSourceEnumError = (e) => /^\/source must be equal to one of the allowed values/.test(e);

async function check(t, options, allowed) {
  const { p, dir } = openPipeline(t, options);
  await everyKindOfDocument(p);
  const written = readBatchFiles(dir).docs;
  assert.deepEqual([...kinds(written)].sort(), ['action', 'error', 'resource', 'view']);
  assert.ok(written.some((d) => d.type === 'view' && d._dd.document_version > 2), 'views with several versions');
  assert.ok(written.some((d) => d.type === 'error' && d.error.is_crash), 'a crash');
  assert.ok(written.some((d) => d.type === 'view' && d.view.name === 'ApplicationLaunch'), 'a launch view');
  assert.deepEqual(invalid(written, 'batch file line', allowed), []);
  const uploaded = drainBatches(p).flatMap((b) => b.docs);
  assert.ok(uploaded.length > 0);
  assert.deepEqual(invalid(uploaded, 'nextBatch() line', allowed), []);

  const pending = openPipeline(t, { ...options, trackingConsent: 'pending' });
  preConsentMigration(pending.p);
  const migrated = drainBatches(pending.p).flatMap((b) => b.docs);
  assert.ok(migrated.length >= 50, `pre-consent documents migrated (${migrated.length})`);
  assert.deepEqual(invalid(migrated, 'migrated line', allowed), []);
  return written;
}

test('with an enum source, every document of every kind and option validates, no exception', async (t) => {
  if (!schemaValidator()) return t.skip(SCHEMAS_MISSING_NOTE);
  const docs = await check(t, { ...FULL_OPTIONS, source: 'android' });
  assert.ok(docs.every((d) => d.source === 'android'));
});

test('with the default source, the only schema error is the source outside the enum', async (t) => {
  if (!schemaValidator()) return t.skip(SCHEMAS_MISSING_NOTE);
  const docs = await check(t, FULL_OPTIONS, isSourceEnumError);
  assert.ok(docs.every((d) => d.source === 'harmony'), 'the default source is harmony');
  // And that error is really there: the exception is needed, not just allowed.
  assert.ok(schemaValidator().validate(docs[0]).some(isSourceEnumError), 'harmony is outside the enum');
});

test('the minimal options validate too (no context given: nothing invented)', async (t) => {
  if (!schemaValidator()) return t.skip(SCHEMAS_MISSING_NOTE);
  const { p, dir } = openPipeline(t, { applicationId: APP_UUID, source: 'android' });
  p.startView('v', 'V');
  p.addAction('tap', 'a');
  p.addError('e', 'custom');
  p.startResource('r', 'GET', 'https://x.example/r');
  p.stopResource('r', 404, 'xhr');
  assert.equal(p.flush(), true);
  const docs = readBatchFiles(dir).docs;
  assert.deepEqual(invalid(docs, 'minimal'), []);
  for (const d of docs) {
    for (const absent of ['device', 'os', 'display', 'connectivity', 'build_version']) {
      assert.equal(d[absent], undefined, `${absent} is omitted when unknown`);
    }
  }
});
