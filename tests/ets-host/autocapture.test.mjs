// Automatic capture (ets/src/main/ets/auto/), built from ets/ and run against librum_native.so:
// each observer is driven through the platform stand-ins with the info objects the SDK declares,
// and the documents it produced are read back from the batches and checked against the RUM event
// format's schemas. Each test fails with its observer left unregistered.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { SCHEMAS_MISSING_NOTE, schemaValidator } from '../shared/schema.mjs';
import { findSdk } from './lib/sdk.mjs';
import { demoScenario, drainBatches, fakeContext, importStub, loadFacade, startIntake, tempDir } from './lib/harness.mjs';

let h;
let ui;
let errorHost;
let appEvents;
before(async () => {
  h = await loadFacade();
  ui = (await importStub('kit.ArkUI.mjs')).ui;
  errorHost = (await importStub('kit.AbilityKit.mjs')).errorManager.host;
  appEvents = (await importStub('kit.PerformanceAnalysisKit.mjs')).hiAppEvent.host;
});

/** Each monitor's window-stage listeners (to fire SHOWN again). */
const stageOf = new WeakMap();

/** A monitor with automatic capture on (the default), its ability's window stage made and shown. */
async function monitor(t, autoCapture = undefined) {
  ui.reset();
  errorHost.reset();
  const context = fakeContext(tempDir());
  const m = h.facade.RumMonitor.create(context, {
    applicationId: '4b2f7c1e-9d3a-4e8b-a1c2-3d4e5f6a7b8c',
    service: 'auto',
    // An enum source: the documents then validate with no exception at all.
    source: 'android',
    version: '1.0.0',
    keepAliveIntervalMs: 0,
    connectivityTracking: false,
    crashReporting: false,
    ...(autoCapture === undefined ? {} : { autoCapture })
  });
  t.after(() => m.stop());
  const { UIContext } = await importStub('kit.ArkUI.mjs');
  const stageListeners = [];
  stageOf.set(m, stageListeners);
  // Each time the stage is asked for its UIContext, a new object (as a device may answer).
  const windowStage = {
    on: (type, cb) => stageListeners.push(cb),
    getMainWindowSync: () => ({ getUIContext: () => new UIContext() })
  };
  context.windowStageCreate({ context: { abilityContext: true } }, windowStage);
  stageListeners.forEach((cb) => cb(1)); // WindowStageEventType.SHOWN
  return m;
}

function documents(m) {
  m.flush();
  return drainBatches(m);
}

function assertValid(docs) {
  const v = schemaValidator();
  if (v === null) {
    console.log(`# ${SCHEMAS_MISSING_NOTE}`);
    return;
  }
  for (const d of docs) assert.deepEqual(v.validate(d), [], `${d.type} validates: ${JSON.stringify(d).slice(0, 400)}`);
}

/** The last document of each view, in the order the views started. */
function finalViews(docs) {
  const last = new Map();
  for (const d of docs.filter((d) => d.type === 'view')) last.set(d.view.id, d);
  return [...last.values()];
}

const R = { SHOW: 2, HIDE: 3 };
const N = { SHOWN: 0, HIDDEN: 1 };
const T = { SHOW: 0, HIDE: 1 };
const tick = (ms) => new Promise((r) => setTimeout(r, ms));

