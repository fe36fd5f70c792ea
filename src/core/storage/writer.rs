//! The writer thread, "rum-writer" (modelled on opentelemetry's BatchSpanProcessor worker): one
//! consumer of one flume channel carrying documents and a small control enum, so lines reach the
//! files in exactly the order the documents were sent. JSON is built here, never on the JS
//! thread. Each drain takes everything queued and then writes everything waiting in memory in one
//! go, so a killed process loses at most what was still in the channel. The writer never polls:
//! it sleeps on the [`Doorbell`](super::gate::Doorbell) until the JS thread rings it (see
//! `gate.rs` for when) or a deadline passes: the active batch's window when idle, the hold's end
//! ([`Hold`], at most [`WRITER_HOLD_MAX_MS`] and [`WRITER_HOLD_MAX_BYTES`]) while the JS thread is
//! in a busy turn, so a burst does not share its core with the writer, and the linger's end
//! ([`Linger`], [`WRITER_LINGER_MS`]) while a stream of lone events keeps coming, so a stream
//! costs one wake-up per linger, not one per event. An idle writer with no active batch has no
//! deadline at all.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use flume::{Receiver, Sender};

use super::access::StoreAccess;
use super::backlog::Backlog;
use super::gate::{Park, TurnGate};
use super::io_context::warn;
use super::json;
use super::store::Store;
use crate::core::config::{TrackingConsent, WRITER_HOLD_MAX_BYTES};
#[cfg(doc)]
use crate::core::config::{WRITER_HOLD_MAX_MS, WRITER_LINGER_MS};
use crate::core::document::Document;
use crate::log;

/// The result of `Storage::flush`, `Storage::flush_crash` and `Storage::shutdown`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlushOutcome {
    /// Everything sent before is written and the active batch is sealed.
    Done,
    /// The writer did not answer within the timeout; it goes on in the background.
    TimedOut,
    /// The writer answered, but a write failed since the previous flush (the first failure).
    Failed(String),
}

/// What the writer thread receives.
// Nearly every message is a document; boxing it would cost the JS thread an allocation per send.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Msg {
    /// A document and its weight in the writer's backlog (released when it is taken).
    Doc(Document, u64),
    Consent(TrackingConsent),
    /// Write everything sent before, seal the active batch (and fsync if `sync`), then answer.
    Flush {
        sync: bool,
        ack: Sender<FlushOutcome>,
    },
    /// Flush, answer, and stop.
    Shutdown {
        ack: Sender<()>,
    },
}

/// The writer's side of the [`TurnGate`]: how long what waits has been held.
pub(crate) struct Hold {
    gate: Arc<TurnGate>,
    /// When the writer began to leave documents waiting.
    since: Option<Instant>,
}

impl Hold {
    pub fn new(gate: Arc<TurnGate>) -> Self {
        Self { gate, since: None }
    }

    /// While documents should wait for the JS thread's turn to end, how much longer at most.
    /// Whether any wait is not asked: a document sent between that check and the drain would be
    /// taken.
    fn holds(&mut self, backlog: &Backlog) -> Option<Duration> {
        if !self.gate.is_busy() {
            self.since = None;
            return None;
        }
        let since = *self.since.get_or_insert_with(Instant::now);
        let left = self.gate.max().checked_sub(since.elapsed()).filter(|left| !left.is_zero());
        if left.is_some() && backlog.bytes() < WRITER_HOLD_MAX_BYTES {
            return left;
        }
        self.since = None; // drained now; a turn still busy holds what comes next anew
        None
    }
}

/// The writer's linger ([`WRITER_LINGER_MS`]): after a write that follows another within the
/// linger, documents sent outside busy turns wait for its end without waking the writer, and go
/// out together. A linger that finds nothing ends the stream: the next document rings again.
pub(crate) struct Linger {
    max: Duration,
    last_drain: Option<Instant>,
    until: Option<Instant>,
}

impl Linger {
    pub fn new(max: Duration) -> Self {
        Self { max, last_drain: None, until: None }
    }

    /// The writer just wrote what waited, at `now`: a write in a stream (one that lingered, or
    /// one soon after the previous write) lingers until `now` plus the linger.
    fn drained(&mut self, now: Instant) {
        let streaming =
            self.until.is_some() || self.last_drain.is_some_and(|last| now.duration_since(last) <= self.max);
        self.until = if streaming && !self.max.is_zero() { now.checked_add(self.max) } else { None };
        self.last_drain = Some(now);
    }

