//! Tracking consent (DESIGN.md, "Consent"): granted → batches; pending → the pre-consent buffer;
//! granted later → the buffer moves into batches; not_granted → the buffer and new events are
//! dropped.
//!
//! The buffer lives in `<storageDir>/rum/pending/` as chunk files, so "full → drop its oldest
//! half" deletes whole files instead of rewriting one. Moving it into batches writes (and fsyncs)
//! each chunk's lines into batches before that chunk is deleted: a crash in between duplicates
//! those lines at the next migration, and never loses them.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};

use super::fs::remove_if_exists;
use super::names::{FileId, PENDING_DIR};
use super::segment::{whole_lines, Segment, WRITE_CHUNK};
use super::store::{vanished, warn, Store};
use crate::core::config::TrackingConsent;

/// The buffer is kept in this many chunk files, so dropping "the oldest half" is exact to an
/// eighth of the limit.
const PRE_CONSENT_CHUNKS: u64 = 8;

/// A closed chunk of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub id: FileId,
    pub bytes: u64,
    pub events: u64,
}

pub(crate) struct PreConsent {
    dir: PathBuf,
    /// Closed chunks, oldest first.
    chunks: VecDeque<Chunk>,
    closed_bytes: u64,
    closed_events: u64,
    active: Option<(FileId, Segment)>,
}

impl PreConsent {
    pub fn new(root: &Path) -> Self {
        Self { dir: root.join(PENDING_DIR), chunks: VecDeque::new(), closed_bytes: 0, closed_events: 0, active: None }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, id: FileId) -> PathBuf {
        self.dir.join(id.buffer_name())
    }

    pub fn bytes(&self) -> u64 {
        self.closed_bytes + self.active.as_ref().map_or(0, |(_, s)| s.bytes())
    }

    pub fn events(&self) -> u64 {
        self.closed_events + self.active.as_ref().map_or(0, |(_, s)| s.events())
    }

    /// Adds a chunk found at open; chunks must be adopted oldest first.
    pub fn adopt(&mut self, chunk: Chunk) {
        self.closed_bytes += chunk.bytes;
        self.closed_events += chunk.events;
        self.chunks.push_back(chunk);
    }

    fn pop_oldest(&mut self) -> Option<Chunk> {
        let chunk = self.chunks.pop_front()?;
        self.closed_bytes -= chunk.bytes;
        self.closed_events -= chunk.events;
        Some(chunk)
    }
}

impl Store {
    /// Applies a consent: the buffer moves into batches (granted), is dropped (not granted), or
    /// stays (pending). Idempotent, so the initial consent is applied the same way at open.
    pub fn apply_consent(&mut self, consent: TrackingConsent) {
        match consent {
            TrackingConsent::Granted => self.migrate_pre_consent(),
            TrackingConsent::NotGranted => self.wipe_pre_consent(),
            TrackingConsent::Pending => {}
        }
    }

    /// Keeps one serialized, `\n`-terminated line while consent is pending.
    pub fn buffer_line(&mut self, line: &[u8], now: i64) {
        let len = line.len() as u64;
        let max = self.limits.pre_consent_max_bytes;
        if len > max {
            self.counters.dropped_pre_consent_full.incr();
            self.warn_once(warn::DROP_PRE_CONSENT, || "pre-consent buffer full: its oldest half is dropped".into());
            return;
        }
        if self.pre.bytes() + len > max {
            self.drop_oldest_half(len);
        }
        let chunk_max = (max / PRE_CONSENT_CHUNKS).max(1);
        if self.pre.active.as_ref().is_some_and(|(_, s)| s.events() > 0 && s.bytes() + len > chunk_max) {
            self.close_pre_chunk();
        }
        if self.pre.active.is_none() {
            let id = self.new_id(now);
            let seg = Segment::new(self.pre.path(id));
            self.pre.active = Some((id, seg));
        }
        let Some((_, seg)) = self.pre.active.as_mut() else { return };
        seg.push(line);
        if seg.waiting() >= WRITE_CHUNK {
            self.write_out_pre();
        }
    }

    /// Writes the active chunk's waiting lines. False if that failed (the chunk is then closed).
    pub fn write_out_pre(&mut self) -> bool {
        let Some((_, seg)) = self.pre.active.as_mut() else { return true };
        if seg.has_file() && !seg.file_exists(&*self.fs) {
            // Removed with its directory: what it held is lost, its waiting lines go on.
            let (_, events) = seg.on_disk();
            let (waiting, waiting_events) = seg.take_waiting();
            let path = seg.path().to_path_buf();
            self.counters.lost_events_external.add(events);
            self.record_failure("write", &path, &vanished());
            let id = self.new_id(self.now());
            let mut seg = Segment::new(self.pre.path(id));
            seg.push_lines(&waiting, waiting_events);
            self.pre.active = Some((id, seg));
        }
        let Some((id, seg)) = self.pre.active.as_mut() else { return true };
        match seg.write_out(&*self.fs) {
            Ok(written) => {
                self.wrote_ok();
                if written.recreated_dir {
                    self.resync_after_dir_loss();
                }
                true
            }
            Err(f) => {
                let path = seg.path().to_path_buf();
                let (bytes, events) = seg.on_disk();
                let (id, has_file) = (*id, seg.has_file());
                self.pre.active = None;
                self.counters.dropped_write_error.add(f.lost_events);
                self.record_failure(f.op, &path, &f.error);
                if events > 0 || f.residue > 0 {
                    self.pre.adopt(Chunk { id, bytes: bytes + f.residue, events });
                } else if has_file {
                    let _ = remove_if_exists(&*self.fs, &path);
                }
                false
            }
        }
    }

