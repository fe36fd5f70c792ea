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
}
