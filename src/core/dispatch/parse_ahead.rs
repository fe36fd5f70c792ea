//! Slices' handover texts parsed off the JS thread (docs/how-it-works.md, "Capture in JS").
//!
//! The capture buffer hands a burst over in slices on later turns, one JSON text each. Parsing that
//! text is most of what a handover costs the JS thread (about three quarters of its instructions),
//! and only argument copying and scope bookkeeping belong there: so a slice's text goes to a parse
//! thread of this dispatcher's own, the slice processes the calls parsed before it, and the calls
//! of its text are queued when the next slice (or the next call) finds them parsed. A turn's own
//! handover (a lone call, the start of a burst) is still parsed where it is made: its calls are
//! processed on that turn, so waiting for another thread would only add a hop.
//!
//! Order: runs in parse come after every event already queued and before every later call. The
//! dispatcher takes them in before anything else reaches its queue (`Dispatcher::catch_up`), waiting
//! for the parse when it has to: a drain right after a slice sees every call of it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use flume::{Receiver, Sender};

use crate::core::handover::{self, Handed, HandoverError};
use crate::core::seam::Clock;
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

/// One run, parsed (or refused), with the moment it was handed over.
pub(super) struct Parsed {
    pub calls: Result<Vec<Handed>, HandoverError>,
    pub at: HandedAt,
}

struct Job {
    text: String,
    max_bytes: usize,
    at: HandedAt,
}

/// The parse thread's two ends, once it runs.
struct Worker {
    jobs: Sender<Job>,
    done: Receiver<Parsed>,
}

/// The runs of one dispatcher in parse, in their handover order. The thread is started at the
/// first slice and ends when the dispatcher goes away (its job channel closes).
pub(super) struct ParseAhead {
    worker: Option<Worker>,
    /// The thread could not be started: every text is parsed on the JS thread, as before.
    unavailable: bool,
    in_flight: usize,
    counters: Arc<DispatchCounters>,
}

impl ParseAhead {
    pub fn new(counters: Arc<DispatchCounters>) -> Self {
        Self { worker: None, unavailable: false, in_flight: 0, counters }
    }

    /// Runs handed to the thread whose result has not been taken yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Hands `text` to the parse thread, or gives it back when there is none (the caller parses it).
    pub fn send(&mut self, text: String, max_bytes: usize, at: HandedAt) -> Result<(), String> {
        let Some(worker) = self.worker() else { return Err(text) };
        match worker.jobs.send(Job { text, max_bytes, at }) {
            Ok(()) => {
                self.in_flight += 1;
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

    /// The next run in handover order: `None` when none is in parse, or (unless `wait`) when the
    /// next one is not parsed yet.
    pub fn next(&mut self, wait: bool) -> Option<Parsed> {
        if self.in_flight == 0 {
            return None;
        }
        let Some(worker) = self.worker.as_ref() else {
            // Unreachable (a run in flight was sent to a worker); never leave one counted for good.
            self.in_flight = 0;
            return None;
        };
        let parsed = if wait { worker.done.recv().ok() } else { worker.done.try_recv().ok() };
        match parsed {
            Some(p) => {
                self.in_flight -= 1;
                Some(p)
            }
            None if wait || worker.done.is_disconnected() => {
                // Cannot happen while the thread lives; if it does, its runs are lost, said once.
                self.in_flight -= 1;
                let why = HandoverError("the parse thread ended before it parsed this slice".to_owned());
                Some(Parsed { calls: Err(why), at: HandedAt { wall_ms: 0, mono_ns: 0 } })
            }
            None => None,
        }
    }

    fn worker(&mut self) -> Option<&Worker> {
        if self.unavailable {
            return None;
        }
        if self.worker.is_none() {
            let (jobs, inbox) = flume::unbounded::<Job>();
            let (results, done) = flume::unbounded();
            let counters = Arc::clone(&self.counters);
            let spawned =
                std::thread::Builder::new().name("rum-parse".into()).spawn(move || run(&inbox, &results, &counters));
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

/// The parse thread: each text in its order, its result sent back; the text is freed here too.
fn run(jobs: &Receiver<Job>, results: &Sender<Parsed>, counters: &DispatchCounters) {
    for Job { text, max_bytes, at } in jobs.iter() {
        let calls = catch_unwind(AssertUnwindSafe(|| handover::parse(&text, max_bytes)))
            .unwrap_or_else(|_| Err(HandoverError("parsing the slice's handover panicked".to_owned())));
        drop(text);
        if let Ok(calls) = &calls {
            counters.calls_parsed_ahead.add(calls.len() as u64);
        }
        if results.send(Parsed { calls, at }).is_err() {
            return; // the dispatcher is gone
        }
    }
}
