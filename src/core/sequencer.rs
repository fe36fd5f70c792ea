//! The process-wide half of a pipeline, shared by the dispatchers of every JS thread that attached
//! to it (docs/design.md, "Threads"): the scope tree, the sequence counter, the document sink and the
//! counters. The per-thread half (turn budget, queue, timers, event mapper) is the
//! [`Dispatcher`](super::dispatch::Dispatcher).
//!
//! The scope lock is held for one event at a time and never while the event mapper or the sink
//! runs, so a mapper that calls back into the pipeline cannot deadlock, and another thread's
//! dispatcher waits at most one event's bookkeeping.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::coalesce::{forced_around, Moment, ViewPolicy};
use super::config::{Config, TrackingConsent, GLOBAL_ATTRIBUTES_SHARE};
use super::document::{Document, Identity};
use super::event::{Event, EventKind};
use super::globals::{GlobalBudget, OverBudget};
use super::ids::IdGen;
use super::scope::{Scopes, SessionGate};
use super::seam::DocumentSink;
use super::stats::DispatchCounters;

/// Scopes, sequence, sink and counters of one pipeline.
pub struct Sequencer {
    scopes: Mutex<Scopes>,
    /// Last sequence number handed out; events get 1, 2, 3, … in call order.
    seq: AtomicU64,
    sink: Arc<dyn DocumentSink>,
    counters: Arc<DispatchCounters>,
    turn_budget_ns: u64,
    queue_capacity: usize,
    stopped: AtomicBool,
    /// When view documents are written (`viewUpdateIntervalMs`).
    views: ViewPolicy,
    /// The scopes' untracked-session gate, read without their lock.
    gate: Arc<SessionGate>,
    /// The global attributes' sizes as the calls left them (call order, not processing order):
    /// `addAttribute` is refused at its call when they would pass their budget.
    globals: Mutex<GlobalBudget>,
}

impl Sequencer {
    /// A pipeline for `config` (assumed validated) writing to `sink`.
    pub fn new(config: &Config, sink: Arc<dyn DocumentSink>, counters: Arc<DispatchCounters>) -> Arc<Self> {
        Self::build(config, sink, counters, IdGen::from_entropy())
    }

    /// Same, with reproducible ids: two pipelines with the same seed fed the same events produce
    /// the same documents (tests compare a sliced run with an all-inline one this way).
    pub fn with_id_seed(
        config: &Config,
        sink: Arc<dyn DocumentSink>,
        counters: Arc<DispatchCounters>,
        seed: u64,
    ) -> Arc<Self> {
        Self::build(config, sink, counters, IdGen::with_seed(seed))
    }

    fn build(config: &Config, sink: Arc<dyn DocumentSink>, counters: Arc<DispatchCounters>, ids: IdGen) -> Arc<Self> {
        let identity = Arc::new(Identity::of(config));
        let global_max_bytes = config.event_max_bytes / GLOBAL_ATTRIBUTES_SHARE;
        let scopes = Scopes::new(identity, config.tracking_consent, Arc::clone(&counters), ids)
            .with_connectivity(config.connectivity.clone())
            .with_global_budget(global_max_bytes);
        let gate = Arc::clone(scopes.gate());
        Arc::new(Self {
            scopes: Mutex::new(scopes),
            seq: AtomicU64::new(0),
            sink,
            counters,
            turn_budget_ns: u64::from(config.turn_budget_ms) * 1_000_000,
            // A zero capacity could never hold the event that triggered the slice.
            queue_capacity: config.queue_capacity.max(1),
            stopped: AtomicBool::new(false),
            views: ViewPolicy::new(config.view_update_interval_ms),
            gate,
            globals: Mutex::new(GlobalBudget::new(global_max_bytes)),
        })
    }

    /// At an `addAttribute` call: takes the attribute's share of the global attributes' budget,
    /// or changes nothing and says by how much it would pass it.
    pub fn reserve_global(&self, key: &str, value: &serde_json::Value) -> Result<(), OverBudget> {
        self.globals.lock().unwrap_or_else(PoisonError::into_inner).reserve(key, value)
    }