test('router pages, a Navigation inside one and Tabs give one active view at a time, in the order seen', async (t) => {
  const m = await monitor(t);
  ui.routerPage('pages/Index', R.SHOW, { pageId: '1' });
  await tick(5);
  ui.navDestination('Detail', N.SHOWN, { navigationId: 'main', navDestinationId: 'd1' });
  assert.equal(m.autoViewUrl(), 'main/Detail');
  await tick(5);
  ui.navDestination('Detail', N.HIDDEN, { navigationId: 'main', navDestinationId: 'd1' });
  assert.equal(m.autoViewUrl(), 'pages/Index', 'back on the router page');
  await tick(0); // its view starts again at the end of the turn
  ui.tabContent('home', T.SHOW, { id: 'tabs' });
  await tick(0);
  // A tab switch hides one and shows the other in one turn: the page between gets no view.
  ui.tabContent('home', T.HIDE, { id: 'tabs' });
  ui.tabContent('settings', T.SHOW, { id: 'tabs' });
  await tick(0);
  ui.routerPage('pages/Second', R.SHOW, { pageId: '2' });
  ui.routerPage('pages/Index', R.HIDE, { pageId: '1' });
  const docs = documents(m);
  const views = finalViews(docs);
  assert.deepEqual(views.map((v) => v.view.url),
    ['pages/Index', 'main/Detail', 'pages/Index', 'tabs/home', 'tabs/settings', 'pages/Second']);
  assert.deepEqual(views.map((v) => v.view.name),
    ['pages/Index', 'Detail', 'pages/Index', 'home', 'settings', 'pages/Second']);
  assert.deepEqual(views.map((v) => v.view.is_active), [false, false, false, false, false, true]);
  assert.ok(views[0].view.time_spent >= 4e6, `the first page was active ~5 ms: ${views[0].view.time_spent} ns`);
  assert.ok(views[1].view.time_spent >= 4e6, `the destination ~5 ms: ${views[1].view.time_spent} ns`);
  assert.notEqual(views[0].view.id, views[2].view.id, 'coming back to a page is a new view');
  assert.equal(m.autoCaptureStats().views, 6, 'autoCaptureStats counts the views started');
  assertValid(docs);
});

test('viewNameMapper renames views or leaves pages out', async (t) => {
  const m = await monitor(t, {
    viewNameMapper: (v) => (v.url === 'pages/Splash' ? null : `${v.kind}:${v.name}`)
  });
  ui.routerPage('pages/Splash', R.SHOW, { pageId: '1' });
  ui.routerPage('pages/Home', R.SHOW, { pageId: '2' });
  const views = finalViews(documents(m));
  assert.deepEqual(views.map((v) => [v.view.url, v.view.name]), [['pages/Home', 'router:pages/Home']]);
});

test('taps are tap actions named by the component id, else its type; views: false leaves pages alone', async (t) => {
  const m = await monitor(t, { views: false });
  m.startView('home', 'Home');
  ui.routerPage('pages/Index', R.SHOW, { pageId: '1' });
  ui.click({ id: 'buy_button', type: 'Button' });
  ui.click({ id: '', type: 'ListItem', targetId: 'row_3' });
  ui.click({ id: '', type: 'Image' });
  const docs = documents(m);
  const actions = docs.filter((d) => d.type === 'action');
  assert.deepEqual(actions.map((a) => [a.action.type, a.action.target.name]),
    [['tap', 'buy_button'], ['tap', 'row_3'], ['tap', 'Image']]);
  assert.deepEqual([m.autoCaptureStats().taps, m.autoCaptureStats().views], [3, 0]);
  assert.ok(actions.every((a) => a.view.url === 'home'), 'on the host-started view: no automatic page view');
  assertValid(docs);
});

test('actions: false registers no click observer', async (t) => {
  const m = await monitor(t, { actions: false });
  assert.equal(ui.counts().didClick, 0);
  ui.click({ id: 'x' });
  assert.equal(documents(m).filter((d) => d.type === 'action').length, 0);
});

test('a burst of 3,700 automatic taps lands whole and in order, through the capture buffer', async (t) => {
  const m = await monitor(t);
  const ingest = h.native.RumPipeline.prototype.ingest;
  let crossings = 0;
  h.native.RumPipeline.prototype.ingest = function (...args) {
    crossings++;
    return ingest.apply(this, args);
  };
  t.after(() => {
    h.native.RumPipeline.prototype.ingest = ingest;
  });
  ui.routerPage('pages/Feed', R.SHOW, { pageId: '1' });
  for (let i = 0; i < 3700; i++) ui.click({ id: `item_${i}` });
  assert.equal(crossings, 0, 'nothing crossed during the burst: the taps are buffered');
  const names = documents(m).filter((d) => d.type === 'action').map((a) => a.action.target.name);
  assert.equal(names.length, 3700);
  assert.deepEqual(names.slice(0, 3), ['item_0', 'item_1', 'item_2']);
  assert.equal(names[3699], 'item_3699');
});

