//! View coalescing: when a view's document is written. A view document is a snapshot of the
//! view's state, so writing it less often loses nothing a reader keeps, as long as the last state
//! is written, and written in time.
//!
//! Why it is safe: state that reaches the document (counters, time spent, the user and global
//! attributes of the event that last touched it) changes only when an event touches the view, and
//! touching marks it dirty, so a document written later equals the one that would have been
//! written right after the view's last event; only `_dd.document_version` differs (fewer versions
//! were written). The intake keeps the highest version of each view, so the final state is what it
//! sees either way.
//!
//! The rule, [`ViewPolicy::verdict`], asked by the pipeline at each [`Moment`]:
//!
//! - **Forced** points write every owed view at once: each synchronous drain (before its event:
//!   `addError`, `markCrash`, `keepAlive`, `stopSession`, `setUser`, `setTrackingConsent`, an
//!   action that opens a launch view), after `keepAlive` (the app going to the background),
//!   `flush`, `stop`, `sessionId`, a dispatcher's drop, and every call after `stop()`. So a view
//!   goes out under the user and consent of its events, and before anything that reads the session.
//! - **A view that is no longer active** (stopped, replaced, its session ended, crashed) is written
//!   right after the event that ended it: its last document is never late.
//! - **An active view** is written at most once per turn, at the end of the turn (the turn-end
//!   timer, or the end of a slice, which is a turn of its own), and at most once per
//!   `viewUpdateIntervalMs`: at a turn end before the interval has passed since its last document
//!   it waits, and the dispatcher schedules [`Timer::ViewsDue`](super::seam::Timer::ViewsDue) for
//!   the end of the interval, so its last state is written then even if nothing else happens.
//!
//! What a `kill -9` costs: every non-view document (action, error, resource) is handed to the sink
//! with its event, so it is never lost to throttling; a killed process loses at most the view
//! updates owed since the view's last document: at most one interval (plus the current turn) of
//! counters and time spent, which the next session cannot recover.
//!
//! An interval of 0 turns throttling off: the inline path writes the view after each event and a
//! slice once at its end, as before coalescing covered the inline path (benchmarks use it for the
//! "before" figures).

use super::event::EventKind;

/// Whether the views owed must be written before `kind` is applied, and after it. Before every
/// drain point, so the queue's and the inline path's views go out first, under the user and the
/// consent of their events; after `keepAlive`, the host's signal that the app goes to the
/// background (a process in the background may be killed without notice).
pub fn forced_around(kind: &EventKind) -> (bool, bool) {
    (kind.drains_queue(), matches!(kind, EventKind::KeepAlive))
}

/// Whether a view owes a document, which event last touched it, and when its last one was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirtyMark {
    dirty: bool,
    by_seq: u64,
    /// Monotonic ns of the view's last document; `None` until its first.
    written_ns: Option<u64>,
}

impl DirtyMark {
    /// Records that event `seq` touched the view. Returns `true` when this saved a write: the view
    /// was already owed a document for an earlier event, which per-event writing would have
    /// written separately. One event touching a view twice (a launch view opened by an action,
    /// then counting it) is one write either way.
    pub fn mark(&mut self, seq: u64) -> bool {
        let saved = self.dirty && self.by_seq != seq;
        self.dirty = true;
        self.by_seq = seq;
        saved
    }

    /// Clears the mark; `true` if a document was owed.
    pub fn take(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// Records that the view's document was written at `now_ns`.
    pub fn written_at(&mut self, now_ns: u64) {
        self.written_ns = Some(now_ns);
    }

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }
}

/// A point of processing where owed view documents may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// Right after an event processed on the inline path (or a re-entrant call on it).
    AfterInline,
    /// Right after a queued event, inside a slice or a drain.
    AfterQueued,
    /// The end of a turn: the turn-end timer, the end of a slice, the `ViewsDue` timer.
    TurnEnd,
    /// A point where no view may stay owed (see the module docs).
    Forced,
}

/// What to do with one view at a [`Moment`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing owed.
    Clean,
    /// Write its document now.
    Write,
    /// Owed, written at the first turn end at or after this monotonic ns.
    Wait { due_ns: u64 },
}

