//! Fakes for the dispatcher and scope tests: a virtual clock that only moves when told (a sink or a
//! mapper advances it by a fake per-document cost), a manual scheduler whose timers the test fires
//! as event-loop turns, and a sink that records what it receives. Nothing sleeps.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ops::Range;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rum_native::core::attrs::Attrs;
use rum_native::core::config::{Config, TrackingConsent};
use rum_native::core::dispatch::Dispatcher;
use rum_native::core::document::{Document, DocumentKind};
use rum_native::core::event::{ActionType, ErrorSource, Event, EventKind, UserInfo};
use rum_native::core::seam::{
    Clock, DocumentSink, EventMapper, ManualClock, MapOutcome, MapperError, Scheduler, SinkError, Timer,
};
use rum_native::core::sequencer::Sequencer;
use rum_native::core::stats::DispatchCounters;

pub const WALL_BASE_MS: i64 = 1_700_000_000_000;
pub const MS: u64 = 1_000_000;
pub const MINUTE_NS: u64 = 60_000 * MS;

/// Monotonic ns shared by the test, the dispatcher, the sink and the mapper; wall ms follow it
/// from `WALL_BASE_MS` (the core's [`ManualClock`]).
#[derive(Clone, Debug)]
pub struct VClock(ManualClock);

impl Default for VClock {
    fn default() -> Self {
        Self(ManualClock::new(WALL_BASE_MS))
    }
}

impl VClock {
    pub fn advance(&self, ns: u64) {
        self.0.advance_ns(ns);
    }

    pub fn now_ns(&self) -> u64 {
        self.0.mono_ns()
    }
}

impl Clock for VClock {
    fn mono_ns(&self) -> u64 {
        self.0.mono_ns()
    }

    fn wall_ms(&self) -> i64 {
        self.0.wall_ms()
    }
}

/// Timers in the order they were scheduled, each with its delay (ms); the test fires them.
#[derive(Clone, Debug, Default)]
pub struct ManualScheduler(Rc<RefCell<VecDeque<(Timer, u32)>>>, Rc<Cell<u32>>);

impl Scheduler for ManualScheduler {
    fn schedule_in(&self, timer: Timer, delay_ms: u32) -> bool {
        if self.1.get() > 0 {
            self.1.set(self.1.get() - 1);
            return false;
        }
        self.0.borrow_mut().push_back((timer, delay_ms));
        true
    }
}

impl ManualScheduler {
    /// The next `n` timers are refused, as an engine that cannot schedule them would.
    pub fn refuse_next(&self, n: u32) {
        self.1.set(n);
    }

    /// The timers waiting to fire, delayed ones included.
    pub fn pending(&self) -> Vec<Timer> {
        self.0.borrow().iter().map(|&(t, _)| t).collect()
    }

    /// The timers waiting with their delays (ms).
    pub fn pending_delays(&self) -> Vec<(Timer, u32)> {
        self.0.borrow().iter().copied().collect()
    }

    /// The next timer of the next turn: the oldest one without a delay, else the oldest delayed
    /// one. Returns it with its delay.
    pub fn pop_next(&self) -> Option<(Timer, u32)> {
        let mut q = self.0.borrow_mut();
        let i = q.iter().position(|&(_, delay)| delay == 0).unwrap_or(0);
        q.remove(i)
    }

    /// The oldest undelayed timer (the next turn's); delayed ones (`ViewsDue`) wait for
    /// [`Self::pop_next`] or [`run_until_idle`], which move the clock.
    pub fn pop(&self) -> Option<Timer> {
        let mut q = self.0.borrow_mut();
        let i = q.iter().position(|&(_, delay)| delay == 0)?;
        q.remove(i).map(|(t, _)| t)
    }
}

pub type TestDispatcher = Dispatcher<VClock, ManualScheduler>;

/// Fires the undelayed timers pending now (each its own turn), not the ones they schedule, nor
/// delayed ones (`ViewsDue`: their time has not come). Returns how many.
pub fn run_pending(d: &mut TestDispatcher) -> usize {
    let due: Vec<Timer> = {
        let mut q = d.scheduler().0.borrow_mut();
        let (now, later): (VecDeque<_>, VecDeque<_>) = q.drain(..).partition(|&(_, delay)| delay == 0);
        *q = later;
        now.into_iter().map(|(t, _)| t).collect()
    };
    for &t in &due {
        d.on_timer(t);
    }
    due.len()
}

/// Fires timers until none is left, undelayed ones first; before a delayed one fires, the virtual
/// clock moves on by its delay (time passes while the app is idle). Returns the number of slices
/// that ran.
pub fn run_until_idle(d: &mut TestDispatcher) -> usize {
    let mut slices = 0;
    for _ in 0..1_000_000 {
        match d.scheduler().pop_next() {
            Some((t, delay_ms)) => {
                slices += usize::from(t == Timer::Slice);
                d.clock().advance(u64::from(delay_ms) * MS);
                d.on_timer(t);
            }
            None => return slices,
        }
    }
    panic!("timers never stopped");
}

