//! The dispatch contract on a virtual clock: inline path, turn budget, queue, capacity bound,
//! slices, coalescing, after-stop, batches, several dispatchers on one pipeline.

mod dispatch_support;

use dispatch_support::*;
use rum_native::core::config::LIGHT_TURN_SHARE;
use rum_native::core::document::Document;
use rum_native::core::seam::{Clock, Timer};

/// What the calls since the last awaited turn end may spend before the next end is awaited, for a
/// budget of `budget_ms`, ns.
fn light_share_ns(budget_ms: u64) -> u64 {
    budget_ms * 1_000_000 / LIGHT_TURN_SHARE
}

#[test]
fn calls_within_the_budget_are_processed_on_the_callers_turn() {
    // 11 documents fit in the 4 ms budget and pass the light-turn share.
    let cost = 4_000_000 / 11;
    assert!(11 * cost > light_share_ns(4));
    let mut h = harness(4, 100, cost);
    h.d.call(start_view("home"), no_attrs());
    call_actions(&mut h.d, "a", 0..5);
    // Written at once, each action followed by its view document.
    assert_eq!(h.sink.shape(), "vavavavavav");
    assert_eq!(h.counters.calls_inline.get(), 6);
    assert_eq!(h.counters.calls_queued.get(), 0);
    assert_eq!(h.d.queue_len(), 0);
    assert_eq!(h.d.scheduler().pending(), vec![Timer::TurnEnd], "one turn-end timer per turn, no slice");
}

#[test]
fn calls_past_the_budget_are_queued_and_sliced_on_a_later_turn() {
    let mut h = harness(4, 100, 1_000_000); // each document costs 1 ms
    h.d.call(start_view("home"), no_attrs()); // 1 ms
    h.d.call(action("a1"), no_attrs()); // 3 ms
    h.d.call(action("a2"), no_attrs()); // 5 ms: started under budget, so inline
    h.d.call(action("a3"), no_attrs());
    h.d.call(action("a4"), no_attrs());
    assert_eq!(h.sink.shape(), "vavav");
    assert_eq!((h.counters.calls_inline.get(), h.counters.calls_queued.get()), (3, 2));
    assert_eq!(h.d.queue_len(), 2);
    assert_eq!(h.d.scheduler().pending(), vec![Timer::TurnEnd, Timer::Slice]);

    run_until_idle(&mut h.d);
    // One slice: both actions, then their view once.
    assert_eq!(h.sink.shape(), "vavavaav");
    assert_eq!(h.counters.slices_run.get(), 1);
    assert_eq!(h.counters.view_writes_saved.get(), 1);
    assert_eq!(h.counters.queue_length.get(), 0);
    assert_eq!(h.counters.queue_high_water.get(), 2);
}

/// A view and `a1` spend a 4 ms turn (3 ms a document), `a2` is queued, and that turn has ended.
fn a2_queued_past_a_turn_end() -> Harness {
    let mut h = harness(4, 100, 3_000_000);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("a1"), no_attrs()); // spent 9 ms
    h.d.call(action("a2"), no_attrs()); // queued
    assert_eq!(h.d.scheduler().pop(), Some(Timer::TurnEnd));
    h.d.on_timer(Timer::TurnEnd);
    h
}

#[test]
fn turn_end_resets_the_budget_but_never_lets_a_call_overtake_the_queue() {
    let mut h = a2_queued_past_a_turn_end();
    h.d.call(action("a3"), no_attrs()); // budget is fresh, but a2 waits: queued behind it
    assert_eq!(h.d.queue_len(), 2);
    assert_eq!(h.d.scheduler().pop(), Some(Timer::Slice));
    h.d.on_timer(Timer::Slice);
    assert_eq!(h.d.queue_len(), 0);
    h.d.call(action("a4"), no_attrs()); // fresh turn and empty queue: inline
    assert_eq!(h.counters.calls_inline.get(), 3);
    assert_eq!(h.sink.action_names(), ["a1", "a2", "a3", "a4"]);
}

