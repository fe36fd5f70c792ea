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

/// The one list of counters, by set. Expanded here into the core's counter structs and by the
/// binding into the JS `stats()` object, so a counter cannot be missing from either side; each
/// doc comment lands in both the rustdoc and `index.d.ts`.
#[macro_export]
macro_rules! for_each_counter_set {
    ($then:ident) => {
        $then! {
            /// Dispatch-side counters (the JS threads).
            DispatchCounters {
                /// Calls processed on the caller's turn.
                calls_inline,
                /// Calls queued for a later slice.
                calls_queued,
                /// Gauge: events waiting, all dispatchers of the pipeline together.
                queue_length,
                /// The longest the queue has been.
                queue_high_water,
                /// Slices run (scheduled, at capacity and drains).
                slices_run,
                /// Slices run synchronously because the queue was at capacity.
                slices_at_capacity,
                /// The longest slice, µs.
                longest_slice_us,
                /// The longest time one turn spent on inline calls, µs (light turns before it included: their
                /// time counts toward the next awaited turn end).
                longest_inline_turn_us,
                /// Synchronous drains (errors, crashes, flush, stop, session, user, consent).
                drains,
                /// Documents produced by processing, before the event mapper.
                documents_produced,
                /// View documents not written because a later one of the same slice replaced them.
                view_writes_saved,
                /// Event mapper calls that threw or returned something unusable (document kept).
                mapper_errors,
                /// Documents the event mapper dropped (returned null).
                mapper_dropped,
                /// Failures inside deferred slices (sink errors, mapper faults), logged and swallowed.
                slice_errors,
                /// Documents or consent changes the writer could not take (it was closed).
                sink_errors,
                /// Pending resources given up (per-view cap, or their view was evicted).
                resources_dropped,
                /// Sessions started.
                sessions_started,
                /// Sessions started untracked (`sessionSampleRate`): they write nothing.
                sessions_untracked,
                /// Calls of an untracked session skipped on the caller's turn, before their
                /// arguments were read.
                calls_untracked,
                /// `stopResource` calls whose key matched no pending resource.
                resources_unmatched,
                /// Calls made from inside the event mapper (re-entrant); also counted in
                /// `callsInline`.
                calls_reentrant,
                /// `addAttribute` calls not applied because the global attributes would pass
                /// their budget (half of `eventMaxBytes`) in the order calls from several threads
                /// were applied; one thread's own calls past it throw at the call instead.
                attributes_refused,
                /// Calls of the capture buffer's slices parsed on the parse thread, off the JS thread.
                calls_parsed_ahead,
                /// Of the calls parsed on the parse thread, those also processed there (no event
                /// mapper, nothing queued on the JS thread): scope bookkeeping and documents off it.
                calls_processed_ahead,
                /// Slices' handovers the parse thread refused (text the capture buffer does not
                /// make): their calls are not recorded; logged.
                handovers_refused,
            }

            /// Storage-side counters (the writer thread and the upload side).
            StorageCounters {
                /// Documents appended to batch files or the pre-consent buffer.
                documents_written,
                /// Bytes appended, all files.
                bytes_written,
                /// Gauge: bytes of batch files, claimed ones included.
                bytes_on_disk,
                /// Gauge: batch files, claimed ones included.
                batches_on_disk,
                /// Batches sealed (ready for upload).
                batches_sealed,
                /// Batches evicted to stay within the disk quota.
                evicted_batches_quota,
                /// Batches evicted to stay within the file cap.
                evicted_batches_count,
                /// Batches deleted for being older than `batchMaxAgeMs`.
                evicted_batches_age,
                /// Events of the batches evicted for the quota.
                evicted_events_quota,
                /// Events of the batches evicted for the file cap.
                evicted_events_count,
                /// Events of the batches deleted for their age.
                evicted_events_age,
                /// Documents larger than `eventMaxBytes`, dropped.
                dropped_oversize,
                /// Documents dropped because consent is `not_granted`.
                dropped_consent,
                /// Documents dropped from a full pre-consent buffer (its oldest half).
                dropped_pre_consent_full,
                /// Documents that could not be serialized, dropped.
                dropped_serialize,
                /// Documents lost to a failed write.
                dropped_write_error,
                /// Failed file operations of the writer (disk full, directory removed, ...).
                write_errors,
                /// Batches handed to an uploader by `nextBatch()`.
                batches_claimed,
                /// Batches acknowledged as delivered and deleted.
                batches_delivered,
                /// Claims released for a retry.
                batches_released,
                /// Gauge: bytes in the pre-consent buffer.
                pre_consent_bytes,
                /// `flush()` / `markCrash()` calls that gave up waiting for the writer.
                flush_timeouts,
                /// Documents the writer received: the left side of the conservation identity
                /// `documentsReceived = eventsOnDisk + preConsentEvents + eventsDelivered +
                /// viewsSuperseded + every evicted*, dropped* and lost* event count`, which holds
                /// whenever the writer is idle.
                documents_received,
                /// Gauge: events in batch files, claimed ones included.
                events_on_disk,
                /// Gauge: events in the pre-consent buffer.
                pre_consent_events,
                /// Events of batches acknowledged as delivered (lines of the file, before view
                /// reduction).
                events_delivered,
                /// Events moved from the pre-consent buffer into batches.
                pre_consent_migrated,
                /// Batches found at open larger than any batch this configuration writes, deleted.
                evicted_batches_oversize,
                /// Events of the batches evicted as oversize.
                evicted_events_oversize,
                /// New documents dropped because only claimed batches and the active one were left
                /// to evict.
                dropped_quota,
                /// New documents dropped because the file cap was reached and every other batch
                /// was claimed.
                dropped_file_cap,
                /// Batches that vanished from the directory behind the writer's back.
                lost_batches_external,
                /// Events of the batches that vanished.
                lost_events_external,
                /// Batch files adopted at open from an earlier process (sealed if its writer died
                /// mid-batch).
                batches_recovered,
                /// Torn last lines cut at recovery.
                torn_lines_dropped,
                /// Claims older than the claim timeout, released (at open or by `nextBatch()`).
                stale_claims_released,
                /// `nextBatch()` and `completeBatch()` calls that gave up waiting for the writer,
                /// which held the batch directory when their 16 ms wait ended (a stalled disk, a
                /// long seal), at most one per call: `nextBatch()` returned null, `completeBatch()`
                /// left its change to the writer (made before its next document). Not counted: a
                /// `nextBatch()` that returned null while it waited for the writer's check of the
                /// compressed batches found at open (`pendingBatches()` tells that case) and found
                /// the directory free, and a `completeBatch()` refused for its id. A `nextBatch()`
                /// during that check that finds the writer holding the directory past its wait (the
                /// writer decompressing a large batch) is counted.
                upload_waits_given_up,
                /// File operations of `nextBatch()` / `completeBatch()` that failed (claim, read,
                /// delete, release): logged and counted, never thrown; the batch stays for a later
                /// call.
                upload_errors,
                /// Documents dropped before the writer because what waited for it in memory passed
                /// its bound (a stalled disk). Never received by the writer, so not in the
                /// conservation identity.
                dropped_backlog,
                /// Lines of batch files or pre-consent chunks found at open that were not one JSON
                /// document each (invalid UTF-8, binary garbage, NUL runs, empty lines, other
                /// JSON): never handed to an uploader.
                invalid_lines_dropped,
                /// View documents dropped when their batch was sealed compressed, because a later
                /// `_dd.document_version` of the same view is in the batch (the intake keeps only
                /// the highest): accounted for in the conservation identity, never uploaded.
                views_superseded,
                /// Gauge: sealed batches waiting for `nextBatch()`: not claimed, and still to be
                /// uploaded (those found at open that the writer has not checked yet included).
                /// `pendingBatches()` returns it.
                batches_pending,
            }
        }
    };
}

/// Defines one struct of [`Counter`]s per set of [`for_each_counter_set`].
macro_rules! counter_structs {
    ($( $(#[$set_doc:meta])* $set:ident { $( $(#[$doc:meta])* $field:ident, )* } )*) => {
        $(
            $(#[$set_doc])*
            #[derive(Debug, Default)]
            pub struct $set {
                $( $(#[$doc])* pub $field: Counter, )*
            }
        )*
    };
}

for_each_counter_set!(counter_structs);

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

    /// Conservation: every received document is on disk, delivered, evicted, dropped, or a view
    /// superseded in its batch.
    /// `documents_received == events_accounted()` holds whenever the writer is idle (after a
    /// flush), for a directory that started empty.
    pub fn events_accounted(&self) -> u64 {
        self.events_on_disk.get()
            + self.pre_consent_events.get()
            + self.events_delivered.get()
            + self.views_superseded.get()
            + self.events_lost()
    }
}
