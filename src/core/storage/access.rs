//! What the writer thread and the upload side share: the store behind its mutex, and the
//! upload-side changes left for the store's next holder when the writer holds it too long.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::thread;
use std::time::{Duration, Instant};

use super::error::StorageError;
use super::lease::DirLease;
use super::names::FileId;
use super::store::Store;
use crate::core::seam::SharedClock;
use crate::core::stats::StorageCounters;
use crate::log;

/// What the writer thread and the upload side share.
pub(crate) struct StoreAccess {
    pub store: Mutex<Store>,
    pub counters: Arc<StorageCounters>,
    pub clock: SharedClock,
    pub event_max_bytes: u64,
    /// Held while the storage or its thread lives: no second storage opens the directory.
    pub _lease: DirLease,
    /// Upload-side changes that could not wait for the store (see [`StoreAccess::lock_until`]);
    /// whoever takes the store next applies them first.
    deferred: Mutex<Vec<Deferred>>,
    has_deferred: AtomicBool,
    /// The ids `nextBatch()` handed out and `completeBatch()` has not ended yet, with their claim
    /// times: what a `completeBatch()` that cannot wait for the store checks its id against.
    handed: Mutex<Vec<(String, i64)>>,
    claim_timeout_ms: i64,
}

/// An upload-side change to a claimed batch: made at once when the store is free, else left to
/// its next holder.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Deferred {
    /// `complete_batch`: delete (delivered) or release the claim named by the batch, the claim
    /// time and the encoding (`gzip`) together.
    Complete { id: FileId, claimed_ms: i64, gzip: bool, delivered: bool },
    /// A claimed batch whose file is gone: forgotten (and counted as lost). Like the others,
    /// keyed by the claim: a late one from a reader whose claim went stale and was made again
    /// changes nothing.
    Forget { id: FileId, claimed_ms: i64 },
    /// A claimed batch with no whole line: delete it.
    Discard { id: FileId, claimed_ms: i64 },
}

impl Deferred {
    pub fn apply(self, store: &mut Store) -> Result<(), StorageError> {
        match self {
            Self::Complete { id, claimed_ms, gzip, delivered } => store.complete(id, claimed_ms, gzip, delivered),
            Self::Forget { id, claimed_ms } => {
                store.forget_claim(id, claimed_ms);
                Ok(())
            }
            Self::Discard { id, claimed_ms } => {
                store.discard_empty(id, claimed_ms);
                Ok(())
            }
        }
    }
}

impl StoreAccess {
    pub fn new(
        store: Store,
        counters: Arc<StorageCounters>,
        clock: SharedClock,
        event_max_bytes: u64,
        claim_timeout_ms: i64,
        lease: DirLease,
    ) -> Self {
        Self {
            store: Mutex::new(store),
            counters,
            clock,
            event_max_bytes,
            _lease: lease,
            deferred: Mutex::new(Vec::new()),
            has_deferred: AtomicBool::new(false),
            handed: Mutex::new(Vec::new()),
            claim_timeout_ms,
        }
    }

    /// The store; a panic elsewhere while it was held does not make it unusable.
    pub fn lock(&self) -> MutexGuard<'_, Store> {
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        self.apply_deferred(&mut store);
        store
    }

    /// The store if it is free before `deadline` (tried at least once). The upload side runs on
    /// the app's UI thread, and the writer holds the store during its writes: on a disk that
    /// stalls, waiting for it would freeze the app.
    pub fn lock_until(&self, deadline: Instant) -> Option<MutexGuard<'_, Store>> {
        let mut pause = Duration::from_micros(20);
        loop {
            let mut store = match self.store.try_lock() {
                Ok(store) => store,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return None; // the caller counts it (`uploadWaitsGivenUp`), once per call
                    }
                    thread::sleep(pause.min(deadline - now));
                    pause = (pause * 2).min(Duration::from_millis(1));
                    continue;
                }
            };
            self.apply_deferred(&mut store);
            return Some(store);
        }
    }

    /// Notes an id `nextBatch()` hands out (claimed at `claimed_ms`); forgets the ones whose
    /// claims went stale.
    pub fn handed_out(&self, id: String, claimed_ms: i64) {
        let mut handed = self.handed.lock().unwrap_or_else(PoisonError::into_inner);
        let now = self.clock.wall_ms();
        handed.retain(|(_, at)| !self.stale(*at, now));
        handed.push((id, claimed_ms));
    }

    /// Ends an id handed out: true if it was one, handed out and not ended, whose claim is not
    /// stale.
    pub fn end_handed(&self, id: &str) -> bool {
        let mut handed = self.handed.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(i) = handed.iter().position(|(h, _)| h == id) else { return false };
        let (_, at) = handed.swap_remove(i);
        !self.stale(at, self.clock.wall_ms())
    }

    fn stale(&self, claimed_ms: i64, now: i64) -> bool {
        now.saturating_sub(claimed_ms) >= self.claim_timeout_ms
    }

    /// Leaves a change for the next holder of the store.
    pub fn defer(&self, op: Deferred) {
        self.deferred.lock().unwrap_or_else(PoisonError::into_inner).push(op);
        self.has_deferred.store(true, Ordering::Release);
    }

    fn apply_deferred(&self, store: &mut Store) {
        // The writer takes the store once per document: a plain load on that path, the swap only
        // when something waits.
        if !self.has_deferred.load(Ordering::Acquire) || !self.has_deferred.swap(false, Ordering::Acquire) {
            return;
        }
        let ops = std::mem::take(&mut *self.deferred.lock().unwrap_or_else(PoisonError::into_inner));
        for op in ops {
            if let Err(e) = op.apply(store) {
                log::warn(&format!("storage: a deferred upload-side change ({op:?}) failed: {e}"));
            }
        }
        store.publish();
    }
}
