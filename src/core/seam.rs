//! The seams between the core and its host: traits the core owns, implemented for real by the
//! JS binding and the storage writer, and by fakes in tests. Time is injected through
//! [`Clock`] and later turns through [`Scheduler`], so every dispatch rule is tested on a virtual
//! clock without sleeping.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::config::TrackingConsent;
use super::document::Document;

/// The two clocks an event is stamped with.
pub trait Clock {
    /// Monotonic nanoseconds: turn budgets and durations.
    fn mono_ns(&self) -> u64;
    /// Wall-clock milliseconds since the Unix epoch: documents' `date`.
    fn wall_ms(&self) -> i64;
}

/// A clock shared across threads: the storage's (batch names, the batch window, age and claim
/// rules read its wall time on the writer thread and the upload side).
pub type SharedClock = Arc<dyn Clock + Send + Sync>;

/// The system's clocks: monotonic time from this clock's creation, wall time from the system
/// clock (a time before the epoch reads 0).
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        Self { origin: Instant::now() }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn mono_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn wall_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock that moves only when told, for tests and benchmarks: every clone reads the same
/// time; wall time is `wall_base_ms` plus the monotonic time elapsed, in whole milliseconds.
#[derive(Clone, Debug)]
pub struct ManualClock {
    ns: Arc<AtomicU64>,
    wall_base_ms: i64,
}

impl ManualClock {
    /// Monotonic time 0, wall time `wall_base_ms`.
    pub fn new(wall_base_ms: i64) -> Self {
        Self { ns: Arc::new(AtomicU64::new(0)), wall_base_ms }
    }

    pub fn advance_ns(&self, ns: u64) {
        self.ns.fetch_add(ns, Ordering::SeqCst);
    }

    pub fn advance_ms(&self, ms: u64) {
        self.advance_ns(ms.saturating_mul(1_000_000));
    }
}

impl Clock for ManualClock {
    fn mono_ns(&self) -> u64 {
        self.ns.load(Ordering::SeqCst)
    }

    fn wall_ms(&self) -> i64 {
        let elapsed_ms = i64::try_from(self.mono_ns() / 1_000_000).unwrap_or(i64::MAX);
        self.wall_base_ms.saturating_add(elapsed_ms)
    }
}

/// Work the dispatcher asks to run on a later turn of the JS thread's event loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// The turn that spent time on the inline path has ended: its spent time resets to zero.
    TurnEnd,
    /// Process the next slice of the queue.
    Slice,
    /// A view held back by `viewUpdateIntervalMs` is due: write the views whose interval passed
    /// (scheduled with a delay, see [`Scheduler::schedule_in`]).
    ViewsDue,
}

/// Schedules a [`Timer`] on a later turn (`setTimeout(fn, delay)` on the JS thread). The host calls
/// the dispatcher back with the same `Timer` when it fires.
pub trait Scheduler {
    /// Whether the timer will fire. On `false` (the engine refused the timer) the dispatcher
    /// asks again at its next opportunity instead of waiting for a callback that never comes.
    fn schedule(&self, timer: Timer) -> bool {
        self.schedule_in(timer, 0)
    }

    /// [`Self::schedule`], on a turn at least `delay_ms` from now. A timer that fires early does
    /// no harm (the dispatcher checks its clock and asks again); one that never fires would leave
    /// a view's last state unwritten until the next call.
    fn schedule_in(&self, timer: Timer, delay_ms: u32) -> bool;
}

/// Why a document could not be handed to storage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SinkError {
    /// The writer is gone (shut down or its thread died).
    Closed,
    /// Any other failure, described.
    Failed(String),
}

impl fmt::Display for SinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Closed => f.write_str("the storage writer is closed"),
            Self::Failed(why) => write!(f, "storage failed: {why}"),
        }
    }
}

impl std::error::Error for SinkError {}

/// Where documents go, in the order they are produced. Handing one over must be cheap (a channel
/// send): serialization and I/O happen behind it, off the JS thread.
pub trait DocumentSink: Send + Sync {
    fn write(&self, doc: Document) -> Result<(), SinkError>;
    /// The tracking consent changed; documents written after this call carry the new consent.
    fn consent_changed(&self, consent: TrackingConsent) -> Result<(), SinkError>;
    /// The JS thread began a turn that processes events (`true`, at the turn's first processing)
    /// or that turn ended (`false`). A sink may leave its own work for the end of the turn, so it
    /// does not compete with the UI thread for a core during a burst; documents still arrive
    /// through [`Self::write`] in order, and nothing here may block.
    fn turn_busy(&self, _busy: bool) {}
    /// The JS thread is about to process events in a turn whose end it has scheduled and will
    /// report (`turn_busy(false)`, from the turn-end timer or right after a slice on a turn of its
    /// own). Called before the turn's first processing, so that documents of the whole turn may
    /// wait for its end without waking anyone; `turn_busy(true)` still follows the first
    /// processing. Nothing here may block.
    fn turn_will_end(&self) {}
}

/// What an event mapper decided for one document.
#[derive(Clone, Debug, PartialEq)]
pub enum MapOutcome {
    /// Write the document unchanged.
    Keep,
    /// Write this value instead (the mapper returned a changed document).
    Replace(Value),
    /// Do not write the document.
    Drop,
}

/// A mapper failure: the document is written unchanged and the error counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapperError(pub String);

impl fmt::Display for MapperError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event mapper failed: {}", self.0)
    }
}

impl std::error::Error for MapperError {}

/// The host's event mapper, run on the JS thread for each non-view document before it is written.
pub trait EventMapper {
    fn map(&mut self, doc: &Document) -> Result<MapOutcome, MapperError>;
}