/// The emission policy of one pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewPolicy {
    interval_ns: u64,
}

impl ViewPolicy {
    pub fn new(view_update_interval_ms: u32) -> Self {
        Self { interval_ns: u64::from(view_update_interval_ms) * 1_000_000 }
    }

    /// The whole policy: what happens at `moment` (at monotonic `now_ns`) to a view marked `mark`,
    /// active or not.
    pub fn verdict(self, mark: &DirtyMark, active: bool, moment: Moment, now_ns: u64) -> Verdict {
        if !mark.dirty {
            return Verdict::Clean;
        }
        if moment == Moment::Forced || !active {
            return Verdict::Write;
        }
        let due_ns = match mark.written_ns {
            Some(at) if self.interval_ns > 0 => at.saturating_add(self.interval_ns),
            _ => now_ns,
        };
        let writes = match moment {
            Moment::AfterInline => self.interval_ns == 0,
            Moment::AfterQueued => false,
            Moment::TurnEnd => now_ns >= due_ns,
            Moment::Forced => true,
        };
        if writes {
            Verdict::Write
        } else {
            Verdict::Wait { due_ns: due_ns.max(now_ns) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn dirty(written_ns: Option<u64>) -> DirtyMark {
        let mut m = DirtyMark { written_ns, ..DirtyMark::default() };
        m.mark(1);
        m
    }

    #[test]
    fn an_active_view_waits_for_the_turn_end_and_the_interval() {
        let p = ViewPolicy::new(1_000);
        let fresh = dirty(None);
        assert_eq!(p.verdict(&fresh, true, Moment::AfterInline, 5 * MS), Verdict::Wait { due_ns: 5 * MS });
        assert_eq!(p.verdict(&fresh, true, Moment::AfterQueued, 5 * MS), Verdict::Wait { due_ns: 5 * MS });
        assert_eq!(p.verdict(&fresh, true, Moment::TurnEnd, 5 * MS), Verdict::Write, "first document");
        let recent = dirty(Some(10 * MS));
        assert_eq!(p.verdict(&recent, true, Moment::TurnEnd, 500 * MS), Verdict::Wait { due_ns: 1_010 * MS });
        assert_eq!(p.verdict(&recent, true, Moment::TurnEnd, 1_010 * MS), Verdict::Write);
    }

    #[test]
    fn forced_points_and_ended_views_write_at_once() {
        let p = ViewPolicy::new(1_000);
        let recent = dirty(Some(10 * MS));
        for m in [Moment::AfterInline, Moment::AfterQueued, Moment::TurnEnd, Moment::Forced] {
            assert_eq!(p.verdict(&recent, false, m, 11 * MS), Verdict::Write, "{m:?}, view stopped");
        }
        assert_eq!(p.verdict(&recent, true, Moment::Forced, 11 * MS), Verdict::Write);
        assert_eq!(p.verdict(&DirtyMark::default(), false, Moment::Forced, 11 * MS), Verdict::Clean);
    }

    #[test]
    fn a_zero_interval_writes_after_each_inline_event_and_at_each_slice_end() {
        let p = ViewPolicy::new(0);
        let recent = dirty(Some(10 * MS));
        assert_eq!(p.verdict(&recent, true, Moment::AfterInline, 10 * MS), Verdict::Write);
        assert_eq!(p.verdict(&recent, true, Moment::AfterQueued, 10 * MS), Verdict::Wait { due_ns: 10 * MS });
        assert_eq!(p.verdict(&recent, true, Moment::TurnEnd, 10 * MS), Verdict::Write);
    }

    #[test]
    fn a_second_event_on_a_dirty_view_saves_one_write() {
        let mut m = DirtyMark::default();
        assert!(!m.mark(1));
        assert!(!m.mark(1), "same event touching twice is one write");
        assert!(m.mark(2));
        assert!(m.mark(3));
        assert!(m.take());
        assert!(!m.take());
        assert!(!m.mark(4), "a clean view owes nothing yet");
    }
}