/// Fires the undelayed timers until none is left (the queue and the turn end), leaving delayed
/// ones waiting, without moving the clock. Returns the number of slices that ran.
pub fn run_turns(d: &mut TestDispatcher) -> usize {
    let mut slices = 0;
    for _ in 0..1_000_000 {
        let next = {
            let mut q = d.scheduler().0.borrow_mut();
            q.iter().position(|&(_, delay)| delay == 0).and_then(|i| q.remove(i))
        };
        match next {
            Some((t, _)) => {
                slices += usize::from(t == Timer::Slice);
                d.on_timer(t);
            }
            None => return slices,
        }
    }
    panic!("timers never stopped");
}

// A recording in a test: boxing the document would only obscure the matches on it.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    Doc(Document),
    Consent(TrackingConsent),
}

/// Records documents and consent changes; each write advances the clock by the next cost of its
/// cycle (the fake processing cost), and writes can be made to fail.
#[derive(Debug)]
pub struct TestSink {
    clock: VClock,
    costs: Mutex<(Vec<u64>, usize)>,
    fail_next: AtomicU64,
    pub records: Mutex<Vec<Record>>,
    /// Each `turn_busy` call: the flag and how many records had been written by then.
    pub busy_marks: Mutex<Vec<(bool, usize)>>,
}

impl TestSink {
    pub fn new(clock: VClock, cost_ns: u64) -> Arc<Self> {
        Self::with_costs(clock, vec![cost_ns])
    }

    pub fn with_costs(clock: VClock, costs: Vec<u64>) -> Arc<Self> {
        Arc::new(Self {
            clock,
            costs: Mutex::new((costs, 0)),
            fail_next: AtomicU64::new(0),
            records: Mutex::default(),
            busy_marks: Mutex::default(),
        })
    }

    /// Changes the per-document cost from now on.
    pub fn set_costs(&self, costs: Vec<u64>) {
        *self.costs.lock().expect("costs") = (costs, 0);
    }

    /// The next `n` writes fail (after costing their time).
    pub fn fail_next(&self, n: u64) {
        self.fail_next.store(n, Ordering::SeqCst);
    }

    pub fn records(&self) -> Vec<Record> {
        self.records.lock().expect("records").clone()
    }

    pub fn docs(&self) -> Vec<Document> {
        self.records().into_iter().filter_map(|r| if let Record::Doc(d) = r { Some(d) } else { None }).collect()
    }

    pub fn non_view_docs(&self) -> Vec<Document> {
        self.docs().into_iter().filter(|d| d.kind() != DocumentKind::View).collect()
    }

    pub fn view_docs(&self) -> Vec<Document> {
        self.docs().into_iter().filter(|d| d.kind() == DocumentKind::View).collect()
    }

    /// Kinds in order, as `v`/`a`/`e`/`r`/`l` (long task)/`L` (launch)/`m` (mapped) and `C` for a consent change.
    pub fn shape(&self) -> String {
        self.records()
            .iter()
            .map(|r| match r {
                Record::Consent(_) => 'C',
                Record::Doc(Document::View(_)) => 'v',
                Record::Doc(Document::Action(_)) => 'a',
                Record::Doc(Document::Error(_)) => 'e',
                Record::Doc(Document::Resource(_)) => 'r',
                Record::Doc(Document::LongTask(_)) => 'l',
                Record::Doc(Document::AppLaunch(_)) => 'L',
                Record::Doc(Document::Mapped { .. }) => 'm',
            })
            .collect()
    }

    /// Target names of the action documents, in order.
    pub fn action_names(&self) -> Vec<String> {
        self.docs()
            .iter()
            .filter_map(|d| if let Document::Action(a) = d { Some(a.target_name.to_string()) } else { None })
            .collect()
    }

    /// Target names and dates (the call's wall ms) of the action documents, in order.
    pub fn action_dates(&self) -> Vec<(String, i64)> {
        self.docs()
            .into_iter()
            .filter_map(|d| match d {
                Document::Action(a) => Some((a.target_name.to_string(), a.common.date)),
                _ => None,
            })
            .collect()
    }

    pub fn clear(&self) {
        self.records.lock().expect("records").clear();
    }

    fn charge(&self) {
        let mut costs = self.costs.lock().expect("costs");
        let (list, i) = &mut *costs;
        if !list.is_empty() {
            self.clock.advance(list[*i % list.len()]);
            *i += 1;
        }
    }
}

impl DocumentSink for TestSink {
    fn write(&self, doc: Document) -> Result<(), SinkError> {
        self.charge();
        if self.fail_next.load(Ordering::SeqCst) > 0 {
            self.fail_next.fetch_sub(1, Ordering::SeqCst);
            return Err(SinkError::Failed("disk full".into()));
        }
        self.records.lock().expect("records").push(Record::Doc(doc));
        Ok(())
    }

    fn consent_changed(&self, consent: TrackingConsent) -> Result<(), SinkError> {
        self.records.lock().expect("records").push(Record::Consent(consent));
        Ok(())
    }

