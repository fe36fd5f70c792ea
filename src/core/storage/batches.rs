//! The batch set: the sealed batches (claimed ones included), the active batch, and the byte and
//! event accounting behind the quota, with the claims of the upload side.
//! (Longer than most files: the quota invariant needs every byte-changing operation in one place.)
//!
//! **The quota invariant.** `bytes` counts every batch file, claimed ones included, and the lines
//! of the active batch that still wait in memory. A line is counted *before* it is written and a
//! file is uncounted only *after* it is removed, so the bytes on disk never exceed `bytes`, and
//! `bytes` never exceeds `diskQuotaBytes`: room is made by evicting the oldest unclaimed sealed
//! batches, and a line that still does not fit is dropped. Only this file changes these fields.
//!
//! **Claims.** A claim is a rename (`<name>.<claimed_ms>.uploading`), so it survives the process.
//! A claim older than the claim timeout is released (its uploader lost the batch): by
//! [`Batches::claim_next`] in this process, and by recovery at the next open.
//!
//! **Compression.** With `batchEncoding: 'gzip'` a sealed batch is stored compressed, its views
//! reduced (see `seal`); the active batch stays plain, append-only NDJSON.

use std::io;
use std::path::{Path, PathBuf};

use super::error::StorageError;
use super::fs::remove_if_exists;
use super::io_context::{warn, IoContext};
use super::limits::Limits;
use super::names::FileId;
use super::segment::{OpenFile, Tally, WriteFailure, WRITE_CHUNK};
use crate::core::config::BatchEncoding;
use crate::core::stats::StorageCounters;

/// Why a sealed batch was deleted before upload (docs/design.md, "Storage": quota, count, age, oversize).
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
    /// Whether its lines are known to be documents (see `ndjson`).
    pub check: Check,
    /// Stored gzip-compressed (`.ndjson.gz`), its views reduced; else plain NDJSON.
    pub gzip: bool,
}

mod entries;
mod seal;

use entries::Entries;

impl Entry {
    /// Unclaimed and still to be uploaded: what claims and evictions pick from.
    fn claimable(&self) -> bool {
        self.claimed_ms.is_none() && self.check != Check::Doomed
    }
}

/// What is known of a sealed batch's lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Written by this storage: every line is a document.
    Clean,
    /// Found at open, not read yet: the writer checks it first thing; a plain one is checked by
    /// a claim before it is handed out if the writer has not got to it, a compressed one (whose
    /// events are not counted until then) waits for the writer.
    Unchecked,
    /// Holds lines that are not documents (counted when found): the reader drops them.
    Dirty,
    /// Must not be uploaded (larger than the intake takes, or damaged past repair) but its file
    /// could not be removed: never read, checked or claimed; its events are counted lost, its
    /// bytes stay counted until the removal, tried again at each seal and claim, succeeds.
    Doomed,
}

/// A batch renamed to its claimed name, to be read outside the store's lock.
pub(crate) struct Claim {
    pub id: FileId,
    pub path: PathBuf,
    /// Its lines must go through `ndjson::keep_documents` before they are handed out.
    pub filter: bool,
    pub encoding: BatchEncoding,
    /// Documents in a compressed batch (known at its seal or its check): its body is handed out
    /// as it is.
    pub events: u64,
    /// When it was claimed: with the id, what names this claim (not an earlier or later one of
    /// the same batch) to `complete`.
    pub claimed_ms: i64,
}

impl Claim {
    /// The id the uploader completes the claim with: the claimed file's name, batch and claim
    /// time together. After a stale claim is released and the batch claimed again, the first
    /// uploader's late answer no longer names it.
    pub fn ticket(&self) -> String {
        self.id.claimed_name(self.claimed_ms, self.encoding == BatchEncoding::Gzip)
    }
}

/// How far past the clock a claim time may be moved to stay later than the last claim.
const CLAIM_TIME_BUMP_MAX_MS: i64 = 1_000;

/// What [`Batches::claim_next`] found.
pub(crate) enum Next {
    Claimed(Claim),
    /// Nothing to upload.
    Nothing,
    /// The oldest batch is a compressed one found at open that the writer has not checked yet
    /// (it does so first thing after open): ask again shortly.
    Unchecked,
}

