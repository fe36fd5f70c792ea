//! The dispatcher of one JS thread: the turn budget, the bounded queue, slices on later turns,
//! synchronous drains, the event mapper (docs/design.md, "Dispatch").
//! (Longer than most files: the budget, queue and drain rules share one state machine; a third is its docs.)
//!
//! - **Inline path.** While the queue is empty and the current turn has spent less than the turn
//!   budget, a call is processed at once. Once the time spent since the last turn end passes
//!   [`LIGHT_TURN_SHARE`] of the budget, the turn's end is awaited: [`Timer::TurnEnd`] is
//!   scheduled, and its firing resets the spent time. A lighter turn (a lone event) schedules no
//!   turn end: a view it leaves owed gets its [`Timer::ViewsDue`] (at most one per interval), and
//!   what it spent counts toward the next turns until that timer (or a turn end) fires: any timer
//!   of this dispatcher fires on a turn after every call before it.
//! - **Queued path.** Otherwise the call is queued, and a [`Timer::Slice`] is scheduled. At the
//!   queue's capacity a slice runs synchronously before the event is queued: memory stays
//!   bounded and nothing is dropped. A later call never overtakes an earlier one.
//! - **Slices** process queued events until the budget is spent (at least one), then write the
//!   coalesced view documents, and schedule the next slice while anything is left. Failures in a
//!   deferred slice are logged and counted, never returned into the timer.
//! - **Drains** (errors, crashes, keep-alive, session stop, user and consent changes, flush, stop,
//!   session queries, an action that opens a launch view) process the whole queue on the caller's
//!   turn first, then write every view still owed.
//! - **View documents** follow [`super::coalesce`]: an active view is written at a turn's end
//!   ([`Timer::TurnEnd`], a slice's end) at most once per `viewUpdateIntervalMs`; one held back
//!   gets a [`Timer::ViewsDue`] at the end of its interval, so its last state is written even if
//!   the app goes quiet.
//!
//! Re-entrancy: the event mapper is host code that may call the pipeline again while this
//! dispatcher is busy (the binding holds it mutably borrowed). Those calls go to the [`Inbox`]:
//! captured at their call, processed right after the document being mapped, before the next
//! queued event, without a nested drain (a known limit, docs/limits.md).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::Arc;

use super::attrs::Attrs;
use super::coalesce::Moment;
use super::config::{LIGHT_TURN_SHARE, QUEUE_CAPACITY};
use super::document::{Document, DocumentKind};
use super::event::{ErrorSource, Event, EventKind};
use super::handover::Handed;
use super::scope::LAUNCH_VIEW_NAME;
use super::seam::{Clock, EventMapper, MapOutcome, MapperError, Scheduler, Timer};
use super::sequencer::Sequencer;
use super::stats::{Counter, DispatchCounters};
use crate::log;
pub use handover::HandoverAt;
use parse_ahead::ParseAhead;

mod handover;
mod parse_ahead;

/// How the event being processed was reached: the moments its view documents may go out at
/// (after the event, at the end of its slice or drain), and whether a failure is one of a deferred
/// slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mode {
    after: Moment,
    end: Moment,
    deferred: bool,
}

impl Mode {
    const INLINE: Self = Self { after: Moment::AfterInline, end: Moment::TurnEnd, deferred: false };
    /// After `stop()`: no turns are tracked, so nothing is held back.
    const STOPPED: Self = Self { after: Moment::Forced, end: Moment::Forced, deferred: false };
    /// A slice forced by the capacity bound, on the caller's turn.
    const CAPACITY_SLICE: Self = Self { after: Moment::AfterQueued, end: Moment::TurnEnd, deferred: false };
    /// A synchronous drain: every view owed is written at its end.
    const DRAIN: Self = Self { after: Moment::AfterQueued, end: Moment::Forced, deferred: false };
    /// A slice run by its timer on a later turn: a turn of its own.
    const DEFERRED_SLICE: Self = Self { after: Moment::AfterQueued, end: Moment::TurnEnd, deferred: true };
}

