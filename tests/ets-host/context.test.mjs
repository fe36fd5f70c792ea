// The device and app context RumMonitor reads from the HarmonyOS APIs (DeviceContext.ets) and the
// connectivity it keeps current, as documents written through the real pipeline carry them; the
// platform is the stand-ins of stubs/, driven by each test.
import assert from 'node:assert/strict';
import { before, beforeEach, test } from 'node:test';
import { drainBatches, fakeContext, importStub, loadFacade, startIntake, tempDir } from './lib/harness.mjs';

let h;
let net;
let display;
let i18n;
let bundleManager;
let basic;

before(async () => {
  h = await loadFacade();
  net = (await importStub('kit.NetworkKit.mjs')).connection;
  display = (await importStub('ohos.display.mjs')).default;
  i18n = (await importStub('kit.LocalizationKit.mjs')).i18n;
  bundleManager = (await importStub('kit.AbilityKit.mjs')).bundleManager;
  basic = await importStub('kit.BasicServicesKit.mjs');
});

beforeEach(() => {
  basic.resetDeviceInfo();
  display.host.reset();
  i18n.host.reset();
  bundleManager.host.reset();
  net.host.reset();
});

// The RUM event format's enums (device.type, connectivity.status, connectivity.interfaces[]).
const DEVICE_TYPES = ['mobile', 'desktop', 'tablet', 'tv', 'gaming_console', 'bot', 'other'];
const STATUSES = ['connected', 'not_connected', 'maybe'];
const INTERFACES = ['bluetooth', 'cellular', 'ethernet', 'wifi', 'wimax', 'mixed', 'other', 'unknown', 'none'];

const { BEARER_CELLULAR, BEARER_WIFI, BEARER_BLUETOOTH, BEARER_ETHERNET, BEARER_VPN } = {
  BEARER_CELLULAR: 0, BEARER_WIFI: 1, BEARER_BLUETOOTH: 2, BEARER_ETHERNET: 3, BEARER_VPN: 4
};

function businessError(code, message) {
  return Object.assign(new Error(message), { code });
}

function monitor(t, options = {}) {
  const m = h.facade.RumMonitor.create(fakeContext(tempDir()), {
    applicationId: 'app-context',
    service: 'ets-host',
    keepAliveIntervalMs: 0,
    ...options
  });
  t.after(() => m.stop());
  return m;
}

/** The documents of one action (and its view) written now. */
function actionDoc(m, name = 'tap') {
  m.addAction('tap', name);
  m.flush();
  const docs = drainBatches(m).filter((d) => d.type === 'action');
  assert.equal(docs.length, 1, `one action document for ${name}`);
  return docs[0];
}

/** Counts the pipeline's setConnectivity calls for one test. */
function spySetConnectivity(t) {
  const proto = h.native.RumPipeline.prototype;
  const original = proto.setConnectivity;
  const calls = [];
  proto.setConnectivity = function (c) {
    calls.push(structuredClone(c));
    return original.call(this, c);
  };
  t.after(() => {
    proto.setConnectivity = original;
  });
  return calls;
}

const logsSince = (mark, tag) => h.hilog.records.slice(mark).filter((r) => tag === undefined || r.tag === tag);

test('documents carry device, os, display, locale, build_version and connectivity from the HarmonyOS APIs', (t) => {
  const m = monitor(t);
  m.startView('home', 'Home');
  m.addAction('tap', 'buy');
  m.addError('boom', 'source');
  m.flush();
  const docs = drainBatches(m);
  assert.deepEqual([...new Set(docs.map((d) => d.type))].sort(), ['action', 'error', 'view']);
  for (const d of docs) {
    assert.deepEqual(d.device, {
      type: 'mobile', brand: 'HUAWEI', model: 'ALN-AL00', name: 'HUAWEI Mate 60', architecture: 'arm64-v8a'
    }, `${d.type}: device from deviceInfo (deviceType phone → mobile)`);
    assert.deepEqual(d.os, { name: 'HarmonyOS', version: '5.0.0', version_major: '5' }, `${d.type}: os`);
    assert.deepEqual(d.display, { viewport: { width: 1260, height: 2720 } }, `${d.type}: the default display, px`);
    assert.equal(d.application.current_locale, 'zh-Hans-CN', `${d.type}: the system locale`);
    assert.equal(d.build_version, '1000000', `${d.type}: the bundle's versionCode`);
    assert.equal(d.version, '1.0.0', `${d.type}: the bundle's versionName, the host giving no version`);
    assert.deepEqual(d.connectivity, { status: 'connected', interfaces: ['wifi'] }, `${d.type}: the default network`);
    assert.equal(d.source, 'harmony');
    assert.equal(d._dd.configuration.session_sample_rate, 100);
    assert.ok(DEVICE_TYPES.includes(d.device.type));
    assert.ok(STATUSES.includes(d.connectivity.status));
    assert.ok(d.connectivity.interfaces.every((i) => INTERFACES.includes(i)));
  }
  assert.equal(bundleManager.host.calls, 1, 'the bundle info is read once');
  assert.equal(net.host.registered().length, 1, 'one NetConnection listens');
});

