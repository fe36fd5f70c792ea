//! Sessions: one live at a time, started by the first event that needs one, ended by
//! inactivity, by their maximum duration or by `stopSession`, judged by each event's own
//! call-time stamp; sampled once at their start (`sessionSampleRate`).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use super::{At, Scopes};
use crate::core::attrs::Attrs;
use crate::core::config::{SESSION_INACTIVITY_MS, SESSION_MAX_DURATION_MS};

#[derive(Clone, Debug)]
pub(super) struct Session {
    pub(super) id: Arc<str>,
    pub(super) start_ms: i64,
    pub(super) last_ms: i64,
    /// Drawn once, when the session starts (`sessionSampleRate`): an untracked session writes
    /// nothing, and its calls are skipped on the caller's turn ([`SessionGate`]).
    pub(super) tracked: bool,
}

/// What the binding reads without the scope lock to skip a call of a session that is not tracked
/// before copying its arguments: such a call would write nothing, so it costs the caller a few
/// atomic loads. It still counts as the session's activity, so the session lasts as long as an
/// unsampled one would have, and the next session is drawn at the same moment.
#[derive(Debug, Default)]
pub struct SessionGate {
    pub(super) untracked: AtomicBool,
    pub(super) start_ms: AtomicI64,
    pub(super) last_ms: AtomicI64,
}

impl SessionGate {
    /// Whether a call at `wall_ms` certainly lands in the current session and that session is not
    /// tracked; if so, the call is noted as the session's activity.
    pub fn skips(&self, wall_ms: i64) -> bool {
        if !self.untracked.load(Ordering::Acquire) {
            return false;
        }
        let (start, last) = (self.start_ms.load(Ordering::Relaxed), self.last_ms.load(Ordering::Relaxed));
        let live = wall_ms.saturating_sub(last) <= SESSION_INACTIVITY_MS
            && wall_ms.saturating_sub(start) <= SESSION_MAX_DURATION_MS;
        if live {
            self.last_ms.fetch_max(wall_ms, Ordering::Relaxed);
        }
        live
    }

    pub(super) fn open(&self, s: &Session) {
        self.start_ms.store(s.start_ms, Ordering::Relaxed);
        self.last_ms.store(s.last_ms, Ordering::Relaxed);
        self.untracked.store(!s.tracked, Ordering::Release);
    }

    pub(super) fn close(&self) {
        self.untracked.store(false, Ordering::Release);
    }

    /// The latest activity the binding noted for the untracked session.
    pub(super) fn last_ms(&self) -> i64 {
        self.last_ms.load(Ordering::Relaxed)
    }
}

impl Session {
    /// Judged by an event's own wall-clock time. A clock stepped backwards never expires a session
    /// (the differences are negative).
    pub(super) fn expired_at(&self, now_ms: i64) -> bool {
        now_ms.saturating_sub(self.last_ms) > SESSION_INACTIVITY_MS
            || now_ms.saturating_sub(self.start_ms) > SESSION_MAX_DURATION_MS
    }
}

/// The view that was on screen when its session ended; the next session reopens it (new id), as
/// the user is still looking at it.
#[derive(Clone, Debug)]
pub(super) struct Resume {
    pub(super) key: Arc<str>,
    pub(super) name: Arc<str>,
    pub(super) attrs: Attrs,
}

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    /// Inactivity or total duration: the view ended with its last event.
    Expired,
    /// `stopSession`: the view ends at that call.
    Stopped,
}

impl Scopes {
    /// The current session's id, if one is live at `now_ms` (no event is needed to expire it).
    pub fn session_id(&self, now_ms: i64) -> Option<Arc<str>> {
        self.session.as_ref().filter(|s| !s.expired_at(now_ms)).map(|s| Arc::clone(&s.id))
    }

    /// `stopSession`: the live session ends at this call.
    pub(super) fn stop_session(&mut self, at: &At) {
        if self.live_session(at) {
            self.end_session(at, Ending::Stopped);
        }
    }

    /// `keepAlive`: the live session and the active view see activity.
    pub(super) fn keep_alive(&mut self, at: &At) {
        if self.live_session(at) {
            self.touch_active(at);
        }
    }

    /// Whether a session is live at the event's time; an expired one is ended here (its view gets
    /// its final document) and a live one is extended.
    pub(super) fn live_session(&mut self, at: &At) -> bool {
        let Some(s) = &mut self.session else { return false };
        if !s.tracked {
            // Calls the binding skipped were this session's activity too.
            s.last_ms = s.last_ms.max(self.gate.last_ms());
        }
        if !s.expired_at(at.wall_ms) {
            s.last_ms = s.last_ms.max(at.wall_ms);
            return true;
        }
        self.end_session(at, Ending::Expired);
        false
    }

    /// Makes sure a session is live for an event that needs one; a new session reopens the view
    /// the previous one ended on, unless the event starts a view itself.
    pub(super) fn open_session(&mut self, at: &At, resume: bool) {
        if self.live_session(at) {
            return;
        }
        let id: Arc<str> = self.ids.uuid().into();
        // No draw at 100 (nor at 0): the ids of a fully tracked pipeline stay what they were.
        let tracked = match self.sample_rate {
            r if r >= 100.0 => true,
            r if r <= 0.0 => false,
            r => self.ids.percent() < r,
        };
        let session = Session { id, start_ms: at.wall_ms, last_ms: at.wall_ms, tracked };
        self.gate.open(&session);
        self.session = Some(session);
        self.counters.sessions_started.incr();
        if !tracked {
            self.counters.sessions_untracked.incr();
        }
        match self.resume.take() {
            Some(r) if resume => self.start_view(at, r.key, r.name, r.attrs),
            _ => {}
        }
    }

    pub(super) fn end_session(&mut self, at: &At, how: Ending) {
        if let Some(i) = self.active_index() {
            if let Some(v) = self.views.get_mut(i) {
                if how == Ending::Stopped {
                    v.end_mono_ns = v.end_mono_ns.max(at.mono_ns);
                }
                v.active = false;
                self.resume =
                    Some(Resume { key: Arc::clone(&v.key), name: Arc::clone(&v.view.name), attrs: v.attrs.clone() });
            }
            self.touch(i, at);
            self.enforce_stopped_cap();
        }
        self.session = None;
        self.gate.close();
    }
}
