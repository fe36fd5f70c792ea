//! What the upload side hands out (DESIGN.md, "Upload side"): a claimed batch's body, with view
//! documents reduced to the highest `_dd.document_version` per view id (the intake keeps only
//! that one), and the batch ids `complete_batch` takes back. The claims themselves are the batch
//! set's (`batches.rs`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::error::StorageError;
use super::names::{FileId, FileName};
use super::segment::lines;
use crate::core::config::BatchEncoding;

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
