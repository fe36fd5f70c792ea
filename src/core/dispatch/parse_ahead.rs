//! Slices' handover texts parsed, and processed, off the JS thread (docs/how-it-works.md,
//! "Capture in JS").
//!
//! The capture buffer hands a burst over in slices on later turns, one JSON text each. Parsing that
//! text is most of what a handover costs the JS thread (about three quarters of its instructions),
//! and only argument copying and scope bookkeeping belong there: so a slice's text goes to a thread
//! of this dispatcher's own, "rum-parse". Without an event mapper (which is JS and runs on the JS
//! thread) and with nothing queued on the JS thread, that thread also processes the slice's calls:
//! it stamps them, applies them to the scopes (shared, behind their lock, as every thread's
//! dispatcher applies its calls) and hands their documents to the sink, one view document per view
//! at the run's end as a slice writes them. Otherwise the calls of its text are queued when the
//! next slice (or the next call) finds them parsed, and slices process them. A turn's own handover
//! (a lone call, the start of a burst) is still parsed where it is made: its calls are processed on
//! that turn, so waiting for another thread would only add a hop. Once parsed, a text's emptied
//! buffer is kept for the next handover to be read into ([`SpareText`]).
//!
//! Order: runs in parse come after every event already queued and before every later call. The
//! dispatcher takes them in before anything else reaches its queue (`Dispatcher::catch_up`), waiting
//! for the thread when it has to: a drain right after a slice sees every call of it processed. A
//! run is processed here only when none is waiting to be queued and the queue is empty, so the
//! thread never overtakes a call the JS thread still holds; and while runs are processed here the
//! JS thread processes nothing of its own before it has taken them in.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

use flume::{Receiver, Sender};

use super::{hand_to_sink, report, Mode};
use crate::core::config::MAX_SPARE_TEXT_BYTES;
use crate::core::document::Document;
use crate::core::event::Event;
use crate::core::handover::{self, Handed, HandoverError};
use crate::core::seam::Clock;
use crate::core::sequencer::Sequencer;
use crate::core::stats::DispatchCounters;
use crate::log;

/// The moment a run was handed over: its calls' times are this moment less their ages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct HandedAt {
    pub wall_ms: i64,
    pub mono_ns: u64,
}

impl HandedAt {
    pub fn now<C: Clock>(clock: &C) -> Self {
        Self { wall_ms: clock.wall_ms(), mono_ns: clock.mono_ns() }
    }
}

/// What became of one run on the thread.
pub(super) enum Outcome {
    /// Parsed: the JS thread queues the calls.
    Calls(Vec<Handed>),
    /// Parsed and processed: when the earliest view it left owed is due (monotonic ns), if one is.
    Processed { views_due_ns: Option<u64> },
    /// Not a capture buffer's text: nothing recorded.
    Refused(HandoverError),
}

/// One run's outcome, with the moment it was handed over.
pub(super) struct Parsed {
    pub outcome: Outcome,
    pub at: HandedAt,
}

struct Job {
    /// The text as the engine wrote it (made valid UTF-8 here, off the JS thread).
    text: Vec<u8>,
    max_bytes: usize,
    at: HandedAt,
    /// Process the calls here, with these scopes and this sink; `None`: parse only.
    process: Option<Arc<Sequencer>>,
}

/// The parse thread's two ends, once it runs.
struct Worker {
    jobs: Sender<Job>,
    done: Receiver<Parsed>,
}

/// The runs of one dispatcher on its thread, in their handover order. The thread is started at the
/// first slice and ends when the dispatcher goes away (its job channel closes).
pub(super) struct ParseAhead {
    worker: Option<Worker>,
    /// The thread could not be started: every text is parsed on the JS thread, as before.
    unavailable: bool,
    in_flight: usize,
    /// Of `in_flight`, the runs the thread only parses (their calls are queued at take-in).
    parse_only: usize,
    counters: Arc<DispatchCounters>,
    spare: Arc<SpareText>,
}

impl ParseAhead {
    pub fn new(counters: Arc<DispatchCounters>) -> Self {
        let spare = Arc::new(SpareText::default());
        Self { worker: None, unavailable: false, in_flight: 0, parse_only: 0, counters, spare }
    }

