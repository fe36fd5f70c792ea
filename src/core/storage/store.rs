//! The state of one storage directory: the batches on disk, the active batch, the pre-consent
//! buffer, and the byte and event accounting behind the quota.
//!
//! One `Store` sits behind a mutex shared by the writer thread (appends, seals, evictions) and the
//! upload side (claims, completions), so both see one index of the directory.
//!
//! **The quota invariant.** `bytes` counts every batch file, claimed ones included, and the lines
//! of the active batch that still wait in memory. A line is counted *before* it is written and a
//! file is uncounted only *after* it is removed, so the bytes on disk never exceed `bytes`, and
//! `bytes` never exceeds `diskQuotaBytes`: room is made by evicting the oldest unclaimed sealed
//! batches, and a line that still does not fit is dropped.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::consent::PreConsent;
use super::fs::{remove_if_exists, Fs};
use super::names::FileId;
use super::segment::{Segment, WriteFailure, WRITE_CHUNK};
use super::WallClock;
use crate::core::config::Config;
use crate::core::stats::StorageCounters;
use crate::log;

/// The limits of the storage contract, in the units the store computes with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub batch_max_bytes: u64,
    pub batch_window_ms: i64,
    pub disk_quota_bytes: u64,
    pub max_batch_files: usize,
    pub batch_max_age_ms: i64,
    pub event_max_bytes: u64,
    pub pre_consent_max_bytes: u64,
    pub claim_timeout_ms: i64,
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Limits {
    pub fn from_config(c: &Config) -> Self {
        Self {
            batch_max_bytes: c.batch_max_bytes,
            batch_window_ms: ms(c.batch_window_ms),
            disk_quota_bytes: c.disk_quota_bytes,
            max_batch_files: usize::try_from(c.max_batch_files).unwrap_or(usize::MAX),
            batch_max_age_ms: ms(c.batch_max_age_ms),
            event_max_bytes: c.event_max_bytes,
            pre_consent_max_bytes: c.pre_consent_max_bytes,
            claim_timeout_ms: ms(c.claim_timeout_ms),
        }
    }

    /// The largest batch this configuration can write: a batch rolls before it would pass
    /// `batch_max_bytes`, unless a single document is larger (it then has a batch of its own).
    pub fn largest_batch(&self) -> u64 {
        self.batch_max_bytes.max(self.event_max_bytes + 1)
    }
}

/// Why a sealed batch was deleted before upload (DESIGN.md: quota, count, age, oversize).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Eviction {
    /// Room for a new line under `diskQuotaBytes`.
    Quota,
    /// Room for a new file under `maxBatchFiles`.
    Count,
    /// Older than `batchMaxAgeMs`: the intake would drop it.
    Age,
    /// Larger than any batch this configuration writes (found at open): the intake would
    /// reject it.
    Oversize,
}

impl Eviction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Quota => "quota",
            Self::Count => "count",
            Self::Age => "age",
            Self::Oversize => "oversize",
        }
    }

    fn count(self, c: &StorageCounters, events: u64) {
        let (batches, evs) = match self {
            Self::Quota => (&c.evicted_batches_quota, &c.evicted_events_quota),
            Self::Count => (&c.evicted_batches_count, &c.evicted_events_count),
            Self::Age => (&c.evicted_batches_age, &c.evicted_events_age),
            Self::Oversize => (&c.evicted_batches_oversize, &c.evicted_events_oversize),
        };
        batches.incr();
        evs.add(events);
    }

    fn warn_flag(self) -> u32 {
        1 << (self as u32)
    }
}

/// Warnings given once per store (STYLE.md: a dropped item is counted, and warned about once).
pub(crate) mod warn {
    pub const DROP_QUOTA: u32 = 1 << 8;
    pub const DROP_FILE_CAP: u32 = 1 << 9;
    pub const DROP_OVERSIZE: u32 = 1 << 10;
    pub const DROP_PRE_CONSENT: u32 = 1 << 11;
    pub const DROP_SERIALIZE: u32 = 1 << 12;
}

