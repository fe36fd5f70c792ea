//! The upload side (DESIGN.md, "Upload side"): claim the oldest sealed batch, hand its body out
//! with view documents reduced to the highest `_dd.document_version` per view id, and delete it
//! or release the claim when the uploader reports back.
//!
//! A claim is a rename (`<name>.<claimed_ms>.uploading`), so it survives the process: a claim
//! whose uploader died is released once it is older than the claim timeout: at the next open,
//! and by any `next_batch` call of this process.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::PathBuf;

use serde::Deserialize;

use super::fs::remove_if_exists;
use super::names::{FileId, FileName};
use super::store::Store;
use super::StorageError;

/// One claimed batch, as `next_batch()` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Pass it back to `complete_batch`.
    pub id: String,
    /// Whole NDJSON lines, views reduced.
    pub body: Vec<u8>,
    /// Lines in `body`.
    pub event_count: u64,
    /// `body.len()`.
    pub bytes: u64,
}

/// A batch renamed to its claimed name, to be read outside the store's lock.
pub(crate) struct Claim {
    pub id: FileId,
    pub path: PathBuf,
}

impl Store {
    /// Claims the oldest sealed batch. When there is none but the active batch has lines and its
    /// window has passed, it is sealed first, so a slow trickle of events still gets uploaded.
    pub fn claim_next(&mut self) -> Result<Option<Claim>, StorageError> {
        let now = self.now();
        self.release_stale_claims(now);
        self.evict_aged(now);
        loop {
            let mut next = self.oldest_unclaimed();
            if next.is_none() && self.active.as_ref().is_some_and(|a| self.window_passed(a.id, now)) {
                self.seal_active();
                next = self.oldest_unclaimed();
            }
            let Some(id) = next else { return Ok(None) };
            let from = self.batch_path(id);
            let to = self.claimed_path(id, now);
            match self.fs.rename(&from, &to) {
                Ok(()) => {
                    if let Some(e) = self.batches.get_mut(&id) {
                        e.claimed_ms = Some(now);
                    }
                    self.counters.batches_claimed.incr();
                    return Ok(Some(Claim { id, path: to }));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => self.forget(id),
                Err(e) => return Err(StorageError::io("claim", from, e)),
            }
        }
    }

    fn oldest_unclaimed(&self) -> Option<FileId> {
        self.batches.iter().find(|(_, e)| e.claimed_ms.is_none()).map(|(id, _)| *id)
    }

    /// A batch whose file vanished behind the storage's back.
    pub fn forget(&mut self, id: FileId) {
        if let Some(e) = self.batches.remove(&id) {
            self.forget_lost(e);
        }
    }

    /// Releases claims older than the claim timeout: an uploader that lost its batch without
    /// completing it must not hold it (and its bytes of the quota) forever.
    fn release_stale_claims(&mut self, now: i64) {
        let timeout = self.limits.claim_timeout_ms;
        let stale: Vec<FileId> = self
            .batches
            .iter()
            .filter(|(_, e)| e.claimed_ms.is_some_and(|ms| now.saturating_sub(ms) >= timeout))
            .map(|(id, _)| *id)
            .collect();
        for id in stale {
            if self.batches.get(&id).is_some_and(|e| e.delivered) {
                let _ = self.delete_delivered(id); // still failing: tried again later
            } else if self.release(id).is_ok() {
                self.counters.stale_claims_released.incr();
            }
        }
    }

    /// Gives a claimed batch its name back, for a later claim.
    pub fn release(&mut self, id: FileId) -> Result<(), StorageError> {
        let Some(claimed_ms) = self.batches.get(&id).and_then(|e| e.claimed_ms) else { return Ok(()) };
        let from = self.claimed_path(id, claimed_ms);
        match self.fs.rename(&from, &self.batch_path(id)) {
            Ok(()) => {
                if let Some(e) = self.batches.get_mut(&id) {
                    e.claimed_ms = None;
                }
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.forget(id);
                Ok(())
            }
            Err(e) => {
                self.record_failure("release", &from, &e);
                Err(StorageError::io("release", from, e))
            }
        }
    }

    /// The uploader's answer: delivered → the batch is deleted; otherwise the claim is released
    /// and the batch is the next one claimed. An id that is not a claimed batch changes nothing.
    /// A delete that fails leaves the batch claimed and marked delivered, so it is not handed out
    /// again; the delete is retried when the claim would go stale.
    pub fn complete_id(&mut self, id: FileId, delivered: bool) -> Result<(), StorageError> {
        let unknown = || StorageError::UnknownBatch(id.batch_name());
        let Some(entry) = self.batches.get_mut(&id) else { return Err(unknown()) };
        if entry.claimed_ms.is_none() {
            return Err(unknown());
        }
        // Once delivered, a batch is only ever deleted: a later "not delivered" cannot make the
        // intake see it twice.
        if !delivered && !entry.delivered {
            self.release(id)?;
            self.counters.batches_released.incr();
            return Ok(());
        }
        entry.delivered = true;
        self.delete_delivered(id)
    }

    /// Deletes a delivered batch's file and counts it delivered; on failure the entry stays,
    /// marked delivered, and its events stay counted on disk.
    fn delete_delivered(&mut self, id: FileId) -> Result<(), StorageError> {
        let Some(entry) = self.batches.get(&id).copied() else { return Ok(()) };
        let Some(claimed_ms) = entry.claimed_ms else { return Ok(()) };
        let path = self.claimed_path(id, claimed_ms);
        remove_if_exists(&*self.fs, &path).map_err(|e| StorageError::io("delete", path, e))?;
        self.batches.remove(&id);
        self.uncount(entry.bytes, entry.events);
        self.counters.batches_delivered.incr();
        self.counters.events_delivered.add(entry.events);
        Ok(())
    }

    /// A claimed batch with no whole line in it: nothing to upload, it goes.
    pub fn discard_empty(&mut self, id: FileId) {
        let Some(entry) = self.batches.get(&id).copied() else { return };
        let path = match entry.claimed_ms {
            Some(ms) => self.claimed_path(id, ms),
            None => self.batch_path(id),
        };
        if let Err(e) = remove_if_exists(&*self.fs, &path) {
            self.record_failure("remove", &path, &e);
            return;
        }
        self.forget(id);
    }
}

/// The batch an id given to `complete_batch` names; an id the storage could not have returned is
/// [`StorageError::UnknownBatch`].
pub(crate) fn parse_batch_id(id_text: &str) -> Result<FileId, StorageError> {
    match FileName::parse(id_text) {
        Some(FileName::Batch(id)) => Ok(id),
        _ => Err(StorageError::UnknownBatch(id_text.to_owned())),
    }
}

/// The fields of a view document the reduction needs; everything else is skipped unparsed.
#[derive(Deserialize)]
struct ViewProbe {
    #[serde(rename = "type")]
    kind: Option<String>,
    view: Option<ViewId>,
    #[serde(rename = "_dd")]
    dd: Option<DocumentVersion>,
}

#[derive(Deserialize)]
struct ViewId {
    id: String,
}

#[derive(Deserialize)]
struct DocumentVersion {
    document_version: Option<u64>,
}

/// The view id and document version of a view line. The writer's own documents start with
/// `{"type":`, so any other type is known without parsing; a line that does not start that way
/// (one an event mapper replaced) is parsed to find out.
fn view_version(line: &[u8]) -> Option<(String, u64)> {
    const TYPE: &[u8] = b"{\"type\":\"";
    if line.starts_with(TYPE) && !line[TYPE.len()..].starts_with(b"view\"") {
        return None;
    }
    let probe: ViewProbe = serde_json::from_slice(line).ok()?;
    if probe.kind.as_deref() != Some("view") {
        return None;
    }
    Some((probe.view?.id, probe.dd?.document_version?))
}

/// Keeps, for each view id, only the line with the highest `_dd.document_version` (the first of
/// equal ones, e.g. a line duplicated by a crash during a migration), where that line stands.
/// Every other line is kept as it is. Returns the body and its line count.
pub(crate) fn reduce_views(data: &[u8]) -> (Vec<u8>, u64) {
    let lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    let mut best: HashMap<String, (u64, usize)> = HashMap::new();
    let mut views = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((id, version)) = view_version(line) else { continue };
        views.push(i);
        let slot = best.entry(id).or_insert((version, i));
        if version > slot.0 {
            *slot = (version, i);
        }
    }
    if views.len() == best.len() {
        return (data.to_vec(), lines.len() as u64);
    }
    let kept: HashSet<usize> = best.values().map(|&(_, i)| i).collect();
    let superseded: HashSet<usize> = views.into_iter().filter(|i| !kept.contains(i)).collect();
    let mut body = Vec::with_capacity(data.len());
    let mut count = 0;
    for (i, line) in lines.iter().enumerate() {
        if !superseded.contains(&i) {
            body.extend_from_slice(line);
            count += 1;
        }
    }
    (body, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(id: &str, version: u64) -> String {
        format!("{{\"type\":\"view\",\"_dd\":{{\"format_version\":2,\"document_version\":{version}}},\"view\":{{\"id\":\"{id}\"}}}}\n")
    }

    #[test]
    fn keeps_the_highest_version_per_view_and_every_other_line() {
        let action = "{\"type\":\"action\",\"view\":{\"id\":\"a\"}}\n";
        let mapped = "{\"_dd\":{\"document_version\":9},\"type\":\"view\",\"view\":{\"id\":\"b\"}}\n";
        let data = [view("a", 1), action.into(), view("a", 3), view("b", 2), view("a", 2), mapped.into()].concat();
        let (body, count) = reduce_views(data.as_bytes());
        let expected = [action.to_string(), view("a", 3), mapped.into()].concat();
        assert_eq!(String::from_utf8(body).unwrap(), expected);
        assert_eq!(count, 3);
    }

    #[test]
    fn equal_versions_keep_the_first() {
        let data = [view("a", 2), view("a", 2)].concat();
        let (body, count) = reduce_views(data.as_bytes());
        assert_eq!(String::from_utf8(body).unwrap(), view("a", 2));
        assert_eq!(count, 1);
    }
}