pub(crate) struct Batches {
    limits: Limits,
    /// Sealed batches, claimed ones included, oldest first.
    entries: Entries,
    active: Option<OpenFile>,
    /// Bytes of all batch files plus the active batch's waiting lines: the quota's measure.
    bytes: u64,
    events: u64,
    /// fsync each batch when it is sealed (while the pre-consent buffer is migrated).
    sync_on_seal: bool,
    /// The claim time of the last claim made here: each claim gets a later one (a claim released
    /// and made again within a millisecond would otherwise have the same id).
    last_claim_ms: i64,
}

impl Batches {
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            entries: Entries::default(),
            active: None,
            bytes: 0,
            events: 0,
            sync_on_seal: false,
            last_claim_ms: i64::MIN,
        }
    }

    pub fn contains(&self, id: FileId) -> bool {
        self.entries.contains_key(&id)
    }

    /// Adds a sealed batch found at open.
    pub fn adopt(&mut self, id: FileId, entry: Entry) {
        if let Some(ms) = entry.claimed_ms {
            // A claim of this batch made again here must not take the earlier claim's id.
            self.last_claim_ms = self.last_claim_ms.max(ms);
        }
        self.entries.insert(id, entry);
        self.bytes += entry.bytes;
        self.events += entry.events;
    }

    pub fn set_sync_on_seal(&mut self, on: bool) {
        self.sync_on_seal = on;
    }

    /// Appends one serialized, `\n`-terminated line, rolling, evicting or dropping as the
    /// contract says. `now` is read once per drain of the channel, not per line: reading the wall
    /// clock was a quarter of the writer's time in a burst.
    pub fn append_line(&mut self, io: &mut IoContext, line: &[u8], now: i64) {
        let len = line.len() as u64;
        if len > self.limits.disk_quota_bytes {
            io.counters().dropped_oversize.incr();
            io.warn_once(warn::DROP_OVERSIZE, || {
                format!("a {len}-byte document is larger than the disk quota: dropped")
            });
            return;
        }
        if self.active_is_due(now, len) {
            self.seal_active(io);
        }
        if !self.make_room(io, len, None) {
            io.counters().dropped_quota.incr();
            io.warn_once(warn::DROP_QUOTA, || "disk quota full of claimed batches: new documents are dropped".into());
            return;
        }
        if self.active.is_none() {
            if !self.make_file_room(io) {
                io.counters().dropped_file_cap.incr();
                io.warn_once(warn::DROP_FILE_CAP, || {
                    "batch file cap reached with claimed batches: new documents are dropped".into()
                });
                return;
            }
            let id = io.new_id(now);
            self.active = Some(OpenFile::new(id, io.batch_path(id)));
        }
        let Some(active) = self.active.as_mut() else { return };
        active.seg.push(line);
        self.bytes += len;
        self.events += 1;
        if active.seg.waiting() >= WRITE_CHUNK {
            self.write_out_active(io);
        }
    }

    /// Seals the active batch if a `len`-byte line appended at `now` would seal it first: a caller
    /// that must know whether the seal's write failed before it hands the line over.
    pub fn seal_if_due(&mut self, io: &mut IoContext, now: i64, len: u64) {
        if self.active_is_due(now, len) {
            self.seal_active(io);
        }
    }

    /// The active batch must be sealed before a line of `len` bytes: it would pass the batch
    /// size, or its window has passed.
    fn active_is_due(&self, now: i64, len: u64) -> bool {
        let Some(a) = &self.active else { return false };
        a.seg.events() > 0 && (a.seg.bytes() + len > self.limits.batch_max_bytes || self.window_passed(a.id, now))
    }

    fn window_passed(&self, id: FileId, now: i64) -> bool {
        now.saturating_sub(id.created_ms) >= self.limits.batch_window_ms
    }

    fn active_window_passed(&self, now: i64) -> bool {
        self.active.as_ref().is_some_and(|a| self.window_passed(a.id, now))
    }

    /// When the active batch's window passes (wall ms), if there is one.
    pub fn window_deadline(&self) -> Option<i64> {
        let a = self.active.as_ref()?;
        let window = self.limits.batch_window_ms;
        Some(a.id.created_ms.saturating_add(window))
    }

    /// Seals the active batch when its window has passed (the writer's idle tick).
    pub fn seal_if_window_passed(&mut self, io: &mut IoContext) {
        if self.active_window_passed(io.now()) {
            self.seal_active(io);
        }
    }

    /// Writes the active batch's waiting lines. False if that failed (the batch is then closed).
    pub fn write_out_active(&mut self, io: &mut IoContext) -> bool {
        let Some(active) = self.active.as_mut() else { return true };
        if let Some(lost) = active.replace_if_vanished(io, FileId::batch_name) {
            // Its directory was removed under the writer: what was written to it is lost; the
            // waiting lines go on in a new batch.
            self.uncount(lost);
            io.counters().lost_batches_external.incr();
            io.counters().lost_events_external.add(lost.events);
            self.resync(io);
            io.note_dir_loss();
        }
        let Some(active) = self.active.as_mut() else { return true };
        let waiting =
            Tally { bytes: active.seg.waiting() as u64, events: active.seg.events() - active.seg.on_disk().events };
        match active.write_out(io) {
            Ok(written) => {
                io.counters().documents_written.add(waiting.events);
                io.counters().bytes_written.add(waiting.bytes);
                if written.recreated_dir {
                    self.resync(io);
                }
                true
            }
            Err(failure) => {
                let path = active.seg.path().to_path_buf();
                self.lost_waiting(io, &failure, &path);
                if let Some(active) = self.active.take() {
                    self.close(io, active, failure.residue);
                }
                false
            }
        }
    }

    fn lost_waiting(&mut self, io: &mut IoContext, f: &WriteFailure, path: &Path) {
        self.uncount(Tally { bytes: f.lost.bytes.saturating_sub(f.residue), events: f.lost.events });
        io.counters().dropped_write_error.add(f.lost.events);
        io.record_failure(f.op, path, &f.error);
    }

    fn uncount(&mut self, t: Tally) {
        self.bytes = self.bytes.saturating_sub(t.bytes);
        self.events = self.events.saturating_sub(t.events);
    }

    /// Writes and closes the active batch; it becomes a sealed batch the uploader can claim.
    pub fn seal_active(&mut self, io: &mut IoContext) {
        if self.active.is_none() {
            return;
        }
        let written = self.write_out_active(io);
        if written && self.sync_on_seal {
            self.sync_active(io);
        }
        if let Some(active) = self.active.take() {
            let id = active.id;
            if self.close(io, active, 0) && written {
                if let Some(level) = self.limits.gzip_level {
                    self.compress_sealed(io, id, level);
                }
            }
        }
        self.evict_aged(io, io.now());
        self.remove_doomed(io);
    }

    /// fsync of the active batch.
    pub fn sync_active(&mut self, io: &mut IoContext) {
        if let Some(active) = self.active.as_mut() {
            active.sync(io);
        }
    }

    /// Turns a closed active batch into a sealed entry (or removes it when nothing of it is left).
    /// True if it is a sealed batch now.
    fn close(&mut self, io: &mut IoContext, active: OpenFile, residue: u64) -> bool {
        let on_disk = active.seg.on_disk();
        let entry = Entry {
            bytes: on_disk.bytes + residue,
            events: on_disk.events,
            claimed_ms: None,
            delivered: false,
            check: Check::Clean,
            gzip: false,
        };
        if on_disk.events == 0 && residue == 0 {
            if active.seg.has_file() && !io.remove(active.seg.path()) {
                self.entries.insert(active.id, entry);
            }
            return false;
        }
        self.entries.insert(active.id, entry);
        io.counters().batches_sealed.incr();
        true
    }

    /// Evicts the oldest unclaimed sealed batches (but `keep`) until `len` more bytes fit under
    /// the quota.
    fn make_room(&mut self, io: &mut IoContext, len: u64, keep: Option<FileId>) -> bool {
        while self.bytes + len > self.limits.disk_quota_bytes {
            if !self.evict_oldest_but(io, Eviction::Quota, keep) && !self.remove_doomed(io) {
                return false;
            }
        }
        true
    }

    /// Evicts the oldest unclaimed sealed batches until one more file fits under the cap.
    fn make_file_room(&mut self, io: &mut IoContext) -> bool {
        while self.entries.len() + usize::from(self.active.is_some()) + 1 > self.limits.max_batch_files {
            if !self.evict_oldest(io, Eviction::Count) && !self.remove_doomed(io) {
                return false;
            }
        }
        true
    }

    /// Deletes the oldest unclaimed sealed batch. False when none could be deleted.
    fn evict_oldest(&mut self, io: &mut IoContext, reason: Eviction) -> bool {
        self.evict_oldest_but(io, reason, None)
    }

    fn evict_oldest_but(&mut self, io: &mut IoContext, reason: Eviction, keep: Option<FileId>) -> bool {
        let candidates: Vec<FileId> =
            self.entries.iter().filter(|(id, e)| e.claimable() && Some(**id) != keep).map(|(id, _)| *id).collect();
        candidates.into_iter().any(|id| self.evict(io, id, reason))
    }

    /// Deletes the unclaimed sealed batches older than `batchMaxAgeMs`.
    fn evict_aged(&mut self, io: &mut IoContext, now: i64) {
        let aged: Vec<FileId> = self
            .entries
            .iter()
            .filter(|(id, e)| e.claimable() && now.saturating_sub(id.created_ms) >= self.limits.batch_max_age_ms)
            .map(|(id, _)| *id)
            .collect();
        for id in aged {
            self.evict(io, id, Eviction::Age);
        }
    }

    fn evict(&mut self, io: &mut IoContext, id: FileId, reason: Eviction) -> bool {
        let Some(entry) = self.entries.get(&id).copied() else { return false };
        if !io.remove(&Self::path_of(io, id, &entry)) {
            return false;
        }
        self.entries.remove(&id);
        self.uncount(Tally { bytes: entry.bytes, events: entry.events });
        self.count_eviction(io, reason, entry.events);
        true
    }

    fn count_eviction(&self, io: &mut IoContext, reason: Eviction, events: u64) {
        reason.count(io.counters(), events);
        let flag = reason.warn_flag();
        io.warn_once(flag, || format!("evicting unsent batches ({}): their events are lost", reason.as_str()));
    }

    /// Evicts a batch that must not be uploaded; if its file cannot be removed, it is doomed
    /// (counted evicted now, removed later).
    fn evict_or_doom(&mut self, io: &mut IoContext, id: FileId, reason: Eviction) {
        if self.evict(io, id, reason) {
            return;
        }
        let events = self.doom(id);
        self.count_eviction(io, reason, events);
    }

    /// Marks a batch [`Check::Doomed`] and takes its events off the count (they are lost); its
    /// bytes stay counted while its file is on disk. Returns its events.
    fn doom(&mut self, id: FileId) -> u64 {
        let mut events = 0;
        self.entries.update(&id, |entry| {
            events = std::mem::take(&mut entry.events);
            entry.check = Check::Doomed;
        });
        self.events = self.events.saturating_sub(events);
        events
    }

    /// Tries again to remove the files of doomed batches. True if any went.
    fn remove_doomed(&mut self, io: &mut IoContext) -> bool {
        let doomed: Vec<(FileId, Entry)> =
            self.entries.iter().filter(|(_, e)| e.check == Check::Doomed).map(|(id, e)| (*id, *e)).collect();
        let mut removed = false;
        for (id, entry) in doomed {
            if io.remove(&Self::path_of(io, id, &entry)) {
                self.drop_entry(id);
                removed = true;
            }
        }
        removed
    }

    fn drop_entry(&mut self, id: FileId) {
        if let Some(e) = self.entries.remove(&id) {
            self.uncount(Tally { bytes: e.bytes, events: e.events });
        }
    }

    /// The limits hold at open as after any write: age, oversize, quota, count.
    pub fn apply_limits_at_open(&mut self, io: &mut IoContext, now: i64) {
        self.evict_aged(io, now);
        let largest = self.limits.largest_batch();
        let unread = self.limits.largest_read_at_open();
        let oversize: Vec<FileId> = self
            .entries
            .iter()
            .filter(|(_, e)| (e.claimed_ms.is_none() || e.bytes > unread) && e.bytes > largest)
            .map(|(id, _)| *id)
            .collect();
        for id in oversize {
            self.evict_or_doom(io, id, Eviction::Oversize);
        }
        while self.bytes > self.limits.disk_quota_bytes && self.evict_oldest(io, Eviction::Quota) {}
        while self.entries.len() > self.limits.max_batch_files && self.evict_oldest(io, Eviction::Count) {}
    }

    /// The directory was removed and created again: forget the batches that went with it.
    pub fn resync(&mut self, io: &mut IoContext) {
        let gone: Vec<FileId> = self
            .entries
            .iter()
            .filter(|(id, e)| !io.fs().exists(&Self::path_of(io, **id, e)))
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            self.forget(io, id);
        }
    }

    /// Where a sealed batch's file is, claimed or not.
    fn path_of(io: &IoContext, id: FileId, e: &Entry) -> PathBuf {
        match e.claimed_ms {
            Some(ms) => io.claimed_path(id, ms, e.gzip),
            None => io.sealed_path(id, e.gzip),
        }
    }

    /// A batch whose file vanished behind the storage's back: forgotten, and counted as lost.
    pub fn forget(&mut self, io: &mut IoContext, id: FileId) {
        if let Some(e) = self.entries.remove(&id) {
            self.uncount(Tally { bytes: e.bytes, events: e.events });
            if e.check != Check::Doomed {
                io.counters().lost_batches_external.incr();
                io.counters().lost_events_external.add(e.events);
            }
        }
    }

    /// Claims the oldest sealed batch. When there is none but the active batch has lines and its
    /// window has passed, it is sealed first, so a slow trickle of events still gets uploaded.
    pub fn claim_next(&mut self, io: &mut IoContext) -> Result<Next, StorageError> {
        let now = io.now();
        self.release_stale_claims(io, now);
        self.evict_aged(io, now);
        self.remove_doomed(io);
        loop {
            let mut next = self.oldest_unclaimed();
            if next.is_none() && self.active_window_passed(now) {
                self.seal_active(io);
                next = self.oldest_unclaimed();
            }
            let Some(id) = next else { return Ok(Next::Nothing) };
            let Some(entry) = self.entries.get(&id).copied() else { return Ok(Next::Nothing) };
            if entry.check == Check::Unchecked {
                if entry.gzip {
                    // Decompressed on the writer thread only, never on the caller's.
                    return Ok(Next::Unchecked);
                }
                self.check(io, id, false)?;
                continue; // it may be gone now
            }
            let filter = entry.check == Check::Dirty && !entry.gzip;
            let from = io.sealed_path(id, entry.gzip);
            // Later than the last claim, unless the clock stepped back by more than a second:
            // then the claim takes the clock's time rather than a future one (a future claim time
            // would hold a lost claim past its timeout by the step).
            let next = self.last_claim_ms.saturating_add(1);
            let claimed_ms = if now < next && next - now <= CLAIM_TIME_BUMP_MAX_MS { next } else { now };
            let to = io.claimed_path(id, claimed_ms, entry.gzip);
            match io.fs().rename(&from, &to) {
                Ok(()) => {
                    self.last_claim_ms = claimed_ms;
                    self.entries.update(&id, |e| e.claimed_ms = Some(claimed_ms));
                    io.counters().batches_claimed.incr();
                    let encoding = if entry.gzip { BatchEncoding::Gzip } else { BatchEncoding::Identity };
                    return Ok(Next::Claimed(Claim {
                        id,
                        path: to,
                        filter,
                        encoding,
                        events: entry.events,
                        claimed_ms,
                    }));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => self.forget(io, id),
                Err(e) => return Err(StorageError::io("claim", from, e)),
            }
        }
    }

    fn oldest_unclaimed(&self) -> Option<FileId> {
        self.entries.iter().find(|(_, e)| e.claimable()).map(|(id, _)| *id)
    }

    /// Releases claims older than the claim timeout: an uploader that lost its batch without
    /// completing it must not hold it (and its bytes of the quota) forever.
    fn release_stale_claims(&mut self, io: &mut IoContext, now: i64) {
        let timeout = self.limits.claim_timeout_ms;
        let stale: Vec<FileId> = self
            .entries
            .iter()
            .filter(|(_, e)| {
                e.check != Check::Doomed && e.claimed_ms.is_some_and(|ms| now.saturating_sub(ms) >= timeout)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in stale {
            if self.entries.get(&id).is_some_and(|e| e.delivered) {
                let _ = self.delete_delivered(io, id); // still failing: tried again later
            } else if self.release(io, id).is_ok() {
                io.counters().stale_claims_released.incr();
            }
        }
    }

    /// Gives a claimed batch its name back, for a later claim.
    fn release(&mut self, io: &mut IoContext, id: FileId) -> Result<(), StorageError> {
        let Some(entry) = self.entries.get(&id).copied() else { return Ok(()) };
        let Some(claimed_ms) = entry.claimed_ms else { return Ok(()) };
        let from = io.claimed_path(id, claimed_ms, entry.gzip);
        match io.fs().rename(&from, &io.sealed_path(id, entry.gzip)) {
            Ok(()) => {
                self.entries.update(&id, |e| e.claimed_ms = None);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.forget(io, id);
                Ok(())
            }
            Err(e) => {
                io.record_failure("release", &from, &e);
                Err(StorageError::io("release", from, e))
            }
        }
    }

    /// The uploader's answer for the claim made at `claimed_ms`: delivered → the batch is
    /// deleted; otherwise the claim is released and the batch is the next one claimed. An id
    /// that is not a claimed batch, or names an earlier claim of it (released as stale, the batch
    /// since claimed again), changes nothing. A delete that fails leaves the batch claimed and
    /// marked delivered, so it is not handed out again; the delete is retried when the claim
    /// would go stale.
    pub fn complete(
        &mut self,
        io: &mut IoContext,
        id: FileId,
        claimed_ms: i64,
        gzip: bool,
        delivered: bool,
    ) -> Result<(), StorageError> {
        let named = || StorageError::UnknownBatch(id.claimed_name(claimed_ms, gzip));
        let Some(entry) = self.entries.get(&id).copied() else { return Err(named()) };
        // The encoding is part of the claim's name: a compressed claim's id with `.gz` taken out
        // is not an id `next_batch` returned.
        if entry.claimed_ms != Some(claimed_ms) || entry.gzip != gzip || entry.check == Check::Doomed {
            return Err(named());
        }
        // Once delivered, a batch is only ever deleted: a later "not delivered" cannot make the
        // intake see it twice.
        if !delivered && !entry.delivered {
            self.release(io, id)?;
            io.counters().batches_released.incr();
            return Ok(());
        }
        self.entries.update(&id, |e| e.delivered = true);
        self.delete_delivered(io, id)
    }

    /// Deletes a delivered batch's file and counts it delivered; on failure the entry stays,
    /// marked delivered, and its events stay counted on disk.
    fn delete_delivered(&mut self, io: &mut IoContext, id: FileId) -> Result<(), StorageError> {
        let Some(entry) = self.entries.get(&id).copied() else { return Ok(()) };
        let Some(claimed_ms) = entry.claimed_ms else { return Ok(()) };
        let path = io.claimed_path(id, claimed_ms, entry.gzip);
        remove_if_exists(io.fs(), &path).map_err(|e| StorageError::io("delete", path, e))?;
        self.entries.remove(&id);
        self.uncount(Tally { bytes: entry.bytes, events: entry.events });
        io.counters().batches_delivered.incr();
        io.counters().events_delivered.add(entry.events);
        Ok(())
    }

    /// Whether the claim made at `claimed_ms` still holds the batch (it was not released as
    /// stale and made again since).
    fn holds_claim(&self, id: FileId, claimed_ms: i64) -> bool {
        self.entries.get(&id).is_some_and(|e| e.claimed_ms == Some(claimed_ms))
    }

    /// The reader of the claim made at `claimed_ms` found its file gone.
    pub fn forget_claim(&mut self, io: &mut IoContext, id: FileId, claimed_ms: i64) {
        if self.holds_claim(id, claimed_ms) {
            self.forget(io, id);
        }
    }

    /// A claimed batch with no whole line in it: nothing to upload, it goes.
    pub fn discard_empty(&mut self, io: &mut IoContext, id: FileId, claimed_ms: i64) {
        if !self.holds_claim(id, claimed_ms) {
            return;
        }
        let Some(entry) = self.entries.get(&id).copied() else { return };
        if io.remove(&Self::path_of(io, id, &entry)) {
            self.forget(io, id);
        }
    }

    /// Checks the oldest batch found at open whose lines have not been checked yet (the writer
    /// does this first thing, one batch per hold of the store). False when none is left.
    pub fn check_next_adopted(&mut self, io: &mut IoContext) -> bool {
        let Some(id) = self.entries.iter().find(|(_, e)| e.check == Check::Unchecked).map(|(id, _)| *id) else {
            return false;
        };
        if let Err(e) = self.check(io, id, true) {
            crate::log::warn(&format!("storage: {e}"));
        }
        true
    }

    /// Publishes the gauges to the shared counters.
    pub fn publish(&self, c: &StorageCounters) {
        c.bytes_on_disk.set(self.bytes);
        c.events_on_disk.set(self.events);
        c.batches_on_disk.set((self.entries.len() + usize::from(self.active.is_some())) as u64);
        c.batches_pending.set(self.entries.claimable() as u64);
    }
}