/// A sealed batch (unclaimed or claimed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub bytes: u64,
    pub events: u64,
    pub claimed_ms: Option<i64>,
    /// The uploader delivered it but its file could not be deleted: never handed out again; the
    /// delete is tried again when its claim would go stale (this process only: after a restart
    /// the batch is uploaded again).
    pub delivered: bool,
}

pub(crate) struct Active {
    pub id: FileId,
    pub seg: Segment,
}

pub(crate) struct Store {
    pub fs: Arc<dyn Fs>,
    pub clock: WallClock,
    pub limits: Limits,
    pub counters: Arc<StorageCounters>,
    /// `<storageDir>/rum`
    pub root: PathBuf,
    /// Sealed batches, claimed ones included, oldest first.
    pub batches: BTreeMap<FileId, Entry>,
    pub active: Option<Active>,
    pub next_seq: u64,
    /// Bytes of all batch files plus the active batch's waiting lines: the quota's measure.
    pub bytes: u64,
    pub events: u64,
    pub pre: PreConsent,
    /// fsync each batch when it is sealed (while the pre-consent buffer is migrated).
    pub sync_on_seal: bool,
    /// The first I/O failure since the last flush, reported by `flush()`.
    failure: Option<String>,
    /// A failure streak is logged once; the next successful write ends it.
    failing: bool,
    warned: u32,
}

impl Store {
    pub fn new(
        fs: Arc<dyn Fs>,
        clock: WallClock,
        limits: Limits,
        counters: Arc<StorageCounters>,
        root: PathBuf,
    ) -> Self {
        let pre = PreConsent::new(&root);
        Self {
            fs,
            clock,
            limits,
            counters,
            root,
            batches: BTreeMap::new(),
            active: None,
            next_seq: 0,
            bytes: 0,
            events: 0,
            pre,
            sync_on_seal: false,
            failure: None,
            failing: false,
            warned: 0,
        }
    }

    pub fn now(&self) -> i64 {
        (self.clock)()
    }

    pub fn batch_path(&self, id: FileId) -> PathBuf {
        self.root.join(id.batch_name())
    }

    pub fn claimed_path(&self, id: FileId, claimed_ms: i64) -> PathBuf {
        self.root.join(id.claimed_name(claimed_ms))
    }

    pub fn new_id(&mut self, now: i64) -> FileId {
        let id = FileId { seq: self.next_seq, created_ms: now };
        self.next_seq += 1;
        id
    }

    /// Appends one serialized, `\n`-terminated line to the batches, rolling, evicting or dropping
    /// as the contract says. `now` is read once per drain of the channel, not per line: reading
    /// the wall clock was a quarter of the writer's time in a burst.
    pub fn append_line(&mut self, line: &[u8], now: i64) {
        let len = line.len() as u64;
        if len > self.limits.disk_quota_bytes {
            self.counters.dropped_oversize.incr();
            self.warn_once(warn::DROP_OVERSIZE, || {
                format!("a {len}-byte document is larger than the disk quota: dropped")
            });
            return;
        }
        if self.active_is_due(now, len) {
            self.seal_active();
        }
        if !self.make_room(len) {
            self.counters.dropped_quota.incr();
            self.warn_once(warn::DROP_QUOTA, || "disk quota full of claimed batches: new documents are dropped".into());
            return;
        }
        if self.active.is_none() {
            if !self.make_file_room() {
                self.counters.dropped_file_cap.incr();
                self.warn_once(warn::DROP_FILE_CAP, || {
                    "batch file cap reached with claimed batches: new documents are dropped".into()
                });
                return;
            }
            let id = self.new_id(now);
            let seg = Segment::new(self.batch_path(id));
            self.active = Some(Active { id, seg });
        }
        let Some(active) = self.active.as_mut() else { return };
        active.seg.push(line);
        self.bytes += len;
        self.events += 1;
        if active.seg.waiting() >= WRITE_CHUNK {
            self.write_out_active();
        }
    }

    /// The active batch must be sealed before a line of `len` bytes: it would pass the batch
    /// size, or its window has passed.
    fn active_is_due(&self, now: i64, len: u64) -> bool {
        let Some(a) = &self.active else { return false };
        a.seg.events() > 0 && (a.seg.bytes() + len > self.limits.batch_max_bytes || self.window_passed(a.id, now))
    }

