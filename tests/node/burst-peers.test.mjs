// The burst harness's plain-JS SDKs (the baseline and the JS queue, benches/burst/documents.mjs)
// are peers of the module only if their documents carry what the module's carry: the table's
// "bytes written" compares document counts, not a JS SDK that leaves out ddtags or the sampling
// rate. For the same calls, each peer's documents must have the module's field paths, kind for
// kind, and validate against the RUM event format as the module's do (the default source,
// "harmony", being the one value outside the format's enum). And the harness's GC observer, which
// explains a busiest frame at a trickle, counts V8's full collections and only those.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import v8 from 'node:v8';
import vm from 'node:vm';

import { startMajorGcObserver } from '../../benches/burst/ticker.mjs';
import { createTarget } from '../../benches/burst/variants.mjs';
import { SCHEMAS_MISSING_NOTE, schemaValidator } from '../shared/schema.mjs';
import { readBatchFiles } from './lib/helpers.mjs';

/** The same session through one variant; its documents by type, the latest view document last. */
function session(t, variant) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `rum-peers-${variant}-`));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const target = createTarget(variant, { storageDir: dir });
  target.startView('main', 'MessageListPage', { 'view.kind': 'list' });
  for (let i = 0; i < 3; i++) target.sdk.addAction('custom', `sync message ${i}`, { seq: i, note: 'x' });
  target.sdk.addError('boom', 'source', 'Error: boom\n    at f (a.js:1:1)', { seq: 9 });
  assert.equal(target.flush().ok, true, `${variant} flushed`);
  const docs = readBatchFiles(dir).docs;
  target.stop();
  const byType = new Map();
  for (const d of docs) byType.set(d.type, [...(byType.get(d.type) ?? []), d]);
  return { docs, byType };
}

/** Every field path of a document ("view.action.count"), the host's context left out. */
function paths(value, prefix = '', out = new Set()) {
  for (const [k, v] of Object.entries(value)) {
    const p = prefix ? `${prefix}.${k}` : k;
    out.add(p);
    if (p !== 'context' && v !== null && typeof v === 'object' && !Array.isArray(v)) paths(v, p, out);
  }
  return out;
}

const sorted = (set) => [...set].sort();

test("the JS peers write the module's fields, kind for kind", (t) => {
  const native = session(t, 'native');
  assert.deepEqual([...native.byType.keys()].sort(), ['action', 'error', 'view']);
  for (const variant of ['baseline', 'jsqueue']) {
    const peer = session(t, variant);
    for (const [type, docs] of native.byType) {
      const theirs = peer.byType.get(type);
      assert.ok(theirs?.length, `${variant} wrote no ${type} document`);
      assert.deepEqual(sorted(paths(theirs.at(-1))), sorted(paths(docs.at(-1))), `${variant} ${type} fields`);
    }
    // The same values where they do not depend on the run: the tags and the sampling rate.
    const [mine, theirs] = [native.byType.get('action')[0], peer.byType.get('action')[0]];
    for (const key of ['ddtags', 'source', 'service', 'version']) assert.equal(theirs[key], mine[key], `${variant} ${key}`);
    assert.deepEqual(theirs._dd.configuration, mine._dd.configuration, `${variant} _dd.configuration`);
    assert.equal(theirs.view.url, mine.view.url, `${variant} view.url`);
  }
});

test('the JS peers write documents the format accepts', (t) => {
  const v = schemaValidator();
  if (!v) return t.skip(SCHEMAS_MISSING_NOTE);
  const sourceEnum = (e) => /^\/source must be equal to one of the allowed values/.test(e);
  for (const variant of ['baseline', 'jsqueue']) {
    const { docs } = session(t, variant);
    assert.ok(docs.length >= 5, `${variant} wrote ${docs.length} documents`);
    const errors = docs.flatMap((d, i) => v.validate(d).filter((e) => !sourceEnum(e)).map((e) => `${variant} #${i} (${d.type}): ${e}`));
    assert.deepEqual(errors, []);
  }
});

test('the GC observer counts full collections, not scavenges', async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const full = startMajorGcObserver();
  gc(); // a full (mark-compact) collection
  const seenFull = await full.stop();
  assert.ok(seenFull.count >= 1, `full GCs seen: ${JSON.stringify(seenFull)}`);
  assert.ok(seenFull.longestMs > 0, 'the pause is measured');
  const minor = startMajorGcObserver();
  gc({ type: 'minor' }); // a scavenge
  assert.deepEqual(await minor.stop(), { count: 0, longestMs: 0 }, 'a scavenge is not a full GC');
});
