//! Slices' handover texts parsed on the dispatcher's parse thread (core::dispatch::parse_ahead):
//! their calls arrive whole and in order, nothing called after a run overtakes it, a drain waits
//! for its parse, a refused text records nothing, and after stop the text is parsed on the caller's
//! thread again; without an event mapper, and with nothing queued before them, the calls are also
//! processed there. The parse thread is real, so these tests wait for it where a slice would.

mod dispatch_support;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use dispatch_support::*;
use rum_native::core::config::{MAX_RUNS_IN_PARSE, MAX_SPARE_TEXT_BYTES};
use rum_native::core::document::Document;
use rum_native::core::seam::{MapOutcome, Timer};

/// A capture buffer's handover text of `n` custom actions named `{prefix}{i}`, made `age_ms`
/// before the handover.
fn actions_text(prefix: &str, n: usize, age_ms: f64) -> Vec<u8> {
    let now = 10_000.0;
    let calls: Vec<String> =
        (0..n).map(|i| format!(r#"[0,{},"custom","{prefix}{i}",["i"],[{i}]]"#, now - age_ms)).collect();
    format!("[{now},{}]", calls.join(",")).into_bytes()
}

/// Fires slice timers as the JS thread would (time passing between them) until nothing waits.
fn run_slices_until_empty(d: &mut TestDispatcher) {
    for _ in 0..10_000 {
        if d.queue_len() == 0 {
            return;
        }
        match d.scheduler().pop() {
            Some(t) => d.on_timer(t),
            None => panic!("calls wait with no slice scheduled for them"),
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    panic!("the slices never caught up");
}

fn with_view() -> Harness {
    viewing(harness(4, 5_000, 0))
}

/// `h` with a view started and its documents so far cleared.
fn viewing(mut h: Harness) -> Harness {
    h.d.call(start_view("home"), no_attrs());
    run_turns(&mut h.d);
    h.sink.clear();
    h
}

#[test]
fn a_slices_calls_are_parsed_off_the_thread_and_processed_by_later_slices() {
    let mut h = with_view();
    let texts = [actions_text("a", 300, 5.0), actions_text("b", 300, 1.0)];
    for text in texts {
        h.d.hand_over_slice(text, 512 * 1024, 0).expect("a capture buffer's text");
    }
    run_slices_until_empty(&mut h.d);
    let mut expected = names("a", 0..300);
    expected.extend(names("b", 0..300));
    assert_eq!(h.sink.action_names(), expected);
    assert_eq!(h.counters.calls_parsed_ahead.get(), 600, "every call parsed on the parse thread");
    assert_eq!(h.counters.handovers_refused.get(), 0);
    // Stamped with their handover's moment less their age, as a turn's handover is.
    let dates = h.sink.action_dates();
    assert_eq!(dates[0].1, WALL_BASE_MS - 5);
    assert_eq!(dates[300].1, WALL_BASE_MS - 1);
}

#[test]
fn a_parsed_texts_buffer_is_kept_for_the_next_handover() {
    let mut h = with_view();
    assert_eq!(h.d.text_buffer().capacity(), 0, "none before a first text");
    let text = actions_text("a", 2_000, 0.0);
    let (at, capacity) = (text.as_ptr(), text.capacity());
    h.d.hand_over_slice(text, 512 * 1024, 0).expect("a capture buffer's text");
    h.d.flush(); // takes the run in: its text is parsed
    let kept = h.d.text_buffer();
    assert_eq!((kept.as_ptr(), kept.len(), kept.capacity()), (at, 0, capacity), "the same buffer, emptied");
    assert_eq!(h.d.text_buffer().capacity(), 0, "one handover at a time has it");

    // A turn's text, parsed on this thread, is kept as well; of two, the larger.
    assert!(h.d.hand_over_turn(kept, 512 * 1024, 0).is_err(), "an empty text is refused (its buffer still kept)");
    h.d.hand_over_turn(actions_text("t", 3, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    assert_eq!(h.d.text_buffer().capacity(), capacity);
    assert_eq!(h.sink.action_names(), names("a", 0..2_000).into_iter().chain(names("t", 0..3)).collect::<Vec<_>>());
}

#[test]
fn a_text_buffer_larger_than_its_bound_is_freed() {
    let mut h = with_view();
    let mut huge = actions_text("h", 3, 0.0);
    huge.reserve_exact(MAX_SPARE_TEXT_BYTES + 1 - huge.len());
    h.d.hand_over_slice(huge, 512 * 1024, 0).expect("a capture buffer's text");
    h.d.flush();
    assert_eq!(h.sink.action_names(), names("h", 0..3));
    assert_eq!(h.d.text_buffer().capacity(), 0, "not kept");
}

#[test]
fn a_call_after_a_run_in_parse_comes_after_every_call_of_it() {
    let mut h = with_view();
    h.d.hand_over_slice(actions_text("a", 2_000, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    h.d.call(action("after"), no_attrs());
    run_slices_until_empty(&mut h.d);
    let mut expected = names("a", 0..2_000);
    expected.push("after".to_owned());
    assert_eq!(h.sink.action_names(), expected);
    assert_eq!(h.counters.calls_parsed_ahead.get(), 2_000);
}

#[test]
fn a_drain_right_after_a_slice_waits_for_its_parse() {
    for drain in [TestDispatcher::flush, TestDispatcher::drain, TestDispatcher::stop] {
        let mut h = with_view();
        h.d.hand_over_slice(actions_text("a", 2_000, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
        drain(&mut h.d);
        assert_eq!(h.sink.action_names(), names("a", 0..2_000), "every call of the slice, before the drain returns");
        assert_eq!(h.d.queue_len(), 0);
    }
}

#[test]
fn a_dispatcher_dropped_with_a_run_in_parse_delivers_it() {
    let h = with_view();
    let (mut d, sink) = (h.d, h.sink);
    d.hand_over_slice(actions_text("a", 2_000, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    drop(d);
    assert_eq!(sink.action_names(), names("a", 0..2_000));
}

#[test]
fn a_text_refused_on_the_parse_thread_records_nothing_and_the_next_slice_goes_on() {
    let mut h = with_view();
    let bad = r#"[10000,[0,10000,"custom","ok",null,null],[9,10000]]"#.as_bytes().to_vec();
    h.d.hand_over_slice(bad, 512 * 1024, 0).expect("refused later, on the parse thread");
    h.d.hand_over_slice(actions_text("a", 3, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    h.d.flush();
    assert_eq!(h.sink.action_names(), names("a", 0..3), "nothing of the refused run, all of the next");
    assert_eq!(h.counters.handovers_refused.get(), 1);
}

#[test]
fn after_stop_a_slice_is_parsed_on_the_callers_thread() {
    let mut h = with_view();
    h.d.stop();
    let bad = r#"[10000,[9,10000]]"#.as_bytes().to_vec();
    assert!(h.d.hand_over_slice(bad, 512 * 1024, 0).is_err(), "refused at the call");
    h.d.hand_over_slice(actions_text("a", 3, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    assert_eq!(h.sink.action_names(), names("a", 0..3), "processed on the caller's turn");
    assert_eq!(h.counters.calls_parsed_ahead.get(), 0);
    assert!(h.d.scheduler().pending().iter().all(|t| *t != Timer::Slice));
}

#[test]
fn the_texts_in_parse_stay_bounded_when_slices_come_faster_than_their_parse() {
    let mut h = with_view();
    for i in 0..12 {
        h.d.hand_over_slice(actions_text(&format!("r{i}-"), 2_000, 0.0), 512 * 1024, 0)
            .expect("a capture buffer's text");
        assert!(h.d.runs_in_parse() <= MAX_RUNS_IN_PARSE, "{} texts in parse", h.d.runs_in_parse());
    }
    h.d.flush();
    let expected: Vec<String> = (0..12).flat_map(|i| names(&format!("r{i}-"), 0..2_000)).collect();
    assert_eq!(h.sink.action_names(), expected);
}

/// Waits (bounded) until the parse thread has processed `n` calls, no timer of the JS thread run.
fn wait_processed_ahead(h: &Harness, n: u64) {
    for _ in 0..5_000 {
        if h.counters.calls_processed_ahead.get() >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("the parse thread processed {} of {n} calls", h.counters.calls_processed_ahead.get());
}

#[test]
fn without_a_mapper_a_slices_calls_are_processed_on_the_parse_thread() {
    let mut h = with_view();
    h.d.hand_over_slice(actions_text("a", 300, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    wait_processed_ahead(&h, 300);
    // Written before the JS thread ran anything more: no timer has fired.
    assert_eq!(h.sink.action_names(), names("a", 0..300));
    assert_eq!(h.sink.view_docs().len(), 1, "one view document for the run, as for a slice");
    assert_eq!(h.d.queue_len(), 1, "the run counts until the JS thread takes it in");
    run_slices_until_empty(&mut h.d);
    assert_eq!(h.counters.slices_run.get(), 0, "no slice processed anything on the JS thread");
    assert_eq!(h.sink.action_names().len(), 300, "nothing twice");
}

#[test]
fn with_a_mapper_a_slices_calls_are_processed_on_the_js_thread() {
    let mut h = with_view();
    let mapped = Rc::new(Cell::new(0));
    let seen = Rc::clone(&mapped);
    h.d.set_mapper(Some(Box::new(FnMapper(move |_doc: &Document| {
        seen.set(seen.get() + 1);
        Ok(MapOutcome::Keep)
    }))));
    h.d.hand_over_slice(actions_text("a", 300, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    run_slices_until_empty(&mut h.d);
    assert_eq!(h.sink.action_names(), names("a", 0..300));
    assert_eq!(mapped.get(), 300, "the mapper saw every action");
    assert_eq!(h.counters.calls_processed_ahead.get(), 0);
    assert_eq!(h.counters.calls_parsed_ahead.get(), 300, "still parsed off the JS thread");
}

#[test]
fn a_run_is_not_processed_ahead_of_calls_queued_before_it() {
    // Each document costs 1 ms: a few calls spend the turn, the rest are queued.
    let mut h = viewing(harness(4, 5_000, 1_000_000));
    call_actions(&mut h.d, "q", 0..20);
    assert!(h.d.queue_len() > 0, "calls queued");
    h.d.hand_over_slice(actions_text("a", 300, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    run_slices_until_empty(&mut h.d);
    let mut expected = names("q", 0..20);
    expected.extend(names("a", 0..300));
    assert_eq!(h.sink.action_names(), expected);
    assert_eq!(h.counters.calls_processed_ahead.get(), 0, "queued behind the JS thread's queue");
}

#[test]
fn a_turns_handover_behind_runs_processed_ahead_follows_them_there() {
    let mut h = with_view();
    h.d.hand_over_slice(actions_text("a", 2_000, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    h.d.hand_over_turn(actions_text("t", 3, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    wait_processed_ahead(&h, 2_003);
    let mut expected = names("a", 0..2_000);
    expected.extend(names("t", 0..3));
    assert_eq!(h.sink.action_names(), expected);
    run_slices_until_empty(&mut h.d);
    assert_eq!(h.d.queue_len(), 0);
}

#[test]
fn a_view_a_run_processed_ahead_left_owed_is_written_by_its_timer() {
    let mut h = viewing(harness_with(&throttled(4, 5_000), vec![0], 42));
    h.d.hand_over_slice(actions_text("a", 10, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    wait_processed_ahead(&h, 10);
    assert_eq!(h.sink.view_docs().len(), 0, "held back: the view was written less than an interval ago");
    run_slices_until_empty(&mut h.d);
    let (timer, delay_ms) = h.d.scheduler().pop_next().expect("the owed view's timer");
    assert_eq!(timer, Timer::ViewsDue);
    h.clock.advance(u64::from(delay_ms) * 1_000_000);
    h.d.on_timer(timer);
    assert_eq!(h.sink.view_docs().len(), 1, "the view's last state, at the end of its interval");
}

#[test]
fn a_sink_failing_under_a_run_processed_ahead_is_counted_and_the_next_run_goes_on() {
    let mut h = with_view();
    h.sink.fail_next(5);
    h.d.hand_over_slice(actions_text("a", 20, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    h.d.hand_over_slice(actions_text("b", 20, 0.0), 512 * 1024, 0).expect("a capture buffer's text");
    h.d.flush();
    let mut expected = names("a", 5..20);
    expected.extend(names("b", 0..20));
    assert_eq!(h.sink.action_names(), expected, "the five refused documents are lost, nothing else");
    assert_eq!(h.counters.calls_processed_ahead.get(), 40);
    assert_eq!(h.counters.sink_errors.get(), 5);
    assert_eq!(h.counters.slice_errors.get(), 5, "failures of a deferred slice, not of the caller's turn");
}
