//! Per-event processing cost on the JS thread, inline and sliced, coalesced and not.
//!
//! `cargo bench --no-default-features --bench dispatch`. Each scenario processes a sample of
//! actions carrying one 350-character attribute (the seed's burst); scenarios alternate, sample by
//! sample, so a noisy neighbour hits them all alike. Prints median and p95 ns per event and ratios
//! within this run; asserts nothing about time.
//!
//! Scenarios:
//! - `scopes, per event`: `Scopes::apply` + the view document after each action (inline shape).
//! - `scopes, coalesced`: `Scopes::apply` per action, one view document for the whole sample.
//! - `dispatch inline`: `Dispatcher::call` on the inline path: capture, lock, scopes, action and
//!   view documents, hand-off to the sink.
//! - `dispatch sliced`: the same calls queued (turn spent), then processed by slices (coalesced).
//! - `… + channel`: the hand-off is a flume send to a thread that drops the documents, as the
//!   storage writer's channel would be (serialization on that thread is not measured here).
//!
//! Attributes are built before timing: copying them out of JS is the binding's capture cost.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::hint::black_box;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rum_native::core::attrs::Attrs;
use rum_native::core::coalesce::{Moment, ViewPolicy};
use rum_native::core::config::{Config, TrackingConsent};
use rum_native::core::dispatch::Dispatcher;
use rum_native::core::document::{Document, Identity};
use rum_native::core::event::{ActionType, Attributes, Event, EventKind};
use rum_native::core::ids::IdGen;
use rum_native::core::scope::Scopes;
use rum_native::core::seam::{Clock, DocumentSink, Scheduler, SinkError, Timer};
use rum_native::core::sequencer::Sequencer;
use rum_native::core::stats::DispatchCounters;

const EVENTS_PER_SAMPLE: usize = 2_000;
const SAMPLES: usize = 25;
const WARM_UP_SAMPLES: usize = 3;

/// Real time, plus an offset that [`Skewing`] bumps to make the dispatcher see a spent turn.
#[derive(Clone)]
struct BenchClock {
    base: Instant,
    skew_ns: Arc<AtomicU64>,
}

impl Clock for BenchClock {
    fn mono_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64 + self.skew_ns.load(Ordering::Relaxed)
    }

    fn wall_ms(&self) -> i64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
    }
}

/// Undelayed timers only: a delayed one (`ViewsDue`) is left to the next turn end, which writes
/// the views that are due by then.
#[derive(Clone, Default)]
struct Timers(Rc<RefCell<VecDeque<Timer>>>);

impl Scheduler for Timers {
    fn schedule_in(&self, timer: Timer, delay_ms: u32) -> bool {
        if delay_ms == 0 {
            self.0.borrow_mut().push_back(timer);
        }
        delay_ms == 0
    }
}

/// Keeps documents until the sample ends, so freeing them is not timed (the writer frees them).
#[derive(Default)]
struct VecSink(Mutex<Vec<Document>>);

impl DocumentSink for VecSink {
    fn write(&self, doc: Document) -> Result<(), SinkError> {
        self.0.lock().map_err(|_| SinkError::Closed)?.push(doc);
        Ok(())
    }

    fn consent_changed(&self, _: TrackingConsent) -> Result<(), SinkError> {
        Ok(())
    }
}

impl VecSink {
    fn take(&self) -> usize {
        self.0.lock().map(|mut v| std::mem::take(&mut *v).len()).unwrap_or(0)
    }
}

/// Jumps the clock by a second while it writes the next document, so the call being processed
/// spends the whole turn (untimed), and the sample's calls that follow all take the queued path.
struct Skewing {
    inner: Arc<dyn DocumentSink>,
    skew_ns: Arc<AtomicU64>,
    armed: AtomicBool,
}

impl DocumentSink for Skewing {
    fn write(&self, doc: Document) -> Result<(), SinkError> {
        if self.armed.swap(false, Ordering::Relaxed) {
            self.skew_ns.fetch_add(1_000_000_000, Ordering::Relaxed);
        }
        self.inner.write(doc)
    }

    fn consent_changed(&self, consent: TrackingConsent) -> Result<(), SinkError> {
        self.inner.consent_changed(consent)
    }
}

/// A flume channel to a thread that drops what it receives.
struct ChannelSink(flume::Sender<Document>);

impl DocumentSink for ChannelSink {
    fn write(&self, doc: Document) -> Result<(), SinkError> {
        self.0.send(doc).map_err(|_| SinkError::Closed)
    }