#[test]
fn queued_calls_keep_their_order_and_call_time_across_slices() {
    let mut h = harness(4, 1_000, 1_000_000);
    h.d.call(start_view("home"), no_attrs());
    let mut expected = Vec::new();
    for i in 0..60 {
        h.clock.advance(MS); // calls 1 ms apart, whatever processing costs
        expected.push((format!("a{i}"), h.clock.wall_ms()));
        h.d.call(action(&format!("a{i}")), no_attrs());
    }
    let slices = run_until_idle(&mut h.d);
    assert!(slices > 5, "60 actions at 1 ms each need several 4 ms slices, got {slices}");
    assert_eq!(h.sink.action_dates(), expected);
}

#[test]
fn at_capacity_a_slice_runs_before_enqueueing_and_nothing_is_dropped() {
    let mut h = harness(4, 10, 1_000_000);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("warm-up"), no_attrs());
    h.d.call(action("warm-up"), no_attrs()); // budget spent
    for i in 0..100 {
        h.d.call(action(&format!("a{i}")), no_attrs());
        assert!(h.d.queue_len() <= 10, "queue above capacity: {}", h.d.queue_len());
    }
    assert!(h.counters.slices_at_capacity.get() > 0);
    assert!(h.counters.queue_high_water.get() <= 10);
    run_until_idle(&mut h.d);
    let got = h.sink.action_names();
    assert_eq!(got.len(), 102);
    assert_eq!(got[2..], names("a", 0..100)[..]);
}

#[test]
fn a_slice_lasts_the_budget_plus_at_most_one_event_and_its_view_documents() {
    let costs: Vec<u64> = [300_000, 2_500_000, 700_000, 1_900_000, 50_000].to_vec();
    let max_cost = *costs.iter().max().unwrap_or(&0);
    let mut h = harness_costs(4, 1_000, costs);
    h.d.call(start_view("home"), no_attrs());
    call_actions(&mut h.d, "a", 0..300);
    while let Some(t) = h.d.scheduler().pop() {
        let (before_ns, before_queue) = (h.clock.now_ns(), h.d.queue_len());
        h.d.on_timer(t);
        if t == Timer::Slice {
            let took = h.clock.now_ns() - before_ns;
            assert!(h.d.queue_len() < before_queue, "a slice processes at least one event");
            // budget + the event that crossed it + the one coalesced view document.
            assert!(took <= 4 * MS + 2 * max_cost, "slice took {took} ns");
        }
    }
    assert!(h.counters.longest_slice_us.get() <= (4 * MS + 2 * max_cost) / 1_000);
    assert_eq!(h.sink.action_names().len(), 300);
}

#[test]
fn an_event_costlier_than_the_budget_still_makes_progress_one_per_slice() {
    let mut h = harness(4, 100, 10 * MS);
    h.d.call(start_view("home"), no_attrs());
    call_actions(&mut h.d, "a", 0..3);
    assert_eq!(h.d.queue_len(), 3);
    let slices = run_until_idle(&mut h.d);
    assert_eq!(slices, 3);
    assert_eq!(h.sink.action_names(), ["a0", "a1", "a2"]);
}

#[test]
fn slices_write_one_view_document_per_dirty_view_inline_one_per_action() {
    let mut h = harness(4, 1_000, 10_000);
    h.d.call(start_view("home"), no_attrs());
    call_actions(&mut h.d, "inline", 0..10);
    assert_eq!(h.sink.view_docs().len(), 11, "inline: the view document follows each event");

    h.sink.set_costs(vec![5 * MS]);
    h.d.call(action("spends-the-turn"), no_attrs());
    h.sink.set_costs(vec![100_000]); // 100 events at 0.1 ms: three 4 ms slices
    call_actions(&mut h.d, "q", 0..100);
    h.sink.clear();
    assert_eq!(h.d.queue_len(), 100);
    let slices = run_until_idle(&mut h.d);
    assert_eq!(slices, 3);
    assert_eq!(h.sink.view_docs().len(), slices, "one view document per slice");
    assert_eq!(h.counters.view_writes_saved.get() as usize, h.counters.calls_queued.get() as usize - slices);
}