/// Time spent on the current turn of the JS thread.
#[derive(Clone, Copy, Debug, Default)]
struct Turn {
    /// Everything processed on the caller's turn (inline, drains, capacity slices): the budget.
    spent_ns: u64,
    /// The inline path alone: `longest_inline_turn_us` (drains are unbounded by design).
    inline_ns: u64,
    end_scheduled: bool,
    /// `turn_busy(true)` was reported (after the turn's first processing).
    busy_reported: bool,
}

/// Whether a view will be active once this thread's queue is processed, as far as its queued
/// calls tell (another thread's calls can change it; a wrong guess only costs or saves a drain).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum ViewAfterQueue {
    /// No queued view call: whatever the scopes have now.
    #[default]
    AsNow,
    Active(String),
    Inactive,
}

/// The dispatcher of one JS thread. Not `Send`: it lives on its thread, with that thread's clock,
/// timers and event mapper; the [`Sequencer`] it shares with other threads is.
pub struct Dispatcher<C: Clock, S: Scheduler> {
    sequencer: Arc<Sequencer>,
    clock: Rc<C>,
    scheduler: S,
    mapper: Option<Box<dyn EventMapper>>,
    queue: VecDeque<Event>,
    inbox: Inbox<C>,
    turn: Turn,
    slice_scheduled: bool,
    /// When the scheduled [`Timer::ViewsDue`] is due (monotonic ns), if one is.
    views_timer: Option<u64>,
    running_inbox: bool,
    /// Reused document buffer, so processing an event does not allocate one.
    docs: Vec<Document>,
    /// The active view the queue leaves behind: an action that finds none opens a launch view,
    /// and that is a drain point.
    view_after_queue: ViewAfterQueue,
    /// Slices' handover texts in parse on another thread: after the queue, before later calls.
    ahead: ParseAhead,
}

impl<C: Clock, S: Scheduler> Dispatcher<C, S> {
    pub fn new(sequencer: Arc<Sequencer>, clock: C, scheduler: S) -> Self {
        let clock = Rc::new(clock);
        let inbox = Inbox { clock: Rc::clone(&clock), sequencer: Arc::clone(&sequencer), events: Rc::default() };
        let ahead = ParseAhead::new(Arc::clone(sequencer.counters()));
        Self {
            sequencer,
            clock,
            scheduler,
            mapper: None,
            queue: VecDeque::new(),
            inbox,
            turn: Turn::default(),
            slice_scheduled: false,
            views_timer: None,
            running_inbox: false,
            docs: Vec::new(),
            view_after_queue: ViewAfterQueue::AsNow,
            ahead,
        }
    }

    pub fn sequencer(&self) -> &Arc<Sequencer> {
        &self.sequencer
    }

    pub fn clock(&self) -> &C {
        &self.clock
    }

    pub fn scheduler(&self) -> &S {
        &self.scheduler
    }

    /// The handle for calls made while this dispatcher is busy (from inside the event mapper).
    pub fn inbox(&self) -> Inbox<C> {
        self.inbox.clone()
    }

    /// Events of this dispatcher waiting for a slice, and runs of handed-over calls in parse
    /// (a run counts one: `0` means nothing waits).
    pub fn queue_len(&self) -> usize {
        self.queue.len() + self.ahead.in_flight()
    }

    /// Installs (or removes) the event mapper run on each non-view document before it is written.
    /// A mapper is installed after the runs handed to the parse thread before it are taken in
    /// (those it processed there were processed without one, as at their handover).
    pub fn set_mapper(&mut self, mapper: Option<Box<dyn EventMapper>>) {
        if mapper.is_some() {
            self.catch_up();
        }
        self.mapper = mapper;
    }

