//! The upload read path (docs/design.md, "Upload side"): `next_batch` claims the oldest sealed
//! batch and reads it outside the store's lock (gzip batches as stored, plain ones filtered of
//! lines that are not documents and with view documents reduced to the highest
//! `_dd.document_version` per view id: the intake keeps only that one); `complete_batch` takes a
//! claim's id back. The claims themselves are the batch set's (`batches.rs`); the storage facade
//! only delegates here.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::access::{Deferred, StoreAccess};
use super::batches::{Claim, Next};
use super::error::StorageError;
use super::names::{FileId, FileName};
use super::segment::lines;
use super::{ndjson, segment};
use crate::core::config::{BatchEncoding, UPLOAD_LOCK_WAIT_MS};

/// [`UPLOAD_LOCK_WAIT_MS`] as a duration.
const UPLOAD_LOCK_WAIT: Duration = Duration::from_millis(UPLOAD_LOCK_WAIT_MS);

/// One claimed batch, as `next_batch()` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Pass it back to `complete_batch`.
    pub id: String,
    /// Whole NDJSON lines, views reduced; gzip-compressed when `encoding` is gzip (handed out as
    /// stored, never decompressed on the caller's thread).
    pub body: Vec<u8>,
    /// How `body` is encoded: the HTTP `Content-Encoding` to send it with.
    pub encoding: BatchEncoding,
    /// Lines in `body` (decompressed).
    pub event_count: u64,
    /// `body.len()`.
    pub bytes: u64,
}

/// The batch, claim time and encoding an id given to `complete_batch` names (the claimed file's
/// name, [`super::batches::Claim::ticket`]); an id the storage could not have returned is
/// [`StorageError::UnknownBatch`]. The encoding is part of the id: a compressed claim's id with
/// `.gz` taken out (or a plain one's with it added) names no claim.
pub(crate) fn parse_batch_id(id_text: &str) -> Result<(FileId, i64, bool), StorageError> {
    match FileName::parse(id_text) {
        Some(FileName::Claimed { id, claimed_ms, gzip }) => Ok((id, claimed_ms, gzip)),
        _ => Err(StorageError::UnknownBatch(id_text.to_owned())),
    }
}

/// [`super::Storage::next_batch`]: claims and reads within one bound for the whole call.
pub(crate) fn next_batch(access: &StoreAccess) -> Result<Option<Batch>, StorageError> {
    let mut wait = UploadWait::default();
    let result = claim_and_read(access, &mut wait);
    count_wait(access, wait);
    count_upload_error(access, result)
}

fn claim_and_read(access: &StoreAccess, wait: &mut UploadWait) -> Result<Option<Batch>, StorageError> {
    // One bound for the whole call, however many claims it goes through.
    let deadline = Instant::now() + UPLOAD_LOCK_WAIT;
    loop {
        let (claim, fs) = {
            let Some(mut store) = access.lock_until(deadline) else {
                wait.gave_up = true;
                return Err(StorageError::Busy(UPLOAD_LOCK_WAIT));
            };
            let claim = store.claim_next();
            store.publish();
            (claim?, store.fs())
        };
        let claim = match claim {
            Next::Claimed(claim) => claim,
            Next::Nothing => return Ok(None),
            // A compressed batch found at open, not checked yet: the writer does it first
            // thing (decompressing there, never here). Waited for within the same bound as
            // the lock: past it, the writer is busy.
            Next::Unchecked if Instant::now() < deadline => {
                wait.unchecked = true;
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            Next::Unchecked => return Err(StorageError::Busy(UPLOAD_LOCK_WAIT)),
        };
        // Read outside the lock: the writer never touches a claimed file.
        let data = match fs.read(&claim.path) {
            Ok(data) => data,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = apply_or_defer(
                    access,
                    deadline,
                    wait,
                    Deferred::Forget { id: claim.id, claimed_ms: claim.claimed_ms },
                );
                continue;
            }
            // Left claimed: the next call goes on with the next batch instead of failing on
            // this one again; the claim goes stale and the read is retried later.
            Err(e) => return Err(StorageError::io("read", claim.path, e)),
        };
        if claim.encoding == BatchEncoding::Gzip {
            // Views were reduced and lines checked when it was sealed (or found at open).
            if claim.events == 0 {
                discard(access, deadline, wait, &claim);
                continue;
            }
            let bytes = data.len() as u64;
            let (id, encoding, event_count) = (claim.ticket(), claim.encoding, claim.events);
            access.handed_out(id.clone(), claim.claimed_ms);
            return Ok(Some(Batch { id, body: data, encoding, event_count, bytes }));
        }
        let whole = segment::whole_lines(&data);
        // Only a batch found at open with lines that are not documents: never the writer's.
        let filtered = claim.filter.then(|| ndjson::keep_documents(whole).0);
        let (reduced, event_count) = reduce_views(filtered.as_deref().unwrap_or(whole));
        let body = match reduced {
            Cow::Owned(body) => body,
            // Nothing to reduce: the filtered lines, or the whole lines read, are the body.
            Cow::Borrowed(kept) => {
                let len = kept.len();
                let mut body = filtered.unwrap_or(data);
                body.truncate(len);
                body
            }
        };
        if event_count == 0 {
            discard(access, deadline, wait, &claim);
            continue;
        }
        let bytes = body.len() as u64;
        let encoding = BatchEncoding::Identity;
        let id = claim.ticket();
        access.handed_out(id.clone(), claim.claimed_ms);
        return Ok(Some(Batch { id, body, encoding, event_count, bytes }));
    }
}

