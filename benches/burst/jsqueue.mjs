// The JS queue: the reference change's dispatch queue (docs/design.md: the reference change) written in plain JS, as
// a user would write it instead of using the native module. Same documents and same storage as the
// baseline (documents.mjs): everything still happens on the caller's thread, synchronously; what
// changes is *when*.
//
// - Capture: every call builds its event at call time (call-time Date.now(), a copy of its
//   attributes merged with the global ones), so queued events keep the timestamp, attributes and
//   order of their call.
// - Turn: one macrotask. The first processing of a turn schedules a turn-end timer
//   (setTimeout 0); when it fires, the time the SDK spent on the turn resets to zero.
// - Inline path: while the queue is empty and the turn has spent less than 4 ms, a call is
//   processed on the caller's turn (action document + full view document, as before the change),
//   and its time, capture included, is charged to the turn.
// - Queued path: otherwise the event is queued. The queue is bounded at 5,000: at the bound a
//   slice runs synchronously (charged to the turn) before the event is queued; nothing is dropped.
// - Slices: a setTimeout(0) slice processes queued events in order until 4 ms have elapsed (at
//   least one), then writes the view document once (view coalescing), and schedules the next slice
//   while anything is left. A failure in a deferred slice is logged and counted; it never stops
//   later slices and never throws into the timer.
// - Synchronous drains: the whole queue is processed on the caller's turn, coalesced and without a
//   budget, before addError, keepAlive, flush and stop.
// - After stop: every call is processed on the caller's turn.
//
// Processing a document means what the seed SDK does: build it as an object, JSON.stringify it, and
// append it to the active NDJSON batch with its own open / append / close (BatchStore.append).

import { BatchStore, RumScope } from './documents.mjs';

/** The reference change's limits (docs/design.md, "Dispatch rules"). */
export const JS_QUEUE_LIMITS = { turnBudgetMs: 4, queueCapacity: 5_000 };

const START_VIEW = 0;
const ACTION = 1;

const now = () => performance.now();