    /// Stamps a call: next sequence number, wall-clock and monotonic time now, its attributes.
    pub fn capture(&self, kind: EventKind, attrs: Attrs) -> Event {
        capture(&*self.clock, &self.sequencer, kind, attrs)
    }

    /// One call from the host: captured now, then processed inline or queued.
    pub fn call(&mut self, kind: EventKind, attrs: Attrs) {
        let now = self.clock.mono_ns();
        self.call_from(now, kind, attrs);
    }

    /// A call the host entered at `started_ns` (this dispatcher's monotonic clock), before it
    /// copied the arguments. On the inline path the whole call is charged to the turn: the budget
    /// is the SDK's time on the caller's turn, and copying arguments is part of it.
    pub fn call_from(&mut self, started_ns: u64, kind: EventKind, attrs: Attrs) {
        self.catch_up();
        let ev = self.capture(kind, attrs);
        self.route(ev, started_ns);
    }

    /// Many calls in one host call (`addActions`): all are captured first, at the same call time
    /// and with consecutive sequence numbers, then each follows the same rules as [`Self::call`].
    pub fn call_batch<I>(&mut self, calls: I)
    where
        I: IntoIterator<Item = (EventKind, Attrs)>,
    {
        let now = self.clock.mono_ns();
        self.call_batch_from(now, calls);
    }

    /// [`Self::call_batch`] for a host call entered at `started_ns`: the argument copying is
    /// charged with the first event that runs inline (see [`Self::call_from`]).
    pub fn call_batch_from<I>(&mut self, started_ns: u64, calls: I)
    where
        I: IntoIterator<Item = (EventKind, Attrs)>,
    {
        self.catch_up();
        // Calls of age 0: all at this moment, with consecutive sequence numbers.
        let calls = calls.into_iter().map(|(kind, attrs)| Handed { age_ns: 0, kind, attrs });
        let events = handover::stamp(&*self.clock, &self.sequencer, calls);
        let mut started = Some(started_ns);
        for ev in events {
            let from = started.take().unwrap_or_else(|| self.clock.mono_ns());
            self.route(ev, from);
        }
    }

    /// Routes an already captured event (what [`Self::call`] does after capturing).
    pub fn dispatch(&mut self, ev: Event) {
        self.catch_up();
        let now = self.clock.mono_ns();
        self.route(ev, now);
    }

    fn route(&mut self, ev: Event, started_ns: u64) {
        if self.sequencer.is_stopped() {
            self.drain_queue();
            self.run_inline(ev, self.clock.mono_ns(), Mode::STOPPED);
        } else if ev.kind.drains_queue() || self.opens_launch_view(&ev.kind) {
            // The event itself writes the views owed first (coalesce::forced_around).
            self.drain_queue();
            self.run_inline(ev, self.clock.mono_ns(), Mode::INLINE);
        } else if self.queue.is_empty() && self.turn.spent_ns < self.sequencer.turn_budget_ns() {
            self.run_inline(ev, started_ns, Mode::INLINE);
        } else {
            self.enqueue(ev);
        }
    }

    /// `markCrash(message, stack)`: an unhandled error, after every earlier call.
    pub fn mark_crash(&mut self, message: String, stack: Option<String>, attrs: Attrs) {
        self.call(
            EventKind::Error { message, source: ErrorSource::Source, stack, is_crash: true, details: None },
            attrs,
        );
    }

    /// A timer this dispatcher scheduled has fired. Never fails: a deferred slice logs and counts
    /// its failures.
    pub fn on_timer(&mut self, timer: Timer) {
        match timer {
            Timer::TurnEnd => {
                self.turn = Turn::default();
                self.emit_views(Moment::TurnEnd, Mode { deferred: true, ..Mode::INLINE });
                self.sequencer.sink().turn_busy(false);
            }
            Timer::ViewsDue => {
                self.views_timer = None;
                if !self.turn.end_scheduled {
                    // Fired on a turn after every call so far: what light turns spent is behind
                    // it, as at an awaited turn end.
                    self.turn = Turn::default();
                }
                self.emit_views(Moment::TurnEnd, Mode { deferred: true, ..Mode::INLINE });
            }
            Timer::Slice => {
                self.slice_scheduled = false;
                self.slice_now(0);
            }
        }
    }