#[test]
fn a_view_stopped_during_a_slice_still_gets_its_final_document() {
    let mut h = harness(4, 1_000, 5 * MS);
    h.d.call(start_view("v1"), no_attrs()); // spends the turn
    h.sink.set_costs(vec![0]);
    h.d.call(action("a1"), no_attrs());
    h.d.call(stop_view("v1"), no_attrs());
    h.d.call(start_view("v2"), no_attrs());
    h.d.call(action("a2"), no_attrs());
    assert_eq!(h.d.queue_len(), 4);
    h.sink.clear();
    run_until_idle(&mut h.d);
    // A view that stops is written at once, even inside a slice; v2 at the slice's end.
    assert_eq!(h.sink.shape(), "avav");
    let views: Vec<(String, bool, u64)> = h
        .sink
        .view_docs()
        .iter()
        .filter_map(|d| {
            if let Document::View(v) = d {
                Some((v.view.name.to_string(), v.is_active, v.action_count))
            } else {
                None
            }
        })
        .collect();
    assert_eq!(views, [("v1".to_owned(), false, 1), ("v2".to_owned(), true, 1)]);
}

#[test]
fn after_stop_every_call_is_processed_on_the_callers_turn() {
    let mut h = harness(4, 100, 10 * MS);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("queued"), no_attrs());
    assert_eq!(h.d.queue_len(), 1);
    h.d.stop();
    assert_eq!(h.d.queue_len(), 0, "stop drains");
    let before = h.d.scheduler().pending().len();
    for i in 0..5 {
        h.d.call(action(&format!("late{i}")), no_attrs()); // 20 ms each, far past the budget
        assert_eq!(h.d.queue_len(), 0);
    }
    assert_eq!(h.d.scheduler().pending().len(), before, "nothing scheduled after stop");
    assert_eq!(h.sink.action_names(), ["queued", "late0", "late1", "late2", "late3", "late4"]);
    assert_eq!(h.counters.calls_inline.get(), 6);
}

#[test]
fn a_batch_is_captured_at_one_call_time_and_follows_the_same_rules() {
    let mut h = harness(4, 100, 1_000_000);
    h.d.call(start_view("home"), no_attrs()); // 1 ms
    h.clock.advance(MS);
    let call_ms = h.clock.wall_ms();
    h.d.call_batch((0..10).map(|i| (action(&format!("b{i}")), no_attrs())));
    // 2 ms per inline action: b0 (1 → 3 ms) and b1 (3 → 5 ms) start under budget; the rest queue.
    assert_eq!((h.counters.calls_inline.get(), h.counters.calls_queued.get()), (3, 8));
    run_until_idle(&mut h.d);
    let expected: Vec<(String, i64)> = (0..10).map(|i| (format!("b{i}"), call_ms)).collect();
    assert_eq!(h.sink.action_dates(), expected);
}

#[test]
fn dispatchers_of_two_threads_share_one_scope_tree() {
    let h = harness(4, 100, 0);
    let mut d1 = h.d;
    let mut d2 = rum_native::core::dispatch::Dispatcher::new(
        d1.sequencer().clone(),
        h.clock.clone(),
        ManualScheduler::default(),
    );
    d1.call(start_view("home"), no_attrs());
    d2.call(action("from-worker"), no_attrs());
    let docs = h.sink.docs();
    let (Document::View(v), Document::Action(a)) = (&docs[0], &docs[1]) else { panic!("{}", h.sink.shape()) };
    assert_eq!(a.view.id, v.view.id, "the worker's action lands on the main thread's view");
    let e1 = d1.capture(action("x"), no_attrs());
    let e2 = d2.capture(action("y"), no_attrs());
    assert!(e2.seq > e1.seq, "one sequence per pipeline");
}

#[test]
fn a_dispatcher_dropped_with_queued_events_delivers_them() {
    let mut h = harness(4, 100, 10 * MS);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("a1"), no_attrs());
    h.d.call(action("a2"), no_attrs());
    assert_eq!(h.d.queue_len(), 2);
    drop(h.d);
    assert_eq!(h.sink.action_names(), ["a1", "a2"]);
    assert_eq!(h.counters.queue_length.get(), 0);
}

