//! The I/O context that the batch set and the pre-consent buffer share: the file system, the
//! clock, the counters, the directory, the sequence of file ids (one sequence for both, so every
//! file is named in creation order), and the bookkeeping of failures and warnings.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::fs::{remove_if_exists, Fs};
use super::names::FileId;
use crate::core::seam::SharedClock;
use crate::core::stats::StorageCounters;
use crate::log;

/// Warnings given once per store (a dropped item is counted, and warned about once).
/// Bits 0-7 are the eviction reasons'.
pub(crate) mod warn {
    pub const DROP_QUOTA: u32 = 1 << 8;
    pub const DROP_FILE_CAP: u32 = 1 << 9;
    pub const DROP_OVERSIZE: u32 = 1 << 10;
    pub const DROP_PRE_CONSENT: u32 = 1 << 11;
    pub const DROP_SERIALIZE: u32 = 1 << 12;
    pub const DROP_INVALID: u32 = 1 << 13;
}

/// The error recorded for a file removed while it was open.
pub(crate) fn vanished() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "the file was removed while open")
}

pub(crate) struct IoContext {
    fs: Arc<dyn Fs>,
    clock: SharedClock,
    counters: Arc<StorageCounters>,
    /// `<storageDir>/rum`
    root: PathBuf,
    next_seq: u64,
    /// The first I/O failure since the last flush, reported by `flush()`.
    failure: Option<String>,
    /// A failure streak is logged once; the next successful write ends it.
    failing: bool,
    warned: u32,
    /// Since the last [`IoContext::take_dir_loss`], the directory was found removed or created
    /// again: what went with it must be forgotten (`Store::settle`).
    dir_loss: bool,
    /// [`Fs::dirs_replaced`] when last looked at.
    dirs_replaced: u64,
}

impl IoContext {
    pub fn new(fs: Arc<dyn Fs>, clock: SharedClock, counters: Arc<StorageCounters>, root: PathBuf) -> Self {
        let dirs_replaced = fs.dirs_replaced();
        Self {
            fs,
            clock,
            counters,
            root,
            next_seq: 0,
            failure: None,
            failing: false,
            warned: 0,
            dir_loss: false,
            dirs_replaced,
        }
    }

    pub fn fs(&self) -> &dyn Fs {
        &*self.fs
    }

    /// The file system, for reads made outside the store's lock.
    pub fn fs_handle(&self) -> Arc<dyn Fs> {
        self.fs.clone()
    }

    pub fn counters(&self) -> &StorageCounters {
        &self.counters
    }

    /// The counters, for reading them across calls that borrow this context.
    pub fn counters_handle(&self) -> Arc<StorageCounters> {
        self.counters.clone()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn now(&self) -> i64 {
        self.clock.wall_ms()
    }

    pub fn batch_path(&self, id: FileId) -> PathBuf {
        self.root.join(id.batch_name())
    }

    /// A sealed batch, plain or compressed.
    pub fn sealed_path(&self, id: FileId, gzip: bool) -> PathBuf {
        self.root.join(id.sealed_name(gzip))
    }

    /// A compressed batch being written.
    pub fn temp_path(&self, id: FileId) -> PathBuf {
        self.root.join(id.temp_name())
    }

    pub fn claimed_path(&self, id: FileId, claimed_ms: i64, gzip: bool) -> PathBuf {
        self.root.join(id.claimed_name(claimed_ms, gzip))
    }

    /// The next file id, created at `now`.
    pub fn new_id(&mut self, now: i64) -> FileId {
        let id = FileId { seq: self.next_seq, created_ms: now };
        self.next_seq += 1;
        id
    }

    /// Continues the sequence after the files found at open.
    pub fn continue_after(&mut self, max_seq: Option<u64>) {
        self.next_seq = max_seq.map_or(0, |s| s.saturating_add(1));
    }

    /// Removes a file (one already gone counts as removed); a failure is recorded. True if it is
    /// gone.
    pub fn remove(&mut self, path: &Path) -> bool {
        match remove_if_exists(&*self.fs, path) {
            Ok(()) => true,
            Err(e) => {
                self.record_failure("remove", path, &e);
                false
            }
        }
    }

    /// fsync of `<storageDir>/rum`, so new and renamed names in it survive a power cut; a failure
    /// is recorded.
    pub fn sync_root(&mut self) {
        if let Err(e) = self.fs.sync_dir(&self.root) {
            let root = self.root.clone();
            self.record_failure("fsync", &root, &e);
        }
    }

    /// Counts a failed I/O operation, keeps it for `flush()`, and logs the first of a streak.
    pub fn record_failure(&mut self, op: &str, path: &Path, err: &io::Error) {
        self.counters.write_errors.incr();
        let msg = format!("{op} {}: {err}", path.display());
        if !self.failing {
            log::warn(&format!("storage: {msg} (counted; logged again after the next successful write)"));
            self.failing = true;
        }
        if self.failure.is_none() {
            self.failure = Some(msg);
        }
    }

    /// A write succeeded: the next failure starts a new streak (and is logged).
    pub fn wrote_ok(&mut self) {
        self.failing = false;
    }

    /// The first failure since the last call.
    pub fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    pub fn warn_once(&mut self, flag: u32, msg: impl FnOnce() -> String) {
        if self.warned & flag == 0 {
            self.warned |= flag;
            log::warn(&format!("storage: {} (counted in stats; warned once)", msg()));
        }
    }

    /// A write found the directory removed (and maybe created it again).
    pub fn note_dir_loss(&mut self) {
        self.dir_loss = true;
    }

    /// Whether a directory was found removed (or replaced: the file system opened another one at
    /// its path, see [`Fs::dirs_replaced`]) since the last call.
    pub fn take_dir_loss(&mut self) -> bool {
        let replaced = self.fs.dirs_replaced();
        if replaced != self.dirs_replaced {
            self.dirs_replaced = replaced;
            self.dir_loss = true;
        }
        std::mem::take(&mut self.dir_loss)
    }
}