    /// A slice on a turn of its own (its timer fired, or the capture buffer handed a slice's
    /// calls over, having spent `spent_ns` of the budget on them): queued events until the budget
    /// is spent; the next slice is scheduled while anything is left.
    fn slice_now(&mut self, spent_ns: u64) {
        self.take_parsed(false);
        if self.queue.is_empty() {
            // A drain got there first, or what was handed over is still in parse: come back for it.
            if self.ahead.in_flight() > 0 && !self.slice_scheduled {
                self.schedule_slice();
            }
            return;
        }
        // A slice on a turn of its own is that turn's processing: busy while it runs.
        let own_turn = !self.turn.end_scheduled;
        if own_turn {
            self.sequencer.sink().turn_will_end(); // right after the slice
            self.sequencer.sink().turn_busy(true);
        }
        self.run_slice(Mode::DEFERRED_SLICE, spent_ns);
        if own_turn {
            self.sequencer.sink().turn_busy(false);
        }
        if (!self.queue.is_empty() || self.ahead.in_flight() > 0) && !self.slice_scheduled {
            self.schedule_slice();
        }
    }

    /// Processes the whole queue now, without a budget, and writes every view still owed (the
    /// binding's `flush()` and its teardown drains).
    pub fn drain(&mut self) {
        self.drain_and_write_views();
    }

    /// `flush()`: every earlier call is processed and handed to the sink when this returns, the
    /// views owed included (the binding then flushes storage).
    pub fn flush(&mut self) {
        self.drain_and_write_views();
    }

    /// `sessionId()`: the live session after every earlier call; a reader of the session finds
    /// its views written.
    pub fn session_id(&mut self) -> Option<String> {
        self.drain_and_write_views();
        self.sequencer.current_session_id(self.clock.wall_ms())
    }

    /// `stop()`: drains and writes the views owed, then every later call (on any thread of the
    /// pipeline) is processed on its caller's turn, its views written with it.
    pub fn stop(&mut self) {
        self.drain_and_write_views();
        self.sequencer.mark_stopped();
    }

    fn drain_and_write_views(&mut self) {
        self.drain_queue();
        self.emit_views(Moment::Forced, Mode::DRAIN);
    }

    fn counters(&self) -> &DispatchCounters {
        self.sequencer.counters()
    }

    fn run_inline(&mut self, ev: Event, started_ns: u64, mode: Mode) {
        self.counters().calls_inline.incr();
        let start = started_ns.min(self.clock.mono_ns());
        let due = self.process(ev, mode);
        let spent = self.clock.mono_ns().saturating_sub(start);
        self.charge_turn(spent, true);
        if self.turn.end_scheduled || self.sequencer.is_stopped() {
            return;
        }
        if self.turn.spent_ns >= self.sequencer.turn_budget_ns() / LIGHT_TURN_SHARE {
            // No longer light: this turn's end is awaited (and resets what was spent).
            self.begin_turn();
            self.charge_turn(0, true);
        } else if let Some(due) = due {
            // A light turn's end is not awaited: a view it left owed is written by its own timer
            // on a later turn (once per interval, not once per turn), with the turn's last state.
            self.schedule_views(due);
        }
    }

    /// An action (or a resource start) queued behind other calls that will find no active view:
    /// it opens a launch view, which reads and changes the scope tree, so the queue is processed
    /// first (a drain point, docs/design.md). With an empty queue it runs inline or starts the queue
    /// anyway.
    fn opens_launch_view(&mut self, kind: &EventKind) -> bool {
        !self.queue.is_empty() && opens_a_view_if_none(kind) && !self.view_active_after_queue()
    }

