//! View coalescing: while queued events are processed, each view a slice touched is written once,
//! at the end of the slice, instead of once per event.
//!
//! Why it is safe: a view document is a snapshot of the view's state (counters, time spent, the
//! user and global attributes of the event that last touched it). State that reaches the document
//! changes only when an event touches the view, and touching marks it dirty, so the document
//! emitted at the end of the slice equals the one inline processing would have written after the
//! view's last event; only `_dd.document_version` differs (fewer versions were written). The
//! intake keeps the highest version of each view, so the final state is what it sees either way.
//!
//! On the inline path the pipeline emits dirty views right after their event, so occasional calls
//! behave as before; [`DirtyMark`] is the same there and simply never finds a view already dirty.
//! [`ViewEmission::writes_at`] is the whole policy: the dispatcher says how an event was reached
//! and the pipeline asks it at each [`Moment`].

/// Whether a view owes a document, and which event last touched it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirtyMark {
    dirty: bool,
    by_seq: u64,
}

impl DirtyMark {
    /// Records that event `seq` touched the view. Returns `true` when this saved a write: the view
    /// was already owed a document for an earlier event, which inline processing would have
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

    pub fn is_dirty(&self) -> bool {
        self.dirty
    }
}

/// How the event being processed was reached, as far as its views' documents are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewEmission {
    /// The inline path (and re-entrant calls on it): views are written right after the event
    /// that touched them, so occasional calls behave as they did before the queue existed.
    PerEvent,
    /// The queued path (slices and drains): views are written once, at the end of the slice.
    PerSlice,
}

/// A point of processing where owed view documents may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// Right after one event was applied.
    AfterEvent,
    /// The end of a slice or a drain.
    SliceEnd,
    /// Before a consent change is applied: the views owed so far belong to the old consent, and
    /// must reach storage under it.
    BeforeConsentChange,
}

impl ViewEmission {
    /// The emission policy: whether the views owed a document are written at `moment`.
    pub fn writes_at(self, moment: Moment) -> bool {
        match moment {
            Moment::AfterEvent => self == Self::PerEvent,
            Moment::SliceEnd | Moment::BeforeConsentChange => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_inline_path_writes_after_each_event() {
        assert!(ViewEmission::PerEvent.writes_at(Moment::AfterEvent));
        assert!(!ViewEmission::PerSlice.writes_at(Moment::AfterEvent));
        for e in [ViewEmission::PerEvent, ViewEmission::PerSlice] {
            assert!(e.writes_at(Moment::SliceEnd));
            assert!(e.writes_at(Moment::BeforeConsentChange));
        }
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
