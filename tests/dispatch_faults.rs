//! Failures and the event mapper: sink errors in deferred slices, throwing, dropping, replacing and
//! panicking mappers, the mapper's time against the budget, and calls made from inside the mapper.

mod dispatch_support;

use std::cell::RefCell;
use std::rc::Rc;

use dispatch_support::*;
use rum_native::core::config::TrackingConsent;
use rum_native::core::document::{Document, DocumentKind};
use rum_native::core::event::EventKind;
use rum_native::core::seam::Timer;
use rum_native::core::seam::{MapOutcome, MapperError};
use serde_json::json;

#[test]
fn a_sink_failure_inside_a_deferred_slice_is_counted_and_later_slices_still_run() {
    let mut h = harness(4, 1_000, 5 * MS);
    h.d.call(start_view("home"), no_attrs());
    h.sink.set_costs(vec![MS]);
    call_actions(&mut h.d, "a", 0..20);
    h.sink.fail_next(3); // the first slice's first three writes
    let slices = run_until_idle(&mut h.d);
    assert!(slices >= 4, "{slices}");
    assert_eq!(h.d.queue_len(), 0);
    assert_eq!(h.sink.action_names(), names("a", 3..20));
    assert_eq!(h.counters.sink_errors.get(), 3);
    assert_eq!(h.counters.slice_errors.get(), 3);
}

#[test]
fn a_sink_failure_on_the_callers_turn_is_counted_not_returned() {
    let mut h = harness(4, 1_000, 0);
    h.d.call(start_view("home"), no_attrs());
    h.sink.fail_next(1);
    h.d.call(action("lost"), no_attrs());
    h.d.call(action("kept"), no_attrs());
    assert_eq!(h.sink.action_names(), ["kept"]);
    assert_eq!(h.counters.sink_errors.get(), 1);
    assert_eq!(h.counters.slice_errors.get(), 0, "not a deferred slice");
}

#[test]
fn a_throwing_mapper_keeps_the_document_unchanged_and_counts_the_error() {
    let mut h = harness(4, 1_000, 5 * MS);
    h.d.set_mapper(Some(Box::new(FnMapper(|doc: &Document| match doc {
        Document::Action(a) if a.target_name.starts_with("bad") => Err(MapperError("TypeError: x is undefined".into())),
        _ => Ok(MapOutcome::Keep),
    }))));
    h.d.call(start_view("home"), no_attrs());
    h.sink.set_costs(vec![0]);
    h.d.call(action("bad-queued"), no_attrs());
    h.d.call(action("good"), no_attrs());
    run_until_idle(&mut h.d);
    h.d.call(action("bad-inline"), no_attrs());
    assert_eq!(h.sink.action_names(), ["bad-queued", "good", "bad-inline"]);
    assert_eq!(h.counters.mapper_errors.get(), 2);
    assert_eq!(h.counters.slice_errors.get(), 1, "only the deferred one");
}

#[test]
fn a_panicking_mapper_is_a_failure_not_a_crash() {
    let mut h = harness(4, 1_000, 5 * MS);
    h.d.set_mapper(Some(Box::new(FnMapper(|_: &Document| -> Result<MapOutcome, MapperError> {
        panic!("mapper bug")
    }))));
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("queued"), no_attrs());
    run_until_idle(&mut h.d);
    assert_eq!(h.sink.action_names(), ["queued"]);
    assert_eq!(h.counters.mapper_errors.get(), 1);
}

#[test]
fn a_mapper_may_drop_or_replace_non_view_documents_only() {
    let mut h = harness(4, 1_000, 0);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let seen_in = seen.clone();
    h.d.set_mapper(Some(Box::new(FnMapper(move |doc: &Document| {
        seen_in.borrow_mut().push(doc.kind());
        match doc {
            Document::Action(a) if a.target_name == "drop-me" => Ok(MapOutcome::Drop),
            Document::Action(a) => Ok(MapOutcome::Replace(json!({ "type": "action", "renamed": a.target_name }))),
            _ => Ok(MapOutcome::Keep),
        }
    }))));
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("drop-me"), no_attrs());
    h.d.call(action("rename-me"), no_attrs());
    h.d.call(error("kept"), no_attrs());
    assert_eq!(h.sink.shape(), "vvmvev");
    let mapped: Vec<_> = h
        .sink
        .docs()
        .into_iter()
        .filter_map(|d| if let Document::Mapped { kind, value } = d { Some((kind, value)) } else { None })
        .collect();
    assert_eq!(mapped, [(DocumentKind::Action, json!({ "type": "action", "renamed": "rename-me" }))]);
    assert_eq!(h.counters.mapper_dropped.get(), 1);
    assert!(seen.borrow().iter().all(|k| *k != DocumentKind::View), "views never reach the mapper");
    assert_eq!(h.counters.documents_produced.get(), 7, "produced = written + dropped by the mapper");
}