    /// How much longer documents wait; None once the linger is over (or there is none).
    fn left(&self, now: Instant) -> Option<Duration> {
        self.until.and_then(|until| until.checked_duration_since(now)).filter(|left| !left.is_zero())
    }

    /// The linger passed with nothing to write: the stream ended.
    fn end(&mut self) {
        self.until = None;
    }
}

pub(crate) fn spawn(
    access: Arc<StoreAccess>,
    rx: Receiver<Msg>,
    tick: Duration,
    backlog: Arc<Backlog>,
    hold: Hold,
    linger: Linger,
) -> std::io::Result<JoinHandle<()>> {
    thread::Builder::new().name("rum-writer".into()).spawn(move || {
        Writer { access, backlog, hold, linger, consent: TrackingConsent::Pending, scratch: Vec::new(), tick, now: 0 }
            .run(rx);
    })
}

struct Writer {
    access: Arc<StoreAccess>,
    backlog: Arc<Backlog>,
    hold: Hold,
    linger: Linger,
    /// Set by the first message, which `open` sends with the configured consent.
    consent: TrackingConsent,
    /// Reused serialization buffer.
    scratch: Vec<u8>,
    /// The batch window: the longest an idle writer sleeps while a batch is active.
    tick: Duration,
    /// The wall clock, read once per drain of the channel.
    now: i64,
}

/// A document larger than this does not keep its serialization buffer.
const SCRATCH_KEEP: usize = 256 * 1024;

impl Writer {
    fn run(mut self, rx: Receiver<Msg>) {
        // First: the lines of the batches an earlier process left are checked here, not on the
        // caller's thread (one batch per hold of the store, so the upload side is not held up).
        while self.check_next_adopted_guarded() {}
        let gate = self.hold.gate.clone();
        loop {
            let urgent = gate.bell.take_urgent();
            if !rx.is_empty() {
                if !urgent {
                    // A busy turn: its end (or a flush, or the byte bound) rings; a document sent
                    // meanwhile does not wake the writer. Lingering in a stream: the same, until
                    // the linger's end.
                    if let Some(left) = self.hold.holds(&self.backlog) {
                        gate.bell.park(Park::Holding, Some(left), || false);
                        continue;
                    }
                    if let Some(left) = self.linger.left(Instant::now()) {
                        gate.bell.park(Park::Lingering, Some(left), || false);
                        continue;
                    }
                }
                self.hold.since = None;
                let (stop, documents) = self.drain(&rx);
                if documents > 0 {
                    // Only writes of documents make a stream: a flush or a consent change alone
                    // does not make the next lone event wait.
                    self.linger.drained(Instant::now());
                }
                if stop {
                    return;
                }
                continue; // more may have come while these were handled
            }
            if rx.is_disconnected() && rx.is_empty() {
                self.flush(false);
                return;
            }
            if let Some(left) = self.linger.left(Instant::now()) {
                gate.bell.park(Park::Lingering, Some(left), || false);
                continue;
            }
            // The linger found nothing: the stream ended, the next document rings.
            self.linger.end();
            // Idle: asleep until a ring, or the active batch's window (no batch: no deadline).
            let wait = self.idle_wait();
            if gate.bell.park(Park::Idle, wait, || !rx.is_empty() || rx.is_disconnected()) {
                self.with_store_guarded(Store::seal_if_window_passed);
            }
        }
    }

    /// Everything queued, taken under one lock of the channel, handled, then written in one go.
    /// Whether to stop, and how many documents were taken.
    fn drain(&mut self, rx: &Receiver<Msg>) -> (bool, usize) {
        let mut stop = false;
        let mut documents = 0;
        // Taken off the channel first, then the clock: a document sent after a clock change is
        // never stamped with the time before it.
        let msgs = rx.drain();
        self.now = self.access.clock.wall_ms();
        for msg in msgs {
            documents += usize::from(matches!(msg, Msg::Doc(..)));
            stop = self.handle_guarded(msg);
            if stop {
                break;
            }
        }
        // The channel is empty: what waits in memory goes to disk now, in one write (one per
        // WRITE_CHUNK past it).
        self.with_store_guarded(Store::write_out_all);
        (stop, documents)
    }

