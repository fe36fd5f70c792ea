//! Calls handed over by a JS thread's capture buffer ([`crate::core::handover`]): stamped with the
//! times of their calls, given consecutive sequence numbers in their call order, then routed as
//! calls made on this turn, or run as a slice of their own.

use std::sync::Arc;

use super::parse_ahead::{stamp_at, HandedAt, Outcome, Parsed};
use super::{report, Dispatcher, Event, Inbox, Mode};
use crate::core::config::MAX_RUNS_IN_PARSE;
use crate::core::handover::{self, Handed, HandoverError};
use crate::core::seam::{Clock, Scheduler};
use crate::core::sequencer::Sequencer;

/// Where a handover happens on the JS thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandoverAt {
    /// On the turn of the calls (the buffer's end-of-turn microtask, or a drain's call):
    /// `js_spent_ns` is what the SDK already spent on this turn in JS (checking, copying and
    /// serializing the calls), charged to the turn's budget before any call is processed.
    Turn { js_spent_ns: u64 },
    /// A slice of the buffer on a later turn (its own timer): a turn of its own, as a queue slice,
    /// of which `js_spent_ns` went to serializing and handing the calls over.
    Slice { js_spent_ns: u64 },
}

impl<C: Clock, S: Scheduler> Dispatcher<C, S> {
    /// Takes a run of handed-over calls, in their call order, after every call made before.
    pub fn hand_over(&mut self, calls: Vec<Handed>, at: HandoverAt) {
        self.catch_up();
        let events = stamp(&*self.clock, &self.sequencer, calls);
        match at {
            HandoverAt::Slice { js_spent_ns } if !self.sequencer.is_stopped() => {
                // Queued behind anything this thread queued before, then a slice runs now.
                for ev in events {
                    self.push_queued(ev);
                }
                self.slice_now(js_spent_ns);
            }
            HandoverAt::Slice { .. } => events.into_iter().for_each(|ev| self.dispatch(ev)),
            HandoverAt::Turn { js_spent_ns } => {
                if js_spent_ns > 0 {
                    self.charge_turn(js_spent_ns, true);
                }
                events.into_iter().for_each(|ev| self.dispatch(ev));
            }
        }
    }

    /// A slice of the capture buffer as its text (`js_spent_ns` as for [`HandoverAt::Slice`]):
    /// handed to the parse thread (`src/core/dispatch/parse_ahead.rs`), which also processes its
    /// calls when it may (no event mapper, nothing queued here); the slice processes the calls
    /// queued before it. Without a parse thread, or after stop, the text is parsed here and its parse
    /// error returned (nothing recorded); one refused on the parse thread is counted
    /// (`handovers_refused`) and logged when it is taken in. The text is as the engine wrote it in
    /// UTF-8, made valid where it is parsed ([`handover::parse_engine_utf8`]); its buffer is kept
    /// for the next handover ([`Self::text_buffer`]).
    pub fn hand_over_slice(&mut self, text: Vec<u8>, max_bytes: usize, js_spent_ns: u64) -> Result<(), HandoverError> {
        let at = HandoverAt::Slice { js_spent_ns };
        if self.sequencer.is_stopped() {
            return self.hand_over_here(text, max_bytes, at);
        }
        if let Err(text) = self.send_ahead(text, max_bytes) {
            return self.hand_over_here(text, max_bytes, at);
        }
        self.slice_now(js_spent_ns);
        Ok(())
    }

    /// A turn's own handover as its text (`js_spent_ns` as for [`HandoverAt::Turn`]): parsed and
    /// processed here, on its turn, unless the parse thread is still processing runs handed over
    /// before it; then the calls would wait for them anyway (they are queued behind them), so the
    /// text follows them there instead of the JS thread waiting for them.
    pub fn hand_over_turn(&mut self, text: Vec<u8>, max_bytes: usize, js_spent_ns: u64) -> Result<(), HandoverError> {
        let behind_runs = self.ahead.in_flight() > 0 && self.processes_ahead();
        if !behind_runs {
            return self.hand_over_here(text, max_bytes, HandoverAt::Turn { js_spent_ns });
        }
        if js_spent_ns > 0 {
            self.charge_turn(js_spent_ns, true);
        }
        if let Err(text) = self.send_ahead(text, max_bytes) {
            return self.hand_over_here(text, max_bytes, HandoverAt::Turn { js_spent_ns: 0 });
        }
        if !self.slice_scheduled {
            self.schedule_slice(); // to take the run in
        }
        Ok(())
    }