    /// The buffer the next handover's text is read into: the emptied one of a text parsed
    /// before, when one is kept (its pages already mapped in), else a new one.
    pub fn text_buffer(&self) -> Vec<u8> {
        self.spare.take()
    }

    /// A text's buffer, parsed on the JS thread, kept for the next handover.
    pub fn recycle(&self, text: Vec<u8>) {
        self.spare.keep(text);
    }

    /// Runs handed to the thread whose result has not been taken yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Runs in flight whose calls the JS thread will queue when it takes them in.
    pub fn parse_only_in_flight(&self) -> usize {
        self.parse_only
    }

    /// Hands `text` to the thread, to parse, and to process with `process` when given; gives the
    /// text back when there is no thread (the caller parses it).
    pub fn send(
        &mut self,
        text: Vec<u8>,
        max_bytes: usize,
        at: HandedAt,
        process: Option<Arc<Sequencer>>,
    ) -> Result<(), Vec<u8>> {
        let Some(worker) = self.worker() else { return Err(text) };
        let parse_only = process.is_none();
        match worker.jobs.send(Job { text, max_bytes, at, process }) {
            Ok(()) => {
                self.in_flight += 1;
                self.parse_only += usize::from(parse_only);
                Ok(())
            }
            // The thread is gone (it never panics: see `run`): parse here from now on. What it
            // parsed before is still taken from its results; the rest is reported lost by `next`.
            Err(flume::SendError(job)) => {
                self.unavailable = true;
                Err(job.text)
            }
        }
    }

    /// The next run in handover order: `None` when none is in flight, or (unless `wait`) when the
    /// next one is not done yet.
    pub fn next(&mut self, wait: bool) -> Option<Parsed> {
        if self.in_flight == 0 {
            return None;
        }
        let Some(worker) = self.worker.as_ref() else {
            // Unreachable (a run in flight was sent to a worker); never leave one counted for good.
            self.in_flight = 0;
            self.parse_only = 0;
            return None;
        };
        let parsed = if wait { worker.done.recv().ok() } else { worker.done.try_recv().ok() };
        let parsed = match parsed {
            Some(p) => p,
            None if wait || worker.done.is_disconnected() => {
                // Cannot happen while the thread lives; if it does, its runs are lost, said once.
                let why = HandoverError("the parse thread ended before it parsed this slice".to_owned());
                Parsed { outcome: Outcome::Refused(why), at: HandedAt { wall_ms: 0, mono_ns: 0 } }
            }
            None => return None,
        };
        self.in_flight -= 1;
        if !matches!(parsed.outcome, Outcome::Processed { .. }) {
            self.parse_only = self.parse_only.saturating_sub(1);
        }
        Some(parsed)
    }

    fn worker(&mut self) -> Option<&Worker> {
        if self.unavailable {
            return None;
        }
        if self.worker.is_none() {
            let (jobs, inbox) = flume::unbounded::<Job>();
            let (results, done) = flume::unbounded();
            let counters = Arc::clone(&self.counters);
            let spare = Arc::clone(&self.spare);
            let spawned = std::thread::Builder::new()
                .name("rum-parse".into())
                .spawn(move || run(&inbox, &results, &counters, &spare));
            match spawned {
                Ok(_) => self.worker = Some(Worker { jobs, done }),
                Err(e) => {
                    self.unavailable = true;
                    log::warn(&format!("no parse thread ({e}); slices' handovers are parsed on the JS thread"));
                }
            }
        }
        self.worker.as_ref()
    }
}

/// The thread: each text in its order, its outcome sent back; the text's buffer is kept for the
/// next handover (or freed) as soon as it is parsed.
fn run(jobs: &Receiver<Job>, results: &Sender<Parsed>, counters: &DispatchCounters, spare: &SpareText) {
    for Job { text, max_bytes, at, process } in jobs.iter() {
        let calls = catch_unwind(AssertUnwindSafe(|| handover::parse_engine_utf8(&text, max_bytes)))
            .unwrap_or_else(|_| Err(HandoverError("parsing the slice's handover panicked".to_owned())));
        spare.keep(text);
        let outcome = match (calls, process) {
            (Err(e), _) => Outcome::Refused(e),
            (Ok(calls), None) => {
                counters.calls_parsed_ahead.add(calls.len() as u64);
                Outcome::Calls(calls)
            }
            (Ok(calls), Some(sequencer)) => {
                let n = calls.len() as u64;
                counters.calls_parsed_ahead.add(n);
                match catch_unwind(AssertUnwindSafe(|| process_run(&sequencer, calls, at))) {
                    Ok(views_due_ns) => {
                        counters.calls_processed_ahead.add(n);
                        Outcome::Processed { views_due_ns }
                    }
                    Err(_) => {
                        // As a panic in a deferred slice: counted and logged, never the app's crash.
                        counters.slice_errors.incr();
                        log::error(
                            "processing a slice's calls off the JS thread panicked; the rest of the run is lost",
                        );
                        Outcome::Processed { views_due_ns: None }
                    }
                }
            }
        };
        if results.send(Parsed { outcome, at }).is_err() {
            return; // the dispatcher is gone
        }
    }
}