/// A mapper may change a document, not make it another kind: a changed, removed or non-string
/// `type` is a mapper failure (counted, the document kept as it was).
#[test]
fn a_mapper_that_changes_the_documents_type_fails_and_the_document_is_kept() {
    let mut h = harness(4, 1_000, 0);
    h.d.set_mapper(Some(Box::new(FnMapper(|doc: &Document| match doc {
        Document::Action(a) if a.target_name == "to-view" => Ok(MapOutcome::Replace(json!({ "type": "view" }))),
        Document::Action(a) if a.target_name == "untyped" => Ok(MapOutcome::Replace(json!({ "renamed": true }))),
        Document::Action(a) if a.target_name == "numbered" => Ok(MapOutcome::Replace(json!({ "type": 1 }))),
        Document::Action(_) => Ok(MapOutcome::Replace(json!({ "type": "action", "renamed": true }))),
        _ => Ok(MapOutcome::Keep),
    }))));
    h.d.call(start_view("home"), no_attrs());
    for name in ["to-view", "untyped", "numbered", "fine"] {
        h.d.call(action(name), no_attrs());
    }
    assert_eq!(h.sink.action_names(), ["to-view", "untyped", "numbered"], "kept as they were");
    let mapped: Vec<_> = h
        .sink
        .docs()
        .into_iter()
        .filter_map(|d| if let Document::Mapped { value, .. } = d { Some(value) } else { None })
        .collect();
    assert_eq!(mapped, [json!({ "type": "action", "renamed": true })]);
    assert_eq!(h.counters.mapper_errors.get(), 3);
}

#[test]
fn the_mappers_time_counts_against_the_turn_budget() {
    let mut h = harness(4, 1_000, 0);
    let clock = h.clock.clone();
    h.d.set_mapper(Some(Box::new(FnMapper(move |_: &Document| {
        clock.advance(3 * MS);
        Ok(MapOutcome::Keep)
    }))));
    h.d.call(start_view("home"), no_attrs()); // view documents are not mapped: free
    h.d.call(action("a1"), no_attrs()); // 3 ms
    h.d.call(action("a2"), no_attrs()); // 6 ms
    h.d.call(action("a3"), no_attrs()); // queued
    assert_eq!((h.counters.calls_inline.get(), h.counters.calls_queued.get()), (3, 1));
}

#[test]
fn calls_from_inside_the_mapper_run_right_after_the_mapped_document_without_a_drain() {
    let mut h = harness(4, 1_000, 5 * MS);
    let inbox = h.d.inbox();
    h.d.set_mapper(Some(Box::new(FnMapper(move |doc: &Document| {
        if let Document::Action(a) = doc {
            if a.target_name == "a2" {
                // What the binding does when the dispatcher is busy.
                inbox.push(user("u9"), no_attrs());
                inbox.push(action("from-mapper"), no_attrs());
                assert!(inbox.session_id().is_some(), "session query without a drain");
            }
        }
        Ok(MapOutcome::Keep)
    }))));
    h.d.call(start_view("home"), no_attrs());
    h.sink.set_costs(vec![0]);
    for name in ["a1", "a2", "a3", "a4"] {
        h.d.call(action(name), no_attrs());
    }
    assert_eq!(h.d.queue_len(), 4);
    run_until_idle(&mut h.d);
    assert_eq!(h.sink.action_names(), ["a1", "a2", "from-mapper", "a3", "a4"]);
    let users: Vec<Option<String>> = h.sink.non_view_docs().iter().map(usr_id).collect();
    // Known limit: the remaining queued events carry the user the mapper set.
    assert_eq!(users, [None, None, Some("u9".into()), Some("u9".into()), Some("u9".into())]);
    assert_eq!(h.counters.calls_reentrant.get(), 2);
    assert_eq!(h.counters.calls_inline.get() + h.counters.calls_queued.get(), 7);
}

#[test]
fn a_mapper_that_keeps_calling_back_does_not_grow_the_stack() {
    let mut h = harness(1_000, 1_000, 0);
    let inbox = h.d.inbox();
    let mut left = 10_000;
    h.d.set_mapper(Some(Box::new(FnMapper(move |_: &Document| {
        if left > 0 {
            left -= 1;
            inbox.push(action("echo"), no_attrs());
        }
        Ok(MapOutcome::Keep)
    }))));
    h.d.call(action("first"), no_attrs());
    assert_eq!(h.sink.action_names().len(), 10_001);
}

#[test]
fn a_consent_change_from_inside_the_mapper_follows_the_view_documents_owed_so_far() {
    let mut h = harness(4, 1_000, 5 * MS);
    let inbox = h.d.inbox();
    h.d.set_mapper(Some(Box::new(FnMapper(move |doc: &Document| {
        if matches!(doc, Document::Action(a) if a.target_name == "q0") {
            inbox.push(EventKind::SetConsent(TrackingConsent::NotGranted), no_attrs());
        }
        Ok(MapOutcome::Keep)
    }))));
    h.d.call(start_view("home"), no_attrs());
    h.sink.set_costs(vec![0]);
    h.d.call(action("q0"), no_attrs());
    h.d.call(action("q1"), no_attrs());
    h.sink.clear();
    run_until_idle(&mut h.d);
    // q0's view update was called under the old consent: it is written before the change.
    assert_eq!(h.sink.shape(), "avCav");
}

#[test]
fn a_refused_slice_timer_is_asked_for_again_by_the_next_call() {
    let mut h = harness(4, 100, 3_000_000);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("a1"), no_attrs()); // the budget is spent
    h.d.scheduler().refuse_next(1);
    h.d.call(action("a2"), no_attrs()); // queued; the engine refuses its slice timer
    assert!(!h.d.scheduler().pending().contains(&Timer::Slice));
    h.d.call(action("a3"), no_attrs()); // queued behind it: the slice is asked for again
    assert!(h.d.scheduler().pending().contains(&Timer::Slice), "the queue must not wait for a drain");
    run_until_idle(&mut h.d);
    assert_eq!(h.d.queue_len(), 0);
    assert_eq!(h.sink.action_names(), vec!["a1", "a2", "a3"]);
}
