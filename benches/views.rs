//! View documents and bytes written per action, by `viewUpdateIntervalMs`: what the throttling of
//! view updates saves and what it costs in freshness.
//!
//! `cargo bench --no-default-features --bench views`. Prints counts and ratios, asserts nothing
//! about time. Scenarios, each for the intervals 0 (no throttling: the view written after every
//! inline call, as before), 250, 1,000 (the default) and 3,000 ms (the browser SDK's):
//! - `loop 3700`: 3,700 actions in one synchronous loop (the seed's burst), then the event loop
//!   runs (slices, turn ends) until idle. Processing takes real time; the rest is simulated.
//! - `300/s` and `3000/s` for 5 s: one action per turn, the clock jumping between calls (virtual
//!   time); timers fire when the simulated event loop reaches them.
//!
//! Every scenario ends with `flush()`. Bytes are the documents' JSON (one NDJSON line each), the
//! same serialization the writer uses. "stalest" is the longest a view's document lagged behind
//! its state while the view was active: the freshness the interval trades away, and the most a
//! `kill -9` could lose.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rum_native::core::attrs::Attrs;
use rum_native::core::config::{Config, TrackingConsent};
use rum_native::core::dispatch::Dispatcher;
use rum_native::core::document::{Document, DocumentKind};
use rum_native::core::event::{ActionType, Attributes, EventKind};
use rum_native::core::seam::{Clock, DocumentSink, Scheduler, SinkError, Timer};
use rum_native::core::sequencer::Sequencer;
use rum_native::core::stats::DispatchCounters;

const INTERVALS_MS: [u32; 4] = [0, 250, 1_000, 3_000];
const RATE_SECONDS: u64 = 5;

/// Real elapsed time plus the simulated time the test skipped.
#[derive(Clone)]
struct SimClock {
    base: Instant,
    skipped_ns: Arc<AtomicU64>,
}

impl SimClock {
    fn now(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64 + self.skipped_ns.load(Ordering::Relaxed)
    }

    /// Moves the clock to `t` if it is earlier.
    fn reach(&self, t: u64) {
        let now = self.now();
        if t > now {
            self.skipped_ns.fetch_add(t - now, Ordering::Relaxed);
        }
    }
}

impl Clock for SimClock {
    fn mono_ns(&self) -> u64 {
        self.now()
    }

    fn wall_ms(&self) -> i64 {
        1_700_000_000_000 + (self.now() / 1_000_000) as i64
    }
}

/// The event loop's timers, each with the time it is due.
#[derive(Clone)]
struct Loop {
    clock: SimClock,
    timers: Rc<RefCell<Vec<(u64, u64, Timer)>>>,
    next: Rc<Cell<u64>>,
}

impl Scheduler for Loop {
    fn schedule_in(&self, timer: Timer, delay_ms: u32) -> bool {
        let n = self.next.get();
        self.next.set(n + 1);
        self.timers.borrow_mut().push((self.clock.now() + u64::from(delay_ms) * 1_000_000, n, timer));
        true
    }
}

impl Loop {
    /// The earliest timer due at or before `until`, in scheduling order among equals.
    fn pop_due(&self, until: u64) -> Option<(u64, Timer)> {
        let mut t = self.timers.borrow_mut();
        let i = (0..t.len()).filter(|&i| t[i].0 <= until).min_by_key(|&i| (t[i].0, t[i].1))?;
        let (due, _, timer) = t.remove(i);
        Some((due, timer))
    }
}

#[derive(Default)]
struct Tally {
    view_docs: u64,
    view_bytes: u64,
    other_docs: u64,
    other_bytes: u64,
    /// Monotonic ns of the last view document, and the longest gap between one and the next.
    last_view_ns: u64,
    longest_gap_ns: u64,
}

struct CountingSink {
    clock: SimClock,
    tally: Mutex<Tally>,
}

impl DocumentSink for CountingSink {
    fn write(&self, doc: Document) -> Result<(), SinkError> {
        let bytes = serde_json::to_vec(&doc).map_err(|e| SinkError::Failed(e.to_string()))?.len() as u64 + 1;
        let mut t = self.tally.lock().map_err(|_| SinkError::Closed)?;
        if doc.kind() == DocumentKind::View {
            let now = self.clock.now();
            if t.view_docs > 0 {
                t.longest_gap_ns = t.longest_gap_ns.max(now - t.last_view_ns);
            }
            t.last_view_ns = now;
            t.view_docs += 1;
            t.view_bytes += bytes;
        } else {
            t.other_docs += 1;
            t.other_bytes += bytes;
        }
        Ok(())
    }

    fn consent_changed(&self, _: TrackingConsent) -> Result<(), SinkError> {
        Ok(())
    }
}

struct Run {
    d: Dispatcher<SimClock, Loop>,
    sink: Arc<CountingSink>,
    ev_loop: Loop,
    clock: SimClock,
}