    fn consent_changed(&self, _: TrackingConsent) -> Result<(), SinkError> {
        Ok(())
    }
}

fn channel_sink() -> Arc<ChannelSink> {
    let (tx, rx) = flume::unbounded::<Document>();
    std::thread::Builder::new()
        .name("bench-writer".into())
        .spawn(move || {
            for doc in rx.iter() {
                drop(black_box(doc))
            }
        })
        .expect("spawn the bench writer");
    Arc::new(ChannelSink(tx))
}

fn config(budget_ms: u32) -> Config {
    Config {
        storage_dir: "/tmp/rum-bench".into(),
        application_id: "bench-app".into(),
        service: "bench".into(),
        version: "1.0.0".into(),
        turn_budget_ms: budget_ms,
        queue_capacity: 10_000,
        ..Config::default()
    }
}

fn payloads() -> Vec<Attrs> {
    let mut one = Attributes::new();
    one.insert("message".into(), "m".repeat(350).into());
    vec![Attrs::from_map(&one); EVENTS_PER_SAMPLE]
}

fn action() -> EventKind {
    EventKind::Action { action_type: ActionType::Custom, name: "message.synced".into() }
}

type BenchDispatcher = Dispatcher<BenchClock, Timers>;

struct Scenario {
    name: &'static str,
    /// Runs one sample; returns (elapsed ns, documents produced).
    run: Box<dyn FnMut() -> (u64, usize)>,
    per_event_ns: Vec<f64>,
    docs_per_event: f64,
}

fn scopes_scenario(coalesced: bool) -> impl FnMut() -> (u64, usize) {
    let counters = Arc::new(DispatchCounters::default());
    let identity = Arc::new(Identity::of(&config(4)));
    let mut scopes = Scopes::new(identity, TrackingConsent::Granted, counters, IdGen::from_entropy());
    let mut seq = 0;
    let mut out = Vec::with_capacity(2 * EVENTS_PER_SAMPLE + 2);
    let clock = BenchClock { base: Instant::now(), skew_ns: Arc::default() };
    scopes.apply(
        Event { seq, wall_ms: clock.wall_ms(), mono_ns: 0, kind: start_view(), attrs: Attrs::default() },
        &mut out,
    );
    scopes.emit_views(ViewPolicy::new(0), Moment::Forced, 0, &mut out);
    move || {
        out.clear();
        let (wall_ms, mono_ns) = (clock.wall_ms(), clock.mono_ns());
        let events: Vec<Event> = payloads()
            .into_iter()
            .map(|attrs| {
                seq += 1;
                Event { seq, wall_ms, mono_ns, kind: action(), attrs }
            })
            .collect();
        let start = Instant::now();
        for ev in events {
            scopes.apply(ev, &mut out);
            if !coalesced {
                scopes.emit_views(ViewPolicy::new(0), Moment::Forced, 0, &mut out);
            }
        }
        scopes.emit_views(ViewPolicy::new(0), Moment::Forced, 0, &mut out);
        (start.elapsed().as_nanos() as u64, out.len())
    }
}

fn start_view() -> EventKind {
    EventKind::StartView { key: "chat".into(), name: "Chat".into() }
}

fn dispatcher(sink: Arc<dyn DocumentSink>, budget_ms: u32) -> (BenchDispatcher, Arc<Skewing>) {
    let skew_ns = Arc::new(AtomicU64::new(0));
    let clock = BenchClock { base: Instant::now(), skew_ns: skew_ns.clone() };
    let skewing = Arc::new(Skewing { inner: sink, skew_ns, armed: AtomicBool::new(false) });
    let shared = Sequencer::new(&config(budget_ms), skewing.clone(), Arc::new(DispatchCounters::default()));
    let mut d = Dispatcher::new(shared, clock, Timers::default());
    d.call(start_view(), Attrs::default());
    (d, skewing)
}

fn fire_all(d: &mut BenchDispatcher, timers: &Timers) {
    loop {
        let next = timers.0.borrow_mut().pop_front();
        match next {
            Some(t) => d.on_timer(t),
            None => break,
        }
    }
}