#[test]
fn the_whole_host_call_is_charged_to_the_turn_not_only_its_processing() {
    // Documents cost nothing here; only copying the arguments (before capture) takes time.
    let mut h = harness(4, 100, 0);
    let started = h.clock.now_ns();
    h.clock.advance(5_000_000); // the host spent 5 ms copying the arguments
    h.d.call_from(started, start_view("home"), no_attrs());
    h.d.call(action("a1"), no_attrs()); // the turn's 4 ms are gone: queued
    assert_eq!((h.counters.calls_inline.get(), h.counters.calls_queued.get()), (1, 1));
    assert_eq!(h.counters.longest_inline_turn_us.get(), 5_000);

    // The same calls without the copy time stay inline.
    let mut h = harness(4, 100, 0);
    let started = h.clock.now_ns();
    h.d.call_from(started, start_view("home"), no_attrs());
    h.d.call(action("a1"), no_attrs());
    assert_eq!((h.counters.calls_inline.get(), h.counters.calls_queued.get()), (2, 0));
}

#[test]
fn a_batch_charges_its_argument_copy_once() {
    let mut h = harness(4, 100, 0);
    let started = h.clock.now_ns();
    h.clock.advance(3_000_000);
    h.d.call_batch_from(started, vec![(start_view("home"), no_attrs()), (action("a1"), no_attrs())]);
    // 3 ms charged with the first event, nothing more: both inline, the turn at 3 ms.
    assert_eq!((h.counters.calls_inline.get(), h.counters.calls_queued.get()), (2, 0));
    assert_eq!(h.counters.longest_inline_turn_us.get(), 3_000);
}

#[test]
fn the_sink_is_told_when_a_processing_turn_begins_and_ends() {
    // The first call's processing passes the light-turn share, the rest are cheap: one turn.
    let mut h = harness_costs(4, 100, vec![light_share_ns(4), 1_000]);
    h.d.call(start_view("home"), no_attrs()); // processed (one view document), then charged
    call_actions(&mut h.d, "a", 0..3);
    // One `busy` per turn, after its first processing, none for later calls.
    assert_eq!(*h.sink.busy_marks.lock().expect("marks"), vec![(true, 1)]);
    assert_eq!(h.d.scheduler().pop(), Some(Timer::TurnEnd));
    h.d.on_timer(Timer::TurnEnd);
    let written = h.sink.records().len();
    assert_eq!(*h.sink.busy_marks.lock().expect("marks"), vec![(true, 1), (false, written)]);

    // A turn whose end the engine cannot schedule is never reported busy: nothing would end it.
    h.d.scheduler().refuse_next(1);
    h.d.call(action("b"), no_attrs());
    assert_eq!(h.sink.busy_marks.lock().expect("marks").len(), 2);
}

#[test]
fn a_slice_on_a_turn_of_its_own_is_busy_while_it_runs() {
    let mut h = a2_queued_past_a_turn_end();
    h.sink.busy_marks.lock().expect("marks").clear();
    let before = h.sink.records().len();
    assert_eq!(h.d.scheduler().pop(), Some(Timer::Slice));
    h.d.on_timer(Timer::Slice);
    let after = h.sink.records().len();
    assert!(after > before, "the slice wrote a2");
    assert_eq!(*h.sink.busy_marks.lock().expect("marks"), vec![(true, before), (false, after)]);
}

#[test]
fn a_light_turn_awaits_no_end_and_writes_its_view_as_at_a_turn_end() {
    // 10 µs a document: far below the light-turn share of the 4 ms budget.
    let mut h = harness(4, 100, 10_000);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("a1"), no_attrs());
    assert!(h.d.scheduler().pending().is_empty(), "no timer for a light turn");
    assert!(h.sink.busy_marks.lock().expect("marks").is_empty(), "the writer is never told to wait");
    // The view is owed after each call and goes out with it (no interval: written at once).
    assert_eq!(h.sink.shape(), "vav");
    assert_eq!(h.counters.calls_inline.get(), 2);
}

