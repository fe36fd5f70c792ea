//! The pre-consent buffer (docs/design.md, "Consent"): while consent is pending, lines are kept in
//! `<storageDir>/rum/pending/` as chunk files, so "full → drop its oldest half" deletes whole files
//! instead of rewriting one. What happens to the buffer when consent is decided (moved into
//! batches, or dropped) is the store's (`store.rs`); this file keeps the buffer and its counts.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::fs::remove_if_exists;
use super::io_context::{warn, IoContext};
use super::names::{FileId, PENDING_DIR};
use super::segment::{OpenFile, WRITE_CHUNK};
use crate::core::stats::StorageCounters;

/// The buffer is kept in this many chunk files, so dropping "the oldest half" is exact to an
/// eighth of the limit.
const PRE_CONSENT_CHUNKS: u64 = 8;

/// A closed chunk of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub id: FileId,
    pub bytes: u64,
    /// Its documents not yet in batches.
    pub events: u64,
    /// Lines at the start of its file already handled by a migration that failed part way (moved
    /// into batches, or dropped as not documents): the next migration in this process starts
    /// after them.
    pub moved_lines: usize,
}

pub(crate) struct PreConsent {
    dir: PathBuf,
    max_bytes: u64,
    /// Closed chunks, oldest first.
    chunks: VecDeque<Chunk>,
    closed_bytes: u64,
    closed_events: u64,
    active: Option<OpenFile>,
    /// Chunks whose lines are in batches but whose file could not be deleted: deleted at the next
    /// try (a restart would move their lines again).
    moved_files: Vec<FileId>,
}

impl PreConsent {
    pub fn new(root: &Path, max_bytes: u64) -> Self {
        Self {
            dir: root.join(PENDING_DIR),
            max_bytes,
            chunks: VecDeque::new(),
            closed_bytes: 0,
            closed_events: 0,
            active: None,
            moved_files: Vec::new(),
        }
    }

