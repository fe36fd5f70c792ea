//! What waits in memory for the writer: the channel is unbounded (a send never blocks the JS
//! thread), so a disk that blocks instead of failing would let it grow without limit. Each
//! document is weighed when it is sent (a cheap estimate of what it holds in memory); past
//! [`WRITER_BACKLOG_QUOTAS`] disk quotas new documents are dropped at the door, counted and warned
//! about once, and the caller never waits.

use std::mem::size_of;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::Value;

#[cfg(doc)]
use crate::core::config::WRITER_BACKLOG_QUOTAS;
use crate::core::document::{Common, Document};
use crate::core::event::Attributes;
use crate::core::stats::StorageCounters;
use crate::log;

/// The estimated bytes sent to the writer and not yet taken by it.
pub(crate) struct Backlog {
    bytes: AtomicU64,
    max: u64,
    counters: Arc<StorageCounters>,
    warned: AtomicBool,
}

impl Backlog {
    pub fn with_max(counters: Arc<StorageCounters>, max: u64) -> Self {
        Self { bytes: AtomicU64::new(0), max, counters, warned: AtomicBool::new(false) }
    }

    /// Reserves room for a document of `weight` bytes; false (counted) when it does not fit.
    pub fn admit(&self, weight: u64) -> bool {
        let before = self.bytes.fetch_add(weight, Ordering::Relaxed);
        if before + weight <= self.max || before == 0 {
            return true;
        }
        self.bytes.fetch_sub(weight, Ordering::Relaxed);
        self.counters.dropped_backlog.incr();
        if !self.warned.swap(true, Ordering::Relaxed) {
            log::warn(&format!(
                "storage: over {} bytes of documents wait for a stalled disk: new documents are dropped \
                 (counted in stats().droppedBacklog; warned once)",
                self.max
            ));
        }
        false
    }

    /// What waits now, bytes (estimated).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The writer took a document of `weight` bytes off the channel (or the send failed).
    pub fn release(&self, weight: u64) {
        self.bytes.fetch_sub(weight, Ordering::Relaxed);
    }
}

/// What a document holds in memory, roughly: its struct (ids inline) plus its owned strings and
/// attributes (shared `Arc`s such as the identity and the global attributes are not its own).
pub(crate) fn weigh(doc: &Document) -> u64 {
    let own = match doc {
        Document::View(v) => common(&v.common),
        Document::Action(a) => common(&a.common) + a.target_name.heap_bytes(),
        Document::Error(e) => {
            common(&e.common)
                + e.message.len()
                + e.stack.as_ref().map_or(0, String::len)
                + e.resource.as_ref().map_or(0, |r| r.url.len())
        }
        Document::Resource(r) => common(&r.common) + r.url.len(),
        Document::LongTask(l) => common(&l.common),
        Document::AppLaunch(a) => common(&a.common),
        Document::Mapped { value, .. } => value_weight(value),
    };
    (size_of::<Document>() + own) as u64
}

fn common(c: &Common) -> usize {
    c.attrs.heap_bytes()
}

/// A map entry costs its key, its value and about this much bookkeeping.
const ENTRY_OVERHEAD: usize = 32;

fn attrs(map: &Attributes) -> usize {
    map.iter().map(|(k, v)| k.len() + ENTRY_OVERHEAD + value_weight(v)).sum()
}

fn value_weight(v: &Value) -> usize {
    size_of::<Value>()
        + match v {
            Value::String(s) => s.len(),
            Value::Array(a) => a.iter().map(value_weight).sum(),
            Value::Object(m) => attrs(m),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_bound_and_counts_the_rest() {
        let counters = Arc::new(StorageCounters::default());
        let b = Backlog::with_max(counters.clone(), 100);
        assert!(b.admit(60));
        assert!(b.admit(40));
        assert!(!b.admit(1));
        assert_eq!(counters.dropped_backlog.get(), 1);
        b.release(60);
        assert!(b.admit(50));
    }

    #[test]
    fn one_document_larger_than_the_bound_still_goes_when_nothing_waits() {
        let b = Backlog::with_max(Arc::new(StorageCounters::default()), 10);
        assert!(b.admit(1_000), "else a large document could never be written");
        assert!(!b.admit(1));
    }
}
