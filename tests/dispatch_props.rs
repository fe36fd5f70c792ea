//! Property tests over random sequences of calls, host time, turn ends, per-document costs,
//! drains, budgets and capacities. Each run is compared with the same captured events processed
//! all inline (a stopped pipeline with the same id seed):
//! - the sink receives every non-view document (and consent change) exactly once, in call order;
//! - the last document of each view equals the inline one, except `_dd.document_version`;
//! - view writes saved = inline view documents − view documents written;
//! - the queue never exceeds its capacity; inline + queued == calls.

mod dispatch_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use dispatch_support::*;
use proptest::prelude::*;
use rum_native::core::config::TrackingConsent;
use rum_native::core::dispatch::Dispatcher;
use rum_native::core::document::{Document, ViewDocument};
use rum_native::core::event::{ActionType, Event, EventKind, HttpMethod, ResourceKind, UserInfo};
use rum_native::core::seam::{MapOutcome, Timer};
use rum_native::core::sequencer::Sequencer;
use rum_native::core::stats::DispatchCounters;
use serde_json::json;

const SEED: u64 = 0x5EED;

#[derive(Clone, Debug)]
enum Op {
    Call(EventKind),
    /// Host time between calls: mostly small, sometimes past the session timeout.
    Advance(u64),
    /// The event loop runs the timers pending now.
    Turn,
    /// `drain()`, `flush()` or `sessionId()`.
    Drain(u8),
}

fn kind() -> impl Strategy<Value = EventKind> {
    let key = |p: &'static str, n: u8| (0..n).prop_map(move |i| format!("{p}{i}"));
    prop_oneof![
        8 => key("a", 4).prop_map(|name| EventKind::Action { action_type: ActionType::Tap, name: name.into() }),
        2 => key("v", 3).prop_map(|k| start_view(&k)),
        1 => key("v", 3).prop_map(|k| stop_view(&k)),
        1 => key("e", 2).prop_map(|m| error(&m)),
        2 => key("r", 4).prop_map(|key| EventKind::StartResource { key, method: HttpMethod::Get, url: "u".into() }),
        2 => key("r", 4).prop_map(|key| {
            EventKind::StopResource { key, status_code: 200, kind: ResourceKind::Xhr, size: None, details: None }
        }),
        1 => (key("k", 2), 0..9i64).prop_map(|(key, v)| EventKind::AddAttribute { key, value: json!(v) }),
        1 => key("k", 2).prop_map(|key| EventKind::RemoveAttribute { key }),
        1 => prop::option::of(key("u", 3)).prop_map(|id| {
            EventKind::SetUser(id.map(|id| UserInfo { id: Some(id), ..UserInfo::default() }))
        }),
        1 => prop_oneof![Just(TrackingConsent::Granted), Just(TrackingConsent::Pending)]
            .prop_map(EventKind::SetConsent),
        1 => Just(EventKind::KeepAlive),
        1 => Just(EventKind::AddTiming { name: "t".into() }),
        1 => Just(EventKind::StopSession),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => kind().prop_map(Op::Call),
        3 => (0..3 * MS).prop_map(Op::Advance),
        1 => (10 * MINUTE_NS..20 * MINUTE_NS).prop_map(Op::Advance),
        4 => Just(Op::Turn),
        1 => (0..3u8).prop_map(Op::Drain),
    ]
}

#[derive(Clone, Debug)]
struct Scenario {
    ops: Vec<Op>,
    costs: Vec<u64>,
    budget_ms: u32,
    capacity: usize,
    mapper_cost: Option<u64>,
    stop_at: Option<usize>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        prop::collection::vec(op(), 1..160),
        prop::collection::vec(0..2_500_000u64, 1..6),
        1..6u32,
        1..25usize,
        prop::option::of(0..1_500_000u64),
        prop::option::weighted(0.2, 0..160usize),
    )
        .prop_map(|(ops, costs, budget_ms, capacity, mapper_cost, stop_at)| Scenario {
            ops,
            costs,
            budget_ms,
            capacity,
            mapper_cost,
            stop_at,
        })
}

