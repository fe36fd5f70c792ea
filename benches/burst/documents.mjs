// What the two plain-JS SDKs of the harness share (baseline.mjs, the pre-queue SDK, and
// jsqueue.mjs, the reference change's dispatch queue in JS): the RUM documents they build and the
// batch files they append them to. Both write the same kinds of documents (action, view, error)
// with the module's fields (RUM format, docs/design.md "Documents"): `ddtags` (where the intake reads
// env, service and version), `_dd.configuration.session_sample_rate`, the view's crash count, the
// module's `source` and the view key as `url`. So bytes written compare like for like: what differs
// is how many documents each writes, not what one holds (tests/node/burst-peers.test.mjs checks
// that the field paths match the module's, call for call).
//
// RumScope is the scope state (identity, global attributes, the active view and its counters) and
// builds documents as objects; the caller JSON.stringify-s them. BatchStore is the storage of the
// seed SDK: every document is one NDJSON line appended with its own open / append / close,
// synchronously (three open/append/close calls per action; the reference change kept
// that storage), batches roll at 512 KiB and a 4 MiB quota evicts the oldest sealed batches first.
// Its reader has the shape of RumPipeline's nextBatch / completeBatch, so one uploader serves every
// variant.
//
// Quota and sizes are tracked in memory rather than by listing the directory on every write: that
// is cheaper than what a real SDK does, so every ratio against these SDKs is conservative.

import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { BASELINE_LIMITS } from './scenarios.mjs';

/** `sdk_version` in the JS SDKs' ddtags: the crate's version, as the module writes its own. */
const SDK_VERSION = /^version\s*=\s*"([^"]+)"/m.exec(fs.readFileSync(new URL('../../Cargo.toml', import.meta.url), 'utf8'))?.[1] ?? '0.0.0';

/** `_dd` of every document: the format version, the plan and the sampling the mobile SDKs report. */
const FORMAT = { format_version: 2, session: { plan: 1 }, configuration: { session_sample_rate: 100 } };

/** `service:…,version:…,sdk_version:…,env:…`, empty values left out: the module's ddtags. */
function ddtags({ service, version, env }) {
  const tags = [['service', service], ['version', version], ['sdk_version', SDK_VERSION], ['env', env ?? '']];
  return tags.filter(([, v]) => v).map(([k, v]) => `${k}:${String(v).replaceAll(',', '_')}`).join(',');
}

export class RumScope {
  #identity;
  #globalAttrs = {};
  /** The active view: { id, key, name, url, startMs, version, attrs, actions, errors, resources }. */
  view = null;

  constructor({ applicationId, service = 'burst', version = '0.0.0', env }) {
    this.#identity = {
      application: { id: applicationId },
      session: { id: randomUUID(), type: 'user' },
      source: 'harmony',
      service,
      version,
      ddtags: ddtags({ service, version, env }),
    };
  }

  /** The context of a call: global attributes merged with the call's (a copy, taken at call time). */
  context(attributes) {
    return { ...this.#globalAttrs, ...attributes };
  }

  /** Makes a new view active; the caller writes its first document (viewDocument). */
  startView(key, name, attributes, date) {
    this.view = {
      id: randomUUID(), key, name, url: key, startMs: date, version: 0,
      attrs: { ...attributes }, actions: 0, errors: 0, resources: 0,
    };
  }

  /** The action document of a call, counted on the active view (whose document the caller writes). */
  actionDocument(type, name, context, date) {
    const view = this.view;
    const doc = this.#header('action', date, FORMAT);
    doc.context = context;
    doc.view = view ? { id: view.id, name: view.name, url: view.url } : undefined;
    doc.action = { id: randomUUID(), type, target: { name } };
    if (view) view.actions += 1;
    return doc;
  }

  /** The error document of a call, counted on the active view. */
  errorDocument(message, source, stack, context, date) {
    const view = this.view;
    const doc = this.#header('error', date, FORMAT);
    doc.context = context;
    doc.view = view ? { id: view.id, name: view.name, url: view.url } : undefined;
    doc.error = { id: randomUUID(), message, source, stack, is_crash: false, handling: 'handled' };
    if (view) view.errors += 1;
    return doc;
  }

  /** The next full view document of the active view (document_version + 1), as of `now`. */
  viewDocument(now) {
    const view = this.view;
    view.version += 1;
    const doc = this.#header('view', view.startMs, { ...FORMAT, document_version: view.version });
    doc.context = { ...this.#globalAttrs, ...view.attrs };
    doc.view = {
      id: view.id, name: view.name, url: view.url,
      time_spent: (now - view.startMs) * 1e6,
      is_active: true,
      action: { count: view.actions },
      error: { count: view.errors },
      crash: { count: 0 },
      resource: { count: view.resources },
    };
    return doc;
  }

  /** The fields every document starts with, in their order; the caller adds the rest after them. */
  #header(type, date, dd) {
    const id = this.#identity;
    return {
      type,
      date,
      _dd: dd,
      application: id.application,
      session: id.session,
      source: id.source,
      service: id.service,
      version: id.version,
      ddtags: id.ddtags,
    };
  }
}