    /// Whether the parse thread may process a run handed over now: no event mapper (it runs on
    /// the JS thread), nothing queued here and no run in parse whose calls will be queued (the
    /// thread would overtake them), and not stopped (every call is processed on its turn then).
    pub(super) fn processes_ahead(&self) -> bool {
        self.mapper.is_none()
            && self.queue.is_empty()
            && self.ahead.parse_only_in_flight() == 0
            && !self.sequencer.is_stopped()
    }

    /// Hands `text` to the parse thread, to be processed there if it may be; at the bound of runs
    /// in flight, the oldest are taken in first (waiting for them). Gives the text back when there
    /// is no parse thread.
    fn send_ahead(&mut self, text: Vec<u8>, max_bytes: usize) -> Result<(), Vec<u8>> {
        while self.ahead.in_flight() >= MAX_RUNS_IN_PARSE {
            self.take_next(true);
        }
        let process = self.processes_ahead().then(|| Arc::clone(&self.sequencer));
        self.ahead.send(text, max_bytes, HandedAt::now(&*self.clock), process)
    }

    /// A handover's text parsed on the JS thread (its buffer kept for the next handover) and its
    /// calls taken `at`; a text that is not a capture buffer's records nothing.
    fn hand_over_here(&mut self, text: Vec<u8>, max_bytes: usize, at: HandoverAt) -> Result<(), HandoverError> {
        let calls = handover::parse_engine_utf8(&text, max_bytes);
        self.ahead.recycle(text);
        self.hand_over(calls?, at);
        Ok(())
    }

    /// The buffer to read the next handover's text into (`ParseAhead::text_buffer`): with the
    /// pages of an earlier text's, so reading it costs no page faults.
    pub fn text_buffer(&self) -> Vec<u8> {
        self.ahead.text_buffer()
    }

    /// Slices' texts handed to the parse thread and not yet taken in (at most
    /// [`MAX_RUNS_IN_PARSE`]).
    pub fn runs_in_parse(&self) -> usize {
        self.ahead.in_flight()
    }

    /// Takes in the runs in parse before anything else reaches the queue, waiting for their
    /// parse: nothing overtakes a call handed over before it.
    pub(super) fn catch_up(&mut self) {
        if self.ahead.in_flight() > 0 {
            self.take_parsed(true);
        }
    }

    /// Takes in the runs done so far in their handover order (`wait`: all of them, waiting for
    /// the thread): a parsed run's calls are queued, a processed one's owed view gets its timer.
    pub(super) fn take_parsed(&mut self, wait: bool) {
        while self.take_next(wait) {}
    }

    /// Takes in the oldest run if it is done (`wait`: waiting for it); false when none was.
    fn take_next(&mut self, wait: bool) -> bool {
        let Some(Parsed { outcome, at }) = self.ahead.next(wait) else { return false };
        match outcome {
            Outcome::Calls(calls) => {
                for ev in stamp_at(at, &self.sequencer, calls) {
                    self.push_queued(ev);
                }
            }
            Outcome::Processed { views_due_ns } => {
                if let Some(due) = views_due_ns {
                    self.schedule_views(due);
                }
            }
            Outcome::Refused(e) => {
                let c = self.counters();
                report(
                    c,
                    &c.handovers_refused,
                    Mode::DEFERRED_SLICE,
                    "a slice's handover was refused; its calls are not recorded",
                    &e,
                );
            }
        }
        true
    }
}

impl<C: Clock> Inbox<C> {
    /// Handed-over calls made from inside the event mapper: left for the dispatcher in order.
    pub fn push_handed(&self, calls: Vec<Handed>) {
        let events = stamp(&*self.clock, &self.sequencer, calls);
        self.events.borrow_mut().extend(events);
    }
}

/// The events of a run of calls handed over now ([`stamp_at`]).
pub(super) fn stamp<C: Clock>(clock: &C, sequencer: &Sequencer, calls: impl IntoIterator<Item = Handed>) -> Vec<Event> {
    stamp_at(HandedAt::now(clock), sequencer, calls)
}
