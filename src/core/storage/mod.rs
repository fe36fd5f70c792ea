//! The batch writer (docs/design.md, "Storage"): documents handed over by the dispatcher
//! are serialized on a writer thread and appended as NDJSON lines to batch files under
//! `<storageDir>/rum/`, in the order they were sent, under a disk quota; an uploader claims sealed
//! batches and acknowledges them.
//!
//! On the JS thread a document costs one channel send ([`StorageSink::write`]); no JSON is built
//! and no file is touched there. The upload side ([`Storage::next_batch`],
//! [`Storage::complete_batch`]) reads and renames files directly, coordinated with the writer
//! by one mutex over the directory's index.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use rum_native::core::config::Config;
//! use rum_native::core::seam::DocumentSink;
//! use rum_native::core::storage::{FlushOutcome, Storage, StorageOptions};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! let config = Config { storage_dir: dir.path().into(), application_id: "app".into(), ..Config::default() };
//! let storage = Storage::open(&config, StorageOptions::default())?;
//! let sink: Arc<dyn DocumentSink> = Arc::new(storage.sink()); // goes to the dispatcher
//! # let _ = sink;
//! let timeout = Duration::from_millis(u64::from(config.flush_timeout_ms));
//! assert_eq!(storage.flush(timeout), FlushOutcome::Done);
//! while let Some(batch) = storage.next_batch()? {
//!     let delivered = true; // upload batch.body (batch.event_count lines) here
//!     storage.complete_batch(&batch.id, delivered)?;
//! }
//! let stats = storage.counters(); // merged into stats()
//! # let _ = stats;
//! storage.shutdown(timeout); // or drop it: Drop does the same
//! # Ok::<(), rum_native::core::storage::StorageError>(())
//! ```

mod access;
mod backlog;
mod batches;
mod error;
pub mod fs;
mod gate;
mod io_context;
pub mod json;
mod lease;
mod limits;
mod names;
mod ndjson;
mod pre_consent;
mod recovery;
mod segment;
mod store;
mod upload;
mod writer;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use flume::{RecvTimeoutError, Sender};

pub use error::StorageError;
pub use fs::{Fs, RealFs};
pub use names::{PENDING_DIR, RUM_DIR};
pub use segment::WRITE_CHUNK;
pub use upload::Batch;
pub use writer::FlushOutcome;

use crate::core::config::{
    BatchEncoding, Config, TrackingConsent, GZIP_BACKLOG_FACTOR, WRITER_BACKLOG_MAX_BYTES, WRITER_BACKLOG_MIN_BYTES,
    WRITER_BACKLOG_QUOTAS, WRITER_HOLD_MAX_MS, WRITER_LINGER_MS,
};
use crate::core::document::Document;
use crate::core::seam::{DocumentSink, SharedClock, SinkError, SystemClock};
use crate::core::stats::StorageCounters;
use crate::log;
use access::StoreAccess;
use backlog::Backlog;
use gate::TurnGate;
use lease::DirLease;
use limits::Limits;
use store::Store;
use writer::{Hold, Linger, Msg};

/// The seams of the storage: its clock and its file system. `Default` is the real ones.
#[derive(Clone)]
pub struct StorageOptions {
    pub clock: SharedClock,
    pub fs: Arc<dyn Fs>,
    /// The bound of what waits in memory for the writer, bytes; None is
    /// [`WRITER_BACKLOG_QUOTAS`] times `diskQuotaBytes`, at least
    /// [`WRITER_BACKLOG_MIN_BYTES`] (tests set a small one).
    pub backlog_max: Option<u64>,
    /// The longest documents wait in the writer's channel while the JS thread's turn is busy
    /// ([`WRITER_HOLD_MAX_MS`]; tests change it).
    pub writer_hold: Duration,
    /// How long the writer lingers after a write in a stream of documents sent outside busy
    /// turns ([`WRITER_LINGER_MS`]; zero: every document is written when it comes).
    pub writer_linger: Duration,
    /// How long `open` waits for the directory while another storage of this process holds it (a
    /// dropped pipeline's writer finishing in the background) before
    /// [`StorageError::AlreadyOpen`]; zero by default.
    pub lease_wait: Duration,
}

impl Default for StorageOptions {
    fn default() -> Self {
        Self {
            clock: Arc::new(SystemClock::new()),
            fs: Arc::new(RealFs::new()),
            backlog_max: None,
            writer_hold: Duration::from_millis(WRITER_HOLD_MAX_MS),
            writer_linger: Duration::from_millis(WRITER_LINGER_MS),
            lease_wait: Duration::ZERO,
        }
    }
}

impl fmt::Debug for StorageOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StorageOptions").finish_non_exhaustive()
    }
}

/// One storage directory: its writer thread and its upload side. One per directory per process.
pub struct Storage {
    access: Arc<StoreAccess>,
    tx: Sender<Msg>,
    backlog: Arc<Backlog>,
    gate: Arc<TurnGate>,
    writer: Mutex<Option<JoinHandle<()>>>,
    flush_timeout: Duration,
    root: PathBuf,
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Storage").field("root", &self.root).finish_non_exhaustive()
    }
}