/// A run's calls processed as a slice processes its queued calls: stamped (consecutive sequence
/// numbers, times from the handover's moment less their ages), applied in order, their documents
/// handed to the sink, then the views the slice's end lets out (a view held back is due when the
/// returned time comes). The run's moment stands for "now": the calls are judged by their own
/// stamps, and the view interval by the handover's moment (this thread has no JS clock).
fn process_run(sequencer: &Sequencer, calls: Vec<Handed>, at: HandedAt) -> Option<u64> {
    let mode = Mode::DEFERRED_SLICE;
    let counters = sequencer.counters();
    let mut docs = Vec::new();
    for ev in stamp_at(at, sequencer, calls) {
        counters.calls_queued.incr();
        let (consent, _) = sequencer.apply(ev, mode.after, at.mono_ns, &mut docs);
        deliver(sequencer, &mut docs, mode);
        if let Some(consent) = consent {
            if let Err(e) = sequencer.sink().consent_changed(consent) {
                report(counters, &counters.sink_errors, mode, "consent change not delivered", &e);
            }
        }
    }
    let due = sequencer.emit_views(mode.end, at.mono_ns, &mut docs);
    deliver(sequencer, &mut docs, mode);
    due
}

/// The documents of a call (no mapper here), counted as produced, to the sink.
fn deliver(sequencer: &Sequencer, docs: &mut Vec<Document>, mode: Mode) {
    for doc in docs.drain(..) {
        sequencer.counters().documents_produced.incr();
        hand_to_sink(sequencer, doc, mode);
    }
}

/// The events of a run handed over at `at`: the wall-clock and monotonic times of each call are
/// that moment less its age, and the monotonic ones never go back within the run (a JS clock
/// stepped backwards between two calls gives the later one the earlier one's time); then
/// consecutive sequence numbers, in the run's order. A run parsed on the parse thread is stamped
/// with the moment of its handover, where it is processed or when it is taken in.
pub(super) fn stamp_at(at: HandedAt, sequencer: &Sequencer, calls: impl IntoIterator<Item = Handed>) -> Vec<Event> {
    let (wall_now, mono_now) = (at.wall_ms, at.mono_ns);
    let mut floor = 0;
    let mut events: Vec<Event> = calls
        .into_iter()
        .map(|call| {
            let mono_ns = mono_now.saturating_sub(call.age_ns).max(floor);
            floor = mono_ns;
            let age_ms = i64::try_from(call.age_ns.saturating_add(500_000) / 1_000_000).unwrap_or(i64::MAX);
            Event { seq: 0, wall_ms: wall_now.saturating_sub(age_ms), mono_ns, kind: call.kind, attrs: call.attrs }
        })
        .collect();
    let first = sequencer.reserve_seq(events.len() as u64);
    for (ev, seq) in events.iter_mut().zip(first..) {
        ev.seq = seq;
    }
    events
}

/// One emptied handover-text buffer, shared by a dispatcher and its parse thread: the thread
/// leaves each text's buffer here once it has parsed it, and the JS thread reads its next text
/// into it. The largest buffer is kept, up to [`MAX_SPARE_TEXT_BYTES`].
#[derive(Default)]
struct SpareText(Mutex<Vec<u8>>);

impl SpareText {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn keep(&self, mut text: Vec<u8>) {
        if text.capacity() > MAX_SPARE_TEXT_BYTES {
            return; // freed: a huge text does not keep its memory
        }
        text.clear();
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.capacity() < text.capacity() {
            *kept = text;
        }
    }
}