/// Non-view documents and consent changes, in order.
fn stream(sink: &TestSink) -> Vec<Record> {
    sink.records().into_iter().filter(|r| !matches!(r, Record::Doc(Document::View(_)))).collect()
}

/// The last document of each view, version cleared, and the versions in sink order.
fn last_views(sink: &TestSink) -> (BTreeMap<String, ViewDocument>, BTreeMap<String, Vec<u64>>) {
    let (mut last, mut versions) = (BTreeMap::new(), BTreeMap::<String, Vec<u64>>::new());
    for d in sink.view_docs() {
        if let Document::View(mut v) = d {
            versions.entry(v.view.id.to_string()).or_default().push(v.document_version);
            v.document_version = 0;
            last.insert(v.view.id.to_string(), v);
        }
    }
    (last, versions)
}

fn run(s: &Scenario) -> Result<(), TestCaseError> {
    let clock = VClock::default();
    let sink = TestSink::with_costs(clock.clone(), s.costs.clone());
    let counters = Arc::new(DispatchCounters::default());
    let shared = Sequencer::with_id_seed(&throttled(s.budget_ms, s.capacity), sink.clone(), counters.clone(), SEED);
    let mut d = Dispatcher::new(shared, clock.clone(), ManualScheduler::default());
    if let Some(cost) = s.mapper_cost {
        let c = clock.clone();
        d.set_mapper(Some(Box::new(FnMapper(move |_: &Document| {
            c.advance(cost);
            Ok(MapOutcome::Keep)
        }))));
    }
    let mut log: Vec<Event> = Vec::new();
    for (i, op) in s.ops.iter().enumerate() {
        if s.stop_at == Some(i) {
            d.stop();
        }
        match op {
            Op::Call(kind) => {
                let ev = d.capture(kind.clone(), attrs(json!({ "i": i })));
                log.push(ev.clone());
                d.dispatch(ev);
            }
            Op::Advance(ns) => clock.advance(*ns),
            Op::Turn => {
                run_pending(&mut d);
            }
            Op::Drain(0) => d.drain(),
            Op::Drain(1) => d.flush(),
            Op::Drain(_) => {
                d.session_id();
            }
        }
        prop_assert!(d.queue_len() <= s.capacity, "queue {} above capacity {}", d.queue_len(), s.capacity);
    }
    run_until_idle(&mut d);
    prop_assert_eq!(d.queue_len(), 0);
    prop_assert!(d.scheduler().pending().iter().all(|t| *t != Timer::Slice));
    prop_assert_eq!(counters.calls_inline.get() + counters.calls_queued.get(), log.len() as u64);
    prop_assert!(counters.queue_high_water.get() <= s.capacity as u64);
    prop_assert_eq!(counters.queue_length.get(), 0);

    // The same captured events, all inline.
    let ref_sink = TestSink::new(VClock::default(), 0);
    let ref_counters = Arc::new(DispatchCounters::default());
    let ref_shared = Sequencer::with_id_seed(&throttled(s.budget_ms, s.capacity), ref_sink.clone(), ref_counters, SEED);
    let mut r = Dispatcher::new(ref_shared, VClock::default(), ManualScheduler::default());
    r.stop();
    for ev in &log {
        r.dispatch(ev.clone());
    }

    prop_assert_eq!(stream(&sink), stream(&ref_sink), "non-view documents: exactly once, in call order");
    let (got, versions) = last_views(&sink);
    let (want, _) = last_views(&ref_sink);
    prop_assert_eq!(got, want, "last document of each view");
    for (id, v) in versions {
        prop_assert!(v.windows(2).all(|w| w[0] < w[1]), "versions of {} not increasing: {:?}", id, v);
    }
    let saved = ref_sink.view_docs().len() - sink.view_docs().len();
    prop_assert_eq!(counters.view_writes_saved.get(), saved as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn sliced_processing_matches_inline_processing(s in scenario()) {
        run(&s)?;
    }
}
