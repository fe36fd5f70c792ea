//! Recovery at open (docs/design.md, "Recovery"): the directory is created if needed; every batch an
//! earlier process left is adopted as sealed (an unsealed one had a dead writer) after its torn
//! last line is cut; claims older than the claim timeout are released (their uploader is gone);
//! the pre-consent buffer is adopted; files the storage did not name are left alone. Then the
//! limits are applied as if every adopted batch had just been written: age, oversize, quota, count.
//!
//! Compressed batches (`batches/seal.rs`): a temporary `.ndjson.gz.tmp` is deleted (its seal did
//! not finish: the plain batch is still there); a batch there both plain and compressed keeps the
//! compressed one only (the seal renamed it into place, whole, and was killed before removing the
//! plain one). A compressed batch is not decompressed here, on the caller's thread: its documents
//! are counted when the writer checks it. Plain batches (an unsealed one, or any left by an
//! earlier version) are adopted as before, and compressed by the writer's check when sealed
//! batches are.

use std::collections::HashSet;
use std::io;
use std::path::Path;

use super::batches::{Batches, Check, Entry};
use super::error::StorageError;
use super::io_context::{warn, IoContext};
use super::names::{FileId, FileName};
use super::pre_consent::{Chunk, PreConsent};
use super::segment::{count_lines, whole_lines, Tally};

/// Fills the empty `batches` and `pre` from the directory, and continues the file sequence
/// after the highest one found.
pub(crate) fn recover(
    io: &mut IoContext,
    batches: &mut Batches,
    pre: &mut PreConsent,
    claim_timeout_ms: i64,
) -> Result<(), StorageError> {
    let root = io.root().to_path_buf();
    io.fs().create_dir_all(&root).map_err(|e| StorageError::io("create directory", &root, e))?;
    let entries = io.fs().read_dir(&root).map_err(|e| StorageError::io("list", &root, e))?;
    let now = io.now();
    let mut max_seq = None;
    let files: Vec<(FileName, &str, u64)> = entries
        .iter()
        .filter(|e| e.is_file)
        .filter_map(|e| FileName::adoptable(&e.name).map(|f| (f, e.name.as_str(), e.len)))
        .collect();
    let compressed: HashSet<FileId> = files
        .iter()
        .filter_map(|(f, _, _)| match f {
            FileName::Compressed(id) => Some(*id),
            _ => None,
        })
        .collect();
    let read_max = batches.limits().largest_read_at_open();
    for &(file, name, len) in &files {
        let path = root.join(name);
        let (id, claimed_ms, gzip) = match file {
            FileName::Batch(id) if compressed.contains(&id) => {
                // Killed between the rename of its compressed copy and this removal.
                io.remove(&path);
                continue;
            }
            FileName::Temp(id) => {
                max_seq = max_seq.max(Some(id.seq));
                io.remove(&path); // a seal that did not finish: the plain batch is there
                continue;
            }
            FileName::Batch(id) => (id, None, false),
            FileName::Compressed(id) => (id, None, true),
            FileName::Claimed { id, claimed_ms, gzip } => (id, Some(claimed_ms), gzip),
            FileName::Buffer(_) => continue,
        };
        if batches.contains(id) {
            continue; // a second file with the same identity was not made by this storage
        }
        max_seq = max_seq.max(Some(id.seq));
        let found = if len > read_max {
            // Evicted as oversize below by this size, unread.
            Some(Tally { bytes: len, events: 0 })
        } else if gzip {
            adopt_compressed(io, &path)
        } else {
            adopt_file(io, &path)
        };
        let Some(found) = found else { continue };
        let claimed_ms = claimed_ms.and_then(|ms| release_if_stale(io, id, ms, gzip, now, claim_timeout_ms));
        // Its lines are checked on the writer thread (`Batches::check_next_adopted`), not here on
        // the caller's.
        let entry = Entry {
            bytes: found.bytes,
            events: found.events,
            claimed_ms,
            delivered: false,
            check: Check::Unchecked,
            gzip,
        };
        batches.adopt(id, entry);
        io.counters().batches_recovered.incr();
    }
    max_seq = max_seq.max(adopt_pre_consent(io, pre));
    io.continue_after(max_seq);
    batches.apply_limits_at_open(io, now);
    Ok(())
}