    /// The buffer's cap (`preConsentMaxBytes`).
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, id: FileId) -> PathBuf {
        self.dir.join(id.buffer_name())
    }

    fn bytes(&self) -> u64 {
        self.closed_bytes + self.active.as_ref().map_or(0, |a| a.seg.bytes())
    }

    fn events(&self) -> u64 {
        self.closed_events + self.active.as_ref().map_or(0, |a| a.seg.events())
    }

    /// Adds a closed chunk (found at open, or closed here); chunks are adopted oldest first.
    pub fn adopt(&mut self, chunk: Chunk) {
        self.closed_bytes += chunk.bytes;
        self.closed_events += chunk.events;
        self.chunks.push_back(chunk);
    }

    /// Takes the oldest closed chunk out of the buffer (a migration holds it while its lines move,
    /// so a [`PreConsent::resync`] meanwhile cannot count it lost, nor make another chunk the
    /// oldest in its place).
    pub fn pop_oldest(&mut self) -> Option<Chunk> {
        let chunk = self.chunks.pop_front()?;
        self.closed_bytes -= chunk.bytes;
        self.closed_events -= chunk.events;
        Some(chunk)
    }

    /// The oldest closed chunk.
    pub fn oldest(&self) -> Option<Chunk> {
        self.chunks.front().copied()
    }

    /// A chunk taken by [`PreConsent::pop_oldest`] whose migration failed: the oldest again.
    pub fn put_back(&mut self, chunk: Chunk) {
        self.closed_bytes += chunk.bytes;
        self.closed_events += chunk.events;
        self.chunks.push_front(chunk);
    }

    /// Keeps one serialized, `\n`-terminated line while consent is pending.
    pub fn buffer_line(&mut self, io: &mut IoContext, line: &[u8], now: i64) {
        let len = line.len() as u64;
        let max = self.max_bytes;
        if len > max {
            io.counters().dropped_pre_consent_full.incr();
            io.warn_once(warn::DROP_PRE_CONSENT, || "pre-consent buffer full: its oldest half is dropped".into());
            return;
        }
        if self.bytes() + len > max {
            self.drop_oldest_half(io, len);
        }
        let chunk_max = (max / PRE_CONSENT_CHUNKS).max(1);
        if self.active.as_ref().is_some_and(|a| a.seg.events() > 0 && a.seg.bytes() + len > chunk_max) {
            self.close_active(io);
        }
        if self.active.is_none() {
            let id = io.new_id(now);
            self.active = Some(OpenFile::new(id, self.path(id)));
        }
        let Some(active) = self.active.as_mut() else { return };
        active.seg.push(line);
        if active.seg.waiting() >= WRITE_CHUNK {
            self.write_out(io);
        }
    }

    /// Writes the active chunk's waiting lines. False if that failed (the chunk is then closed).
    pub fn write_out(&mut self, io: &mut IoContext) -> bool {
        let Some(active) = self.active.as_mut() else { return true };
        if let Some(lost) = active.replace_if_vanished(io, FileId::buffer_name) {
            // Removed with its directory: what it held is lost, its waiting lines go on.
            io.counters().lost_events_external.add(lost.events);
        }
        match active.write_out(io) {
            Ok(written) => {
                if written.recreated_dir {
                    self.resync(io);
                }
                true
            }
            Err(f) => {
                let Some(active) = self.active.take() else { return false };
                let on_disk = active.seg.on_disk();
                io.counters().dropped_write_error.add(f.lost.events);
                io.record_failure(f.op, active.seg.path(), &f.error);
                if on_disk.events > 0 || f.residue > 0 {
                    self.adopt(Chunk {
                        id: active.id,
                        bytes: on_disk.bytes + f.residue,
                        events: on_disk.events,
                        moved_lines: 0,
                    });
                } else if active.seg.has_file() {
                    let _ = remove_if_exists(io.fs(), active.seg.path());
                }
                false
            }
        }
    }

    /// fsync of the active chunk.
    pub fn sync(&mut self, io: &mut IoContext) {
        if let Some(active) = self.active.as_mut() {
            active.sync(io);
        }
    }

    /// Writes and closes the active chunk, if there is one.
    pub fn close_active(&mut self, io: &mut IoContext) {
        if self.active.is_none() || !self.write_out(io) {
            return;
        }
        let Some(active) = self.active.take() else { return };
        let on_disk = active.seg.on_disk();
        if on_disk.events > 0 {
            self.adopt(Chunk { id: active.id, bytes: on_disk.bytes, events: on_disk.events, moved_lines: 0 });
        }
    }

    /// Drops the oldest chunks until the buffer is at most half full and `len` more bytes fit.
    fn drop_oldest_half(&mut self, io: &mut IoContext, len: u64) {
        let max = self.max_bytes;
        let mut dropped = 0;
        while self.bytes() > max / 2 || self.bytes() + len > max {
            if let Some(chunk) = self.pop_oldest() {
                io.remove(&self.path(chunk.id));
                dropped += chunk.events;
            } else if let Some(active) = self.active.take() {
                dropped += active.seg.events();
                if active.seg.has_file() {
                    io.remove(active.seg.path());
                }
            } else {
                break;
            }
        }
        io.counters().dropped_pre_consent_full.add(dropped);
        io.warn_once(warn::DROP_PRE_CONSENT, || "pre-consent buffer full: its oldest half is dropped".into());
    }

    /// A chunk taken for migration whose file is gone: its events are counted as lost.
    pub fn forget(&mut self, io: &IoContext, chunk: Chunk) {
        io.counters().lost_events_external.add(chunk.events);
    }

    /// A chunk taken for migration whose lines are in batches now: its file goes (or is kept in
    /// [`PreConsent::retry_removals`]'s list when it cannot be deleted).
    pub fn migrated(&mut self, io: &mut IoContext, chunk: Chunk) {
        if !io.remove(&self.path(chunk.id)) {
            self.moved_files.push(chunk.id);
        }
        io.counters().pre_consent_migrated.add(chunk.events);
    }

    /// Deletes the files of moved chunks that could not be deleted before; true when none is left.
    pub fn retry_removals(&mut self, io: &mut IoContext) -> bool {
        let ids = std::mem::take(&mut self.moved_files);
        for id in ids {
            if !io.remove(&self.path(id)) {
                self.moved_files.push(id);
            }
        }
        self.moved_files.is_empty()
    }

    /// Consent not granted: the buffer is dropped.
    pub fn wipe(&mut self, io: &mut IoContext) {
        let mut dropped = 0;
        if let Some(active) = self.active.take() {
            dropped += active.seg.events();
            if active.seg.has_file() {
                io.remove(active.seg.path());
            }
        }
        while let Some(chunk) = self.pop_oldest() {
            dropped += chunk.events;
            io.remove(&self.path(chunk.id));
        }
        io.counters().dropped_consent.add(dropped);
    }

    /// After the directory was removed: forget the chunks that went with it.
    pub fn resync(&mut self, io: &IoContext) {
        let chunks: Vec<Chunk> = self.chunks.drain(..).collect();
        self.closed_bytes = 0;
        self.closed_events = 0;
        for chunk in chunks {
            if io.fs().exists(&self.path(chunk.id)) {
                self.adopt(chunk);
            } else {
                io.counters().lost_events_external.add(chunk.events);
            }
        }
    }

    /// Publishes the gauges to the shared counters.
    pub fn publish(&self, c: &StorageCounters) {
        c.pre_consent_bytes.set(self.bytes());
        c.pre_consent_events.set(self.events());
    }
}
