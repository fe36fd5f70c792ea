//! The writer thread, "rum-writer" (modelled on opentelemetry's BatchSpanProcessor worker): one
//! consumer of one flume channel carrying documents and a small control enum, so lines reach the
//! files in exactly the order the documents were sent. JSON is built here, never on the JS
//! thread. After each drain of the channel everything waiting in memory is written, so a killed
//! process loses at most what was still in the channel: an idle writer waits on the channel, so a
//! document sent outside a busy turn is written at once; while the JS thread is in a busy turn the
//! writer holds off ([`Hold`]), napping [`NAP`] at a time, so it does not compete with the UI
//! thread for a core and sends cost the JS thread no wake-ups, at most [`WRITER_HOLD_MAX_MS`] and
//! [`WRITER_HOLD_MAX_BYTES`].

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use flume::{Receiver, RecvTimeoutError, Sender};

use super::backlog::Backlog;
use super::context::warn;
use super::json;
use super::shared::Shared;
use super::store::Store;
#[cfg(doc)]
use crate::core::config::WRITER_HOLD_MAX_MS;
use crate::core::config::{TrackingConsent, WRITER_HOLD_MAX_BYTES};
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

/// Whether the JS thread is in a busy turn, as its dispatcher reports it
/// ([`DocumentSink::turn_busy`](crate::core::seam::DocumentSink::turn_busy)): while it is, the
/// writer leaves the documents in the channel (at most [`Hold::max`] and
/// [`WRITER_HOLD_MAX_BYTES`]), so a burst on the UI thread does not share its core with the
/// writer. Every control message (flush, consent, shutdown) opens the gate before it is sent.
/// With several JS threads on one writer the latest report wins: the gate only says when to
/// write, never what, so a turn that another thread's end opens early loses nothing.
#[derive(Default)]
pub(crate) struct TurnGate {
    busy: AtomicBool,
}

impl TurnGate {
    pub fn set_busy(&self, busy: bool) {
        self.busy.store(busy, Ordering::Relaxed);
    }

    fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed)
    }
}

/// The writer's side of the [`TurnGate`].
pub(crate) struct Hold {
    gate: Arc<TurnGate>,
    /// The longest documents wait for a busy turn (`WRITER_HOLD_MAX_MS`; tests change it).
    max: Duration,
    /// When the writer began to leave documents waiting.
    since: Option<Instant>,
}

impl Hold {
    pub fn new(gate: Arc<TurnGate>, max: Duration) -> Self {
        Self { gate, max, since: None }
    }

    /// True while documents should wait for the JS thread's turn to end. Whether any wait is
    /// not asked: a document sent between that check and the drain would be taken.
    fn holds(&mut self, backlog: &Backlog) -> bool {
        if !self.gate.is_busy() {
            self.since = None;
            return false;
        }
        let since = *self.since.get_or_insert_with(Instant::now);
        if since.elapsed() < self.max && backlog.bytes() < WRITER_HOLD_MAX_BYTES {
            return true;
        }
        self.since = None; // drained now; a turn still busy holds what comes next anew
        false
    }
}

pub(crate) fn spawn(
    shared: Arc<Shared>,
    rx: Receiver<Msg>,
    tick: Duration,
    backlog: Arc<Backlog>,
    hold: Hold,
) -> std::io::Result<JoinHandle<()>> {
    thread::Builder::new().name("rum-writer".into()).spawn(move || {
        Writer { shared, backlog, hold, consent: TrackingConsent::Pending, scratch: Vec::new(), tick, now: 0 }.run(rx);
    })
}

struct Writer {
    shared: Arc<Shared>,
    backlog: Arc<Backlog>,
    hold: Hold,
    /// Set by the first message, which `open` sends with the configured consent.
    consent: TrackingConsent,
    /// Reused serialization buffer.
    scratch: Vec<u8>,
    /// Idle wake-up, to seal an active batch whose window has passed.
    tick: Duration,
    /// The wall clock, read once per drain of the channel.
    now: i64,
}

