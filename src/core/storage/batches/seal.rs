//! Sealed batches stored compressed (`batchEncoding: 'gzip'`), and the check of batches found at
//! open. Everything here runs on the writer thread (a claim checks a plain batch found at open,
//! never a compressed one).
//!
//! **The seal.** The plain file is read back, its superseded views dropped (the rule of the upload
//! side: `upload::reduce_views`), gzip-compressed, written to `<name>.ndjson.gz.tmp`, fsynced,
//! renamed to `<name>.ndjson.gz`, the directory fsynced, and only then is the plain file
//! removed. A kill at any point leaves the plain batch (with or without a temporary file, which
//! recovery deletes), or the compressed one (with or without the plain one, which recovery
//! deletes: the rename is atomic, so a compressed file is always whole). Nothing is lost and
//! nothing is there twice.
//!
//! **The quota.** While both files exist both are counted: room for the compressed copy is made
//! before it is written (evicting the oldest other batches, as for a new line), so the bytes on
//! disk never pass the quota; when there is no room the batch stays plain.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use super::{Batches, Check, Entry, Eviction};
use crate::core::storage::error::StorageError;
use crate::core::storage::fs::remove_if_exists;
use crate::core::storage::io_context::{warn, IoContext};
use crate::core::storage::names::FileId;
use crate::core::storage::ndjson::keep_documents;
use crate::core::storage::segment::{count_lines, whole_lines};
use crate::core::storage::upload::reduce_views;

/// Whole document lines, views reduced and compressed.
pub(crate) struct Packed {
    pub gz: Vec<u8>,
    /// Lines in the compressed body.
    pub events: u64,
    /// View lines dropped by the reduction.
    pub superseded: u64,
}

/// Reduces the views of whole document lines and gzip-compresses them at `level`.
pub(crate) fn pack(lines: &[u8], level: u32) -> Packed {
    let total = count_lines(lines);
    let (body, events) = reduce_views(lines);
    let mut enc = GzEncoder::new(Vec::with_capacity(body.len() / 4 + 64), Compression::new(level));
    // Writing into a Vec cannot fail.
    let gz = enc.write_all(&body).and_then(|()| enc.finish()).unwrap_or_default();
    Packed { gz, events, superseded: total.saturating_sub(events) }
}

/// What a compressed batch decompresses to.
pub(crate) enum Unpacked {
    /// Its whole lines, and whether the stream was damaged or cut (what decompressed before the
    /// damage is kept).
    Lines(Vec<u8>, bool),
    /// More than `limit` bytes: no batch written under the limits in force is that large (a
    /// foreign or corrupt file; gzip expands a run of short lines a thousandfold, so a 512 KiB
    /// file could otherwise take the writer hundreds of MB). Decompression stopped at the limit.
    Oversize,
}

/// Decompresses `data`, at most `limit` bytes of it.
pub(crate) fn unpack(data: &[u8], limit: u64) -> Unpacked {
    let cap = usize::try_from(limit).unwrap_or(usize::MAX).min(data.len().saturating_mul(8));
    let mut out = Vec::with_capacity(cap);
    let damaged = GzDecoder::new(data).take(limit.saturating_add(1)).read_to_end(&mut out).is_err();
    if out.len() as u64 > limit {
        return Unpacked::Oversize;
    }
    let whole = whole_lines(&out).len();
    let torn = whole < out.len();
    out.truncate(whole);
    Unpacked::Lines(out, damaged || torn)
}

/// Writes `gz` under the temporary name, fsyncs it and renames it to `to` (replacing what is
/// there atomically). On failure the temporary file is removed and the failure recorded.
fn install(io: &mut IoContext, id: FileId, gz: &[u8], to: &Path) -> bool {
    let tmp = io.temp_path(id);
    let fs = io.fs_handle();
    let result = (|| -> Result<(), (&'static str, PathBuf, io::Error)> {
        remove_if_exists(&*fs, &tmp).map_err(|e| ("remove", tmp.clone(), e))?;
        let mut file = fs.create_new(&tmp).map_err(|e| ("create", tmp.clone(), e))?;
        file.write_all(gz).map_err(|e| ("write", tmp.clone(), e))?;
        file.sync().map_err(|e| ("fsync", tmp.clone(), e))?;
        drop(file);
        fs.rename(&tmp, to).map_err(|e| ("rename", to.to_path_buf(), e))
    })();
    match result {
        Ok(()) => true,
        Err((op, path, e)) => {
            io.record_failure(op, &path, &e);
            let _ = remove_if_exists(&*fs, &tmp);
            false
        }
    }
}