    /// Whether a view will be active once the queue is processed; reads the scopes once per
    /// queue, not per call of a burst.
    fn view_active_after_queue(&mut self) -> bool {
        if self.view_after_queue == ViewAfterQueue::AsNow {
            let active = self.sequencer.with_scopes(|s| s.active_view_key().map(str::to_owned));
            self.view_after_queue = active.map_or(ViewAfterQueue::Inactive, ViewAfterQueue::Active);
        }
        matches!(self.view_after_queue, ViewAfterQueue::Active(_))
    }

    /// Follows the queued calls for [`Self::opens_launch_view`]; a new queue starts from the
    /// scopes as they are.
    fn note_queued_view_call(&mut self, kind: &EventKind) {
        if self.queue.is_empty() {
            self.view_after_queue = ViewAfterQueue::AsNow;
        }
        match kind {
            EventKind::StartView { key, .. } => self.view_after_queue = ViewAfterQueue::Active(key.clone()),
            EventKind::StopView { key } => {
                let stops_active = match &self.view_after_queue {
                    ViewAfterQueue::Active(active) => active == key,
                    ViewAfterQueue::AsNow => self.sequencer.with_scopes(|s| s.active_view_key() == Some(key.as_str())),
                    ViewAfterQueue::Inactive => false,
                };
                if stops_active {
                    self.view_after_queue = ViewAfterQueue::Inactive;
                }
            }
            // The first call of a queue may open the launch view itself (nothing to drain then):
            // the calls after it find that view.
            kind if opens_a_view_if_none(kind) && !self.view_active_after_queue() => {
                self.view_after_queue = ViewAfterQueue::Active(LAUNCH_VIEW_NAME.to_owned());
            }
            _ => {}
        }
    }

    fn enqueue(&mut self, ev: Event) {
        self.push_queued(ev);
        if !self.slice_scheduled {
            self.schedule_slice();
        }
    }

    /// Queues one event (a capacity slice first at the bound), without scheduling its slice.
    fn push_queued(&mut self, ev: Event) {
        self.note_queued_view_call(&ev.kind);
        if self.queue.len() >= self.sequencer.queue_capacity() {
            self.counters().slices_at_capacity.incr();
            self.begin_turn();
            let spent = self.run_slice(Mode::CAPACITY_SLICE, 0);
            self.charge_turn(spent, false);
        }
        if self.queue.capacity() == 0 {
            // The first queued event of this thread: room for the default bound at once, so a
            // burst does not grow the ring by doubling (a copy of everything queued at each step)
            // on the UI thread. Pages are only touched as events fill them.
            self.queue.reserve_exact(self.sequencer.queue_capacity().min(QUEUE_CAPACITY));
        }
        self.queue.push_back(ev);
        let c = self.sequencer.counters();
        c.calls_queued.incr();
        c.queue_length.incr();
        c.queue_high_water.max(c.queue_length.get());
    }

    fn schedule_slice(&mut self) {
        self.slice_scheduled = self.scheduler.schedule(Timer::Slice);
    }

    /// Before the turn's first processing: schedules its end, and tells the sink that the turn's
    /// documents may wait for it (`turn_will_end`), so they need not wake the writer one by one.
    /// A refused timer is asked for again by the next call's processing.
    fn begin_turn(&mut self) {
        if self.turn.end_scheduled || self.sequencer.is_stopped() {
            return;
        }
        self.turn.end_scheduled = self.scheduler.schedule(Timer::TurnEnd);
        if self.turn.end_scheduled {
            self.sequencer.sink().turn_will_end();
        }
    }

