//! View updates on the default `viewUpdateIntervalMs` (coalesce.rs): an active view is written at
//! most once per turn and once per interval, a held-back view gets its last state written at the
//! end of the interval, and every forced point writes it first. Virtual clock, no sleeping.

mod dispatch_support;

use dispatch_support::*;
use rum_native::core::config::{TrackingConsent, VIEW_UPDATE_INTERVAL_MS};
use rum_native::core::document::{Document, DocumentKind};
use rum_native::core::event::{EventKind, HttpMethod, ResourceKind};
use rum_native::core::seam::Timer;

const INTERVAL_NS: u64 = VIEW_UPDATE_INTERVAL_MS as u64 * MS;

fn h() -> Harness {
    harness_with(&throttled(4, 5_000), vec![0], 42)
}

/// The view documents' action counts, in order.
fn view_counts(h: &Harness) -> Vec<u64> {
    h.sink
        .view_docs()
        .iter()
        .filter_map(|d| if let Document::View(v) = d { Some(v.action_count) } else { None })
        .collect()
}

/// A view shown and written, then `n` inline actions on this turn: the view owes a document.
fn owing(n: usize) -> Harness {
    let mut h = h();
    h.d.call(start_view("home"), no_attrs());
    run_turns(&mut h.d);
    assert_eq!(view_counts(&h), [0], "a new view's first document at its turn end");
    call_actions(&mut h.d, "a", 0..n);
    h
}

#[test]
fn inline_actions_are_written_at_the_turn_end_not_one_view_per_action() {
    let mut h = owing(0);
    h.clock.advance(INTERVAL_NS); // the interval since the first document has passed
    call_actions(&mut h.d, "a", 0..50);
    assert_eq!(h.sink.shape(), "v".to_owned() + &"a".repeat(50), "no view document beside the actions");
    run_turns(&mut h.d);
    assert_eq!(view_counts(&h), [0, 50], "one at the turn end");
}

#[test]
fn a_held_back_view_gets_its_last_state_at_the_end_of_the_interval() {
    let mut h = owing(3); // the first document was just written
    run_turns(&mut h.d);
    assert_eq!(view_counts(&h), [0], "within the interval: held back");
    let delays: Vec<(Timer, u32)> = h.d.scheduler().pending_delays();
    assert_eq!(delays, [(Timer::ViewsDue, VIEW_UPDATE_INTERVAL_MS)], "a timer for the interval's end");
    run_until_idle(&mut h.d); // the app goes quiet: the timer alone writes it
    assert_eq!(view_counts(&h), [0, 3]);
    assert!(h.d.scheduler().pending().is_empty());
}

#[test]
fn at_300_actions_a_second_a_view_gets_one_document_per_interval() {
    let mut h = h();
    h.d.call(start_view("home"), no_attrs());
    let step = 1_000 * MS / 300;
    let seconds = 5;
    let mut due: Option<u64> = None;
    for i in 0..300 * seconds {
        // Each call its own turn: the turn end, then the interval's timer once its time came.
        run_turns(&mut h.d);
        if due.is_none() {
            // Scheduled by the turn end that just ran (the sink costs nothing: now is then).
            due = h.d.scheduler().pending_delays().first().map(|&(_, d)| h.clock.now_ns() + u64::from(d) * MS);
        }
        if due.is_some_and(|at| h.clock.now_ns() >= at) {
            if let Some((t, _)) = h.d.scheduler().pop_next() {
                h.d.on_timer(t);
            }
            due = None;
        }
        h.d.call(action(&format!("a{i}")), no_attrs());
        h.clock.advance(step);
    }
    run_turns(&mut h.d);
    let written = h.sink.view_docs().len() as u64;
    let limit = seconds as u64 * 1_000 / u64::from(VIEW_UPDATE_INTERVAL_MS) + 1;
    assert!(written <= limit, "{written} view documents in {seconds} s, at most {limit}");
    assert!(written >= limit - 1, "one per interval, got {written}");
    h.d.flush();
    assert_eq!(view_counts(&h).last(), Some(&(300 * seconds as u64)), "flush writes the final state");
    assert_eq!(h.sink.non_view_docs().len(), 300 * seconds, "every action written with its call");
}