    /// How long an idle writer may sleep: until the active batch's window passes (then it is
    /// sealed), at most one window; None without an active batch.
    fn idle_wait(&self) -> Option<Duration> {
        let (deadline, now) = {
            let store = self.access.lock();
            (store.window_deadline()?, store.now())
        };
        let left = u64::try_from(deadline.saturating_sub(now)).unwrap_or(0);
        // A window already passed whose batch is still there (a seal that failed): retried after
        // a window, as before, never in a loop.
        let left = if left == 0 { self.tick } else { Duration::from_millis(left).min(self.tick) };
        Some(left)
    }

    fn check_next_adopted_guarded(&self) -> bool {
        catch_unwind(AssertUnwindSafe(|| {
            let mut store = self.access.lock();
            let more = store.check_next_adopted();
            store.publish();
            more
        }))
        .unwrap_or(false)
    }

    /// `f` on the store, then publish; a panic in it is caught like one in [`Self::handle_guarded`].
    fn with_store_guarded(&self, f: fn(&mut Store)) {
        let done = catch_unwind(AssertUnwindSafe(|| {
            let mut store = self.access.lock();
            f(&mut store);
            store.publish();
        }));
        if done.is_err() {
            self.access.counters.write_errors.incr();
            log::error("storage: the writer caught a panic while writing; it goes on");
        }
    }

    /// A bug must not kill the thread silently (every later flush would time out): it is logged
    /// and counted, and the writer goes on.
    fn handle_guarded(&mut self, msg: Msg) -> bool {
        let is_shutdown = matches!(msg, Msg::Shutdown { .. });
        match catch_unwind(AssertUnwindSafe(|| self.handle(msg))) {
            Ok(stop) => stop,
            Err(_) => {
                self.access.counters.write_errors.incr();
                log::error("storage: the writer caught a panic; the message was dropped");
                is_shutdown
            }
        }
    }

    /// Returns true to stop.
    fn handle(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Doc(doc, weight) => {
                self.backlog.release(weight);
                self.on_document(doc);
            }
            Msg::Consent(consent) => {
                self.consent = consent;
                let mut store = self.access.lock();
                store.write_out_all();
                store.apply_consent(consent);
                store.publish();
                // A migration writes and fsyncs, and opens batches on a fresh clock: the rest of
                // this drain must not open one that looks older.
                self.now = store.now();
            }
            Msg::Flush { sync, ack } => {
                let outcome = self.flush(sync);
                let _ = ack.send(outcome); // the caller may have stopped waiting
            }
            Msg::Shutdown { ack } => {
                self.flush(false);
                let _ = ack.send(());
                return true;
            }
        }
        false
    }

    fn on_document(&mut self, doc: Document) {
        let counters = &self.access.counters;
        counters.documents_received.incr();
        if self.consent == TrackingConsent::NotGranted {
            counters.dropped_consent.incr();
            return;
        }
        self.scratch.clear();
        if let Err(e) = json::to_writer(&mut self.scratch, &doc) {
            counters.dropped_serialize.incr();
            self.access.lock().warn_once(warn::DROP_SERIALIZE, || format!("a document could not be serialized: {e}"));
            return;
        }
        drop(doc);
        let len = self.scratch.len() as u64;
        if len > self.access.event_max_bytes {
            counters.dropped_oversize.incr();
            self.access.lock().warn_once(warn::DROP_OVERSIZE, || {
                format!("a {len}-byte document is larger than eventMaxBytes: dropped")
            });
        } else {
            self.scratch.push(b'\n');
            let mut store = self.access.lock();
            match self.consent {
                TrackingConsent::Pending => store.buffer_line(&self.scratch, self.now),
                _ => store.append_line(&self.scratch, self.now),
            }
        }
        if self.scratch.capacity() > SCRATCH_KEEP {
            self.scratch = Vec::new();
        }
    }

    /// Writes everything waiting and seals the active batch; `sync` adds the fsyncs of the crash
    /// path. Reports the first failure since the previous flush.
    fn flush(&mut self, sync: bool) -> FlushOutcome {
        match self.access.lock().flush(sync) {
            None => FlushOutcome::Done,
            Some(reason) => FlushOutcome::Failed(reason),
        }
    }
}