    /// Adds time spent on the caller's turn; after the turn's first processing, reports it busy.
    fn charge_turn(&mut self, spent_ns: u64, inline: bool) {
        if self.sequencer.is_stopped() {
            return; // no budget after stop, so no turn to track
        }
        self.turn.spent_ns = self.turn.spent_ns.saturating_add(spent_ns);
        if inline {
            self.turn.inline_ns = self.turn.inline_ns.saturating_add(spent_ns);
            self.counters().longest_inline_turn_us.max(self.turn.inline_ns / 1_000);
        }
        // Only a turn whose end will be reported is busy (begin_turn scheduled it): the sink never
        // waits for an end that cannot come.
        if self.turn.end_scheduled && !self.turn.busy_reported {
            self.turn.busy_reported = true;
            self.sequencer.sink().turn_busy(true);
        }
    }

    /// Processes queued events until the budget, less `spent_ns` already spent on the slice, is
    /// spent (at least one event), then emits the coalesced view documents. Returns the time it took.
    fn run_slice(&mut self, mode: Mode, spent_ns: u64) -> u64 {
        let budget = self.sequencer.turn_budget_ns().saturating_sub(spent_ns);
        let start = self.clock.mono_ns();
        while let Some(ev) = self.queue.pop_front() {
            self.counters().queue_length.sub(1);
            self.process(ev, mode);
            if self.clock.mono_ns().saturating_sub(start) >= budget {
                break;
            }
        }
        self.end_slice(mode);
        let spent = self.clock.mono_ns().saturating_sub(start);
        let c = self.counters();
        c.slices_run.incr();
        c.longest_slice_us.max(spent / 1_000);
        spent
    }

    fn drain_queue(&mut self) {
        self.catch_up();
        if !self.queue.is_empty() {
            self.begin_turn();
        }
        if let Some(spent) = self.drain_unbudgeted() {
            self.charge_turn(spent, false);
        }
    }

    /// The whole queue, coalesced; `None` when it was empty.
    fn drain_unbudgeted(&mut self) -> Option<u64> {
        if self.queue.is_empty() {
            return None;
        }
        let start = self.clock.mono_ns();
        while let Some(ev) = self.queue.pop_front() {
            self.counters().queue_length.sub(1);
            self.process(ev, Mode::DRAIN);
        }
        self.end_slice(Mode::DRAIN);
        self.counters().drains.incr();
        Some(self.clock.mono_ns().saturating_sub(start))
    }

    /// Returns when the earliest view left owed is due, if one is.
    fn process(&mut self, ev: Event, mode: Mode) -> Option<u64> {
        let mut docs = std::mem::take(&mut self.docs);
        let (consent, due) = self.sequencer.apply(ev, mode.after, self.clock.mono_ns(), &mut docs);
        // A view held back here waits for the end of this slice or drain, for the turn end the
        // inline path awaits (that turn end schedules what is still due), or for its own timer
        // after a light turn (run_inline).
        self.deliver_all(&mut docs, mode);
        if let Some(consent) = consent {
            if let Err(e) = self.sequencer.sink().consent_changed(consent) {
                let c = self.sequencer.counters();
                report(c, &c.sink_errors, mode, "consent change not delivered", &e);
            }
        }
        self.docs = docs;
        due
    }

    /// The end of a slice or drain: the coalesced view documents go out.
    fn end_slice(&mut self, mode: Mode) {
        self.emit_views(mode.end, mode);
    }

    /// Writes the views owed that `moment` lets out; one still held back gets a
    /// [`Timer::ViewsDue`] at its due time.
    fn emit_views(&mut self, moment: Moment, mode: Mode) {
        let mut docs = std::mem::take(&mut self.docs);
        let due = self.sequencer.emit_views(moment, self.clock.mono_ns(), &mut docs);
        self.deliver_all(&mut docs, mode);
        self.docs = docs;
        if let Some(due) = due {
            self.schedule_views(due);
        }
    }