    pub fn window_passed(&self, id: FileId, now: i64) -> bool {
        now.saturating_sub(id.created_ms) >= self.limits.batch_window_ms
    }

    /// Seals the active batch when its window has passed (the writer's idle tick).
    pub fn seal_if_window_passed(&mut self) {
        let now = self.now();
        if self.active.as_ref().is_some_and(|a| self.window_passed(a.id, now)) {
            self.seal_active();
        }
    }

    /// Writes the active batch's waiting lines. False if that failed (the batch is then closed).
    pub fn write_out_active(&mut self) -> bool {
        let Some(active) = self.active.as_mut() else { return true };
        if active.seg.has_file() && !active.seg.file_exists(&*self.fs) {
            self.active_vanished();
        }
        let Some(active) = self.active.as_mut() else { return true };
        let waiting_events = active.seg.events() - active.seg.on_disk().1;
        let waiting_bytes = active.seg.waiting() as u64;
        match active.seg.write_out(&*self.fs) {
            Ok(written) => {
                self.counters.documents_written.add(waiting_events);
                self.counters.bytes_written.add(waiting_bytes);
                self.wrote_ok();
                if written.recreated_dir {
                    self.resync_after_dir_loss();
                }
                true
            }
            Err(failure) => {
                let path = active.seg.path().to_path_buf();
                self.lost_waiting(&failure, &path);
                let residue = failure.residue;
                if let Some(active) = self.active.take() {
                    self.close(active, residue);
                }
                false
            }
        }
    }

    /// The active batch's file is gone (its directory was removed under the writer): what was
    /// written to it is lost; the waiting lines move to a new batch.
    fn active_vanished(&mut self) {
        let Some(mut old) = self.active.take() else { return };
        let (bytes, events) = old.seg.on_disk();
        self.uncount(bytes, events);
        self.counters.lost_batches_external.incr();
        self.counters.lost_events_external.add(events);
        let path = old.seg.path().to_path_buf();
        self.record_failure("write", &path, &vanished());
        let (waiting, waiting_events) = old.seg.take_waiting();
        let id = self.new_id(self.now());
        let mut seg = Segment::new(self.batch_path(id));
        seg.push_lines(&waiting, waiting_events);
        self.active = Some(Active { id, seg });
        self.resync_after_dir_loss();
    }

    pub fn lost_waiting(&mut self, f: &WriteFailure, path: &Path) {
        self.uncount(f.lost_bytes.saturating_sub(f.residue), f.lost_events);
        self.counters.dropped_write_error.add(f.lost_events);
        self.record_failure(f.op, path, &f.error);
    }

    pub fn uncount(&mut self, bytes: u64, events: u64) {
        self.bytes = self.bytes.saturating_sub(bytes);
        self.events = self.events.saturating_sub(events);
    }

    /// Writes and closes the active batch; it becomes a sealed batch the uploader can claim.
    pub fn seal_active(&mut self) {
        if self.active.is_none() {
            return;
        }
        if self.write_out_active() && self.sync_on_seal {
            self.sync_active();
        }
        if let Some(active) = self.active.take() {
            self.close(active, 0);
        }
        let now = self.now();
        self.evict_aged(now);
    }

    /// fsync of the active batch.
    pub fn sync_active(&mut self) {
        let Some(active) = self.active.as_mut() else { return };
        if let Err(e) = active.seg.sync() {
            let path = active.seg.path().to_path_buf();
            self.record_failure("fsync", &path, &e);
        }
    }

    /// Turns a closed active batch into a sealed entry (or removes it when nothing of it is left).
    fn close(&mut self, active: Active, residue: u64) {
        let (bytes, events) = active.seg.on_disk();
        let bytes = bytes + residue;
        if events == 0 && residue == 0 {
            if active.seg.has_file() {
                if let Err(e) = remove_if_exists(&*self.fs, active.seg.path()) {
                    self.record_failure("remove", active.seg.path(), &e);
                    self.batches.insert(active.id, Entry { bytes, events, claimed_ms: None, delivered: false });
                }
            }
            return;
        }
        self.batches.insert(active.id, Entry { bytes, events, claimed_ms: None, delivered: false });
        self.counters.batches_sealed.incr();
    }

