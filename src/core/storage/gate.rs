//! When the writer thread wakes: the JS thread's turns ([`TurnGate`]) and the writer's one place
//! of waiting ([`Doorbell`]).
//!
//! The writer never polls. It sleeps on the doorbell, with a deadline only when one is due (the
//! active batch's window, the end of a hold or of a linger), and the JS thread rings it only when
//! the writer has something to do that it cannot know of otherwise:
//!
//! - outside a busy turn, a document rings an idle writer (a lone event: one wake-up, one
//!   `write`); a writer that wrote twice within [`WRITER_LINGER_MS`] lingers (a stream: documents
//!   wait for the linger's end without a ring, one wake-up and one `write` per linger);
//! - in a turn whose end the dispatcher will report ([`TurnGate::promise_end`]), documents wait in
//!   the channel without a ring, and the turn's end rings once: every document of the turn goes
//!   out in one wake-up and one `write` (one per [`WRITE_CHUNK`](super::WRITE_CHUNK) past 64 KiB),
//!   or at the end of the writer's linger, which a turn's end does not cut short;
//! - in a busy turn whose end was not promised, the first document rings an idle writer, which
//!   then holds them until the turn ends or its hold runs out;
//! - a hold that passes [`WRITER_HOLD_MAX_BYTES`], a promised turn that has lasted its hold (looked
//!   at every [`HOLD_CHECK_EVERY`] documents), flushes, consent changes and shutdown ring at once,
//!   and wake the writer from any wait.
//!
//! A ring costs the JS thread a few atomic operations while the writer is awake, and one futex
//! wake (a system call) when it sleeps.

use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::core::config::WRITER_HOLD_MAX_BYTES;
#[cfg(doc)]
use crate::core::config::WRITER_LINGER_MS;

/// In a promised turn the JS thread reads the clock to check the hold's age only at every this
/// many documents, not at each one: a burst sends hundreds of documents per millisecond, and a
/// clock read per document would be a measurable share of what each costs the UI thread. The
/// hold is then exceeded by at most the time 15 documents take to produce.
pub(crate) const HOLD_CHECK_EVERY: u32 = 16;

const OPEN: u8 = 0;
/// Reported busy, its end not promised: the writer enforces the hold itself.
const BUSY: u8 = 1;
/// Reported (or about to be reported) busy by a dispatcher that has scheduled the turn's end.
const PROMISED: u8 = 2;

/// Whether the JS thread is in a busy turn, as its dispatcher reports it
/// ([`DocumentSink::turn_busy`](crate::core::seam::DocumentSink::turn_busy),
/// [`DocumentSink::turn_will_end`](crate::core::seam::DocumentSink::turn_will_end)): while it is,
/// the writer leaves documents in the channel (at most the hold, [`WRITER_HOLD_MAX_BYTES`]), so a
/// burst on the UI thread does not share its core with the writer. Every control message (flush,
/// consent, shutdown) opens the gate before it is sent. With several JS threads on one writer the
/// latest report wins: the gate only says when to write, never what, so a turn that another
/// thread's end opens early loses nothing.
pub(crate) struct TurnGate {
    state: AtomicU8,
    /// When the promised turn's hold began, ns after `epoch`.
    since_ns: AtomicU64,
    /// Documents sent in the promised turn.
    held: AtomicU32,
    epoch: Instant,
    /// The longest documents wait for a busy turn (`WRITER_HOLD_MAX_MS`; tests change it).
    max: Duration,
    pub bell: Doorbell,
}

impl TurnGate {
    pub fn new(max: Duration) -> Self {
        Self {
            state: AtomicU8::new(OPEN),
            since_ns: AtomicU64::new(0),
            held: AtomicU32::new(0),
            epoch: Instant::now(),
            max,
            bell: Doorbell::default(),
        }
    }

    pub fn max(&self) -> Duration {
        self.max
    }

    /// The dispatcher will report this turn's end: documents sent until then need no ring.
    pub fn promise_end(&self) {
        self.since_ns.store(self.elapsed_ns(), Ordering::Relaxed);
        self.held.store(0, Ordering::Relaxed);
        self.state.store(PROMISED, Ordering::Relaxed);
    }

