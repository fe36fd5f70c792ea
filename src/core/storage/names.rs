//! File names of the storage directory (docs/design.md, "Storage"):
//!
//! - `<storageDir>/rum/batch-<created_ms>-<seq>.ndjson`: a batch, active or sealed plain
//!   (`batchEncoding: 'identity'`, or left by an earlier version);
//! - `<storageDir>/rum/batch-<created_ms>-<seq>.ndjson.gz`: a batch sealed gzip-compressed;
//! - `<storageDir>/rum/batch-<created_ms>-<seq>.ndjson.gz.tmp`: a compressed batch being written
//!   (renamed to `.ndjson.gz` once synced; one left at open is deleted);
//! - `<storageDir>/rum/batch-<created_ms>-<seq>.ndjson[.gz].<claimed_ms>.uploading`: a claimed batch;
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
const GZ_EXT: &str = ".ndjson.gz";
const TEMP_EXT: &str = ".ndjson.gz.tmp";
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

    /// The name of a sealed batch, plain or compressed.
    pub fn sealed_name(self, gzip: bool) -> String {
        if gzip {
            format!("{BATCH_PREFIX}{}-{}{GZ_EXT}", self.created_ms, self.seq)
        } else {
            self.batch_name()
        }
    }

    /// A compressed batch being written.
    pub fn temp_name(self) -> String {
        format!("{BATCH_PREFIX}{}-{}{TEMP_EXT}", self.created_ms, self.seq)
    }

    pub fn claimed_name(self, claimed_ms: i64, gzip: bool) -> String {
        format!("{}.{claimed_ms}{CLAIM_EXT}", self.sealed_name(gzip))
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
    /// A plain batch (active or sealed).
    Batch(FileId),
    /// A batch sealed compressed.
    Compressed(FileId),
    /// A compressed batch not yet renamed into place.
    Temp(FileId),
    Claimed {
        id: FileId,
        claimed_ms: i64,
        gzip: bool,
    },
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
            Self::Batch(id) | Self::Compressed(id) | Self::Temp(id) | Self::Buffer(id) | Self::Claimed { id, .. } => id,
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
        if let Some(id) = rest.strip_suffix(GZ_EXT) {
            return parse_id(id).map(Self::Compressed);
        }
        if let Some(id) = rest.strip_suffix(TEMP_EXT) {
            return parse_id(id).map(Self::Temp);
        }
        let rest = rest.strip_suffix(CLAIM_EXT)?;
        let (id, claimed) = rest.split_once(&format!("{EXT}."))?;
        let (gzip, claimed) = match claimed.strip_prefix("gz.") {
            Some(ms) => (true, ms),
            None => (false, claimed),
        };
        Some(Self::Claimed { id: parse_id(id)?, claimed_ms: parse_ms(claimed)?, gzip })
    }
}

/// Files found at open with a sequence number at or past this were not written by the storage
/// (it counts up from 0 and would need centuries of files to get here): they are left alone, so
/// the sequence, continued from the highest one adopted, can never overflow in a process.
const ADOPT_MAX_SEQ: u64 = u64::MAX / 4;

/// `<created_ms>-<seq>`
fn parse_id(s: &str) -> Option<FileId> {
    let (created, seq) = s.split_once('-')?;
    let seq = if is_canonical_number(seq) { seq.parse().ok()? } else { return None };
    Some(FileId { seq, created_ms: parse_ms(created)? })
}

/// A number as the storage writes it: decimal digits, no sign, no leading zero (but `0` itself).
/// Only such names are adopted: every later rename and removal rebuilds the name from the
/// number, so `batch-01-5.ndjson` would be read but never removed, and would stand beside
/// `batch-1-5.ndjson` as the same batch.
fn is_canonical_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

fn parse_ms(s: &str) -> Option<i64> {
    if !is_canonical_number(s) {
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
        assert_eq!(FileName::parse(&id.sealed_name(true)), Some(FileName::Compressed(id)));
        assert_eq!(id.sealed_name(true), "batch-1700000000123-7.ndjson.gz");
        assert_eq!(FileName::parse(&id.temp_name()), Some(FileName::Temp(id)));
        for gzip in [false, true] {
            assert_eq!(
                FileName::parse(&id.claimed_name(42, gzip)),
                Some(FileName::Claimed { id, claimed_ms: 42, gzip })
            );
        }
        assert_eq!(FileName::parse(&id.buffer_name()), Some(FileName::Buffer(id)));
    }

    #[test]
    fn foreign_names_are_not_ours() {
        for name in [
            "batch-1-2.json",
            "batch--2.ndjson",
            "batch-1-.ndjson",
            "batch-+1-2.ndjson",
            "batch-01-2.ndjson",
            "batch-1-02.ndjson",
            "batch-1-00.ndjson.gz",
            "batch-1-2.ndjson.007.uploading",
            "buffer-01-2.ndjson",
            "batch-1-2.ndjson.x.uploading",
            "batch-1-2.ndjson.uploading",
            "batch-1-2.ndjson.gz.uploading",
            "batch-1-2.ndjson.gz.x.uploading",
            "batch-1-2.gz",
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
        assert_eq!(
            FileName::adoptable(&below.claimed_name(5, false)),
            Some(FileName::Claimed { id: below, claimed_ms: 5, gzip: false })
        );
    }

    #[test]
    fn order_is_by_seq_not_by_clock() {
        let earlier = FileId { seq: 1, created_ms: 9_000 };
        let later = FileId { seq: 2, created_ms: 1_000 };
        assert!(earlier < later);
    }
}