/// While the JS thread's turn is busy the writer naps this long between looks at the hold instead
/// of waiting on the channel: a receiver waiting on the channel turns every send into a thread
/// wake-up on the sender's side (a futex call, 2-5 µs on the JS thread, measured by
/// `benches/writer.rs`), a napping one costs the sender a queue push. Outside a busy turn the
/// writer waits on the channel: napping there too (as before) woke the writer a thousand times a
/// second at a trickle of events, which cost more process CPU (300 actions/s for 12 s: 1,119 ms
/// against 838 ms, medians of 3, `scripts/burst --only rate-300-12s`) than one wake-up per turn
/// costs the JS thread.
const NAP: Duration = Duration::from_millis(1);

/// A document larger than this does not keep its serialization buffer.
const SCRATCH_KEEP: usize = 256 * 1024;

impl Writer {
    fn run(mut self, rx: Receiver<Msg>) {
        // First: the lines of the batches an earlier process left are checked here, not on the
        // caller's thread (one batch per hold of the store, so the upload side is not held up).
        while self.check_next_adopted_guarded() {}
        // The message that woke an idle writer: handled with the next drain, so a busy turn's hold
        // applies to it too.
        let mut woke_with: Option<Msg> = None;
        loop {
            if self.hold.holds(&self.backlog) {
                thread::sleep(NAP);
                continue;
            }
            // Everything queued, taken under one lock of the channel.
            let mut got = false;
            let mut stop = false;
            // Taken off the channel first, then the clock: a document sent after a clock change
            // is never stamped with the time before it.
            let msgs = woke_with.take().into_iter().chain(rx.drain());
            self.now = (self.shared.clock)();
            for msg in msgs {
                got = true;
                stop = self.handle_guarded(msg);
                if stop {
                    break;
                }
            }
            if got {
                // The channel is empty: what waits in memory goes to disk now.
                self.with_store_guarded(Store::write_out_all);
            }
            if stop {
                return;
            }
            if got {
                continue; // more may have come while these were handled
            }
            if rx.is_disconnected() && rx.is_empty() {
                self.flush(false);
                return;
            }
            // Idle: wait on the channel (the next send wakes the thread).
            match rx.recv_timeout(self.tick) {
                Ok(msg) => woke_with = Some(msg),
                Err(RecvTimeoutError::Timeout) => self.with_store_guarded(Store::seal_if_window_passed),
                Err(RecvTimeoutError::Disconnected) => {
                    self.flush(false);
                    return;
                }
            }
        }
    }

    fn check_next_adopted_guarded(&self) -> bool {
        catch_unwind(AssertUnwindSafe(|| {
            let mut store = self.shared.lock();
            let more = store.check_next_adopted();
            store.publish();
            more
        }))
        .unwrap_or(false)
    }

    /// `f` on the store, then publish; a panic in it is caught like one in [`Self::handle_guarded`].
    fn with_store_guarded(&self, f: fn(&mut Store)) {
        let done = catch_unwind(AssertUnwindSafe(|| {
            let mut store = self.shared.lock();
            f(&mut store);
            store.publish();
        }));
        if done.is_err() {
            self.shared.counters.write_errors.incr();
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
                self.shared.counters.write_errors.incr();
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
                let mut store = self.shared.lock();
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
        let counters = &self.shared.counters;
        counters.documents_received.incr();
        if self.consent == TrackingConsent::NotGranted {
            counters.dropped_consent.incr();
            return;
        }
        self.scratch.clear();
        if let Err(e) = json::to_writer(&mut self.scratch, &doc) {
            counters.dropped_serialize.incr();
            self.shared.lock().warn_once(warn::DROP_SERIALIZE, || format!("a document could not be serialized: {e}"));
            return;
        }
        drop(doc);
        let len = self.scratch.len() as u64;
        if len > self.shared.event_max_bytes {
            counters.dropped_oversize.incr();
            self.shared.lock().warn_once(warn::DROP_OVERSIZE, || {
                format!("a {len}-byte document is larger than eventMaxBytes: dropped")
            });
        } else {
            self.scratch.push(b'\n');
            let mut store = self.shared.lock();
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
        match self.shared.lock().flush(sync) {
            None => FlushOutcome::Done,
            Some(reason) => FlushOutcome::Failed(reason),
        }
    }
}