    /// `waiting`: whether anything waits in the channel (asked only when the turn ends).
    pub fn set_busy(&self, busy: bool, waiting: impl FnOnce() -> bool) {
        if busy {
            // A promised turn stays promised when it is reported busy.
            let _ = self.state.compare_exchange(OPEN, BUSY, Ordering::Relaxed, Ordering::Relaxed);
        } else {
            self.state.store(OPEN, Ordering::Relaxed);
            if waiting() {
                self.bell.ring_turn_end();
            }
        }
    }

    /// Opens the gate and rings: a control message was just sent.
    pub fn open_now(&self) {
        self.state.store(OPEN, Ordering::Relaxed);
        self.bell.ring_urgent();
    }

    pub fn is_busy(&self) -> bool {
        self.state.load(Ordering::Relaxed) != OPEN
    }

    /// A document was just sent; `backlog` is what waits for the writer now (bytes).
    pub fn sent(&self, backlog: u64) {
        match self.state.load(Ordering::Relaxed) {
            _ if backlog >= WRITER_HOLD_MAX_BYTES => self.bell.ring_urgent(),
            // Outside a busy turn (and in one whose end is not promised) only an idle writer is
            // woken: one awake takes the document before it sleeps, one lingering after a write
            // takes it at the linger's end.
            OPEN | BUSY => self.bell.ring_idle(),
            _ => {
                let held = self.held.fetch_add(1, Ordering::Relaxed) + 1;
                if held.is_multiple_of(HOLD_CHECK_EVERY) {
                    let now = self.elapsed_ns();
                    let since = self.since_ns.load(Ordering::Relaxed);
                    if now.saturating_sub(since) >= self.max.as_nanos() as u64 {
                        // Drained now; a turn still busy holds what comes next anew.
                        self.since_ns.store(now, Ordering::Relaxed);
                        self.bell.ring_urgent();
                    }
                }
            }
        }
    }

    fn elapsed_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

const AWAKE: u8 = 0;
const IDLE: u8 = 1;
const HOLDING: u8 = 2;
const LINGERING: u8 = 3;

/// How the writer waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Park {
    /// Nothing to do: until a ring or the active batch's window.
    Idle,
    /// Documents wait for a busy turn's end: until an urgent ring, the turn's end or the hold's
    /// deadline (a document sent meanwhile does not wake it).
    Holding,
    /// The writer lingers after a write in a stream: until an urgent ring or the linger's end (a
    /// document sent meanwhile, or a turn's end, does not wake it).
    Lingering,
}

/// The writer's only place of waiting: a condition variable with a deadline, and the flags the
/// JS thread sets without taking its lock while the writer is awake.
#[derive(Default)]
pub(crate) struct Doorbell {
    parked: AtomicU8,
    urgent: AtomicBool,
    lock: Mutex<Bell>,
    cv: Condvar,
    /// Times the writer went to sleep (tests read it: no wake-up without a reason).
    pub parks: AtomicU64,
}

#[derive(Default)]
struct Bell {
    waiting: bool,
    rung: bool,
}

impl Doorbell {
    /// What waits must be taken now: wakes the writer from either wait.
    pub fn ring_urgent(&self) {
        self.urgent.store(true, Ordering::SeqCst);
        self.wake_if(|parked| parked != AWAKE);
    }

    /// A busy turn ended with documents waiting: they must be taken now, unless the writer
    /// lingers (then at the linger's end, as every other document of the stream).
    pub fn ring_turn_end(&self) {
        self.urgent.store(true, Ordering::SeqCst);
        self.wake_if(|parked| parked == IDLE || parked == HOLDING);
    }

    /// Wakes the writer only from its idle wait: it then writes what waits, or holds it while the
    /// turn is busy. A holding or lingering writer takes it at its deadline.
    pub fn ring_idle(&self) {
        self.wake_if(|parked| parked == IDLE);
    }

    fn wake_if(&self, wake: impl FnOnce(u8) -> bool) {
        // Pairs with the fence in `park`: either the writer sees what was sent before this ring,
        // or this sees the writer parked.
        fence(Ordering::SeqCst);
        if !wake(self.parked.load(Ordering::SeqCst)) {
            return;
        }
        let mut bell = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        if bell.waiting {
            bell.waiting = false;
            bell.rung = true;
            self.cv.notify_one();
        }
    }