/// A claimed batch with no whole line: deleted now, or by the store's next holder.
fn discard(access: &StoreAccess, deadline: Instant, wait: &mut UploadWait, claim: &Claim) {
    let _ = apply_or_defer(access, deadline, wait, Deferred::Discard { id: claim.id, claimed_ms: claim.claimed_ms });
}

/// [`super::Storage::complete_batch`]: the id parsed, then the change made; or, when the writer
/// holds the store past the wait, deferred if the id is one `nextBatch()` handed out and nothing
/// ended yet (the store cannot be asked), refused otherwise.
pub(crate) fn complete_batch(access: &StoreAccess, id_text: &str, delivered: bool) -> Result<(), StorageError> {
    let (id, claimed_ms, gzip) = parse_batch_id(id_text)?;
    let deadline = Instant::now() + UPLOAD_LOCK_WAIT;
    let op = Deferred::Complete { id, claimed_ms, gzip, delivered };
    let mut wait = UploadWait::default();
    let result = match access.lock_until(deadline) {
        Some(mut store) => {
            let result = op.apply(&mut store);
            store.publish();
            if result.is_ok() {
                access.end_handed(id_text);
            }
            result
        }
        None if access.end_handed(id_text) => {
            wait.gave_up = true;
            access.defer(op);
            Ok(())
        }
        None => Err(StorageError::UnknownBatch(id_text.to_owned())),
    };
    count_wait(access, wait);
    match result {
        Err(StorageError::UnknownBatch(_)) => Err(StorageError::UnknownBatch(id_text.to_owned())),
        result => count_upload_error(access, result),
    }
}

/// [`super::Storage::pending_batches`]: the gauge, read without the store.
pub(crate) fn pending_batches(access: &StoreAccess) -> u64 {
    access.counters.batches_pending.get()
}

fn count_upload_error<T>(access: &StoreAccess, result: Result<T, StorageError>) -> Result<T, StorageError> {
    if let Err(StorageError::Io { .. }) = &result {
        access.counters.upload_errors.incr();
    }
    result
}

/// `uploadWaitsGivenUp`: once per call that gave up waiting for the store, unless it was
/// waiting for the check of a compressed batch found at open (not a stall: the writer holds
/// the store for one batch at a time then, and `pending_batches` tells that case).
fn count_wait(access: &StoreAccess, wait: UploadWait) {
    if wait.gave_up && !wait.unchecked {
        access.counters.upload_waits_given_up.incr();
    }
}

/// Makes an upload-side change now, or leaves it to the next holder of the store.
fn apply_or_defer(
    access: &StoreAccess,
    deadline: Instant,
    wait: &mut UploadWait,
    op: Deferred,
) -> Result<(), StorageError> {
    match access.lock_until(deadline) {
        Some(mut store) => {
            let result = op.apply(&mut store);
            store.publish();
            result
        }
        None => {
            wait.gave_up = true;
            access.defer(op);
            Ok(())
        }
    }
}

/// How one upload-side call waited for the store (see [`count_wait`]).
#[derive(Clone, Copy, Default)]
struct UploadWait {
    /// The store was still held when the call's wait ended.
    gave_up: bool,
    /// The call waited for the writer to check a compressed batch found at open.
    unchecked: bool,
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
pub(crate) fn reduce_views(data: &[u8]) -> (Cow<'_, [u8]>, u64) {
    let lines: Vec<&[u8]> = lines(data).collect();
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
        return (Cow::Borrowed(data), lines.len() as u64);
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
    (Cow::Owned(body), count)
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
        assert_eq!(String::from_utf8(body.into_owned()).unwrap(), expected);
        assert_eq!(count, 3);
    }

    #[test]
    fn equal_versions_keep_the_first() {
        let data = [view("a", 2), view("a", 2)].concat();
        let (body, count) = reduce_views(data.as_bytes());
        assert_eq!(String::from_utf8(body.into_owned()).unwrap(), view("a", 2));
        assert_eq!(count, 1);
    }
}
