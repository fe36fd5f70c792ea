//! File names of the storage directory (DESIGN.md, "The storage contract", Format):
//!
//! - `<storageDir>/rum/batch-<created_ms>-<seq>.ndjson`: a batch, active or sealed;
//! - `<storageDir>/rum/batch-<created_ms>-<seq>.ndjson.<claimed_ms>.uploading`: a claimed batch;
//! - `<storageDir>/rum/pending/buffer-<created_ms>-<seq>.ndjson`: pre-consent buffer chunks.
//!
//! `seq` continues from the highest one on disk at open, so it orders files by creation even when
//! the wall clock steps back; the storage orders by `seq`, never by the clock.

use std::fmt;

/// Subdirectory of `storageDir` that holds the batches.
pub const RUM_DIR: &str = "rum";
/// Subdirectory of [`RUM_DIR`] that holds the pre-consent buffer.
pub const PENDING_DIR: &str = "pending";

const BATCH_PREFIX: &str = "batch-";
const BUFFER_PREFIX: &str = "buffer-";
const EXT: &str = ".ndjson";
const CLAIM_EXT: &str = ".uploading";

/// Identity of a batch or buffer file. Ordered by `seq` first: creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct FileId {
    pub seq: u64,
    pub created_ms: i64,
}

impl FileId {
    pub fn batch_name(self) -> String {
        format!("{BATCH_PREFIX}{}-{}{EXT}", self.created_ms, self.seq)
    }

    pub fn claimed_name(self, claimed_ms: i64) -> String {
        format!("{}.{claimed_ms}{CLAIM_EXT}", self.batch_name())
    }

    pub fn buffer_name(self) -> String {
        format!("{BUFFER_PREFIX}{}-{}{EXT}", self.created_ms, self.seq)
    }
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.batch_name())
    }
}

/// What a file name in the storage directories is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileName {
    Batch(FileId),
    Claimed { id: FileId, claimed_ms: i64 },
    Buffer(FileId),
}

impl FileName {
    /// A name found in the directory at open: [`FileName::parse`], less the sequence numbers the
    /// storage cannot have written (see [`ADOPT_MAX_SEQ`]).
    pub fn adoptable(name: &str) -> Option<Self> {
        Self::parse(name).filter(|f| f.id().seq < ADOPT_MAX_SEQ)
    }

    pub fn id(self) -> FileId {
        match self {
            Self::Batch(id) | Self::Buffer(id) | Self::Claimed { id, .. } => id,
        }
    }

    /// None for any name the storage did not create; such files are left alone.
    pub fn parse(name: &str) -> Option<Self> {
        if let Some(rest) = name.strip_prefix(BUFFER_PREFIX) {
            return parse_id(rest.strip_suffix(EXT)?).map(Self::Buffer);
        }
        let rest = name.strip_prefix(BATCH_PREFIX)?;
        if let Some(id) = rest.strip_suffix(EXT) {
            return parse_id(id).map(Self::Batch);
        }
        let rest = rest.strip_suffix(CLAIM_EXT)?;
        let (id, claimed) = rest.split_once(&format!("{EXT}."))?;
        Some(Self::Claimed { id: parse_id(id)?, claimed_ms: parse_ms(claimed)? })
    }
}

/// Files found at open with a sequence number at or past this were not written by the storage
/// (it counts up from 0 and would need centuries of files to get here): they are left alone, so
/// the sequence, continued from the highest one adopted, can never overflow in a process.
const ADOPT_MAX_SEQ: u64 = u64::MAX / 4;

/// `<created_ms>-<seq>`
fn parse_id(s: &str) -> Option<FileId> {
    let (created, seq) = s.split_once('-')?;
    let seq = if seq.bytes().all(|b| b.is_ascii_digit()) { seq.parse().ok()? } else { return None };
    Some(FileId { seq, created_ms: parse_ms(created)? })
}

/// Plain decimal digits (no sign, no `+`), as the storage writes them.
fn parse_ms(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let id = FileId { seq: 7, created_ms: 1_700_000_000_123 };
        assert_eq!(id.batch_name(), "batch-1700000000123-7.ndjson");
        assert_eq!(FileName::parse(&id.batch_name()), Some(FileName::Batch(id)));
        assert_eq!(FileName::parse(&id.claimed_name(42)), Some(FileName::Claimed { id, claimed_ms: 42 }));
        assert_eq!(FileName::parse(&id.buffer_name()), Some(FileName::Buffer(id)));
    }

    #[test]
    fn foreign_names_are_not_ours() {
        for name in [
            "batch-1-2.json",
            "batch--2.ndjson",
            "batch-1-.ndjson",
            "batch-+1-2.ndjson",
            "batch-1-2.ndjson.x.uploading",
            "batch-1-2.ndjson.uploading",
            "notes.txt",
            "buffer-1.ndjson",
        ] {
            assert_eq!(FileName::parse(name), None, "{name}");
        }
    }

    #[test]
    fn a_seq_the_storage_cannot_have_reached_is_not_adopted() {
        let huge = "batch-1-18446744073709551615.ndjson";
        assert!(FileName::parse(huge).is_some(), "still the storage's form");
        assert_eq!(FileName::adoptable(huge), None);
        let limit = FileId { seq: ADOPT_MAX_SEQ, created_ms: 1 };
        assert_eq!(FileName::adoptable(&limit.batch_name()), None);
        let below = FileId { seq: ADOPT_MAX_SEQ - 1, created_ms: 1 };
        assert_eq!(FileName::adoptable(&below.claimed_name(5)), Some(FileName::Claimed { id: below, claimed_ms: 5 }));
    }

    #[test]
    fn order_is_by_seq_not_by_clock() {
        let earlier = FileId { seq: 1, created_ms: 9_000 };
        let later = FileId { seq: 2, created_ms: 1_000 };
        assert!(earlier < later);
    }
}
