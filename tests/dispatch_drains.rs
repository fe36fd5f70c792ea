//! Synchronous drains: every drain point processes everything called before it, on the caller's
//! turn; queued events keep the user, consent and session of their call.

mod dispatch_support;

use dispatch_support::*;
use rum_native::core::config::TrackingConsent;
use rum_native::core::document::Document;
use rum_native::core::event::{EventKind, HttpMethod};
use rum_native::core::scope::LAUNCH_VIEW_NAME;

/// A view, a spent turn, then `n` queued actions `q0…`.
fn with_queued_actions(n: usize) -> Harness {
    let mut h = harness(4, 1_000, 5 * MS);
    h.d.call(start_view("home"), no_attrs()); // spends the turn
    h.sink.set_costs(vec![0]);
    call_actions(&mut h.d, "q", 0..n);
    assert_eq!(h.d.queue_len(), n);
    h.sink.clear();
    h
}

type DrainPoint = (&'static str, fn(&mut TestDispatcher), &'static str);

#[test]
fn every_drain_point_processes_all_earlier_calls_first() {
    let points: [DrainPoint; 10] = [
        ("addError", |d| d.call(error("boom"), no_attrs()), "aaaaavev"),
        ("markCrash", |d| d.mark_crash("crash".into(), Some("at x".into()), no_attrs()), "aaaaavev"),
        ("keepAlive", |d| d.call(EventKind::KeepAlive, no_attrs()), "aaaaavv"),
        ("stopSession", |d| d.call(EventKind::StopSession, no_attrs()), "aaaaavv"),
        ("setUser", |d| d.call(user("u1"), no_attrs()), "aaaaav"),
        ("setTrackingConsent", |d| d.call(EventKind::SetConsent(TrackingConsent::Pending), no_attrs()), "aaaaavC"),
        ("flush", |d| d.flush(), "aaaaav"),
        ("stop", |d| d.stop(), "aaaaav"),
        ("sessionId", |d| assert!(d.session_id().is_some()), "aaaaav"),
        ("drain", |d| d.drain(), "aaaaav"),
    ];
    for (name, point, shape) in points {
        let mut h = with_queued_actions(5);
        point(&mut h.d);
        assert_eq!(h.d.queue_len(), 0, "{name} left events queued");
        assert_eq!(h.sink.shape(), shape, "{name}");
        assert_eq!(h.sink.action_names(), ["q0", "q1", "q2", "q3", "q4"], "{name}");
        assert_eq!(h.counters.drains.get(), 1, "{name}");
        assert_eq!(h.counters.calls_queued.get(), 5, "{name}");
        // The slice scheduled for them finds nothing left.
        run_until_idle(&mut h.d);
        assert_eq!(h.counters.slices_run.get(), 0, "{name}");
    }
}

/// An action that will find no active view opens a launch view: a drain point. One that will
/// find a view (queued or already started) waits in the queue like any other.
#[test]
fn an_action_that_opens_a_launch_view_drains_the_queue() {
    // The queue ends with the view stopped: the next action drains it, then runs inline.
    let mut h = with_queued_actions(3);
    h.d.call(stop_view("home"), no_attrs());
    assert_eq!(h.d.queue_len(), 4);
    h.d.call(action("launch"), no_attrs());
    assert_eq!(h.d.queue_len(), 0, "the queue was processed first");
    assert_eq!(h.counters.drains.get(), 1);
    assert_eq!(h.sink.action_names(), ["q0", "q1", "q2", "launch"], "in call order");
    let views = h.sink.view_docs();
    let Some(Document::View(launch)) = views.last() else { panic!("no view document after the action") };
    assert_eq!(&*launch.view.name, LAUNCH_VIEW_NAME);

    // A view started in the queue: no drain.
    let mut h = with_queued_actions(3);
    h.d.call(stop_view("home"), no_attrs());
    h.d.call(start_view("next"), no_attrs());
    h.d.call(action("on-next"), no_attrs());
    assert_eq!((h.d.queue_len(), h.counters.drains.get()), (6, 0));

    // A view active before the queue and not stopped in it: no drain, for every action.
    let mut h = with_queued_actions(3);
    call_actions(&mut h.d, "more", 0..3);
    assert_eq!((h.d.queue_len(), h.counters.drains.get()), (6, 0));

    // Stopping another view than the active one leaves it active: no drain.
    let mut h = with_queued_actions(3);
    h.d.call(stop_view("elsewhere"), no_attrs());
    h.d.call(action("still-home"), no_attrs());
    assert_eq!((h.d.queue_len(), h.counters.drains.get()), (5, 0));

    // A resource start lands on a view too, opening a launch view when there is none.
    let mut h = with_queued_actions(3);
    h.d.call(stop_view("home"), no_attrs());
    let start = EventKind::StartResource { key: "r".into(), method: HttpMethod::Get, url: "https://x/r".into() };
    h.d.call(start, no_attrs());
    assert_eq!((h.d.queue_len(), h.counters.drains.get()), (0, 1));
}

