//! The state of one storage directory: the batch set ([`Batches`]), the pre-consent buffer
//! ([`PreConsent`]), and the I/O context they share ([`IoContext`]). This file makes the changes
//! that involve both: consent decisions (moving the buffer into batches), flushes, and forgetting
//! what went with a removed directory.
//!
//! One `Store` sits behind a mutex shared by the writer thread (appends, seals, evictions) and the
//! upload side (claims, completions), so both see one index of the directory.

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::batches::{Batches, Next};
use super::error::StorageError;
use super::fs::Fs;
use super::io_context::IoContext;
use super::limits::Limits;
use super::names::FileId;
use super::ndjson;
use super::pre_consent::PreConsent;
use super::recovery;
use super::segment::{lines, whole_lines};
use crate::core::config::{TrackingConsent, PRE_CONSENT_RETRY_MS};
use crate::core::seam::SharedClock;
use crate::core::stats::StorageCounters;

pub(crate) struct Store {
    io: IoContext,
    batches: Batches,
    pre: PreConsent,
    /// When a move of the pre-consent buffer into batches (consent granted) last failed, while
    /// chunks of it are left to move: tried again at the next flush, or at the next append once
    /// [`PRE_CONSENT_RETRY_MS`] has passed.
    migration_owed: Option<i64>,
}

impl Store {
    /// The store of `root`, with what an earlier process left there adopted (see `recovery`).
    pub fn open(
        fs: Arc<dyn Fs>,
        clock: SharedClock,
        limits: Limits,
        counters: Arc<StorageCounters>,
        root: &Path,
    ) -> Result<Store, StorageError> {
        let mut store = Store {
            io: IoContext::new(fs, clock, counters, root.to_path_buf()),
            batches: Batches::new(limits),
            pre: PreConsent::new(root, limits.pre_consent_max_bytes),
            migration_owed: None,
        };
        recovery::recover(&mut store.io, &mut store.batches, &mut store.pre, limits.claim_timeout_ms)?;
        store.publish();
        Ok(store)
    }

    pub fn now(&self) -> i64 {
        self.io.now()
    }

    /// The file system, for reads made outside the lock.
    pub fn fs(&self) -> Arc<dyn Fs> {
        self.io.fs_handle()
    }

    pub fn warn_once(&mut self, flag: u32, msg: impl FnOnce() -> String) {
        self.io.warn_once(flag, msg);
    }

    /// A write found the directory removed: the side that found it has forgotten what went with
    /// it; the other side does it now.
    fn settle(&mut self) {
        if self.io.take_dir_loss() {
            self.batches.resync(&mut self.io);
            self.pre.resync(&self.io);
        }
    }

    /// Appends one serialized, `\n`-terminated line to the batches (consent granted).
    pub fn append_line(&mut self, line: &[u8], now: i64) {
        if self.migration_owed.is_some_and(|at| now.saturating_sub(at) >= PRE_CONSENT_RETRY_MS) {
            // The buffer's documents came first: they go first.
            self.migrate_pre_consent();
        }
        self.batches.append_line(&mut self.io, line, now);
        self.settle();
    }

    /// Keeps one serialized, `\n`-terminated line in the pre-consent buffer (consent pending).
    pub fn buffer_line(&mut self, line: &[u8], now: i64) {
        self.pre.buffer_line(&mut self.io, line, now);
        self.settle();
    }

    /// Writes everything waiting, batches and pre-consent buffer.
    pub fn write_out_all(&mut self) {
        self.batches.write_out_active(&mut self.io);
        self.settle();
        self.pre.write_out(&mut self.io);
        self.settle();
    }

    /// When the active batch's window passes (wall ms), if there is one: an idle writer sleeps
    /// until then.
    pub fn window_deadline(&self) -> Option<i64> {
        self.batches.window_deadline()
    }

    /// Seals the active batch when its window has passed (the writer's idle wake-up).
    pub fn seal_if_window_passed(&mut self) {
        self.batches.seal_if_window_passed(&mut self.io);
        self.settle();
    }