impl Batches {
    /// Compresses a batch just sealed plain; on any failure it stays plain (and is uploaded so).
    pub(super) fn compress_sealed(&mut self, io: &mut IoContext, id: FileId, level: u32) {
        let plain = io.batch_path(id);
        let data = match io.fs().read(&plain) {
            Ok(data) => data,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.forget(io, id);
                return;
            }
            Err(e) => {
                io.record_failure("read", &plain, &e);
                return;
            }
        };
        self.store_compressed(io, id, whole_lines(&data), level);
    }

    /// Stores `lines` (whole document lines) as the compressed form of batch `id`, replacing its
    /// file (plain or compressed); the entry's bytes and events follow. False if it stays as it
    /// was.
    fn store_compressed(&mut self, io: &mut IoContext, id: FileId, lines: &[u8], level: u32) -> bool {
        let Some(entry) = self.entries.get(&id).copied() else { return false };
        let packed = pack(lines, level);
        let gz_len = packed.gz.len() as u64;
        // Both files exist for a moment: the compressed one needs room of its own.
        if !self.make_room(io, gz_len, Some(id)) {
            return false;
        }
        let source = Self::path_of(io, id, &entry);
        let target = match entry.claimed_ms {
            Some(ms) => io.claimed_path(id, ms, true),
            None => io.sealed_path(id, true),
        };
        self.bytes += gz_len;
        if !install(io, id, &packed.gz, &target) {
            self.bytes -= gz_len;
            return false;
        }
        // The new name is durable before the old file goes: a power cut keeps one of them.
        io.sync_root();
        let mut bytes = gz_len;
        if source == target || io.remove(&source) {
            self.bytes = self.bytes.saturating_sub(entry.bytes);
        } else {
            bytes += entry.bytes; // the plain file stays until the next open deletes it
        }
        let events = entry.events.saturating_sub(packed.superseded).min(packed.events);
        self.events = self.events.saturating_sub(entry.events) + events;
        io.counters().views_superseded.add(packed.superseded);
        self.entries.insert(id, Entry { bytes, events, gzip: true, check: Check::Clean, ..entry });
        true
    }

    /// Reads a batch found at open and counts the lines that are not documents: none → clean;
    /// some → dirty (the reader drops them) and its events are the documents only. A read that
    /// fails marks it dirty, so whatever is read later is filtered.
    ///
    /// On the writer thread (`on_writer`) a compressed batch is decompressed and its documents
    /// counted (a damaged one is rewritten with the documents that survive), and an unclaimed
    /// plain one is compressed when sealed batches are.
    pub(super) fn check(&mut self, io: &mut IoContext, id: FileId, on_writer: bool) -> Result<(), StorageError> {
        let Some(entry) = self.entries.get(&id).copied() else { return Ok(()) };
        if entry.gzip && !on_writer {
            return Ok(());
        }
        let path = Self::path_of(io, id, &entry);
        let data = match io.fs().read(&path) {
            Ok(data) => data,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.forget(io, id);
                return Ok(());
            }
            Err(e) => {
                io.record_failure("read", &path, &e);
                if entry.gzip {
                    self.drop_unreadable(io, id, &path);
                } else {
                    self.entries.update(&id, |e| e.check = Check::Dirty);
                }
                return Err(StorageError::io("read", path, e));
            }
        };
        if entry.gzip {
            self.check_compressed(io, id, &path, &data);
            return Ok(());
        }
        let (docs, dropped) = keep_documents(whole_lines(&data));
        self.count_invalid(io, id, dropped, &path);
        if let (true, Some(level), None) = (on_writer, self.limits.gzip_level, entry.claimed_ms) {
            self.store_compressed(io, id, &docs, level);
        }
        Ok(())
    }

    /// Marks an entry clean (`dropped == 0`) or dirty, taking the lines that are not documents
    /// off its events.
    fn count_invalid(&mut self, io: &mut IoContext, id: FileId, dropped: u64, path: &Path) {
        let Some(entry) = self.entries.get(&id).copied() else { return };
        if dropped == 0 {
            self.entries.update(&id, |e| e.check = Check::Clean);
            return;
        }
        let dropped = dropped.min(entry.events);
        self.entries.update(&id, |e| {
            e.check = Check::Dirty;
            e.events -= dropped;
        });
        self.events = self.events.saturating_sub(dropped);
        io.counters().invalid_lines_dropped.add(dropped);
        io.warn_once(warn::DROP_INVALID, || {
            format!("{} holds lines that are not JSON documents: they are not uploaded", path.display())
        });
    }

    /// A compressed batch found at open: its events were not counted (that needs decompressing,
    /// here); a damaged one is rewritten with its surviving documents, or goes.
    fn check_compressed(&mut self, io: &mut IoContext, id: FileId, path: &Path, data: &[u8]) {
        let (lines, damaged) = match unpack(data, self.limits.largest_batch()) {
            Unpacked::Lines(lines, damaged) => (lines, damaged),
            Unpacked::Oversize => {
                // As a plain batch past the largest one the limits allow is at open.
                self.evict_or_doom(io, id, Eviction::Oversize);
                return;
            }
        };
        let (docs, dropped) = keep_documents(&lines);
        let dropped = dropped + u64::from(damaged);
        let events = count_lines(&docs);
        self.entries.update(&id, |entry| {
            entry.events = events;
            entry.check = Check::Clean;
        });
        self.events += events;
        if dropped == 0 {
            return;
        }
        io.counters().invalid_lines_dropped.add(dropped);
        io.warn_once(warn::DROP_INVALID, || {
            format!("{} is damaged or holds lines that are not JSON documents: they are not uploaded", path.display())
        });
        if events == 0 {
            self.drop_unreadable(io, id, path); // no documents to lose
            return;
        }
        let level = self.limits.gzip_level.unwrap_or(crate::core::config::GZIP_LEVEL);
        if !self.store_compressed(io, id, &docs, level) {
            self.drop_unreadable(io, id, path);
        }
    }

    /// A compressed batch that cannot be read or repaired: never handed out damaged. Its file
    /// goes (or, if that fails, it is doomed), its documents are counted lost to a failed write.
    fn drop_unreadable(&mut self, io: &mut IoContext, id: FileId, path: &Path) {
        let Some(entry) = self.entries.get(&id).copied() else { return };
        io.counters().dropped_write_error.add(entry.events);
        if io.remove(path) {
            self.drop_entry(id);
        } else {
            self.doom(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_reduces_views_and_unpack_gives_the_lines_back() {
        let view =
            |v: u64| format!("{{\"type\":\"view\",\"_dd\":{{\"document_version\":{v}}},\"view\":{{\"id\":\"a\"}}}}\n");
        let action = "{\"type\":\"action\"}\n";
        let data = [view(1), action.into(), view(2)].concat();
        let packed = pack(data.as_bytes(), 6);
        assert_eq!((packed.events, packed.superseded), (2, 1));
        let Unpacked::Lines(lines, damaged) = unpack(&packed.gz, data.len() as u64) else { panic!("oversize") };
        assert!(!damaged);
        assert_eq!(String::from_utf8(lines).unwrap(), [action.to_string(), view(2)].concat());
    }

    #[test]
    fn a_cut_stream_keeps_its_whole_lines_and_says_so() {
        let data: String = (0..2000).map(|i| format!("{{\"n\":{i},\"pad\":\"{}\"}}\n", "x".repeat(i % 50))).collect();
        let packed = pack(data.as_bytes(), 1);
        let Unpacked::Lines(lines, damaged) = unpack(&packed.gz[..packed.gz.len() / 2], u64::MAX) else {
            panic!("oversize")
        };
        assert!(damaged);
        assert!(data.as_bytes().starts_with(&lines));
        assert_eq!(lines.last(), Some(&b'\n'));
        assert!(matches!(unpack(b"not gzip", u64::MAX), Unpacked::Lines(l, true) if l.is_empty()));
    }

    #[test]
    fn decompression_stops_past_the_limit() {
        // A run of short lines: a thousandfold expansion, the shape of a gzip bomb.
        let data = "{}\n".repeat(1 << 20);
        let packed = pack(data.as_bytes(), 9);
        assert!(packed.gz.len() * 100 < data.len(), "{} bytes compressed", packed.gz.len());
        assert!(matches!(unpack(&packed.gz, data.len() as u64 - 1), Unpacked::Oversize));
        assert!(matches!(unpack(&packed.gz, data.len() as u64), Unpacked::Lines(l, false) if l.len() == data.len()));
    }
}