test('device.type is the format’s enum for every deviceInfo.deviceType; architecture is the first ABI', (t) => {
  const table = [
    ['phone', 'mobile'], ['default', 'mobile'], ['tablet', 'tablet'], ['2in1', 'desktop'], ['pc', 'desktop'],
    ['tv', 'tv'], ['wearable', 'other'], ['car', 'other'], ['liteWearable', 'other'], ['smartVision', 'other']
  ];
  basic.deviceInfo.abiList = 'arm64-v8a,armeabi-v7a';
  for (const [deviceType, expected] of table) {
    basic.deviceInfo.deviceType = deviceType;
    const d = actionDoc(monitor(t, { connectivityTracking: false }), deviceType);
    assert.equal(d.device.type, expected, `deviceType ${deviceType}`);
    assert.equal(d.device.architecture, 'arm64-v8a');
  }
  basic.deviceInfo.deviceType = '';
  basic.deviceInfo.abiList = '';
  basic.deviceInfo.marketName = '';
  const d = actionDoc(monitor(t, { connectivityTracking: false }), 'unknown');
  assert.deepEqual(d.device, { brand: 'HUAWEI', model: 'ALN-AL00' }, 'empty values are left out, not sent as ""');
});

test('os: distributionOSName / distributionOSVersion, else HarmonyOS and the version in displayVersion, osFullName, majorVersion', (t) => {
  const osOf = (name) => actionDoc(monitor(t, { connectivityTracking: false }), name).os;
  basic.deviceInfo.distributionOSName = 'OpenHarmony';
  basic.deviceInfo.distributionOSVersion = '6.0.1';
  assert.deepEqual(osOf('distribution'), { name: 'OpenHarmony', version: '6.0.1', version_major: '6' });

  basic.deviceInfo.distributionOSName = '';
  basic.deviceInfo.distributionOSVersion = '';
  basic.deviceInfo.displayVersion = 'ALN-AL00 5.0.0.120(SP8C00E120R4P9)';
  assert.deepEqual(osOf('displayVersion'), { name: 'HarmonyOS', version: '5.0.0.120', version_major: '5' });

  basic.deviceInfo.displayVersion = '';
  basic.deviceInfo.osFullName = 'OpenHarmony-6.0.0.47';
  assert.deepEqual(osOf('osFullName'), { name: 'HarmonyOS', version: '6.0.0.47', version_major: '6' });

  basic.deviceInfo.osFullName = '';
  assert.deepEqual(osOf('majorVersion'), { name: 'HarmonyOS', version: '5', version_major: '5' });

  basic.deviceInfo.majorVersion = 0;
  assert.equal(osOf('nothing'), undefined, 'no version at all: os left out (the format requires all three)');
});

test('the host’s options win; null leaves a field out', (t) => {
  const m = monitor(t, {
    version: '2.1.0',
    buildVersion: '42',
    device: { type: 'tablet', brand: 'Acme', model: 'T1' },
    os: { name: 'OpenHarmony', version: '5.1.0', versionMajor: '5' },
    viewport: null,
    locale: 'en-US',
    connectivity: { status: 'maybe' },
    connectivityTracking: false
  });
  const d = actionDoc(m);
  assert.deepEqual(d.device, { type: 'tablet', brand: 'Acme', model: 'T1' });
  assert.deepEqual(d.os, { name: 'OpenHarmony', version: '5.1.0', version_major: '5' });
  assert.equal(d.display, undefined, 'viewport: null');
  assert.equal(d.application.current_locale, 'en-US');
  assert.equal(d.version, '2.1.0');
  assert.equal(d.build_version, '42');
  assert.deepEqual(d.connectivity, { status: 'maybe' });
  assert.equal(bundleManager.host.calls, 0, 'version and buildVersion given: the bundle info is not read');
  assert.equal(display.host.calls, 0, 'viewport: null: the display is not read');
});