    /// Evicts the oldest unclaimed sealed batches until `len` more bytes fit under the quota.
    fn make_room(&mut self, len: u64) -> bool {
        while self.bytes + len > self.limits.disk_quota_bytes {
            if !self.evict_oldest(Eviction::Quota) {
                return false;
            }
        }
        true
    }

    /// Evicts the oldest unclaimed sealed batches until one more file fits under the cap.
    fn make_file_room(&mut self) -> bool {
        while self.batches.len() + usize::from(self.active.is_some()) + 1 > self.limits.max_batch_files {
            if !self.evict_oldest(Eviction::Count) {
                return false;
            }
        }
        true
    }

    /// Deletes the oldest unclaimed sealed batch. False when none could be deleted.
    pub fn evict_oldest(&mut self, reason: Eviction) -> bool {
        let candidates: Vec<FileId> =
            self.batches.iter().filter(|(_, e)| e.claimed_ms.is_none()).map(|(id, _)| *id).collect();
        candidates.into_iter().any(|id| self.evict(id, reason))
    }

    /// Deletes the unclaimed sealed batches older than `batchMaxAgeMs`.
    pub fn evict_aged(&mut self, now: i64) {
        let aged: Vec<FileId> = self
            .batches
            .iter()
            .filter(|(id, e)| {
                e.claimed_ms.is_none() && now.saturating_sub(id.created_ms) >= self.limits.batch_max_age_ms
            })
            .map(|(id, _)| *id)
            .collect();
        for id in aged {
            self.evict(id, Eviction::Age);
        }
    }

    pub fn evict(&mut self, id: FileId, reason: Eviction) -> bool {
        let path = self.batch_path(id);
        if let Err(e) = remove_if_exists(&*self.fs, &path) {
            self.record_failure("remove", &path, &e);
            return false;
        }
        let Some(entry) = self.batches.remove(&id) else { return false };
        self.uncount(entry.bytes, entry.events);
        reason.count(&self.counters, entry.events);
        let flag = reason.warn_flag();
        self.warn_once(flag, || format!("evicting unsent batches ({}): their events are lost", reason.as_str()));
        true
    }

    /// The directory was removed and created again: forget the batches that went with it.
    pub fn resync_after_dir_loss(&mut self) {
        let gone: Vec<(FileId, Entry)> = self
            .batches
            .iter()
            .filter(|(id, e)| {
                let path = match e.claimed_ms {
                    Some(ms) => self.claimed_path(**id, ms),
                    None => self.batch_path(**id),
                };
                !self.fs.exists(&path)
            })
            .map(|(id, e)| (*id, *e))
            .collect();
        for (id, e) in gone {
            self.batches.remove(&id);
            self.forget_lost(e);
        }
        self.resync_pre_consent();
    }

    /// A batch that vanished behind the storage's back.
    pub fn forget_lost(&mut self, e: Entry) {
        self.uncount(e.bytes, e.events);
        self.counters.lost_batches_external.incr();
        self.counters.lost_events_external.add(e.events);
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

    /// Writes everything waiting, batches and pre-consent buffer.
    pub fn write_out_all(&mut self) {
        self.write_out_active();
        self.write_out_pre();
    }

    /// fsync of the directories, so new and renamed names survive a power cut.
    pub fn sync_dirs(&mut self) {
        if let Err(e) = self.fs.sync_dir(&self.root) {
            let root = self.root.clone();
            self.record_failure("fsync", &root, &e);
        }
        let pending = self.pre.dir().to_path_buf();
        match self.fs.sync_dir(&pending) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => self.record_failure("fsync", &pending, &e),
            _ => {}
        }
    }

    /// Publishes the gauges to the shared counters.
    pub fn publish(&self) {
        let c = &self.counters;
        c.bytes_on_disk.set(self.bytes);
        c.events_on_disk.set(self.events);
        c.batches_on_disk.set((self.batches.len() + usize::from(self.active.is_some())) as u64);
        c.pre_consent_bytes.set(self.pre.bytes());
        c.pre_consent_events.set(self.pre.events());
    }
}

/// The error recorded for a file removed while it was open.
pub(crate) fn vanished() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "the file was removed while open")
}