impl Storage {
    /// Validates the settings, creates `<storageDir>/rum/` (owner-only), recovers what an earlier
    /// process left there (see `recovery`), and starts the "rum-writer" thread with
    /// `config.tracking_consent` as the initial consent.
    pub fn open(config: &Config, options: StorageOptions) -> Result<Storage, StorageError> {
        config.validate()?;
        let root = config.storage_dir.join(RUM_DIR);
        options.fs.create_dir_all(&root).map_err(|e| StorageError::io("create directory", &root, e))?;
        let lease = DirLease::acquire(&root, options.lease_wait)?;
        let counters = Arc::new(StorageCounters::default());
        let limits = Limits::from_config(config);
        let store = Store::open(options.fs, options.clock.clone(), limits, counters.clone(), &root)?;
        let backlog_max = options.backlog_max.unwrap_or_else(|| backlog_bound(config));
        let backlog = Arc::new(Backlog::with_max(counters.clone(), backlog_max));
        let access = Arc::new(StoreAccess::new(
            store,
            counters,
            options.clock,
            config.event_max_bytes,
            limits.claim_timeout_ms,
            lease,
        ));
        // Unbounded, so a send never blocks the JS thread; `backlog` bounds it in bytes.
        let (tx, rx) = flume::unbounded();
        // First in the channel, so no document is handled before the consent is known.
        let _ = tx.send(Msg::Consent(config.tracking_consent));
        let tick = Duration::from_millis(config.batch_window_ms.clamp(1, 60_000));
        let gate = Arc::new(TurnGate::new(options.writer_hold));
        let hold = Hold::new(gate.clone());
        let linger = Linger::new(options.writer_linger);
        let handle =
            writer::spawn(access.clone(), rx, tick, backlog.clone(), hold, linger).map_err(StorageError::Spawn)?;
        Ok(Storage {
            access,
            tx,
            backlog,
            gate,
            writer: Mutex::new(Some(handle)),
            flush_timeout: Duration::from_millis(u64::from(config.flush_timeout_ms)),
            root,
        })
    }

    /// A cheap, cloneable handle for the dispatcher (`Arc<dyn DocumentSink>`). It outlives the
    /// storage harmlessly: after shutdown its calls return [`SinkError::Closed`].
    pub fn sink(&self) -> StorageSink {
        StorageSink { tx: self.tx.clone(), backlog: self.backlog.clone(), gate: self.gate.clone() }
    }

    /// Returns once every document sent before is written and the active batch is sealed (so
    /// `next_batch` can take it), or after `timeout` with [`FlushOutcome::TimedOut`].
    pub fn flush(&self, timeout: Duration) -> FlushOutcome {
        self.request_flush(false, timeout)
    }

    /// [`Storage::flush`] for the crash path: also fsyncs the files and directories.
    pub fn flush_crash(&self, timeout: Duration) -> FlushOutcome {
        self.request_flush(true, timeout)
    }

    fn request_flush(&self, sync: bool, timeout: Duration) -> FlushOutcome {
        let (ack, answer) = flume::bounded(1);
        // The writer must not hold what this waits for.
        if self.tx.send(Msg::Flush { sync, ack }).is_err() {
            return FlushOutcome::Failed(SinkError::Closed.to_string());
        }
        self.gate.open_now();
        match answer.recv_timeout(timeout) {
            Ok(outcome) => outcome,
            Err(RecvTimeoutError::Timeout) => {
                self.access.counters.flush_timeouts.incr();
                FlushOutcome::TimedOut
            }
            Err(RecvTimeoutError::Disconnected) => FlushOutcome::Failed("the storage writer stopped".into()),
        }
    }

    /// Claims the oldest sealed batch (from this process or an earlier one) and returns its
    /// whole lines, with view documents reduced to the highest `_dd.document_version` per view:
    /// gzip-compressed as stored (`batch.encoding`), or plain.
    /// None when there is nothing to upload. Until [`Storage::complete_batch`] (or the claim
    /// timeout: a stale claim is released by a later call, or at the next open), no other call
    /// returns it.
    ///
    /// Claims the oldest sealed batch and reads it (`upload.rs`).
    ///
    /// Waits at most [`UPLOAD_LOCK_WAIT_MS`](crate::core::config::UPLOAD_LOCK_WAIT_MS) for the writer; past it (a stalled disk) the result
    /// is [`StorageError::Busy`] and nothing changed. Right after open, the oldest batch may be a
    /// compressed one the writer has not checked yet: waited for within the same bound, then
    /// `Busy` too ([`Storage::pending_batches`] tells these apart from "nothing to upload").
    pub fn next_batch(&self) -> Result<Option<Batch>, StorageError> {
        upload::next_batch(&self.access)
    }

