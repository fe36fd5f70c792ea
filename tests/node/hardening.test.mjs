// What an independent attempt to break the library found (issue 13), against the built library:
// links where the storage expects its own directory, directory modes whatever the umask,
// corrupt batch files, a method called on the wrong receiver.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadNative, pipelineOptions, tmpDir } from './lib/helpers.mjs';

const mode = (p) => fs.statSync(p).mode & 0o777;

test('a <storageDir>/rum that is a link is refused with a RangeError naming options.storageDir', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  const elsewhere = tmpDir(t);
  const stale = path.join(elsewhere, 'batch-1700000000000-0.ndjson');
  fs.writeFileSync(stale, '{"type":"action"}\n');
  fs.symlinkSync(elsewhere, path.join(dir, 'rum'));
  assert.throws(
    () => new RumPipeline(pipelineOptions(dir)),
    (e) => e instanceof RangeError && /options\.storageDir/.test(e.message) && /symbolic link/.test(e.message),
  );
  assert.deepEqual(fs.readdirSync(elsewhere), [path.basename(stale)], 'the link target is left alone');
});

test('a dangling link as storageDir says what is wrong', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  const link = path.join(dir, 'link');
  fs.symlinkSync(path.join(dir, 'nowhere'), link);
  assert.throws(
    () => new RumPipeline(pipelineOptions(link)),
    (e) => e instanceof RangeError && /options\.storageDir/.test(e.message) && /does not exist/.test(e.message),
  );
});

test('every directory the pipeline creates is 0700 whatever the umask', (t) => {
  const { RumPipeline } = loadNative();
  const dir = tmpDir(t);
  const storageDir = path.join(dir, 'a', 'b');
  const old = process.umask(0);
  let p;
  try {
    p = new RumPipeline(pipelineOptions(storageDir));
  } finally {
    process.umask(old);
  }
  t.after(() => p.stop());
  for (const d of [path.join(dir, 'a'), storageDir, path.join(storageDir, 'rum')]) {
    assert.equal(mode(d).toString(8), '700', d);
  }
});