export class BatchStore {
  #dir;
  #limits;
  #batches = []; // oldest first: { name, bytes, events, claimed }
  #active = null;
  #seq = 0;
  #bytesOnDisk = 0;
  #counters = {
    documentsWritten: 0, bytesWritten: 0, batchesSealed: 0, evictedBatchesQuota: 0, evictedEventsQuota: 0,
    batchesDelivered: 0, batchesReleased: 0,
  };

  constructor({ storageDir, diskQuotaBytes, batchMaxBytes }) {
    this.#dir = path.join(storageDir, 'rum');
    fs.mkdirSync(this.#dir, { recursive: true });
    this.#limits = {
      batchMaxBytes: batchMaxBytes ?? BASELINE_LIMITS.batchMaxBytes,
      diskQuotaBytes: diskQuotaBytes ?? BASELINE_LIMITS.diskQuotaBytes,
    };
  }

  /** Appends one document (its JSON) as a line of the active batch: open, append, close. */
  append(json) {
    const line = `${json}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.#active && this.#active.bytes + bytes > this.#limits.batchMaxBytes) this.seal();
    this.#evictFor(bytes);
    if (!this.#active) {
      this.#seq += 1;
      this.#active = { name: `batch-${Date.now()}-${this.#seq}.ndjson`, bytes: 0, events: 0, claimed: false };
    }
    const fd = fs.openSync(path.join(this.#dir, this.#active.name), 'a');
    try {
      fs.appendFileSync(fd, line);
    } finally {
      fs.closeSync(fd);
    }
    this.#active.bytes += bytes;
    this.#active.events += 1;
    this.#bytesOnDisk += bytes;
    this.#counters.documentsWritten += 1;
    this.#counters.bytesWritten += bytes;
  }

  /** Seals the active batch (it can then be uploaded). */
  seal() {
    if (!this.#active) return;
    if (this.#active.bytes > 0) {
      this.#batches.push(this.#active);
      this.#counters.batchesSealed += 1;
    }
    this.#active = null;
  }

  stats() {
    return {
      ...this.#counters,
      bytesOnDisk: this.#bytesOnDisk,
      batchesOnDisk: this.#batches.length + (this.#active ? 1 : 0),
    };
  }

  /** Claims the oldest sealed batch, like RumPipeline.nextBatch (without view reduction). */
  nextBatch() {
    const batch = this.#batches.find((b) => !b.claimed);
    if (!batch) return null;
    batch.claimed = true;
    const buf = fs.readFileSync(path.join(this.#dir, batch.name));
    const body = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    return { id: batch.name, body, eventCount: batch.events, bytes: buf.byteLength };
  }

  completeBatch(id, delivered) {
    const i = this.#batches.findIndex((b) => b.name === id);
    if (i < 0) return;
    if (!delivered) {
      this.#batches[i].claimed = false;
      this.#counters.batchesReleased += 1;
      return;
    }
    const [batch] = this.#batches.splice(i, 1);
    fs.rmSync(path.join(this.#dir, batch.name), { force: true });
    this.#bytesOnDisk -= batch.bytes;
    this.#counters.batchesDelivered += 1;
  }

  /** Oldest-first eviction of sealed, unclaimed batches until `bytes` more fit under the quota. */
  #evictFor(bytes) {
    while (this.#bytesOnDisk + bytes > this.#limits.diskQuotaBytes) {
      const i = this.#batches.findIndex((b) => !b.claimed);
      if (i < 0) return; // only the active batch and claims are left; the write goes through
      const [victim] = this.#batches.splice(i, 1);
      fs.rmSync(path.join(this.#dir, victim.name), { force: true });
      this.#bytesOnDisk -= victim.bytes;
      this.#counters.evictedBatchesQuota += 1;
      this.#counters.evictedEventsQuota += victim.events;
    }
  }
}