    /// Makes sure a [`Timer::ViewsDue`] fires by `due_ns`. A timer already due earlier will
    /// schedule the next one itself.
    fn schedule_views(&mut self, due_ns: u64) {
        if self.views_timer.is_some_and(|at| at <= due_ns) {
            return;
        }
        let wait_ns = due_ns.saturating_sub(self.clock.mono_ns());
        let delay_ms = u32::try_from(wait_ns.div_ceil(1_000_000)).unwrap_or(u32::MAX);
        if self.scheduler.schedule_in(Timer::ViewsDue, delay_ms) {
            self.views_timer = Some(due_ns);
        }
    }

    fn deliver_all(&mut self, docs: &mut Vec<Document>, mode: Mode) {
        for doc in docs.drain(..) {
            self.deliver(doc, mode);
            self.run_inbox(mode);
        }
    }

    /// Maps (non-view documents) and hands one document to the sink.
    fn deliver(&mut self, doc: Document, mode: Mode) {
        let c = self.sequencer.counters();
        c.documents_produced.incr();
        let kind = doc.kind();
        let doc = match self.mapper.as_mut() {
            Some(mapper) if kind != DocumentKind::View => match map_guarded(mapper.as_mut(), &doc) {
                Ok(MapOutcome::Keep) => doc,
                Ok(MapOutcome::Replace(value)) => match kept_type(kind, &value) {
                    Ok(()) => Document::Mapped { kind, value },
                    Err(e) => {
                        report(c, &c.mapper_errors, mode, "event mapper failed; document kept unchanged", &e);
                        doc
                    }
                },
                Ok(MapOutcome::Drop) => {
                    c.mapper_dropped.incr();
                    return;
                }
                Err(e) => {
                    report(c, &c.mapper_errors, mode, "event mapper failed; document kept unchanged", &e);
                    doc
                }
            },
            _ => doc,
        };
        hand_to_sink(&self.sequencer, doc, mode);
    }

    /// Calls the host made from inside the mapper, in their call order.
    fn run_inbox(&mut self, mode: Mode) {
        // The outer loop picks up calls made while an inbox event is itself being mapped, so a
        // mapper that keeps calling back cannot grow the stack.
        if self.running_inbox || self.inbox.is_empty() {
            return;
        }
        self.running_inbox = true;
        let ran = catch_unwind(AssertUnwindSafe(|| {
            while let Some(ev) = self.inbox.pop() {
                let c = self.counters();
                c.calls_inline.incr();
                c.calls_reentrant.incr();
                self.process(ev, mode);
            }
        }));
        // Reset even when processing panicked (the binding stops the panic): a flag left set
        // would leave every later call of the mapper in the inbox for good.
        self.running_inbox = false;
        if let Err(panic) = ran {
            std::panic::resume_unwind(panic);
        }
    }
}

impl<C: Clock, S: Scheduler> Drop for Dispatcher<C, S> {
    /// A thread's dispatcher going away (its JS object collected) still delivers what it queued.
    /// No turn is charged: no timer may fire for a dispatcher that no longer exists.
    ///
    /// It runs in a GC finalizer, which catches no panic (one there aborts the host): a panic
    /// while delivering is caught here, logged and counted as a slice error.
    fn drop(&mut self) {
        let delivered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.run_inbox(Mode::DRAIN);
            self.catch_up();
            if self.drain_unbudgeted().is_some() {
                log::info("dispatcher dropped with queued events; they were processed first");
            }
            let mut docs = std::mem::take(&mut self.docs);
            self.sequencer.emit_views(Moment::Forced, self.clock.mono_ns(), &mut docs);
            self.deliver_all(&mut docs, Mode::DRAIN);
        }));
        if self.turn.end_scheduled {
            // Its turn-end timer will never fire: the sink must not wait for that end.
            self.sequencer.sink().turn_busy(false);
        }
        if delivered.is_err() {
            self.sequencer.counters().slice_errors.incr();
            log::error("a dispatcher going away panicked while it delivered its queued events; the rest are lost");
        }
    }
}