    /// At a `removeAttribute` call: gives the key's share of the budget back.
    pub fn release_global(&self, key: &str) {
        self.globals.lock().unwrap_or_else(PoisonError::into_inner).release(key);
    }

    pub fn counters(&self) -> &Arc<DispatchCounters> {
        &self.counters
    }

    pub fn sink(&self) -> &Arc<dyn DocumentSink> {
        &self.sink
    }

    pub fn turn_budget_ns(&self) -> u64 {
        self.turn_budget_ns
    }

    pub fn queue_capacity(&self) -> usize {
        self.queue_capacity
    }

    /// After `stop()` on any dispatcher, every call is processed on its caller's turn.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    pub(crate) fn mark_stopped(&self) {
        self.stopped.store(true, Ordering::Release);
    }

    /// Whether a call made at `wall_ms` lands in an untracked session (`sessionSampleRate`) and can
    /// be skipped before its arguments are read: it would write nothing. Only for calls that change
    /// no state a later tracked session needs (actions, errors, resources, timings, keep-alives),
    /// and only when nothing is queued before them (a queued call could end the session).
    pub fn skips_untracked(&self, wall_ms: i64) -> bool {
        let skip = self.gate.skips(wall_ms);
        if skip {
            self.counters.calls_untracked.incr();
        }
        skip
    }

    /// Whether the live session at `wall_ms` is untracked, as [`Self::skips_untracked`] judges it
    /// but without counting a call: asked after a handover, for the capture buffer's own skips.
    pub fn session_untracked(&self, wall_ms: i64) -> bool {
        self.gate.skips(wall_ms)
    }

    /// Reserves `n` consecutive sequence numbers; returns the first.
    pub(crate) fn reserve_seq(&self, n: u64) -> u64 {
        self.seq.fetch_add(n, Ordering::Relaxed) + 1
    }

    /// The live session's id at `now_ms`, without draining anything: for a call made from inside
    /// the event mapper, where the dispatcher is busy (a known limit, docs/limits.md: no nested drain).
    /// Outside the mapper use [`Dispatcher::session_id`](super::dispatch::Dispatcher::session_id).
    pub fn current_session_id(&self, now_ms: i64) -> Option<String> {
        self.lock().session_id(now_ms).map(|id| id.to_string())
    }

    /// Reads the scope tree (stats, tests).
    pub fn with_scopes<R>(&self, f: impl FnOnce(&Scopes) -> R) -> R {
        f(&self.lock())
    }

    /// Applies one event under the scope lock, at monotonic `now_ns`; `after` is the moment its
    /// processing reaches once applied (see [`super::coalesce`]). A drain point first writes the
    /// views still owed, so every document reaches the sink under the user and consent of its
    /// call. Returns the new consent, for the caller to announce after delivering `out`, and when
    /// the earliest view left owed is due.
    pub(crate) fn apply(
        &self,
        ev: Event,
        after: Moment,
        now_ns: u64,
        out: &mut Vec<Document>,
    ) -> (Option<TrackingConsent>, Option<u64>) {
        let mut scopes = self.lock();
        let consent = match ev.kind {
            EventKind::SetConsent(c) => Some(c),
            _ => None,
        };
        let (before, forced_after) = forced_around(&ev.kind);
        if before {
            scopes.emit_views(self.views, Moment::Forced, now_ns, out);
        }
        scopes.apply(ev, out);
        let after = if forced_after { Moment::Forced } else { after };
        (consent, scopes.emit_views(self.views, after, now_ns, out))
    }

    /// Writes the owed views `moment` lets out (a slice's or a turn's end, a forced point); returns
    /// when the earliest view left owed is due.
    pub(crate) fn emit_views(&self, moment: Moment, now_ns: u64, out: &mut Vec<Document>) -> Option<u64> {
        self.lock().emit_views(self.views, moment, now_ns, out)
    }

    fn lock(&self) -> MutexGuard<'_, Scopes> {
        // A panic elsewhere while holding the lock leaves consistent-enough bookkeeping; losing
        // the whole pipeline over it would lose every later event.
        self.scopes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