test('a netLost turns later documents not_connected; a netAvailable connected with its interface', async (t) => {
  const calls = spySetConnectivity(t);
  const m = monitor(t);
  await Promise.resolve(); // register's callback
  assert.deepEqual(actionDoc(m, 'wifi').connectivity, { status: 'connected', interfaces: ['wifi'] });

  net.host.lose();
  assert.deepEqual(actionDoc(m, 'lost').connectivity, { status: 'not_connected', interfaces: ['none'] });

  net.host.connect(101, [BEARER_CELLULAR]);
  assert.deepEqual(actionDoc(m, 'cellular').connectivity, { status: 'connected', interfaces: ['cellular'] });
  assert.equal(calls.length, 2, 'netAvailable and the netCapabilitiesChange after it: one change, one call');

  for (const [netId, bearer, expected] of [
    [102, BEARER_ETHERNET, 'ethernet'], [103, BEARER_BLUETOOTH, 'bluetooth'], [104, BEARER_VPN, 'other'],
    [105, BEARER_WIFI, 'wifi']
  ]) {
    net.host.connect(netId, [bearer]);
    assert.deepEqual(actionDoc(m, expected).connectivity, { status: 'connected', interfaces: [expected] });
  }

  net.host.unavailable();
  assert.deepEqual(actionDoc(m, 'unavailable').connectivity, { status: 'not_connected', interfaces: ['none'] });
});

test('the netLost of a network that is no longer the default one changes nothing', async (t) => {
  const m = monitor(t);
  net.host.connect(101, [BEARER_CELLULAR]); // the system switched from Wi-Fi (100) to cellular
  net.host.lose(100); // ... and reports the Wi-Fi network gone afterwards
  assert.deepEqual(actionDoc(m).connectivity, { status: 'connected', interfaces: ['cellular'] });
});

test('no default network at start (netId 0): not_connected', (t) => {
  net.host.defaultNetId = 0;
  const m = monitor(t);
  assert.deepEqual(actionDoc(m).connectivity, { status: 'not_connected', interfaces: ['none'] });
  net.host.connect(100, [BEARER_WIFI]);
  assert.deepEqual(actionDoc(m, 'up').connectivity, { status: 'connected', interfaces: ['wifi'] });
});

test('stop() unregisters the NetConnection; later network changes reach nothing', async (t) => {
  const calls = spySetConnectivity(t);
  const m = monitor(t);
  assert.equal(net.host.registered().length, 1);
  m.stop();
  assert.equal(net.host.registered().length, 0, 'unregistered');
  assert.equal(net.host.calls.unregister, 1);
  net.host.lose();
  for (const c of net.host.connections) {
    for (const listener of c.listeners.get('netLost')) listener({ netId: 100 }); // a late callback
  }
  assert.equal(calls.length, 0, 'no setConnectivity after stop');
  m.stop();
  assert.equal(net.host.calls.unregister, 1, 'a second stop does not unregister again');
});

test('connectivityTracking: false reads no network and registers nothing; setConnectivity() sets it', (t) => {
  const m = monitor(t, { connectivityTracking: false });
  assert.equal(net.host.calls.getDefaultNetSync, 0);
  assert.equal(net.host.connections.length, 0);
  assert.equal(actionDoc(m).connectivity, undefined);
  m.setConnectivity({ status: 'connected', interfaces: ['ethernet'] });
  assert.deepEqual(actionDoc(m, 'set').connectivity, { status: 'connected', interfaces: ['ethernet'] });
  assert.throws(() => m.setConnectivity({ status: 'phone' }), RangeError, 'values outside the enum are refused');
});

test('throwing platform APIs leave their field out, log a warning, and the monitor works', (t) => {
  const mark = h.hilog.records.length;
  display.host.error = businessError(1400001, 'Invalid display or screen.');
  i18n.host.error = businessError(890001, 'locale service down');
  bundleManager.host.error = businessError(17700001, 'bundle not found');
  net.host.errors.getDefaultNetSync = businessError(201, 'Permission denied.');
  net.host.errors.createNetConnection = businessError(2100002, 'Failed to connect to the service.');
  Object.defineProperty(basic.deviceInfo, 'brand', {
    configurable: true, enumerable: true, get: () => {
      throw businessError(801, 'not supported');
    }
  });
  const m = monitor(t);
  const d = actionDoc(m);
  for (const field of ['device', 'display', 'build_version', 'connectivity']) {
    assert.equal(d[field], undefined, `${field} left out`);
  }
  assert.equal(d.application.current_locale, undefined);
  assert.deepEqual(d.os, { name: 'HarmonyOS', version: '5.0.0', version_major: '5' }, 'os is read on its own');
  assert.equal(d.version, '', 'no version given, none read: the pipeline default');
  const warnings = logsSince(mark, 'RumContext').filter((r) => r.level === 'warn');
  assert.deepEqual(warnings.map((r) => r.message.split(':')[0]), [
    'no bundle info, no build_version',
    'deviceInfo unavailable, no device context',
    'no default display, no display.viewport',
    'no system locale, no application.current_locale',
    'getDefaultNetSync failed, no connectivity'
  ], 'one warning per failed read; the connectivity tracker logs once');
  m.stop();
});