/// With no view and an empty queue, the first queued action opens the launch view itself when
/// its slice runs: neither it nor the actions queued after it (which find that view) drain.
#[test]
fn the_first_queued_action_opens_the_launch_view_without_a_drain() {
    let mut h = harness(4, 1_000, 5 * MS);
    h.d.call(start_view("home"), no_attrs()); // spends the turn
    h.sink.set_costs(vec![0]);
    h.d.call(stop_view("home"), no_attrs()); // queued
    h.d.drain(); // no view now, the queue empty, the turn still spent
    assert_eq!(h.counters.drains.get(), 1);
    call_actions(&mut h.d, "a", 0..3);
    assert_eq!((h.d.queue_len(), h.counters.drains.get()), (3, 1), "queued, no drain");
    run_until_idle(&mut h.d);
    assert_eq!(h.sink.action_names(), ["a0", "a1", "a2"]);
    let launch_ids: std::collections::HashSet<_> = h
        .sink
        .view_docs()
        .into_iter()
        .filter_map(|d| if let Document::View(v) = d { Some(v) } else { None })
        .filter(|v| &*v.view.name == LAUNCH_VIEW_NAME)
        .map(|v| v.view.id)
        .collect();
    assert_eq!(launch_ids.len(), 1, "one launch view, opened by the first action");
    let Some(Document::View(last)) = h.sink.view_docs().pop() else { panic!("no view document") };
    assert_eq!(&*last.view.name, LAUNCH_VIEW_NAME, "the actions landed on the launch view");
    assert_eq!(last.action_count, 3);
}

#[test]
fn a_crash_sees_every_earlier_call_even_past_the_capacity() {
    let mut h = harness(4, 50, 5 * MS);
    h.d.call(start_view("home"), no_attrs());
    h.sink.set_costs(vec![0]);
    call_actions(&mut h.d, "q", 0..200);
    h.d.mark_crash("fatal".into(), None, no_attrs());
    let docs = h.sink.non_view_docs();
    assert_eq!(docs.len(), 201);
    let Some(Document::Error(crash)) = docs.last() else { panic!("crash is not last: {}", h.sink.shape()) };
    assert!(crash.is_crash);
}

#[test]
fn queued_events_keep_the_user_of_their_call_across_set_user() {
    let mut h = harness(4, 1_000, 5 * MS);
    h.d.call(user("u1"), no_attrs());
    h.d.call(start_view("home"), no_attrs());
    h.sink.set_costs(vec![0]);
    h.d.call(action("a1"), no_attrs());
    h.d.call(action("a2"), no_attrs());
    assert_eq!(h.d.queue_len(), 2);
    h.d.call(user("u2"), no_attrs());
    assert_eq!(h.d.queue_len(), 0);
    h.d.call(action("a3"), no_attrs()); // the turn is still spent: queued with u2 in force
    h.d.call(EventKind::SetUser(None), no_attrs());
    h.d.call(action("a4"), no_attrs());
    run_until_idle(&mut h.d);
    let users: Vec<Option<String>> = h.sink.non_view_docs().iter().map(usr_id).collect();
    assert_eq!(users, [Some("u1".into()), Some("u1".into()), Some("u2".into()), None]);
}

#[test]
fn queued_events_are_written_under_the_consent_of_their_call() {
    let mut h = with_queued_actions(3);
    h.d.call(EventKind::SetConsent(TrackingConsent::NotGranted), no_attrs());
    h.d.call(action("after"), no_attrs());
    h.d.call(EventKind::SetConsent(TrackingConsent::Granted), no_attrs());
    run_until_idle(&mut h.d);
    // The sink learns of each change after every document called before it, view ones included.
    assert_eq!(h.sink.shape(), "aaavCavC");
    assert_eq!(h.sink.action_names(), ["q0", "q1", "q2", "after"]);
}

#[test]
fn session_expiry_is_judged_on_call_time_for_queued_events() {
    let mut h = harness(4, 1_000, 5 * MS);
    h.d.call(start_view("home"), no_attrs());
    h.sink.set_costs(vec![0]);
    // Called 20 minutes apart: two sessions, though both are processed at the same moment.
    h.d.call(action("before-idle"), no_attrs());
    h.clock.advance(20 * MINUTE_NS);
    h.d.call(action("after-idle"), no_attrs());
    // Called 1 minute apart, processed 20 minutes later: still one session.
    h.d.call(action("c1"), no_attrs());
    h.clock.advance(MINUTE_NS);
    h.d.call(action("c2"), no_attrs());
    h.clock.advance(20 * MINUTE_NS);
    assert_eq!(h.d.queue_len(), 4);
    run_until_idle(&mut h.d);
    let sessions: Vec<String> = h.sink.non_view_docs().iter().map(session_of).collect();
    assert_eq!(sessions.len(), 4);
    assert_ne!(sessions[0], sessions[1]);
    assert_eq!(sessions[1], sessions[2]);
    assert_eq!(sessions[2], sessions[3]);
    let first_view = &h.sink.view_docs()[0];
    assert_eq!(session_of(first_view), sessions[0]);
}