    fn turn_busy(&self, busy: bool) {
        let written = self.records.lock().expect("records").len();
        self.busy_marks.lock().expect("busy marks").push((busy, written));
    }
}

/// A mapper made of a closure.
pub struct FnMapper<F>(pub F);

impl<F: FnMut(&Document) -> Result<MapOutcome, MapperError>> EventMapper for FnMapper<F> {
    fn map(&mut self, doc: &Document) -> Result<MapOutcome, MapperError> {
        (self.0)(doc)
    }
}

/// A config for the dispatch and scope tests, with view updates not throttled
/// (`viewUpdateIntervalMs: 0`): those tests pin down the queue, the drains and the documents one
/// event makes, one view document per touching event on the inline path; the throttling policy
/// itself is tested on the default interval ([`throttled`], tests/dispatch_views.rs,
/// tests/dispatch_props.rs).
pub fn config(budget_ms: u32, capacity: usize) -> Config {
    Config { view_update_interval_ms: 0, ..throttled(budget_ms, capacity) }
}

/// [`config`] with the default `viewUpdateIntervalMs`.
pub fn throttled(budget_ms: u32, capacity: usize) -> Config {
    Config {
        storage_dir: "/tmp/rum-test".into(),
        application_id: "app-1".into(),
        service: "svc".into(),
        version: "1.0.0".into(),
        turn_budget_ms: budget_ms,
        queue_capacity: capacity,
        ..Config::default()
    }
}

pub struct Harness {
    pub d: TestDispatcher,
    pub sink: Arc<TestSink>,
    pub clock: VClock,
    pub counters: Arc<DispatchCounters>,
    pub shared: Arc<Sequencer>,
}

/// A dispatcher with a 4 ms budget by default, its sink charging `cost_ns` per document.
pub fn harness(budget_ms: u32, capacity: usize, cost_ns: u64) -> Harness {
    harness_costs(budget_ms, capacity, vec![cost_ns])
}

pub fn harness_costs(budget_ms: u32, capacity: usize, costs: Vec<u64>) -> Harness {
    harness_with(&config(budget_ms, capacity), costs, 42)
}

/// A dispatcher for `config`, ids (and sampling draws) from `seed`.
pub fn harness_with(config: &Config, costs: Vec<u64>, seed: u64) -> Harness {
    let clock = VClock::default();
    let sink = TestSink::with_costs(clock.clone(), costs);
    let counters = Arc::new(DispatchCounters::default());
    let shared = Sequencer::with_id_seed(config, sink.clone(), counters.clone(), seed);
    let d = Dispatcher::new(Arc::clone(&shared), clock.clone(), ManualScheduler::default());
    Harness { d, sink, clock, counters, shared }
}

pub fn action(name: &str) -> EventKind {
    EventKind::Action { action_type: ActionType::Custom, name: name.into() }
}

pub fn start_view(key: &str) -> EventKind {
    EventKind::StartView { key: key.into(), name: key.into() }
}

pub fn stop_view(key: &str) -> EventKind {
    EventKind::StopView { key: key.into() }
}

pub fn error(message: &str) -> EventKind {
    EventKind::Error {
        message: message.into(),
        source: ErrorSource::Custom,
        stack: None,
        is_crash: false,
        details: None,
    }
}

pub fn user(id: &str) -> EventKind {
    EventKind::SetUser(Some(UserInfo { id: Some(id.into()), ..UserInfo::default() }))
}

/// `"{prefix}{i}"` for each i of `seqs`: the names [`call_actions`] gives its actions.
pub fn names(prefix: &str, seqs: Range<usize>) -> Vec<String> {
    seqs.map(|i| format!("{prefix}{i}")).collect()
}

/// Calls the actions `"{prefix}{i}"` for each i of `seqs`, in order, without attributes.
pub fn call_actions(d: &mut TestDispatcher, prefix: &str, seqs: Range<usize>) {
    for name in names(prefix, seqs) {
        d.call(action(&name), no_attrs());
    }
}

pub fn no_attrs() -> Attrs {
    Attrs::default()
}

/// A call's attributes from a JSON object, captured as the binding captures them.
pub fn attrs(v: serde_json::Value) -> Attrs {
    match v {
        serde_json::Value::Object(m) => Attrs::from_map(&m),
        other => panic!("not an object: {other}"),
    }
}

/// A captured event for scope tests: seq, wall ms offset from the base, mono ns.
pub fn event(seq: u64, mono_ns: u64, kind: EventKind) -> Event {
    Event { seq, wall_ms: WALL_BASE_MS + (mono_ns / MS) as i64, mono_ns, kind, attrs: Attrs::default() }
}

/// The user id a document carries.
pub fn usr_id(d: &Document) -> Option<String> {
    d.common()?.usr.as_ref().and_then(|u| u.id.clone())
}

pub fn session_of(d: &Document) -> String {
    match d {
        Document::Mapped { value, .. } => value["session"]["id"].as_str().unwrap_or_default().to_owned(),
        d => d.common().map(|c| c.session_id.to_string()).unwrap_or_default(),
    }
}
