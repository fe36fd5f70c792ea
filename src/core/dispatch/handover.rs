//! Calls handed over by a JS thread's capture buffer ([`crate::core::handover`]): stamped with the
//! times of their calls, given consecutive sequence numbers in their call order, then routed as
//! calls made on this turn, or run as a slice of their own.

use super::parse_ahead::{HandedAt, Parsed};
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
    /// handed to the parse thread (`src/core/dispatch/parse_ahead.rs`), and the slice processes the calls
    /// parsed before it. Without a parse thread, or after stop, the text is parsed here and its
    /// parse error returned (nothing recorded); one refused on the parse thread is counted
    /// (`handovers_refused`) and logged when it is taken in.
    pub fn hand_over_slice(&mut self, text: String, max_bytes: usize, js_spent_ns: u64) -> Result<(), HandoverError> {
        let at = HandoverAt::Slice { js_spent_ns };
        if self.sequencer.is_stopped() {
            self.hand_over(handover::parse(&text, max_bytes)?, at);
            return Ok(());
        }
        if self.ahead.in_flight() >= MAX_RUNS_IN_PARSE {
            self.take_parsed(true);
        }
        if let Err(text) = self.ahead.send(text, max_bytes, HandedAt::now(&*self.clock)) {
            self.hand_over(handover::parse(&text, max_bytes)?, at);
            return Ok(());
        }
        self.slice_now(js_spent_ns);
        Ok(())
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

    /// Queues the runs parsed so far in their handover order (`wait`: all of them, waiting for
    /// their parse).
    pub(super) fn take_parsed(&mut self, wait: bool) {
        while let Some(Parsed { calls, at }) = self.ahead.next(wait) {
            match calls {
                Ok(calls) => {
                    for ev in stamp_at(at, &self.sequencer, calls) {
                        self.push_queued(ev);
                    }
                }
                Err(e) => {
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
        }
    }
}

impl<C: Clock> Inbox<C> {
    /// Handed-over calls made from inside the event mapper: left for the dispatcher in order.
    pub fn push_handed(&self, calls: Vec<Handed>) {
        let events = stamp(&*self.clock, &self.sequencer, calls);
        self.events.borrow_mut().extend(events);
    }
}

/// The events of a run of calls: the wall-clock and monotonic times of each call are now minus
/// its age, and the monotonic ones never go back within the run (a JS clock stepped backwards
/// between two calls gives the later one the earlier one's time); then consecutive sequence
/// numbers, in the run's order.
pub(super) fn stamp<C: Clock>(clock: &C, sequencer: &Sequencer, calls: impl IntoIterator<Item = Handed>) -> Vec<Event> {
    stamp_at(HandedAt::now(clock), sequencer, calls)
}

/// [`stamp`] for a run handed over at `at` (a slice parsed off the JS thread is stamped when its
/// parse is taken in, with the moment of its handover).
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
