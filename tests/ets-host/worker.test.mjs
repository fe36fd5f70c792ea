// The worker path: thousands of Sendable RumActions built by a @Concurrent function on the
// TaskPool, returned by reference, and handed to the pipeline in one call.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { drainBatches, fakeContext, loadFacade, tempDir } from './lib/harness.mjs';

let h;
before(async () => {
  h = await loadFacade();
});

test('buildSyncedMessageActions builds one Sendable action per message', () => {
  const { RumAction, buildSyncedMessageActions, SYNCED_MESSAGE_ATTRIBUTE_CHARS } = h.facade;
  const actions = buildSyncedMessageActions(50, 100, SYNCED_MESSAGE_ATTRIBUTE_CHARS);
  assert.ok(actions instanceof h.collections.Array, 'a collections.Array');
  assert.equal(actions.length, 50);
  actions.forEach((a, i) => {
    assert.ok(a instanceof RumAction);
    assert.equal(a.type, 'custom');
    assert.ok(a.attributes instanceof h.collections.Map, 'attributes are a collections.Map');
    assert.equal(a.attributes.get('message_index'), 100 + i);
    assert.equal(a.attributes.get('message_id'), `msg-${100 + i}`);
    assert.equal(a.attributes.get('preview').length, 350, 'the reference scenario’s ~350 characters');
  });
});

test('3,700 actions built on the TaskPool reach the pipeline in one call, each once, in order', async (t) => {
  const { RumMonitor, buildActionsOnTaskPool, buildSyncedMessageActions } = h.facade;
  const before = h.taskpool.executed.length;
  const actions = await buildActionsOnTaskPool(3700);
  assert.equal(h.taskpool.executed.length, before + 1, 'the actions were built through taskpool.execute');
  assert.equal(h.taskpool.executed.at(-1).function, buildSyncedMessageActions, 'by the @Concurrent builder');
  assert.equal(actions.length, 3700);

  const proto = h.native.RumPipeline.prototype;
  const original = proto.addActions;
  let calls = 0;
  proto.addActions = function (...args) {
    calls++;
    assert.equal(args[0], actions, 'the TaskPool result itself, not a copy');
    return original.apply(this, args);
  };
  t.after(() => {
    proto.addActions = original;
  });

  // 3,700 documents of ~1.3 KB (with the device and app context) are ~4.9 MB: above the default
  // 4 MiB disk quota, which would evict the oldest batches before they are read here.
  const m = RumMonitor.create(fakeContext(tempDir()), {
    applicationId: 'app-worker',
    keepAliveIntervalMs: 0,
    pipeline: { diskQuotaBytes: 8 * 1024 * 1024 }
  });
  t.after(() => m.stop());
  m.startView('inbox', 'Inbox');
  m.addActions(actions);
  assert.equal(calls, 1);
  assert.equal(m.flush(), true);
  const synced = drainBatches(m).filter((d) => d.type === 'action');
  assert.deepEqual(synced.map((d) => d.context.message_index), Array.from({ length: 3700 }, (_, i) => i));
  assert.ok(synced.every((d) => d.action.target.name === 'message_synced' && d.context.preview.length === 350));
});