impl Run {
    fn new(interval_ms: u32) -> Self {
        let clock = SimClock { base: Instant::now(), skipped_ns: Arc::default() };
        let sink = Arc::new(CountingSink { clock: clock.clone(), tally: Mutex::default() });
        let config = Config {
            storage_dir: "/tmp/rum-bench".into(),
            application_id: "bench-app".into(),
            service: "bench".into(),
            version: "1.0.0".into(),
            view_update_interval_ms: interval_ms,
            ..Config::default()
        };
        let shared = Sequencer::new(&config, sink.clone(), Arc::new(DispatchCounters::default()));
        let ev_loop = Loop { clock: clock.clone(), timers: Rc::default(), next: Rc::default() };
        let mut d = Dispatcher::new(shared, clock.clone(), ev_loop.clone());
        d.call(EventKind::StartView { key: "chat".into(), name: "Chat".into() }, Attrs::default());
        Self { d, sink, ev_loop, clock }
    }

    /// Runs the event loop until `until` (simulated ns): every timer due by then fires, the clock
    /// jumping to it when it is later than now.
    fn run_until(&mut self, until: u64) {
        while let Some((due, timer)) = self.ev_loop.pop_due(until) {
            self.clock.reach(due);
            self.d.on_timer(timer);
        }
        self.clock.reach(until);
    }

    fn action(&mut self, payload: &Attrs) {
        self.d.call(
            EventKind::Action { action_type: ActionType::Custom, name: "message.synced".into() },
            payload.clone(),
        );
    }

    fn finish(mut self, actions: u64) -> Figures {
        let now = self.clock.now();
        self.run_until(now);
        self.d.flush();
        let t = self.sink.tally.lock().expect("tally");
        Figures {
            view_docs_per_action: t.view_docs as f64 / actions as f64,
            view_docs: t.view_docs,
            bytes_per_action: (t.view_bytes + t.other_bytes) as f64 / actions as f64,
            view_byte_share: t.view_bytes as f64 / (t.view_bytes + t.other_bytes) as f64,
            longest_gap_ms: t.longest_gap_ns as f64 / 1e6,
        }
    }
}

struct Figures {
    view_docs: u64,
    view_docs_per_action: f64,
    bytes_per_action: f64,
    view_byte_share: f64,
    longest_gap_ms: f64,
}

fn payload() -> Attrs {
    let mut one = Attributes::new();
    one.insert("message".into(), "m".repeat(350).into());
    Attrs::from_map(&one)
}

fn burst(interval_ms: u32, actions: u64) -> Figures {
    let mut r = Run::new(interval_ms);
    r.run_until(r.clock.now() + 20_000_000); // the start view's turn ends
    let p = payload();
    for _ in 0..actions {
        r.action(&p);
    }
    let now = r.clock.now();
    r.run_until(now + 10_000_000_000);
    r.finish(actions)
}

fn rate(interval_ms: u32, per_second: u64) -> Figures {
    let mut r = Run::new(interval_ms);
    let p = payload();
    let step = 1_000_000_000 / per_second;
    let start = r.clock.now();
    let actions = per_second * RATE_SECONDS;
    for i in 0..actions {
        r.run_until(start + i * step);
        r.action(&p);
    }
    r.run_until(start + actions * step);
    r.finish(actions)
}

/// One scenario, run for one interval.
type ScenarioFn = Box<dyn Fn(u32) -> Figures>;

fn main() {
    std::env::set_var("RUM_NATIVE_QUIET", "1");
    let measuring = std::env::args().any(|a| a == "--bench");
    let intervals: &[u32] = if measuring { &INTERVALS_MS } else { &[0, 1_000] };
    let scale = if measuring { 1 } else { 10 };
    println!(
        "{:<12} {:>9} {:>10} {:>12} {:>10} {:>11} {:>12}",
        "scenario", "interval", "view docs", "views/action", "bytes/act", "view bytes", "stalest ms"
    );
    let scenarios: [(&str, ScenarioFn); 3] = [
        ("loop 3700", Box::new(move |i| burst(i, 3_700 / scale))),
        ("300/s 5s", Box::new(move |i| rate(i, 300 / scale))),
        ("3000/s 5s", Box::new(move |i| rate(i, 3_000 / scale))),
    ];
    for (name, run) in &scenarios {
        let mut before_bytes = 0.0;
        for &interval in intervals {
            let f = run(interval);
            if interval == 0 {
                before_bytes = f.bytes_per_action;
            }
            println!(
                "{:<12} {:>7}ms {:>10} {:>12.4} {:>10.0} {:>10.1}% {:>12.0}   bytes vs 0: {:.3}",
                name,
                interval,
                f.view_docs,
                f.view_docs_per_action,
                f.bytes_per_action,
                100.0 * f.view_byte_share,
                f.longest_gap_ms,
                f.bytes_per_action / before_bytes
            );
        }
    }
}