/// Reads a file, cuts a torn last line, and returns its bytes and lines; None when nothing whole
/// is left (the file is then removed) or it cannot be read (it is then left alone).
fn adopt_file(io: &mut IoContext, path: &Path) -> Option<Tally> {
    let data = match io.fs().read(path) {
        Ok(data) => data,
        Err(e) => {
            io.record_failure("read", path, &e);
            return None;
        }
    };
    let whole = whole_lines(&data);
    let mut bytes = data.len() as u64;
    if whole.len() < data.len() {
        io.counters().torn_lines_dropped.incr();
        match io.fs().truncate(path, whole.len() as u64) {
            Ok(()) => bytes = whole.len() as u64,
            // The tail stays on disk (and counts against the quota); readers stop at the last `\n`.
            Err(e) => io.record_failure("truncate", path, &e),
        }
    }
    if whole.is_empty() {
        io.remove(path);
        return None;
    }
    Some(Tally { bytes, events: count_lines(whole) })
}

/// A compressed batch: its bytes only (whole, as the seal renames it into place whole); its
/// documents are counted by the writer's check, which decompresses it. None when it is empty
/// (removed) or cannot be read (left alone).
fn adopt_compressed(io: &mut IoContext, path: &Path) -> Option<Tally> {
    match io.fs().read(path) {
        Ok(data) if data.is_empty() => {
            io.remove(path);
            None
        }
        Ok(data) => Some(Tally { bytes: data.len() as u64, events: 0 }),
        Err(e) => {
            io.record_failure("read", path, &e);
            None
        }
    }
}

/// Releases a claim older than the claim timeout (or from a clock far ahead): the claimed file
/// gets its batch name back. Returns the claim that remains.
fn release_if_stale(
    io: &mut IoContext,
    id: FileId,
    claimed_ms: i64,
    gzip: bool,
    now: i64,
    timeout: i64,
) -> Option<i64> {
    let age = now.saturating_sub(claimed_ms);
    if age < timeout && age > -timeout {
        return Some(claimed_ms);
    }
    let from = io.claimed_path(id, claimed_ms, gzip);
    match io.fs().rename(&from, &io.sealed_path(id, gzip)) {
        Ok(()) => {
            io.counters().stale_claims_released.incr();
            None
        }
        Err(e) => {
            io.record_failure("release", &from, &e);
            Some(claimed_ms)
        }
    }
}

/// Adopts the pre-consent buffer's chunks, oldest first; returns their highest seq.
fn adopt_pre_consent(io: &mut IoContext, pre: &mut PreConsent) -> Option<u64> {
    let dir = pre.dir().to_path_buf();
    let entries = match io.fs().read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => {
            io.record_failure("list", &dir, &e);
            return None;
        }
    };
    let mut chunks: Vec<(FileId, u64)> = entries
        .iter()
        .filter(|e| e.is_file)
        .filter_map(|e| match FileName::adoptable(&e.name) {
            Some(FileName::Buffer(id)) => Some((id, e.len)),
            _ => None,
        })
        .collect();
    chunks.sort();
    // Newest first, while they fit the buffer's cap (what a full buffer keeps too): older chunks
    // past it are removed by their listed size, unread, so what an earlier process (or anything
    // else) left costs the caller's thread at most one buffer's worth of reading.
    let max = pre.max_bytes();
    let (mut kept, mut total, mut dropped, mut full) = (Vec::new(), 0u64, false, false);
    for &(id, len) in chunks.iter().rev() {
        // The first chunk that does not fit ends the run: it and every older one go, as a full
        // buffer keeps its newest lines without a gap.
        full |= total.saturating_add(len) > max;
        if full {
            dropped |= io.remove(&pre.path(id));
            continue;
        }
        if let Some(found) = adopt_file(io, &pre.path(id)) {
            total += found.bytes;
            kept.push(Chunk { id, bytes: found.bytes, events: found.events, moved_lines: 0 });
        }
    }
    if dropped {
        io.warn_once(warn::DROP_PRE_CONSENT, || {
            "pre-consent chunks found at open exceed the buffer's cap: the oldest were removed unread".into()
        });
    }
    for chunk in kept.into_iter().rev() {
        pre.adopt(chunk);
    }
    chunks.last().map(|(id, _)| id.seq)
}