export class JsQueueSdk {
  #scope;
  #store;
  #budgetMs;
  #capacity;
  #queue = [];
  #head = 0; // #queue[#head] is the oldest queued event
  #turnSpentMs = 0;
  #turnEndScheduled = false;
  #sliceScheduled = false;
  #stopped = false;
  #viewDirtyAt = null; // a slice changed the view at this call time without writing its document yet
  #counters = {
    callsInline: 0, callsQueued: 0, queueHighWater: 0, slicesRun: 0, slicesAtCapacity: 0,
    longestSliceUs: 0, longestInlineTurnUs: 0, drains: 0, viewWritesSaved: 0, sliceErrors: 0,
  };
  #inlineTurnMs = 0;
  #onTurnEnd = () => {
    this.#turnEndScheduled = false;
    this.#turnSpentMs = 0;
    this.#inlineTurnMs = 0;
  };
  #onSlice = () => {
    this.#sliceScheduled = false;
    if (this.#length() === 0) return; // a drain got there first
    try {
      this.#runSlice();
    } catch (e) {
      this.#counters.sliceErrors += 1;
      console.error(`jsqueue: a deferred slice failed: ${e?.stack ?? e}`);
    }
    if (this.#length() > 0) this.#scheduleSlice();
  };

  constructor({ turnBudgetMs = JS_QUEUE_LIMITS.turnBudgetMs, queueCapacity = JS_QUEUE_LIMITS.queueCapacity, ...options }) {
    this.#scope = new RumScope(options);
    this.#store = new BatchStore(options);
    this.#budgetMs = turnBudgetMs;
    this.#capacity = queueCapacity;
  }

  startView(key, name, attributes) {
    const t0 = this.#inlineOpen() ? now() : -1;
    this.#route({ kind: START_VIEW, key, name, attrs: { ...attributes }, date: Date.now() }, t0);
  }

  addAction(type, name, attributes) {
    const t0 = this.#inlineOpen() ? now() : -1;
    this.#route({ kind: ACTION, type, name, context: this.#scope.context(attributes), date: Date.now() }, t0);
  }

  /** An error: the queue is processed first, then the error, on the caller's turn. */
  addError(message, source, stack, attributes) {
    const date = Date.now();
    const context = this.#scope.context(attributes);
    this.#drain();
    const scope = this.#scope;
    this.#store.append(JSON.stringify(scope.errorDocument(message, source, stack, context, date)));
    if (scope.view) this.#store.append(JSON.stringify(scope.viewDocument(date)));
  }

  /** Keep-alive (background): processes the whole queue on the caller's turn. */
  keepAlive() {
    this.#drain();
  }

  /** Processes the whole queue on the caller's turn and seals the active batch. */
  flush() {
    this.#drain();
    this.#store.seal();
    return true;
  }

  /** Drains; every later call is processed on its caller's turn. */
  stop() {
    this.flush();
    this.#stopped = true;
  }

  get queueLength() {
    return this.#length();
  }

  stats() {
    return { ...this.#counters, queueLength: this.#length(), ...this.#store.stats() };
  }

  nextBatch() {
    return this.#store.nextBatch();
  }

  completeBatch(id, delivered) {
    this.#store.completeBatch(id, delivered);
  }

  #length() {
    return this.#queue.length - this.#head;
  }

  /** Whether a call made now takes the inline path (decided before its capture, which it charges). */
  #inlineOpen() {
    return this.#stopped || (this.#length() === 0 && this.#turnSpentMs < this.#budgetMs);
  }

  #route(ev, t0) {
    if (t0 < 0) {
      this.#enqueue(ev);
      return;
    }
    this.#counters.callsInline += 1;
    this.#process(ev, true);
    if (!this.#stopped) this.#charge(now() - t0, true);
  }

  #enqueue(ev) {
    if (this.#length() >= this.#capacity) {
      this.#counters.slicesAtCapacity += 1;
      this.#charge(this.#runSlice(), false);
    }
    this.#queue.push(ev);
    this.#counters.callsQueued += 1;
    const length = this.#length();
    if (length > this.#counters.queueHighWater) this.#counters.queueHighWater = length;
    if (!this.#sliceScheduled) this.#scheduleSlice();
  }

  #scheduleSlice() {
    this.#sliceScheduled = true;
    setTimeout(this.#onSlice, 0);
  }

  #shift() {
    const ev = this.#queue[this.#head];
    this.#queue[this.#head] = undefined;
    this.#head += 1;
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
    } else if (this.#head >= 4_096 && this.#head * 2 >= this.#queue.length) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
    return ev;
  }

  /** Time the SDK spent on the caller's turn; the turn's first processing schedules its end. */
  #charge(ms, inline) {
    this.#turnSpentMs += ms;
    if (inline) {
      this.#inlineTurnMs += ms;
      const us = Math.round(this.#inlineTurnMs * 1000);
      if (us > this.#counters.longestInlineTurnUs) this.#counters.longestInlineTurnUs = us;
    }
    if (!this.#turnEndScheduled) {
      this.#turnEndScheduled = true;
      setTimeout(this.#onTurnEnd, 0);
    }
  }

  /** Queued events in order until the budget is spent (at least one), then the view, once. */
  #runSlice() {
    const start = now();
    try {
      while (this.#length() > 0) {
        this.#process(this.#shift(), false);
        if (now() - start >= this.#budgetMs) break;
      }
    } finally {
      this.#writeDirtyView();
    }
    const spent = now() - start;
    this.#counters.slicesRun += 1;
    const us = Math.round(spent * 1000);
    if (us > this.#counters.longestSliceUs) this.#counters.longestSliceUs = us;
    return spent;
  }

  /** The whole queue, coalesced, on the caller's turn. */
  #drain() {
    if (this.#length() === 0) return;
    const start = now();
    this.#counters.drains += 1;
    try {
      while (this.#length() > 0) this.#process(this.#shift(), false);
    } finally {
      this.#writeDirtyView();
    }
    if (!this.#stopped) this.#charge(now() - start, false);
  }

  /**
   * One event: its documents built, serialized and appended. Inline, the view document is written
   * with its event (as before the change); in a slice or a drain, the view is only marked and its
   * document written once at the end (#writeDirtyView).
   */
  #process(ev, inline) {
    const scope = this.#scope;
    if (ev.kind === ACTION) {
      this.#store.append(JSON.stringify(scope.actionDocument(ev.type, ev.name, ev.context, ev.date)));
      if (!scope.view) return;
      if (inline) {
        this.#store.append(JSON.stringify(scope.viewDocument(ev.date)));
      } else {
        if (this.#viewDirtyAt !== null) this.#counters.viewWritesSaved += 1;
        this.#viewDirtyAt = ev.date;
      }
    } else if (ev.kind === START_VIEW) {
      this.#writeDirtyView(); // the previous view's last change first
      scope.startView(ev.key, ev.name, ev.attrs, ev.date);
      this.#store.append(JSON.stringify(scope.viewDocument(ev.date)));
    }
  }

  #writeDirtyView() {
    const at = this.#viewDirtyAt;
    if (at === null) return;
    this.#viewDirtyAt = null;
    this.#store.append(JSON.stringify(this.#scope.viewDocument(at)));
  }
}