/** A loopback server: /ok answers 200 with a body, anything else 404; `seen` keeps each request's headers. */
const seen = [];
async function server(t) {
  const s = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/ok') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
      setTimeout(() => res.end('{"ok":true}'), 5);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  t.after(() => s.close());
  return `http://127.0.0.1:${s.address().port}`;
}

test('a request through monitor.http is a resource with status, size and its timing breakdown', async (t) => {
  const m = await monitor(t);
  const base = await server(t);
  ui.routerPage('pages/Index', R.SHOW, { pageId: '1' });
  const response = await m.http.request(`${base}/ok`, { method: 'POST', extraData: 'x' });
  assert.equal(response.responseCode, 200);
  await m.http.request(`${base}/missing`);
  const docs = documents(m);
  const resources = docs.filter((d) => d.type === 'resource');
  assert.equal(resources.length, 2);
  const [ok, missing] = resources;
  assert.deepEqual([ok.resource.method, ok.resource.url, ok.resource.status_code, ok.resource.size, ok.resource.type],
    ['POST', `${base}/ok`, 200, 11, 'native']);
  assert.equal(missing.resource.status_code, 404);
  assert.ok(ok.resource.duration >= 4e6, `duration covers the server's 5 ms: ${ok.resource.duration}`);
  for (const phase of ['connect', 'first_byte', 'download']) {
    assert.ok(ok.resource[phase] && ok.resource[phase].duration > 0, `${phase}: ${JSON.stringify(ok.resource)}`);
  }
  assert.ok(ok.resource.download.start >= ok.resource.first_byte.start, 'phases in order');
  assert.equal(ok.view.url, 'pages/Index');
  assert.equal(m.autoCaptureStats().requests, 2);
  assertValid(docs);
});

test('a request that fails without a response is a network error naming it; resources: false records nothing', async (t) => {
  const m = await monitor(t);
  const closed = await server(t);
  const url = closed.replace(/:\d+$/, ':1') + '/nothing';
  await assert.rejects(m.http.request(url));
  const docs = documents(m);
  const errors = docs.filter((d) => d.type === 'error');
  assert.equal(docs.filter((d) => d.type === 'resource').length, 0);
  assert.equal(errors.length, 1);
  assert.deepEqual([errors[0].error.source, errors[0].error.category, errors[0].error.type],
    ['network', 'Network', '2300007']);
  assert.deepEqual(errors[0].error.resource, { method: 'GET', status_code: 0, url });
  assert.deepEqual([m.autoCaptureStats().requests, m.autoCaptureStats().requestsFailed], [0, 1]);
  assertValid(docs);

  const off = await monitor(t, { resources: false });
  await off.http.request(`${closed}/ok`);
  assert.equal(documents(off).filter((d) => d.type === 'resource').length, 0);
});

test('the uploader\'s own requests are never resources', async (t) => {
  const m = await monitor(t);
  const intake = await startIntake();
  t.after(() => intake.close());
  m.startView('v', 'V');
  m.addAction('tap', 'x');
  m.flush();
  const uploader = new h.facade.RumUploader(m, { site: intake.site, clientToken: 'pub' });
  await uploader.uploadNow();
  assert.ok(intake.requests.length >= 1, 'the uploader sent the batch');
  m.addAction('tap', 'after');
  const docs = documents(m);
  assert.equal(docs.filter((d) => d.type === 'resource').length, 0, 'no resource from the upload');
});

test('slow main-thread turns are long tasks; a jank event for the same block is not counted twice', async (t) => {
  const m = await monitor(t);
  ui.routerPage('pages/Index', R.SHOW, { pageId: '1' });
  assert.equal(errorHost.loopObservers.length, 1, 'the loop observer is registered');
  assert.equal(errorHost.loopObservers[0].timeout, 100, 'at the default threshold');
  errorHost.slowTurn(300);
  errorHost.slowTurn(900);
  const end = Date.now();
  appEvents.deliver('OS', [{ name: 'MAIN_THREAD_JANK', appEventInfos: [
    { domain: 'OS', name: 'MAIN_THREAD_JANK', eventType: 1, params: { begin_time: end - 900, end_time: end } },
    { domain: 'OS', name: 'MAIN_THREAD_JANK', eventType: 1, params: { begin_time: end - 60000, end_time: end - 59800 } }
  ] }]);
  const docs = documents(m);
  const tasks = docs.filter((d) => d.type === 'long_task');
  assert.deepEqual(tasks.map((d) => [d.long_task.duration, d.long_task.is_frozen_frame]),
    [[300e6, false], [900e6, true], [200e6, false]]);
  assert.equal(tasks[2].date, end - 60000, 'the jank event keeps its own start');
  assert.equal(m.autoCaptureStats().longTasks, 3);
  const view = finalViews(docs).pop();
  assert.deepEqual([view.view.long_task, view.view.frozen_frame], [{ count: 3 }, { count: 1 }]);
  assertValid(docs);
});

