// The baseline: what the pre-queue SDK did for every call (docs/design.md, "How we
// measure"), in plain JS on the caller's thread. Per action it builds the action document and a
// full view document (RUM format, docs/design.md "Documents"), JSON.stringify-s each, and appends each to
// the active batch file with its own open / append / close. Batches roll at 512 KiB; a 4 MiB quota
// evicts the oldest sealed batches first. The documents and the storage are documents.mjs's, shared
// with the JS queue (jsqueue.mjs); the reader has the shape of RumPipeline's nextBatch /
// completeBatch, so one uploader serves every variant.

import { BatchStore, RumScope } from './documents.mjs';

export class BaselineSdk {
  #scope;
  #store;

  constructor(options) {
    this.#scope = new RumScope(options);
    this.#store = new BatchStore(options);
  }

  startView(key, name, attributes) {
    const now = Date.now();
    this.#scope.startView(key, name, attributes, now);
    this.#store.append(JSON.stringify(this.#scope.viewDocument(now)));
  }

  addAction(type, name, attributes) {
    const now = Date.now();
    const scope = this.#scope;
    this.#store.append(JSON.stringify(scope.actionDocument(type, name, scope.context(attributes), now)));
    if (scope.view) this.#store.append(JSON.stringify(scope.viewDocument(now)));
  }

  addError(message, source, stack, attributes) {
    const now = Date.now();
    const scope = this.#scope;
    this.#store.append(JSON.stringify(scope.errorDocument(message, source, stack, scope.context(attributes), now)));
    if (scope.view) this.#store.append(JSON.stringify(scope.viewDocument(now)));
  }

  /** Seals the active batch; everything is already on disk (every write was synchronous). */
  flush() {
    this.#store.seal();
    return true;
  }

  stop() {
    this.flush();
  }

  stats() {
    return { ...this.#store.stats(), queueLength: 0 };
  }

  nextBatch() {
    return this.#store.nextBatch();
  }

  completeBatch(id, delivered) {
    this.#store.completeBatch(id, delivered);
  }
}
