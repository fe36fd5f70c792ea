//! Session sampling (`sessionSampleRate`): drawn once per session from the pipeline's random
//! source (seeded here), stable for the session; an untracked session writes nothing, and its
//! calls can be skipped before they are read while still keeping the session alive.

mod dispatch_support;

use std::collections::BTreeSet;

use dispatch_support::*;
use rum_native::core::config::Config;
use rum_native::core::document::Document;
use rum_native::core::event::EventKind;
use rum_native::core::seam::Clock;

fn sampled(rate: f64) -> Config {
    Config { session_sample_rate: rate, ..config(1_000, 1_000) }
}

/// 200 sessions of two actions each; the session ids that wrote documents.
fn run(rate: f64, seed: u64) -> (Harness, BTreeSet<String>) {
    let mut h = harness_with(&sampled(rate), vec![0], seed);
    h.d.call(start_view("home"), no_attrs());
    for i in 0..200 {
        h.d.call(action(&format!("a{i}")), no_attrs());
        h.d.call(action(&format!("b{i}")), no_attrs());
        h.d.call(EventKind::StopSession, no_attrs());
    }
    let sessions = h.sink.docs().iter().map(session_of).collect();
    (h, sessions)
}

#[test]
fn a_rate_keeps_about_that_share_of_sessions_each_whole_or_not_at_all() {
    let (h, tracked) = run(30.0, 7);
    assert_eq!(h.counters.sessions_started.get(), 200, "one session per stopSession");
    let untracked = h.counters.sessions_untracked.get();
    let share = 1.0 - untracked as f64 / 200.0;
    assert!((0.2..0.4).contains(&share), "about 30% tracked, got {share:.2}");
    assert_eq!(tracked.len() as u64, 200 - untracked, "every tracked session wrote documents");
    // Whole sessions: a tracked session has both of its actions, an untracked one none.
    for s in &tracked {
        let actions = h.sink.non_view_docs().iter().filter(|d| &session_of(d) == s).count();
        assert!(actions == 2 || actions == 0, "session {s}: {actions} actions");
    }
}

#[test]
fn the_same_seed_draws_the_same_sessions() {
    assert_eq!(run(50.0, 11).1, run(50.0, 11).1);
    assert_ne!(run(50.0, 11).1, run(50.0, 12).1);
}

#[test]
fn zero_writes_nothing_and_a_hundred_draws_nothing() {
    let (h, tracked) = run(0.0, 3);
    assert!(tracked.is_empty() && h.sink.docs().is_empty());
    assert_eq!(h.counters.sessions_untracked.get(), h.counters.sessions_started.get());
    // At 100 no draw is taken: the ids are those of a pipeline without sampling.
    let (full, _) = run(100.0, 5);
    let mut plain = harness_with(&config(1_000, 1_000), vec![0], 5);
    plain.d.call(start_view("home"), no_attrs());
    for i in 0..200 {
        plain.d.call(action(&format!("a{i}")), no_attrs());
        plain.d.call(action(&format!("b{i}")), no_attrs());
        plain.d.call(EventKind::StopSession, no_attrs());
    }
    assert_eq!(full.sink.docs(), plain.sink.docs());
}

#[test]
fn skipped_calls_keep_an_untracked_session_alive_and_never_skip_into_the_next() {
    let mut h = harness_with(&sampled(0.0), vec![0], 1);
    h.d.call(start_view("home"), no_attrs());
    let now = || h.clock.wall_ms();
    assert!(h.shared.skips_untracked(now()), "an untracked session's calls are skipped");
    // Skipped calls every 10 minutes for an hour: the session stays the same one.
    for _ in 0..6 {
        h.clock.advance(10 * MINUTE_NS);
        assert!(h.shared.skips_untracked(h.clock.wall_ms()));
    }
    h.d.call(action("seen"), no_attrs());
    assert_eq!(h.counters.sessions_started.get(), 1, "the skipped calls were the session's activity");
    assert_eq!(h.counters.calls_untracked.get(), 7);
    // 15 minutes and a bit of silence: the next call is not skipped, it may start a tracked session.
    h.clock.advance(15 * MINUTE_NS + MS);
    assert!(!h.shared.skips_untracked(h.clock.wall_ms()), "a call past the session's end is processed");
    h.d.call(EventKind::StopSession, no_attrs());
    assert!(!h.shared.skips_untracked(h.clock.wall_ms()), "no session, nothing to skip");
}

#[test]
fn a_tracked_session_is_never_skipped() {
    let mut h = harness_with(&sampled(100.0), vec![0], 1);
    h.d.call(start_view("home"), no_attrs());
    assert!(!h.shared.skips_untracked(h.clock.wall_ms()));
    assert!(h.sink.docs().iter().any(|d| matches!(d, Document::View(_))));
}