    /// The uploader's answer for a claimed batch: `delivered` deletes it; otherwise the claim is
    /// released and the batch is returned again by the next `next_batch`. An id that is not
    /// exactly one `next_batch` returned for a claim still held (another encoding, claim time or
    /// batch) is [`StorageError::UnknownBatch`], naming the id as given, and changes nothing.
    ///
    /// If the writer holds the directory past [`UPLOAD_LOCK_WAIT_MS`](crate::core::config::UPLOAD_LOCK_WAIT_MS) (a stalled disk), the id
    /// is checked only for its form and the change is left to the writer, which makes it before
    /// its next document; an id of a batch that is not claimed is then logged, not returned.
    pub fn complete_batch(&self, id_text: &str, delivered: bool) -> Result<(), StorageError> {
        upload::complete_batch(&self.access, id_text, delivered)
    }

    /// Sealed batches waiting for [`Storage::next_batch`]: not claimed, still to be uploaded,
    /// those found at open that the writer has not checked yet included (the
    /// `batches_pending` gauge, so it never waits for the writer). When `next_batch` returns
    /// None or [`StorageError::Busy`] while this is above 0, the batches are not ready yet: ask
    /// again shortly.
    pub fn pending_batches(&self) -> u64 {
        upload::pending_batches(&self.access)
    }

    /// The storage's counters (shared with the writer thread; read them any time).
    pub fn counters(&self) -> Arc<StorageCounters> {
        self.access.counters.clone()
    }

    /// `<storageDir>/rum`
    pub fn directory(&self) -> &Path {
        &self.root
    }

    /// Writes everything sent before, seals the active batch and stops the writer thread,
    /// waiting at most `timeout` (past it, the thread finishes in the background and the call
    /// returns [`FlushOutcome::TimedOut`]). Later documents are refused with
    /// [`SinkError::Closed`]; the upload side keeps working. A second call does nothing.
    pub fn shutdown(&self, timeout: Duration) -> FlushOutcome {
        let Some(handle) = self.writer.lock().unwrap_or_else(PoisonError::into_inner).take() else {
            return FlushOutcome::Done;
        };
        let (ack, answer) = flume::bounded(1);
        if self.tx.send(Msg::Shutdown { ack }).is_err() {
            let _ = handle.join(); // the thread has ended already
            return FlushOutcome::Done;
        }
        self.gate.open_now();
        match answer.recv_timeout(timeout) {
            Ok(()) => {
                let _ = handle.join(); // it returns right after answering
                FlushOutcome::Done
            }
            Err(RecvTimeoutError::Timeout) => {
                self.access.counters.flush_timeouts.incr();
                log::warn("storage: the writer did not stop within the timeout; it finishes in the background");
                FlushOutcome::TimedOut
            }
            Err(RecvTimeoutError::Disconnected) => FlushOutcome::Failed("the storage writer stopped".into()),
        }
    }
}

impl Drop for Storage {
    /// Shuts the writer down, waiting at most `flushTimeoutMs`: never longer at process exit.
    fn drop(&mut self) {
        self.shutdown(self.flush_timeout);
    }
}

/// The dispatcher's handle on the writer: each call is one channel send.
#[derive(Clone)]
pub struct StorageSink {
    tx: Sender<Msg>,
    backlog: Arc<Backlog>,
    gate: Arc<TurnGate>,
}

impl fmt::Debug for StorageSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StorageSink").finish_non_exhaustive()
    }
}

impl DocumentSink for StorageSink {
    /// A document past the writer's backlog bound is dropped and counted (`droppedBacklog`), not
    /// an error: the caller must not wait, and a stalled disk is the storage's fault to report.
    fn write(&self, doc: Document) -> Result<(), SinkError> {
        let weight = backlog::weigh(&doc);
        if !self.backlog.admit(weight) {
            return Ok(());
        }
        self.tx.send(Msg::Doc(doc, weight)).map_err(|_| {
            self.backlog.release(weight);
            SinkError::Closed
        })?;
        self.gate.sent(self.backlog.bytes());
        Ok(())
    }

    fn consent_changed(&self, consent: TrackingConsent) -> Result<(), SinkError> {
        self.tx.send(Msg::Consent(consent)).map_err(|_| SinkError::Closed)?;
        self.gate.open_now(); // a drain point: the change is applied at once
        Ok(())
    }

    /// While the turn is busy the writer leaves documents in its channel (see `gate::TurnGate`);
    /// its end wakes the writer when something waits.
    fn turn_busy(&self, busy: bool) {
        self.gate.set_busy(busy, || !self.tx.is_empty());
    }

    /// Documents of this turn wait for its end without waking the writer (see `gate.rs`).
    fn turn_will_end(&self) {
        self.gate.promise_end();
    }
}

/// What may wait in memory for the writer (`config.rs`, `WRITER_BACKLOG_QUOTAS`).
fn backlog_bound(config: &Config) -> u64 {
    let factor = match config.batch_encoding {
        BatchEncoding::Gzip => GZIP_BACKLOG_FACTOR,
        BatchEncoding::Identity => 1,
    };
    config
        .disk_quota_bytes
        .saturating_mul(WRITER_BACKLOG_QUOTAS)
        .saturating_mul(factor)
        .clamp(WRITER_BACKLOG_MIN_BYTES, WRITER_BACKLOG_MAX_BYTES.max(WRITER_BACKLOG_MIN_BYTES))
}

#[cfg(test)]
mod tests;
