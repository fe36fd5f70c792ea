//! Recovery at open (DESIGN.md, "Recovery"): the directory is created if needed; every batch an
//! earlier process left is adopted as sealed (an unsealed one had a dead writer) after its torn
//! last line is cut; claims older than the claim timeout are released (their uploader is gone);
//! the pre-consent buffer is adopted; files the storage did not name are left alone. Then the
//! limits are applied as if every adopted batch had just been written: age, oversize, quota, count.

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::consent::Chunk;
use super::fs::{remove_if_exists, Fs};
use super::names::{FileId, FileName};
use super::segment::{count_lines, whole_lines};
use super::store::{Entry, Eviction, Limits, Store};
use super::{StorageError, WallClock};
use crate::core::stats::StorageCounters;

pub(crate) fn open_store(
    fs: Arc<dyn Fs>,
    clock: WallClock,
    limits: Limits,
    counters: Arc<StorageCounters>,
    root: &Path,
) -> Result<Store, StorageError> {
    fs.create_dir_all(root).map_err(|e| StorageError::io("create directory", root, e))?;
    let entries = fs.read_dir(root).map_err(|e| StorageError::io("list", root, e))?;
    let mut store = Store::new(fs, clock, limits, counters, root.to_path_buf());
    let now = store.now();
    let mut max_seq = None;
    for entry in entries.iter().filter(|e| e.is_file) {
        let (id, claimed_ms) = match FileName::adoptable(&entry.name) {
            Some(FileName::Batch(id)) => (id, None),
            Some(FileName::Claimed { id, claimed_ms }) => (id, Some(claimed_ms)),
            _ => continue,
        };
        if store.batches.contains_key(&id) {
            continue; // a second file with the same identity was not made by this storage
        }
        max_seq = max_seq.max(Some(id.seq));
        let path = root.join(&entry.name);
        let Some((bytes, events)) = adopt_file(&mut store, &path) else { continue };
        let claimed_ms = claimed_ms.and_then(|ms| release_if_stale(&mut store, id, ms, now));
        store.batches.insert(id, Entry { bytes, events, claimed_ms, delivered: false });
        store.bytes += bytes;
        store.events += events;
        store.counters.batches_recovered.incr();
    }
    max_seq = max_seq.max(adopt_pre_consent(&mut store));
    store.next_seq = max_seq.map_or(0, |s| s.saturating_add(1));
    apply_limits(&mut store, now);
    store.publish();
    Ok(store)
}

/// Reads a file, cuts a torn last line, and returns its bytes and lines; None when nothing whole
/// is left (the file is then removed) or it cannot be read (it is then left alone).
fn adopt_file(store: &mut Store, path: &Path) -> Option<(u64, u64)> {
    let data = match store.fs.read(path) {
        Ok(data) => data,
        Err(e) => {
            store.record_failure("read", path, &e);
            return None;
        }
    };
    let whole = whole_lines(&data);
    let mut bytes = data.len() as u64;
    if whole.len() < data.len() {
        store.counters.torn_lines_dropped.incr();
        match store.fs.truncate(path, whole.len() as u64) {
            Ok(()) => bytes = whole.len() as u64,
            // The tail stays on disk (and counts against the quota); readers stop at the last `\n`.
            Err(e) => store.record_failure("truncate", path, &e),
        }
    }
    if whole.is_empty() {
        if let Err(e) = remove_if_exists(&*store.fs, path) {
            store.record_failure("remove", path, &e);
        }
        return None;
    }
    Some((bytes, count_lines(whole)))
}

/// Releases a claim older than the claim timeout (or from a clock far ahead): the claimed file
/// gets its batch name back. Returns the claim that remains.
fn release_if_stale(store: &mut Store, id: FileId, claimed_ms: i64, now: i64) -> Option<i64> {
    let timeout = store.limits.claim_timeout_ms;
    let age = now.saturating_sub(claimed_ms);
    if age < timeout && age > -timeout {
        return Some(claimed_ms);
    }
    let from = store.claimed_path(id, claimed_ms);
    match store.fs.rename(&from, &store.batch_path(id)) {
        Ok(()) => {
            store.counters.stale_claims_released.incr();
            None
        }
        Err(e) => {
            store.record_failure("release", &from, &e);
            Some(claimed_ms)
        }
    }
}

/// Adopts the pre-consent buffer's chunks, oldest first; returns their highest seq.
fn adopt_pre_consent(store: &mut Store) -> Option<u64> {
    let dir = store.pre.dir().to_path_buf();
    let entries = match store.fs.read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => {
            store.record_failure("list", &dir, &e);
            return None;
        }
    };
    let mut ids: Vec<FileId> = entries
        .iter()
        .filter(|e| e.is_file)
        .filter_map(|e| match FileName::adoptable(&e.name) {
            Some(FileName::Buffer(id)) => Some(id),
            _ => None,
        })
        .collect();
    ids.sort();
    for &id in &ids {
        let path = store.pre.path(id);
        if let Some((bytes, events)) = adopt_file(store, &path) {
            store.pre.adopt(Chunk { id, bytes, events });
        }
    }
    ids.last().map(|id| id.seq)
}

/// The limits hold at open as after any write.
fn apply_limits(store: &mut Store, now: i64) {
    store.evict_aged(now);
    let largest = store.limits.largest_batch();
    let oversize: Vec<FileId> =
        store.batches.iter().filter(|(_, e)| e.claimed_ms.is_none() && e.bytes > largest).map(|(id, _)| *id).collect();
    for id in oversize {
        store.evict(id, Eviction::Oversize);
    }
    while store.bytes > store.limits.disk_quota_bytes && store.evict_oldest(Eviction::Quota) {}
    while store.batches.len() > store.limits.max_batch_files && store.evict_oldest(Eviction::Count) {}
}
