//! The limits of the storage contract (docs/design.md, "Storage"), in the units the storage computes with.

use crate::core::config::{BatchEncoding, Config, GZIP_LEVEL};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub batch_max_bytes: u64,
    pub batch_window_ms: i64,
    pub disk_quota_bytes: u64,
    pub max_batch_files: usize,
    pub batch_max_age_ms: i64,
    pub event_max_bytes: u64,
    pub pre_consent_max_bytes: u64,
    pub claim_timeout_ms: i64,
    /// Seal batches gzip-compressed at this level; None stores them plain.
    pub gzip_level: Option<u32>,
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Limits {
    pub fn from_config(c: &Config) -> Self {
        Self {
            batch_max_bytes: c.batch_max_bytes,
            batch_window_ms: ms(c.batch_window_ms),
            disk_quota_bytes: c.disk_quota_bytes,
            max_batch_files: usize::try_from(c.max_batch_files).unwrap_or(usize::MAX),
            batch_max_age_ms: ms(c.batch_max_age_ms),
            event_max_bytes: c.event_max_bytes,
            pre_consent_max_bytes: c.pre_consent_max_bytes,
            claim_timeout_ms: ms(c.claim_timeout_ms),
            gzip_level: (c.batch_encoding == BatchEncoding::Gzip).then_some(GZIP_LEVEL),
        }
    }

    /// The largest batch this configuration can write: a batch rolls before it would pass
    /// `batch_max_bytes`, unless a single document is larger (it then has a batch of its own).
    pub fn largest_batch(&self) -> u64 {
        self.batch_max_bytes.max(self.event_max_bytes + 1)
    }

    /// Files found at open larger than this are not read at all (recovery runs on the caller's
    /// thread, and a foreign file could be any size): they are evicted as oversize by their
    /// listed size, claimed or not, their events uncounted. Up to it an oversize batch is read,
    /// so its eviction counts its events. Four times the largest batch: room for a batch written
    /// under larger limits, while the read stays bounded.
    pub fn largest_read_at_open(&self) -> u64 {
        self.largest_batch().saturating_mul(4)
    }
}