test('register failing through its callback (no GET_NETWORK_INFO: 201) logs once and turns connectivity maybe', async (t) => {
  const mark = h.hilog.records.length;
  net.host.errors.register = businessError(201, 'Permission denied.');
  const m = monitor(t);
  assert.deepEqual(actionDoc(m, 'before').connectivity, { status: 'connected', interfaces: ['wifi'] });
  await Promise.resolve();
  assert.deepEqual(actionDoc(m, 'after').connectivity, { status: 'maybe' }, 'no longer followed: not known');
  const warnings = logsSince(mark, 'RumContext');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0].message, /NetConnection\.register failed.*201/);
  m.stop();
  assert.equal(net.host.calls.unregister, 0, 'nothing to unregister');
});

test('capabilities that cannot be read: connected without interfaces', (t) => {
  net.host.errors.getNetCapabilitiesSync = businessError(2100003, 'System internal error.');
  const m = monitor(t);
  assert.deepEqual(actionDoc(m).connectivity, { status: 'connected' });
  net.host.lose();
  net.host.fire('netAvailable', { netId: 101 });
  assert.deepEqual(actionDoc(m, 'available').connectivity, { status: 'connected' });
});

test('source and sessionSampleRate are passed through', (t) => {
  const d = actionDoc(monitor(t, { source: 'android', sessionSampleRate: 100 }));
  assert.equal(d.source, 'android');
  assert.equal(d._dd.configuration.session_sample_rate, 100);

  const untracked = monitor(t, { sessionSampleRate: 0 });
  untracked.addAction('tap', 'sampled out');
  untracked.flush();
  assert.deepEqual(drainBatches(untracked), [], 'an untracked session writes nothing');
  assert.equal(untracked.stats().sessionsUntracked, 1);
  assert.equal(h.facade.RumMonitor.DEFAULT_SOURCE, 'harmony');
  assert.equal(monitor(t).source, 'harmony');
});

test('the uploader sends ddsource and DD-EVP-ORIGIN = the monitor’s source; its own source option wins', async (t) => {
  const server = await startIntake();
  t.after(() => server.close());
  const { RumUploader } = h.facade;

  const m = monitor(t, { source: 'android' });
  m.addAction('tap', 'upload');
  m.flush();
  const uploader = new RumUploader(m, { site: server.site, clientToken: 'pub' });
  assert.equal((await uploader.uploadNow()).delivered, 1);
  assert.equal(server.requests[0].url, '/api/v2/rum?ddsource=android');
  assert.equal(server.requests[0].headers['dd-evp-origin'], 'android');
  assert.ok(server.requests[0].docs.every((d) => d.source === 'android'), 'the documents say the same');

  m.addAction('tap', 'again');
  m.flush();
  const own = new RumUploader(m, { site: server.site, clientToken: 'pub', source: 'flutter' });
  assert.equal((await own.uploadNow()).delivered, 1);
  assert.equal(server.requests[1].url, '/api/v2/rum?ddsource=flutter');

  // A batch source of its own, without `source`: 'harmony'.
  let pending = [{ id: 'b1', body: new TextEncoder().encode('{"type":"action"}\n').buffer, eventCount: 1, bytes: 18 }];
  const plain = { nextBatch: () => pending.shift() ?? null, completeBatch: () => {} };
  const fallback = new RumUploader(plain, { site: server.site, clientToken: 'pub' });
  assert.equal(RumUploader.DEFAULT_SOURCE, 'harmony');
  assert.equal((await fallback.uploadNow()).delivered, 1);
  assert.equal(server.requests[2].url, '/api/v2/rum?ddsource=harmony');
  assert.equal(server.requests[2].headers['dd-evp-origin'], 'harmony');
  pending = [];
});