    /// fsync of the active chunk.
    pub fn sync_pre(&mut self) {
        let Some((_, seg)) = self.pre.active.as_mut() else { return };
        if let Err(e) = seg.sync() {
            let path = seg.path().to_path_buf();
            self.record_failure("fsync", &path, &e);
        }
    }

    /// Writes and closes the active chunk.
    fn close_pre_chunk(&mut self) {
        if !self.write_out_pre() {
            return;
        }
        let Some((id, seg)) = self.pre.active.take() else { return };
        let (bytes, events) = seg.on_disk();
        if events > 0 {
            self.pre.adopt(Chunk { id, bytes, events });
        }
    }

    /// Drops the oldest chunks until the buffer is at most half full and `len` more bytes fit.
    fn drop_oldest_half(&mut self, len: u64) {
        let max = self.limits.pre_consent_max_bytes;
        let mut dropped = 0;
        while self.pre.bytes() > max / 2 || self.pre.bytes() + len > max {
            if let Some(chunk) = self.pre.pop_oldest() {
                self.remove_pre_file(chunk.id);
                dropped += chunk.events;
            } else if let Some((id, seg)) = self.pre.active.take() {
                dropped += seg.events();
                if seg.has_file() {
                    self.remove_pre_file(id);
                }
            } else {
                break;
            }
        }
        self.counters.dropped_pre_consent_full.add(dropped);
        self.warn_once(warn::DROP_PRE_CONSENT, || "pre-consent buffer full: its oldest half is dropped".into());
    }

    fn remove_pre_file(&mut self, id: FileId) {
        let path = self.pre.path(id);
        if let Err(e) = remove_if_exists(&*self.fs, &path) {
            self.record_failure("remove", &path, &e);
        }
    }

    /// Consent granted: each chunk's lines are appended to batches, written and fsynced, and
    /// only then is the chunk deleted. A failure keeps the chunk (and the later ones) for the
    /// next migration.
    fn migrate_pre_consent(&mut self) {
        if self.pre.active.is_some() {
            self.close_pre_chunk();
        }
        if self.pre.chunks.is_empty() {
            return;
        }
        self.sync_on_seal = true;
        while let Some(chunk) = self.pre.chunks.front().copied() {
            let path = self.pre.path(chunk.id);
            let data = match self.fs.read(&path) {
                Ok(data) => data,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.pre.pop_oldest();
                    self.counters.lost_events_external.add(chunk.events);
                    continue;
                }
                Err(e) => {
                    self.record_failure("read", &path, &e);
                    break;
                }
            };
            let errors = self.counters.write_errors.get();
            let now = self.now();
            for line in whole_lines(&data).split_inclusive(|&b| b == b'\n') {
                self.append_line(line, now);
            }
            if self.write_out_active() {
                self.sync_active();
            }
            if let Err(e) = self.fs.sync_dir(&self.root) {
                let root = self.root.clone();
                self.record_failure("fsync", &root, &e);
            }
            if self.counters.write_errors.get() != errors {
                break;
            }
            self.pre.pop_oldest();
            self.remove_pre_file(chunk.id);
            self.counters.pre_consent_migrated.add(chunk.events);
        }
        self.sync_on_seal = false;
    }

    /// Consent not granted: the buffer is dropped.
    fn wipe_pre_consent(&mut self) {
        let mut dropped = 0;
        if let Some((id, seg)) = self.pre.active.take() {
            dropped += seg.events();
            if seg.has_file() {
                self.remove_pre_file(id);
            }
        }
        while let Some(chunk) = self.pre.pop_oldest() {
            dropped += chunk.events;
            self.remove_pre_file(chunk.id);
        }
        self.counters.dropped_consent.add(dropped);
    }

    /// After the directory was removed: forget the chunks that went with it.
    pub fn resync_pre_consent(&mut self) {
        let chunks: Vec<Chunk> = self.pre.chunks.drain(..).collect();
        self.pre.closed_bytes = 0;
        self.pre.closed_events = 0;
        for chunk in chunks {
            if self.fs.exists(&self.pre.path(chunk.id)) {
                self.pre.adopt(chunk);
            } else {
                self.counters.lost_events_external.add(chunk.events);
            }
        }
    }
}
