// The baseline: what the pre-queue SDK did for every call (seeds/000, "Problem"; DESIGN.md
// "Measuring"), in plain JS on the caller's thread. Per action it builds the action document and a
// full view document (RUM format, DESIGN.md "Documents"), JSON.stringify-s each, and appends each to
// the active batch file with its own open / append / close. Batches roll at 512 KiB; a 4 MiB quota
// evicts the oldest sealed batches first. Its reader has the same shape as RumPipeline's
// nextBatch / completeBatch, so one uploader serves both variants.
//
// Quota and sizes are tracked in memory rather than by listing the directory on every write: that
// is cheaper than what a real SDK does, so every ratio against this baseline is conservative.

import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { BASELINE_LIMITS } from './scenarios.mjs';

const FORMAT = { format_version: 2, session: { plan: 1 } };

export class BaselineSdk {
  #dir;
  #identity;
  #globalAttrs = {};
  #view = null;
  #limits;
  #batches = []; // oldest first: { name, bytes, events, claimed }
  #active = null;
  #seq = 0;
  #bytesOnDisk = 0;
  #counters = { documentsWritten: 0, batchesSealed: 0, evictedBatchesQuota: 0, evictedEventsQuota: 0, batchesDelivered: 0, batchesReleased: 0 };

  constructor({ storageDir, applicationId, service = 'burst', version = '0.0.0', env, diskQuotaBytes, batchMaxBytes }) {
    this.#dir = path.join(storageDir, 'rum');
    fs.mkdirSync(this.#dir, { recursive: true });
    this.#limits = {
      batchMaxBytes: batchMaxBytes ?? BASELINE_LIMITS.batchMaxBytes,
      diskQuotaBytes: diskQuotaBytes ?? BASELINE_LIMITS.diskQuotaBytes,
    };
    this.#identity = {
      application: { id: applicationId },
      session: { id: randomUUID(), type: 'user' },
      source: 'harmonyos',
      service,
      version,
      env,
    };
  }

  startView(key, name, attributes) {
    const now = Date.now();
    this.#view = {
      id: randomUUID(), key, name, url: name, startMs: now, version: 0,
      attrs: { ...attributes }, actions: 0, errors: 0, resources: 0,
    };
    this.#writeView(now);
  }

  addAction(type, name, attributes) {
    const now = Date.now();
    const view = this.#view;
    const action = this.#header('action', now, FORMAT);
    action.context = { ...this.#globalAttrs, ...attributes };
    action.view = view ? { id: view.id, name: view.name, url: view.url } : undefined;
    action.action = { id: randomUUID(), type, target: { name } };
    this.#append(JSON.stringify(action));
    if (view) {
      view.actions += 1;
      this.#writeView(now);
    }
  }

  /** Seals the active batch; everything is already on disk (every write was synchronous). */
  flush() {
    this.#seal();
    return true;
  }

  stop() {
    this.flush();
  }

  stats() {
    return {
      ...this.#counters,
      queueLength: 0,
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

  #writeView(now) {
    const view = this.#view;
    view.version += 1;
    const doc = this.#header('view', view.startMs, { ...FORMAT, document_version: view.version });
    doc.context = { ...this.#globalAttrs, ...view.attrs };
    doc.view = {
      id: view.id, name: view.name, url: view.url,
      time_spent: (now - view.startMs) * 1e6,
      is_active: true,
      action: { count: view.actions },
      error: { count: view.errors },
      resource: { count: view.resources },
    };
    this.#append(JSON.stringify(doc));
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
      env: id.env,
    };
  }

  #append(json) {
    const line = `${json}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.#active && this.#active.bytes + bytes > this.#limits.batchMaxBytes) this.#seal();
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

  #seal() {
    if (!this.#active) return;
    if (this.#active.bytes > 0) {
      this.#batches.push(this.#active);
      this.#counters.batchesSealed += 1;
    }
    this.#active = null;
  }
}