/// Actions costing `per_call` ns each, from `spent` ns, while the next would stay `margin` ns
/// under the light-turn share of a 4 ms budget; `after` is asked after each with the time spent.
fn calls_under_the_share(h: &mut Harness, mut spent: u64, per_call: u64, margin: u64, after: impl Fn(&Harness, u64)) {
    let mut i = 0;
    while spent + margin < light_share_ns(4) {
        h.d.call(action(&format!("light{i}")), no_attrs());
        spent += per_call;
        i += 1;
        after(h, spent);
    }
}

#[test]
fn light_turns_add_up_until_a_turn_end_is_awaited_and_resets_them() {
    let mut h = harness(4, 100, 10_000);
    // The view: 10 µs. Each action and its view document: 20 µs.
    h.d.call(start_view("home"), no_attrs());
    calls_under_the_share(&mut h, 10_000, 20_000, 20_000, |h, spent| {
        assert!(h.d.scheduler().pending().is_empty(), "still light after {} µs", spent / 1_000);
    });
    h.d.call(action("last"), no_attrs()); // reaches the share
    assert_eq!(h.d.scheduler().pending(), vec![Timer::TurnEnd], "awaited once past the share");
    assert_eq!(*h.sink.busy_marks.lock().expect("marks"), vec![(true, h.sink.records().len())]);
    assert_eq!(h.d.scheduler().pop(), Some(Timer::TurnEnd));
    h.d.on_timer(Timer::TurnEnd);
    // Reset: the next call is light again.
    h.d.call(action("b"), no_attrs());
    assert_eq!(h.d.scheduler().pending(), vec![]);
}

#[test]
fn a_views_due_timer_ends_what_light_turns_spent_as_a_turn_end_does() {
    // A 1 s view interval: light turns leave the view owed, and its timer is the one pending.
    let mut h = harness_with(&throttled(4, 100), vec![10_000], 42);
    h.d.call(start_view("home"), no_attrs());
    h.d.call(action("a0"), no_attrs());
    assert_eq!(h.d.scheduler().pending(), vec![Timer::ViewsDue]);
    // Light turns (10 µs a call: the view waits for its timer) add up to just under the share ...
    calls_under_the_share(&mut h, 20_000, 10_000, 40_000, |_, _| {});
    assert_eq!(h.d.scheduler().pending(), vec![Timer::ViewsDue], "still light");
    // ... the view's timer fires on a later turn: what they spent is behind it.
    h.clock.advance(1_000_000_000);
    assert_eq!(h.d.scheduler().pop(), Some(Timer::ViewsDue));
    h.d.on_timer(Timer::ViewsDue);
    // 50 µs more would pass the share without that.
    for k in 0..5 {
        h.d.call(action(&format!("b{k}")), no_attrs());
    }
    assert!(
        !h.d.scheduler().pending().contains(&Timer::TurnEnd),
        "the spent time started again at the view's timer: {:?}",
        h.d.scheduler().pending()
    );
}

#[test]
fn what_light_turns_spent_counts_toward_the_budget_of_the_next_busy_turn() {
    // Light calls leave 240 µs spent; a busy turn then queues 240 µs sooner than a fresh one.
    let mut h = harness(4, 1000, 10_000);
    h.d.call(start_view("home"), no_attrs());
    for i in 0..10 {
        h.d.call(action(&format!("a{i}")), no_attrs()); // 210 µs spent in all
    }
    assert!(h.d.scheduler().pending().is_empty());
    h.sink.set_costs(vec![1_000_000]); // now 1 ms a document: 2 ms an action
    call_actions(&mut h.d, "b", 0..4);
    // 210 µs + 2 ms (b0, awaited from here) + 2 ms (b1 started at 2.21 ms, under 4 ms): two
    // inline, the rest queued.
    assert_eq!(h.counters.calls_queued.get(), 2);
    assert_eq!(h.d.scheduler().pending(), vec![Timer::TurnEnd, Timer::Slice]);
}