test('longTasks: false and a custom threshold', async (t) => {
  await monitor(t, { longTasks: false });
  assert.equal(errorHost.loopObservers.length, 0);
  await monitor(t, { longTaskThresholdMs: 250 });
  assert.equal(errorHost.loopObservers[0].timeout, 250);
});

test('the launch is recorded once, at the first frame after the first page, as the ttid vital', async (t) => {
  const m = await monitor(t);
  ui.routerPage('pages/Index', R.SHOW, { pageId: '1' });
  ui.routerPage('pages/Second', R.SHOW, { pageId: '2' });
  assert.equal(documents(m).filter((d) => d.type === 'vital').length, 0, 'not before the frame');
  ui.frame();
  ui.frame();
  const docs = documents(m);
  const vitals = docs.filter((d) => d.type === 'vital');
  assert.equal(vitals.length, 1);
  const age = process.uptime() * 1000;
  const v = vitals[0];
  assert.deepEqual([v.vital.type, v.vital.app_launch_metric, v.vital.name], ['app_launch', 'ttid', 'time_to_initial_display']);
  assert.ok(v.vital.duration > 0 && v.vital.duration <= age * 1e6 + 1e6, `${v.vital.duration} ns vs process age ${age} ms`);
  assert.ok(Math.abs(v.date - (Date.now() - age)) < 1000, 'dated at the process start');
  assert.ok(Math.abs(m.autoCaptureStats().launchMs * 1e6 - v.vital.duration) < 1e3, 'autoCaptureStats().launchMs');
  assertValid(docs);
});

test('launch: false records no vital; autoCapture: false registers nothing', async (t) => {
  const m = await monitor(t, { launch: false });
  ui.routerPage('pages/Index', R.SHOW, { pageId: '1' });
  ui.frame();
  assert.equal(documents(m).filter((d) => d.type === 'vital').length, 0);
  await monitor(t, false);
  assert.deepEqual(ui.counts(), { routerPageUpdate: 0, navDestinationUpdate: 0, tabContentUpdate: 0, didClick: 0 });
  assert.equal(errorHost.loopObservers.length, 0);
});

test('stop() unregisters every observer', async (t) => {
  const m = await monitor(t);
  assert.ok(ui.counts().didClick > 0 && ui.counts().routerPageUpdate > 0);
  m.stop();
  assert.deepEqual(ui.counts(), { routerPageUpdate: 0, navDestinationUpdate: 0, tabContentUpdate: 0, didClick: 0 });
  assert.equal(errorHost.loopObservers.length, 0);
});