    /// Writes everything waiting and seals the active batch; `sync` adds the fsyncs of the crash
    /// path. Returns the first failure since the previous flush.
    pub fn flush(&mut self, sync: bool) -> Option<String> {
        if self.migration_owed.is_some() {
            self.migrate_pre_consent();
        }
        self.write_out_all();
        if sync {
            self.batches.sync_active(&mut self.io);
            self.pre.sync(&mut self.io);
        }
        self.batches.seal_active(&mut self.io);
        self.settle();
        if sync {
            self.sync_dirs();
        }
        self.publish();
        self.io.take_failure()
    }

    /// fsync of the directories, so new and renamed names survive a power cut.
    fn sync_dirs(&mut self) {
        self.io.sync_root();
        let pending = self.pre.dir().to_path_buf();
        match self.io.fs().sync_dir(&pending) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => self.io.record_failure("fsync", &pending, &e),
            _ => {}
        }
    }

    /// Applies a consent: the buffer moves into batches (granted), is dropped (not granted), or
    /// stays (pending). Idempotent, so the initial consent is applied the same way at open.
    pub fn apply_consent(&mut self, consent: TrackingConsent) {
        self.migration_owed = None;
        match consent {
            TrackingConsent::Granted => self.migrate_pre_consent(),
            TrackingConsent::NotGranted => self.pre.wipe(&mut self.io),
            TrackingConsent::Pending => {}
        }
    }

    /// Consent granted: each chunk's lines are appended to batches, written and fsynced, and
    /// only then is the chunk deleted. A crash in between duplicates those lines at the next
    /// migration, and never loses them.
    ///
    /// A write that fails stops the move at that chunk, which stays (with the later ones) for the
    /// next try ([`Store::migration_owed`]): its lines whose write failed are still in it, so they
    /// are not counted dropped; those written before the failure are in batches, so they are no
    /// longer counted in the buffer, and the next try in this process starts after them
    /// ([`Chunk::moved_lines`]).
    ///
    /// [`Chunk::moved_lines`]: super::pre_consent::Chunk::moved_lines
    fn migrate_pre_consent(&mut self) {
        self.migration_owed = None;
        if !self.pre.retry_removals(&mut self.io) {
            self.migration_owed = Some(self.io.now());
        }
        self.pre.close_active(&mut self.io);
        // Documents already waiting for the active batch go out first: a write that fails below
        // then holds lines of the chunk being moved only.
        self.batches.write_out_active(&mut self.io);
        self.settle();
        if self.pre.oldest().is_none() {
            return;
        }
        self.batches.set_sync_on_seal(true);
        // The chunk is out of the buffer while its lines move: if the directory goes meanwhile,
        // the resync of `settle` must neither count it lost (its lines are in batches) nor leave
        // the next chunk in its place to be deleted as migrated.
        while let Some(mut chunk) = self.pre.pop_oldest() {
            let path = self.pre.path(chunk.id);
            let data = match self.io.fs().read(&path) {
                Ok(data) => data,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.pre.forget(&self.io, chunk);
                    continue;
                }
                Err(e) => {
                    self.io.record_failure("read", &path, &e);
                    self.pre.put_back(chunk);
                    self.migration_owed = Some(self.io.now());
                    break;
                }
            };
            let counters = self.io.counters_handle();
            let errors = counters.write_errors.get();
            let dropped_before = counters.dropped_write_error.get();
            let now = self.io.now();
            let moved = self.move_lines(&data, chunk.moved_lines, now, Some(errors));
            self.settle();
            self.io.sync_root();
            if counters.write_errors.get() == errors {
                self.pre.migrated(&mut self.io, chunk);
                if counters.write_errors.get() != errors {
                    // Its file stays: deleted at the next try.
                    self.migration_owed = Some(now);
                }
                continue;
            }
            if !self.io.fs().exists(&path) {
                // Gone with the directory: the lines read are the only copy, so the rest of them
                // go on (into a batch in the recreated directory); what was lost is accounted on
                // the batches' side.
                self.move_lines(&data, moved.looked_at, now, None);
                self.settle();
                self.pre.migrated(&mut self.io, chunk);
                break;
            }
            let Moved { handed, looked_at } = moved;
            // Kept for the next try. The lines a failed write dropped are the last ones handed
            // over (a failed write drops what waited since the last good one), and still here.
            let still_here = usize::try_from(counters.dropped_write_error.get().saturating_sub(dropped_before))
                .unwrap_or(usize::MAX)
                .min(handed.len());
            counters.dropped_write_error.sub(still_here as u64);
            let written = (handed.len() - still_here) as u64;
            chunk.moved_lines = if still_here > 0 { handed[handed.len() - still_here] } else { looked_at };
            chunk.events = chunk.events.saturating_sub(written);
            counters.pre_consent_migrated.add(written);
            self.pre.put_back(chunk);
            self.migration_owed = Some(now);
            break;
        }
        self.batches.set_sync_on_seal(false);
    }

    /// Hands the document lines of `data` from line `from` on to the batches (counting the lines
    /// that are not documents), then writes and fsyncs them. With `stop_at`, the write-error count
    /// when the move began, it stops at the first failed write, so that the lines the failure
    /// dropped are the last ones handed over.
    fn move_lines(&mut self, data: &[u8], from: usize, now: i64, stop_at: Option<u64>) -> Moved {
        let counters = self.io.counters_handle();
        let mut moved = Moved { handed: Vec::new(), looked_at: from };
        for (i, line) in lines(whole_lines(data)).enumerate().skip(from) {
            // A chunk found at open may hold anything (see `ndjson`).
            if ndjson::is_document(&line[..line.len() - 1]) {
                if let Some(errors) = stop_at {
                    // A seal the line would start with is made first: when its write fails, the
                    // lines it dropped are the last ones handed over, and this one stays.
                    self.batches.seal_if_due(&mut self.io, now, line.len() as u64);
                    if counters.write_errors.get() != errors {
                        break;
                    }
                }
                self.batches.append_line(&mut self.io, line, now);
                moved.handed.push(i);
            } else {
                counters.invalid_lines_dropped.incr();
            }
            moved.looked_at = i + 1;
            if stop_at.is_some_and(|errors| counters.write_errors.get() != errors) {
                break;
            }
        }
        if self.batches.write_out_active(&mut self.io) {
            self.batches.sync_active(&mut self.io);
        }
        moved
    }

    /// Claims the oldest sealed batch (see [`Batches::claim_next`]).
    pub fn claim_next(&mut self) -> Result<Next, StorageError> {
        let claim = self.batches.claim_next(&mut self.io);
        self.settle();
        claim
    }

    /// The uploader's answer for a claimed batch (see [`Batches::complete`]).
    pub fn complete(&mut self, id: FileId, claimed_ms: i64, gzip: bool, delivered: bool) -> Result<(), StorageError> {
        self.batches.complete(&mut self.io, id, claimed_ms, gzip, delivered)
    }

    /// The claim made at `claimed_ms` found its file gone: forgotten, and counted as lost.
    pub fn forget_claim(&mut self, id: FileId, claimed_ms: i64) {
        self.batches.forget_claim(&mut self.io, id, claimed_ms);
    }

    /// The claim made at `claimed_ms` found no whole line in its batch: it goes.
    pub fn discard_empty(&mut self, id: FileId, claimed_ms: i64) {
        self.batches.discard_empty(&mut self.io, id, claimed_ms);
    }

    /// Checks one batch found at open (see [`Batches::check_next_adopted`]); false when none is
    /// left.
    pub fn check_next_adopted(&mut self) -> bool {
        let more = self.batches.check_next_adopted(&mut self.io);
        self.settle();
        more
    }

    /// Publishes the gauges to the shared counters.
    pub fn publish(&self) {
        self.batches.publish(self.io.counters());
        self.pre.publish(self.io.counters());
    }
}

/// What [`Store::move_lines`] did: the line number of each document it handed to the batches, and
/// how many lines it looked at.
struct Moved {
    handed: Vec<usize>,
    looked_at: usize,
}
