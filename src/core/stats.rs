//! Counters exposed to JS through `stats()`.
//!
//! Counters are atomics shared by every dispatcher of a pipeline and by its writer thread; a
//! snapshot reads each one once (the set is not one atomic picture, which `stats()` never needs).

use std::sync::atomic::{AtomicU64, Ordering};

/// A monotonic or high-water counter.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn incr(&self) {
        self.add(1);
    }

    pub fn sub(&self, n: u64) {
        self.0.fetch_sub(n, Ordering::Relaxed);
    }

    pub fn set(&self, n: u64) {
        self.0.store(n, Ordering::Relaxed);
    }

    /// Keeps the largest value seen.
    pub fn max(&self, n: u64) {
        self.0.fetch_max(n, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Dispatch-side counters (the JS threads).
#[derive(Debug, Default)]
pub struct DispatchCounters {
    pub calls_inline: Counter,
    pub calls_queued: Counter,
    /// Events waiting, all dispatchers of the pipeline together.
    pub queue_length: Counter,
    pub queue_high_water: Counter,
    pub slices_run: Counter,
    /// Slices run synchronously because the queue was at capacity.
    pub slices_at_capacity: Counter,
    pub longest_slice_us: Counter,
    pub longest_inline_turn_us: Counter,
    pub drains: Counter,
    pub documents_produced: Counter,
    pub view_writes_saved: Counter,
    pub mapper_errors: Counter,
    pub mapper_dropped: Counter,
    /// Failures inside deferred slices (sink errors, mapper faults), logged and swallowed.
    pub slice_errors: Counter,
    pub sink_errors: Counter,
    pub resources_dropped: Counter,
    pub sessions_started: Counter,
    /// `stopResource` calls whose key matched no pending resource.
    pub resources_unmatched: Counter,
    /// Calls made from inside the event mapper (re-entrant, through the dispatcher's inbox); also
    /// counted in `calls_inline`.
    pub calls_reentrant: Counter,
}

/// Storage-side counters (the writer thread and the upload reader).
#[derive(Debug, Default)]
pub struct StorageCounters {
    pub documents_written: Counter,
    pub bytes_written: Counter,
    pub bytes_on_disk: Counter,
    pub batches_on_disk: Counter,
    pub batches_sealed: Counter,
    pub evicted_batches_quota: Counter,
    pub evicted_batches_count: Counter,
    pub evicted_batches_age: Counter,
    pub evicted_events_quota: Counter,
    pub evicted_events_count: Counter,
    pub evicted_events_age: Counter,
    pub dropped_oversize: Counter,
    pub dropped_consent: Counter,
    pub dropped_pre_consent_full: Counter,
    pub dropped_serialize: Counter,
    pub dropped_write_error: Counter,
    pub write_errors: Counter,
    pub batches_claimed: Counter,
    pub batches_delivered: Counter,
    pub batches_released: Counter,
    pub pre_consent_bytes: Counter,
    pub flush_timeouts: Counter,
    /// Documents the writer thread received (the left side of the conservation identity below).
    pub documents_received: Counter,
    /// Gauge: events in batch files, claimed ones included.
    pub events_on_disk: Counter,
    /// Gauge: events in the pre-consent buffer.
    pub pre_consent_events: Counter,
    /// Events of batches the uploader acknowledged as delivered (lines of the file, before view
    /// reduction).
    pub events_delivered: Counter,
    /// Events moved from the pre-consent buffer into batches.
    pub pre_consent_migrated: Counter,
    pub evicted_batches_oversize: Counter,
    pub evicted_events_oversize: Counter,
    /// New documents dropped because only claimed batches and the active one were left to evict.
    pub dropped_quota: Counter,
    /// New documents dropped because the file cap was reached and every other batch was claimed.
    pub dropped_file_cap: Counter,
    /// Batches (and their events) that vanished from the directory behind the writer's back.
    pub lost_batches_external: Counter,
    pub lost_events_external: Counter,
    /// Recovery at open: batch files adopted from an earlier process (sealed if its writer died
    /// mid-batch), torn last lines cut, stale claims released (at open or by `next_batch`).
    pub batches_recovered: Counter,
    pub torn_lines_dropped: Counter,
    pub stale_claims_released: Counter,
    /// Upload-side calls that found the store held by the writer for longer than
    /// `UPLOAD_LOCK_WAIT` (a stalled disk): `next_batch` returned `Busy`, `complete_batch` left
    /// its change to the next holder of the store.
    pub upload_waits_given_up: Counter,
    /// File operations of `next_batch` / `complete_batch` that failed (claim, read, delete,
    /// release): returned to the caller and counted here.
    pub upload_errors: Counter,
}

impl StorageCounters {
    /// Events that left storage without being delivered, all reasons together.
    pub fn events_lost(&self) -> u64 {
        self.evicted_events_quota.get()
            + self.evicted_events_count.get()
            + self.evicted_events_age.get()
            + self.evicted_events_oversize.get()
            + self.dropped_oversize.get()
            + self.dropped_consent.get()
            + self.dropped_pre_consent_full.get()
            + self.dropped_serialize.get()
            + self.dropped_write_error.get()
            + self.dropped_quota.get()
            + self.dropped_file_cap.get()
            + self.lost_events_external.get()
    }

    /// Conservation: every received document is on disk, delivered, evicted or dropped.
    /// `documents_received == events_accounted()` holds whenever the writer is idle (after a
    /// flush), for a directory that started empty.
    pub fn events_accounted(&self) -> u64 {
        self.events_on_disk.get() + self.pre_consent_events.get() + self.events_delivered.get() + self.events_lost()
    }
}