#[test]
fn a_3700_action_loop_writes_fewer_than_40_view_documents() {
    // 5 µs per document: the loop spends the budget, then slices of the queue follow.
    let mut h = harness_with(&throttled(4, 5_000), vec![5_000], 42);
    h.d.call(start_view("home"), no_attrs());
    run_turns(&mut h.d);
    h.sink.clear();
    call_actions(&mut h.d, "a", 0..3_700);
    let slices = run_until_idle(&mut h.d);
    assert!(slices > 1, "the loop was sliced");
    let views = h.sink.view_docs().len();
    assert!(views < 40, "{views} view documents");
    assert_eq!(view_counts(&h).last(), Some(&3_700), "the final state is written");
    assert_eq!(h.sink.non_view_docs().len(), 3_700);
}

#[test]
fn every_forced_point_writes_the_owed_view_first() {
    // (name, call, the shape after the three actions: the view right after them, before
    // anything the forced point writes itself)
    type Point = (&'static str, fn(&mut TestDispatcher), &'static str);
    let points: [Point; 11] = [
        ("addError", |d| d.call(error("boom"), no_attrs()), "aaave"),
        ("markCrash", |d| d.mark_crash("crash".into(), None, no_attrs()), "aaavev"),
        ("keepAlive", |d| d.call(EventKind::KeepAlive, no_attrs()), "aaavv"),
        ("stopSession", |d| d.call(EventKind::StopSession, no_attrs()), "aaavv"),
        ("setUser", |d| d.call(user("u1"), no_attrs()), "aaav"),
        ("setTrackingConsent", |d| d.call(EventKind::SetConsent(TrackingConsent::Pending), no_attrs()), "aaavC"),
        ("stopView", |d| d.call(stop_view("home"), no_attrs()), "aaav"),
        ("flush", |d| d.flush(), "aaav"),
        ("stop", |d| d.stop(), "aaav"),
        ("sessionId", |d| assert!(d.session_id().is_some()), "aaav"),
        ("drain", |d| d.drain(), "aaav"),
    ];
    for (name, point, shape) in points {
        let mut h = owing(0);
        h.sink.clear();
        call_actions(&mut h.d, "a", 0..3);
        point(&mut h.d);
        assert_eq!(h.sink.shape(), shape, "{name}");
        assert_eq!(view_counts(&h).first(), Some(&3), "{name}: the view's state before the point");
    }
}

#[test]
fn a_drain_point_behind_a_queue_writes_the_queued_views_first() {
    let mut h = harness_with(&throttled(4, 5_000), vec![5 * MS], 42);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("first"), no_attrs()); // its document spends the turn
    h.sink.set_costs(vec![0]);
    call_actions(&mut h.d, "q", 0..4);
    assert_eq!(h.d.queue_len(), 4);
    h.sink.clear();
    h.d.call(user("u2"), no_attrs());
    assert_eq!(h.sink.shape(), "aaaav");
    assert_eq!(view_counts(&h), [5]);
    assert_eq!(usr_id(&h.sink.view_docs()[0]), None, "under the user of its events");
}

#[test]
fn kill_9_costs_at_most_the_view_updates_of_one_interval() {
    // While views are held back, every other document has reached the sink with its call: what
    // a process killed now loses is the view's counters and time spent since its last document.
    let mut h = owing(0);
    h.sink.clear();
    for i in 0..20 {
        h.d.call(action(&format!("a{i}")), no_attrs());
        h.d.call(
            EventKind::StartResource { key: format!("r{i}"), method: HttpMethod::Get, url: "https://x".into() },
            no_attrs(),
        );
        h.d.call(
            EventKind::StopResource {
                key: format!("r{i}"),
                status_code: 200,
                kind: ResourceKind::Xhr,
                size: None,
                details: None,
            },
            no_attrs(),
        );
        run_turns(&mut h.d);
        h.clock.advance(10 * MS);
    }
    let kinds: Vec<DocumentKind> = h.sink.docs().iter().map(Document::kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == DocumentKind::Action).count(), 20);
    assert_eq!(kinds.iter().filter(|k| **k == DocumentKind::Resource).count(), 20);
    assert!(!kinds.contains(&DocumentKind::View), "view updates held back within the interval");
    // The held-back updates are due within one interval of the view's last document.
    let delays = h.d.scheduler().pending_delays();
    assert!(delays.iter().all(|&(t, d)| t == Timer::ViewsDue && u64::from(d) * MS <= INTERVAL_NS), "{delays:?}");
    run_until_idle(&mut h.d);
    assert_eq!(view_counts(&h), [20]);
}

#[test]
fn a_zero_interval_writes_the_view_after_each_inline_action() {
    let mut h = harness(4, 5_000, 0);
    h.d.call(start_view("home"), no_attrs());
    call_actions(&mut h.d, "a", 0..3);
    assert_eq!(h.sink.shape(), "vavavav");
}
