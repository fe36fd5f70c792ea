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
use crate::core::config::TrackingConsent;
use crate::core::seam::SharedClock;
use crate::core::stats::StorageCounters;

pub(crate) struct Store {
    io: IoContext,
    batches: Batches,
    pre: PreConsent,
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
        match consent {
            TrackingConsent::Granted => self.migrate_pre_consent(),
            TrackingConsent::NotGranted => self.pre.wipe(&mut self.io),
            TrackingConsent::Pending => {}
        }
    }

    /// Consent granted: each chunk's lines are appended to batches, written and fsynced, and
    /// only then is the chunk deleted. A crash in between duplicates those lines at the next
    /// migration, and never loses them. A failure keeps the chunk (and the later ones) for the
    /// next migration.
    fn migrate_pre_consent(&mut self) {
        self.pre.close_active(&mut self.io);
        self.settle();
        if self.pre.oldest().is_none() {
            return;
        }
        self.batches.set_sync_on_seal(true);
        // The chunk is out of the buffer while its lines move: if the directory goes meanwhile,
        // the resync of `settle` must neither count it lost (its lines are in batches) nor leave
        // the next chunk in its place to be deleted as migrated.
        while let Some(chunk) = self.pre.pop_oldest() {
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
                    break;
                }
            };
            let errors = self.io.counters().write_errors.get();
            let now = self.io.now();
            for line in lines(whole_lines(&data)) {
                // A chunk found at open may hold anything (see `ndjson`).
                if ndjson::is_document(&line[..line.len() - 1]) {
                    self.batches.append_line(&mut self.io, line, now);
                } else {
                    self.io.counters().invalid_lines_dropped.incr();
                }
            }
            if self.batches.write_out_active(&mut self.io) {
                self.batches.sync_active(&mut self.io);
            }
            self.settle();
            self.io.sync_root();
            if self.io.counters().write_errors.get() != errors {
                // Kept for the next migration while its file is there; gone with the directory,
                // its lines are accounted on the batches' side (written, dropped or lost there).
                if self.io.fs().exists(&path) {
                    self.pre.put_back(chunk);
                } else {
                    self.pre.migrated(&mut self.io, chunk);
                }
                break;
            }
            self.pre.migrated(&mut self.io, chunk);
        }
        self.batches.set_sync_on_seal(false);
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
