//! Sessions: 15 minutes without events or 4 hours in total, judged by the events' own call-time
//! stamps; the view on screen continues (new id) in the next session; stopSession; sessionId.

mod dispatch_support;

use dispatch_support::*;
use rum_native::core::document::Document;
use rum_native::core::event::EventKind;
use serde_json::json;

fn views(h: &Harness) -> Vec<(String, String, String, bool)> {
    h.sink
        .view_docs()
        .iter()
        .filter_map(|d| match d {
            Document::View(v) => {
                Some((v.view.id.to_string(), v.view.name.to_string(), v.common.session_id.to_string(), v.is_active))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn fifteen_minutes_without_events_start_a_new_session_that_reopens_the_view() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), attrs(json!({ "screen": "main" })));
    h.d.call(action("a1"), no_attrs());
    h.clock.advance(14 * MINUTE_NS);
    h.d.call(action("a2"), no_attrs()); // 14 min: same session
    h.clock.advance(15 * MINUTE_NS + MS);
    h.d.call(action("a3"), no_attrs()); // 15 min and 1 ms after a2: new session
    let sessions: Vec<String> = h.sink.non_view_docs().iter().map(session_of).collect();
    assert_eq!(sessions[0], sessions[1]);
    assert_ne!(sessions[1], sessions[2]);

    let v = views(&h);
    let (old, new) = (&v[v.len() - 2], &v[v.len() - 1]);
    assert_eq!((&old.1, &old.2, old.3), (&"home".to_owned(), &sessions[0], false), "final document in the old session");
    assert_eq!((&new.1, &new.2, new.3), (&"home".to_owned(), &sessions[2], true));
    assert_ne!(old.0, new.0, "the reopened view has a new id");
    let Some(Document::View(reopened)) = h.sink.docs().pop() else { panic!() };
    assert_eq!(serde_json::Value::Object(reopened.common.attrs.to_map()), json!({ "screen": "main" }));
    assert_eq!(reopened.action_count, 1);
    let Some(Document::View(ended)) = h.sink.view_docs().into_iter().rev().nth(1) else { panic!() };
    assert_eq!(ended.time_spent_ns, 14 * MINUTE_NS, "an expired view ends with its last event");
    assert_eq!(h.counters.sessions_started.get(), 2);
}

#[test]
fn a_session_ends_after_four_hours_even_when_always_active() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    for _ in 0..(4 * 60 / 10) {
        h.clock.advance(10 * MINUTE_NS);
        h.d.call(action("tick"), no_attrs());
    }
    assert_eq!(h.counters.sessions_started.get(), 1, "exactly 4 h: still the first");
    h.clock.advance(MS);
    h.d.call(action("tick"), no_attrs());
    assert_eq!(h.counters.sessions_started.get(), 2);
}

#[test]
fn stop_session_ends_the_view_and_the_next_call_starts_a_new_session() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    let first = h.d.session_id().expect("a live session");
    h.clock.advance(2 * MS);
    h.d.call(EventKind::StopSession, no_attrs());
    let Some(Document::View(ended)) = h.sink.docs().pop() else { panic!() };
    assert!(!ended.is_active);
    assert_eq!(ended.time_spent_ns, 2 * MS, "a stopped session ends its view at the call");
    assert_eq!(h.d.session_id(), None);
    h.d.call(action("next"), no_attrs());
    let second = h.d.session_id().expect("a new session");
    assert_ne!(first, second);
    let Some(Document::View(reopened)) = h.sink.docs().pop() else { panic!() };
    assert_eq!((&*reopened.view.name, reopened.is_active), ("home", true));
}

#[test]
fn a_started_view_is_not_reopened_beside_the_expired_one() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.clock.advance(20 * MINUTE_NS);
    h.d.call(start_view("cart"), no_attrs());
    let names: Vec<(String, bool)> = views(&h).into_iter().map(|v| (v.1, v.3)).collect();
    assert_eq!(names, [("home".into(), true), ("home".into(), false), ("cart".into(), true)]);
}

#[test]
fn a_view_stopped_after_its_session_expired_is_not_reopened() {
    let mut h = harness(1_000, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.clock.advance(20 * MINUTE_NS);
    h.d.call(stop_view("home"), no_attrs());
    h.d.call(action("later"), no_attrs());
    let names: Vec<String> = views(&h).into_iter().map(|v| v.1).collect();
    assert_eq!(names.last().map(String::as_str), Some("ApplicationLaunch"));
}

#[test]
fn session_id_follows_the_clock_and_keep_alive_extends_the_session() {
    let mut h = harness(1_000, 1_000, 0);
    assert_eq!(h.d.session_id(), None, "no session before the first event");
    h.d.call(EventKind::AddAttribute { key: "k".into(), value: json!(1) }, no_attrs());
    h.d.call(user("u1"), no_attrs());
    assert_eq!(h.d.session_id(), None, "context calls do not start a session");
    h.d.call(start_view("home"), no_attrs());
    let id = h.d.session_id();
    assert!(id.is_some());
    h.clock.advance(14 * MINUTE_NS);
    h.d.call(EventKind::KeepAlive, no_attrs());
    h.clock.advance(14 * MINUTE_NS);
    assert_eq!(h.d.session_id(), id, "kept alive");
    h.clock.advance(2 * MINUTE_NS);
    assert_eq!(h.d.session_id(), None, "expired without any event");
}
