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

/// When the documents of dirty views are emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewEmission {
    /// Right after the event that touched them (inline path, re-entrant calls on it).
    PerEvent,
    /// Once, at the end of the slice or drain (queued path).
    PerSlice,
}

#[cfg(test)]
mod tests {
    use super::*;

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