fn dispatch_scenario(
    sink: Arc<dyn DocumentSink>,
    counted: Option<Arc<VecSink>>,
    sliced: bool,
) -> impl FnMut() -> (u64, usize) {
    // Inline: a budget no sample reaches. Sliced: the real 4 ms budget, with the turn spent.
    let (mut d, skew) = dispatcher(sink, if sliced { 4 } else { 1_000 });
    let timers = d.scheduler().clone();
    move || {
        fire_all(&mut d, &timers); // a new turn
        if sliced {
            skew.armed.store(true, Ordering::Relaxed);
            d.call(EventKind::KeepAlive, Attrs::default()); // spends this turn's budget
        }
        if let Some(s) = &counted {
            s.take();
        }
        let produced_before = d.sequencer().counters().documents_produced.get();
        let payloads = payloads();
        let start = Instant::now();
        for attrs in payloads {
            d.call(action(), attrs);
        }
        fire_all(&mut d, &timers);
        let elapsed = start.elapsed().as_nanos() as u64;
        let produced = d.sequencer().counters().documents_produced.get() - produced_before;
        (elapsed, produced as usize)
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    std::env::set_var("RUM_NATIVE_QUIET", "1");
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this too, in debug: one sample
    // there proves the scenarios still run without spending CI time on numbers nobody reads.
    let measuring = std::env::args().any(|a| a == "--bench");
    let (warm_up, samples) = if measuring { (WARM_UP_SAMPLES, SAMPLES) } else { (0, 1) };
    let vec_inline = Arc::new(VecSink::default());
    let vec_sliced = Arc::new(VecSink::default());
    let mut scenarios = vec![
        Scenario {
            name: "scopes, per event",
            run: Box::new(scopes_scenario(false)),
            per_event_ns: vec![],
            docs_per_event: 0.0,
        },
        Scenario {
            name: "scopes, coalesced",
            run: Box::new(scopes_scenario(true)),
            per_event_ns: vec![],
            docs_per_event: 0.0,
        },
        Scenario {
            name: "dispatch inline",
            run: Box::new(dispatch_scenario(vec_inline.clone(), Some(vec_inline), false)),
            per_event_ns: vec![],
            docs_per_event: 0.0,
        },
        Scenario {
            name: "dispatch sliced",
            run: Box::new(dispatch_scenario(vec_sliced.clone(), Some(vec_sliced), true)),
            per_event_ns: vec![],
            docs_per_event: 0.0,
        },
        Scenario {
            name: "dispatch inline + channel",
            run: Box::new(dispatch_scenario(channel_sink(), None, false)),
            per_event_ns: vec![],
            docs_per_event: 0.0,
        },
        Scenario {
            name: "dispatch sliced + channel",
            run: Box::new(dispatch_scenario(channel_sink(), None, true)),
            per_event_ns: vec![],
            docs_per_event: 0.0,
        },
    ];

    for sample in 0..warm_up + samples {
        for s in &mut scenarios {
            let (ns, docs) = (s.run)();
            if sample >= warm_up {
                s.per_event_ns.push(ns as f64 / EVENTS_PER_SAMPLE as f64);
                s.docs_per_event = docs as f64 / EVENTS_PER_SAMPLE as f64;
            }
        }
    }

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    if !measuring {
        println!("dispatch bench: smoke run of every scenario passed (numbers: cargo bench --bench dispatch)");
        return;
    }
    println!(
        "dispatch bench: {SAMPLES} alternating samples of {EVENTS_PER_SAMPLE} actions, \
         one 350-char attribute each; load {}",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!("{:<28} {:>12} {:>10} {:>10} {:>12}", "scenario", "median ns/ev", "p95", "docs/ev", "vs inline");
    let medians: Vec<f64> = scenarios
        .iter_mut()
        .map(|s| {
            s.per_event_ns.sort_by(f64::total_cmp);
            percentile(&s.per_event_ns, 0.5)
        })
        .collect();
    let inline_median = medians[2];
    for (s, median) in scenarios.iter().zip(&medians) {
        println!(
            "{:<28} {:>12.0} {:>10.0} {:>10.3} {:>11.2}x",
            s.name,
            median,
            percentile(&s.per_event_ns, 0.95),
            s.docs_per_event,
            median / inline_median
        );
    }
    let target = medians[2];
    println!(
        "target: one action through the dispatcher and scopes (inline) at or below 1 us median: {:.0} ns, {}",
        target,
        if target <= 1_000.0 { "met" } else { "NOT met" }
    );
    println!(
        "coalescing: sliced/inline = {:.2}, scopes coalesced/per-event = {:.2}",
        medians[3] / medians[2],
        medians[1] / medians[0]
    );
}