/// Hands one (produced, mapped) document to the sink; a failure is reported.
fn hand_to_sink(sequencer: &Sequencer, doc: Document, mode: Mode) {
    let c = sequencer.counters();
    if let Err(e) = sequencer.sink().write(doc) {
        report(c, &c.sink_errors, mode, "document not delivered to storage", &e);
    }
}

/// Runs the mapper; a panic in it is a failure like a thrown exception, not a crash of the app.
fn map_guarded(mapper: &mut dyn EventMapper, doc: &Document) -> Result<MapOutcome, MapperError> {
    catch_unwind(AssertUnwindSafe(|| mapper.map(doc)))
        .unwrap_or_else(|_| Err(MapperError("the event mapper panicked".to_owned())))
}

/// A mapped document must stay the kind it was: its `type` decides which schema the intake reads
/// it by (and the batch's view reduction reads `"view"`), so a mapper that changes or removes it
/// has failed, as one that throws.
fn kept_type(kind: DocumentKind, value: &serde_json::Value) -> Result<(), MapperError> {
    match value.get("type") {
        Some(serde_json::Value::String(t)) if t == kind.as_str() => Ok(()),
        found => Err(MapperError(format!(
            "the event mapper changed the document's type: {} became {}",
            kind.as_str(),
            found.map_or_else(|| "nothing".to_owned(), ToString::to_string)
        ))),
    }
}

/// Counts a failure and logs it. A burst of failures (a full disk) would log thousands of lines:
/// only the 1st, 2nd, 4th, 8th, … of each kind are logged, with their running count.
fn report(c: &DispatchCounters, counter: &Counter, mode: Mode, what: &str, err: &dyn Display) {
    counter.incr();
    if mode.deferred {
        c.slice_errors.incr();
    }
    let n = counter.get();
    if n.is_power_of_two() {
        let path = if mode.deferred { "deferred slice" } else { "caller's turn" };
        log::warn(&format!("{what} ({path}, failure #{n}): {err}"));
    }
}

fn capture<C: Clock>(clock: &C, sequencer: &Sequencer, kind: EventKind, attrs: Attrs) -> Event {
    Event { seq: sequencer.reserve_seq(1), wall_ms: clock.wall_ms(), mono_ns: clock.mono_ns(), kind, attrs }
}

/// Calls that land on the active view, opening a launch view when there is none.
fn opens_a_view_if_none(kind: &EventKind) -> bool {
    matches!(kind, EventKind::Action { .. } | EventKind::StartResource { .. })
}

/// Calls made while the dispatcher is busy (from inside the event mapper): captured at their call,
/// processed by the dispatcher right after the document being mapped. Cloneable; not `Send`.
pub struct Inbox<C: Clock> {
    clock: Rc<C>,
    sequencer: Arc<Sequencer>,
    events: Rc<RefCell<VecDeque<Event>>>,
}

impl<C: Clock> Clone for Inbox<C> {
    fn clone(&self) -> Self {
        Self { clock: Rc::clone(&self.clock), sequencer: Arc::clone(&self.sequencer), events: Rc::clone(&self.events) }
    }
}

impl<C: Clock> Inbox<C> {
    /// Captures the call now (sequence, time, attributes) and leaves it for the dispatcher.
    pub fn push(&self, kind: EventKind, attrs: Attrs) {
        let ev = capture(&*self.clock, &self.sequencer, kind, attrs);
        self.events.borrow_mut().push_back(ev);
    }

    pub fn is_empty(&self) -> bool {
        self.events.borrow().is_empty()
    }

    /// The live session's id, without a drain (the dispatcher is busy).
    pub fn session_id(&self) -> Option<String> {
        self.sequencer.current_session_id(self.clock.wall_ms())
    }

    fn pop(&self) -> Option<Event> {
        self.events.borrow_mut().pop_front()
    }
}