/** Members of `name` (an interface or class) in the real SDK's observer declarations: { member: optional }. */
function declaredMembers(sdkEtsDir, file, name) {
  const ts = createRequire(import.meta.url)('typescript');
  const text = readFileSync(join(sdkEtsDir, 'api', file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const members = {};
  const visit = (node) => {
    if ((ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node)) && node.name?.text === name) {
      for (const m of node.members) {
        if (m.name && (ts.isPropertySignature(m) || ts.isPropertyDeclaration(m))) members[m.name.text] = Boolean(m.questionToken);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return members;
}

test('the observers are driven with the info objects the real SDK declares', async (t) => {
  const sdk = findSdk();
  if (sdk === null) {
    t.skip('no HarmonyOS SDK (../shared/ohos-sdk or RUM_OHOS_SDK): the stand-ins are checked by typecheck only');
    return;
  }
  ui.reset();
  const seen = {};
  const { uiObserver } = await importStub('kit.ArkUI.mjs');
  for (const type of ['routerPageUpdate', 'navDestinationUpdate', 'tabContentUpdate']) {
    uiObserver.on(type, (info) => (seen[type] = info));
  }
  ui.routerPage('pages/Index', R.SHOW, { pageId: '1' });
  ui.navDestination('Detail', N.SHOWN);
  ui.tabContent('home', T.SHOW);
  for (const [type, name] of [['routerPageUpdate', 'RouterPageInfo'], ['navDestinationUpdate', 'NavDestinationInfo'],
    ['tabContentUpdate', 'TabContentInfo']]) {
    const declared = declaredMembers(sdk.etsDir, '@ohos.arkui.observer.d.ts', name);
    assert.ok(Object.keys(declared).length > 3, `${name} found in the SDK`);
    const given = Object.keys(seen[type]);
    for (const [member, optional] of Object.entries(declared)) {
      if (!optional) assert.ok(given.includes(member), `${name}.${member} is given`);
    }
    for (const member of given) assert.ok(member in declared, `${name} declares ${member}`);
  }
  ui.reset();
});

test('the demo\'s request and block helpers, and the counters line it shows', async (t) => {
  const { scenario, monitor: m } = await demoScenario(t, 'AutoDemo', '4b2f7c1e-9d3a-4e8b-a1c2-3d4e5f6a7b8c');
  const base = await server(t);
  assert.equal(await scenario.trackedRequest(m, `${base}/ok`), `${base}/ok: 200`);
  assert.match(await scenario.trackedRequest(m, base.replace(/:\d+$/, ':1')), /: failed \(/);
  const t0 = Date.now();
  scenario.blockUiThread(30);
  assert.ok(Date.now() - t0 >= 30, 'the block lasts its time');
  assert.equal(scenario.autoStatsLine(m.autoCaptureStats()),
    'views 0, taps 0, requests 1 (failed 1), long tasks 0, launch not yet');
  const lines = [];
  let changes = 0;
  m.setEventMapper(scenario.documentLister(lines, () => changes++));
  m.startView('v', 'V');
  m.addAction('tap', 'auto_open_detail');
  m.addLongTask(300);
  await scenario.trackedRequest(m, `${base}/ok`);
  m.flush();
  assert.deepEqual(lines, [`resource 200 ${base}/ok`, 'long_task 300 ms', 'action tap auto_open_detail']);
  assert.equal(changes, 3);
});

test('requests to the traceHosts carry a traceparent header, and their resource the same ids', async (t) => {
  const m = await monitor(t, { traceHosts: ['127.0.0.1'] });
  const other = await monitor(t);
  const base = await server(t);
  seen.length = 0;
  const header = { 'x-app': 'kept' };
  const options = { header };
  await m.http.request(`${base}/ok`, options);
  await other.http.request(`${base}/ok`);
  assert.equal(seen.length, 2);
  const sent = seen[0].traceparent;
  assert.match(sent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  assert.equal(seen[0]['x-app'], 'kept', 'the app\'s headers are sent too');
  assert.deepEqual(header, { 'x-app': 'kept' }, 'the app\'s header object is not changed');
  assert.equal(seen[1].traceparent, undefined, 'a host not listed gets no header');
  const [, traceId, spanId] = sent.split('-');
  const docs = documents(m);
  const [r] = docs.filter((d) => d.type === 'resource');
  assert.equal(r._dd.trace_id, traceId);
  assert.equal(r._dd.span_id, BigInt(`0x${spanId}`).toString(), 'the span id in decimal, as the format takes it');
  assert.equal(documents(other).filter((d) => d.type === 'resource')[0]._dd.trace_id, undefined);
  assertValid(docs);
});

test('the window stage shown again (back from the background) does not register the taps twice', async (t) => {
  const m = await monitor(t);
  stageOf.get(m).forEach((cb) => cb(1));
  stageOf.get(m).forEach((cb) => cb(2)); // ACTIVE: nothing to do
  assert.equal(ui.counts().didClick, 1);
  m.startView('v', 'V');
  ui.click({ id: 'once' });
  assert.deepEqual(documents(m).filter((d) => d.type === 'action').map((a) => a.action.target.name), ['once']);
});