    /// The writer: whether an urgent ring came since it last asked (and forgets it).
    pub fn take_urgent(&self) -> bool {
        self.urgent.load(Ordering::SeqCst) && self.urgent.swap(false, Ordering::SeqCst)
    }

    /// The writer sleeps until rung or for `timeout` (None: until rung). `has_work` is asked once
    /// it is marked parked, so a send just before is not missed. True when the timeout passed.
    pub fn park(&self, how: Park, timeout: Option<Duration>, has_work: impl FnOnce() -> bool) -> bool {
        let mut bell = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let parked = match how {
            Park::Idle => IDLE,
            Park::Holding => HOLDING,
            Park::Lingering => LINGERING,
        };
        self.parked.store(parked, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if self.urgent.load(Ordering::SeqCst) || (how == Park::Idle && has_work()) {
            self.parked.store(AWAKE, Ordering::SeqCst);
            return false;
        }
        self.parks.fetch_add(1, Ordering::Relaxed);
        bell.waiting = true;
        bell.rung = false;
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let timed_out = loop {
            if bell.rung {
                break false;
            }
            match deadline {
                None => bell = self.cv.wait(bell).unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        break true;
                    }
                    bell = self.cv.wait_timeout(bell, deadline - now).unwrap_or_else(PoisonError::into_inner).0;
                }
            }
        };
        bell.waiting = false;
        bell.rung = false;
        self.parked.store(AWAKE, Ordering::SeqCst);
        timed_out
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::thread;

    use super::*;

    #[test]
    fn a_ring_before_the_park_is_not_lost() {
        let bell = Doorbell::default();
        bell.ring_urgent();
        assert!(!bell.park(Park::Idle, None, || false), "returns at once, without waiting");
        assert!(bell.take_urgent());
        assert!(!bell.take_urgent());
    }

    #[test]
    fn an_idle_park_sees_work_sent_before_it() {
        let bell = Doorbell::default();
        assert!(!bell.park(Park::Idle, None, || true));
        assert_eq!(bell.parks.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_park_times_out_without_a_ring() {
        let bell = Doorbell::default();
        assert!(bell.park(Park::Idle, Some(Duration::from_millis(5)), || false));
    }

    #[test]
    fn a_holding_writer_is_woken_by_an_urgent_ring_only() {
        let bell = Arc::new(Doorbell::default());
        let writer = {
            let bell = bell.clone();
            thread::spawn(move || bell.park(Park::Holding, Some(Duration::from_secs(60)), || true))
        };
        while bell.parks.load(Ordering::Relaxed) == 0 {
            thread::yield_now();
        }
        bell.ring_idle(); // a document in a busy turn: the holding writer sleeps on
        thread::sleep(Duration::from_millis(20));
        assert!(!writer.is_finished());
        bell.ring_urgent();
        assert_eq!(writer.join().ok(), Some(false), "woken, not timed out");
    }

    #[test]
    fn a_promised_turn_rings_past_its_hold_at_a_checked_document() {
        let gate = TurnGate::new(Duration::ZERO);
        gate.promise_end();
        for _ in 1..HOLD_CHECK_EVERY {
            gate.sent(0);
        }
        assert!(!gate.bell.take_urgent(), "not checked yet");
        gate.sent(0);
        assert!(gate.bell.take_urgent(), "the hold (zero here) has passed");
    }

    #[test]
    fn a_promised_turn_does_not_ring_for_its_documents_until_its_end() {
        let gate = TurnGate::new(Duration::from_secs(600));
        gate.promise_end();
        gate.set_busy(true, || unreachable!());
        for _ in 0..100 {
            gate.sent(0);
        }
        assert!(!gate.bell.take_urgent());
        gate.sent(WRITER_HOLD_MAX_BYTES);
        assert!(gate.bell.take_urgent(), "the byte bound rings");
        gate.set_busy(false, || true);
        assert!(gate.bell.take_urgent(), "the end rings when something waits");
        gate.set_busy(false, || false);
        assert!(!gate.bell.take_urgent(), "and not when nothing does");
    }
}
