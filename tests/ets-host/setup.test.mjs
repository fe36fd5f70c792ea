// RumMonitor.create's set-up: a clear Error when librum_native.so did not load, and the store's
// default place (the application context's filesDir: one store per app, whatever ability or HAP
// module creates the monitor). The facade is the real one, built from ets/.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { fakeContext, loadFacade, loadFacadeWithNative, tempDir } from './lib/harness.mjs';
import { findSdk } from './lib/sdk.mjs';

const require = createRequire(import.meta.url);
const ts = require('ohos-typescript');

let h;

before(async () => {
  h = await loadFacade();
});

const OPTIONS = { applicationId: 'app-setup', keepAliveIntervalMs: 0, connectivityTracking: false };

/** A module standing in for `librum_native.so` whose default export is `source`. */
function nativeStub(source) {
  const file = join(tempDir('rum-ets-native-stub-'), 'native.mjs');
  writeFileSync(file, `export default ${source};\n`);
  return file;
}

function assertClearError(create, cause) {
  assert.throws(create, (e) => {
    assert.ok(e instanceof Error, 'an Error');
    assert.ok(!(e instanceof TypeError), `not a TypeError from undefined: ${e.message}`);
    assert.match(e.message, cause);
    assert.match(e.message, /librum_native\.so/);
    assert.match(e.message, /libs\/arm64-v8a\/librum_native\.so/, 'says where the HAR carries it');
    assert.match(e.message, /scripts\/build-ohos\.sh/, 'says which command builds it');
    return true;
  });
}

test('create names librum_native.so and what to do when the native module did not load', async () => {
  const facade = await loadFacadeWithNative(nativeStub('undefined'));
  assertClearError(() => facade.RumMonitor.create(fakeContext(tempDir()), OPTIONS), /did not load/);
  assertClearError(() => new facade.RumMonitor(fakeContext(tempDir()), OPTIONS), /did not load/);
});

test('create names librum_native.so when the module has no RumPipeline class', async () => {
  const facade = await loadFacadeWithNative(nativeStub("{ copyArgsFloor() {}, RumPipeline: 'not a class' }"));
  assertClearError(() => facade.RumMonitor.create(fakeContext(tempDir()), OPTIONS), /has no RumPipeline class/);
});

const batchFiles = (dir) => (existsSync(join(dir, 'rum')) ? readdirSync(join(dir, 'rum')) : [])
  .filter((f) => /\.ndjson(\.gz)?$/.test(f));

test('the store defaults to the application context’s filesDir, not the ability’s', (t) => {
  const abilityDir = tempDir();
  const appDir = tempDir();
  const m = h.facade.RumMonitor.create(fakeContext(abilityDir, appDir), OPTIONS);
  t.after(() => m.stop());
  m.addAction('tap', 'stored');
  assert.equal(m.flush(), true);
  assert.ok(batchFiles(appDir).length > 0, '<application filesDir>/rum holds the batch');
  assert.equal(existsSync(join(abilityDir, 'rum')), false, 'nothing under the ability’s filesDir');
});

test('two abilities of one app (two HAP modules) share one store', (t) => {
  const appDir = tempDir();
  const first = h.facade.RumMonitor.create(fakeContext(tempDir(), appDir), OPTIONS);
  const second = h.facade.RumMonitor.create(fakeContext(tempDir(), appDir), OPTIONS);
  t.after(() => {
    second.stop();
    first.stop();
  });
  first.addAction('tap', 'from-entry');
  second.addAction('tap', 'from-feature');
  assert.equal(second.flush(), true);
  // One writer: the second monitor's pipeline sees the first one's documents in its stats.
  assert.equal(first.stats().documentsWritten, second.stats().documentsWritten);
  assert.ok(batchFiles(appDir).length > 0);
});

test('options.storageDir still wins; a context without an application context keeps its own filesDir', (t) => {
  const storageDir = tempDir();
  const abilityDir = tempDir();
  const appDir = tempDir();
  const given = h.facade.RumMonitor.create(fakeContext(abilityDir, appDir), { ...OPTIONS, storageDir });
  t.after(() => given.stop());
  given.addAction('tap', 'given');
  given.flush();
  assert.ok(batchFiles(storageDir).length > 0);
  assert.equal(existsSync(join(appDir, 'rum')), false);
  assert.equal(existsSync(join(abilityDir, 'rum')), false);

  const lone = tempDir();
  const context = fakeContext(lone);
  context.getApplicationContext = () => {
    throw Object.assign(new Error('Parameter error'), { code: 401 });
  };
  const mark = h.hilog.records.length;
  const fallback = h.facade.RumMonitor.create(context, OPTIONS);
  t.after(() => fallback.stop());
  fallback.addAction('tap', 'fallback');
  fallback.flush();
  assert.ok(batchFiles(lone).length > 0);
  assert.ok(h.hilog.records.slice(mark).some((r) => /no application context/.test(r.message)),
    'the fallback is logged');
});

/** Instance member names of class `name` in an SDK declaration file. */
function classMembers(file, name) {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const members = new Set();
  const visit = (node) => {
    if (ts.isClassDeclaration(node) && node.name?.text === name) {
      for (const m of node.members) {
        if (m.name && ts.isIdentifier(m.name)) {
          members.add(m.name.text);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return members;
}

test('the stand-in contexts have only members the SDK declares on Context and ApplicationContext', (t) => {
  const sdk = findSdk();
  if (sdk === null) {
    t.skip('no HarmonyOS SDK found (lib/sdk.mjs)');
    return;
  }
  const dir = join(sdk.etsDir, 'api', 'application');
  const context = classMembers(join(dir, 'Context.d.ts'), 'Context');
  const application = new Set([...context, ...classMembers(join(dir, 'ApplicationContext.d.ts'), 'ApplicationContext')]);
  const stand = fakeContext(tempDir());
  for (const member of ['filesDir', 'getApplicationContext']) {
    assert.ok(member in stand, `stand-in ability context has ${member}`);
    assert.ok(context.has(member), `the SDK's Context declares ${member}`);
  }
  for (const member of Object.keys(stand.getApplicationContext())) {
    assert.ok(application.has(member), `the SDK's ApplicationContext declares ${member}`);
  }
});
