//! The scope tree: application → session → view → action / resource / error, and the context every
//! event carries (global attributes, user, tracking consent).
//!
//! [`Scopes::apply`] processes one captured event and appends the non-view documents it produces;
//! views it touches are marked dirty and written by [`Scopes::emit_views`] when the emission
//! policy lets them out (at turn ends, at most once per interval, at once at forced points and
//! when a view ends: see [`super::coalesce`]). Everything is
//! judged by the event's own call-time stamps, never by the time of processing, so a queued event
//! gives the same documents as it would have given inline.
//!
//! Documents are built from shared `Arc`s (identity, session id, view ref, user, global
//! attributes) plus the call's own attributes, which are moved, not copied.
//!
//! One file per concern, each with its rules: `sessions.rs` (start, expiry, sampling, the gate
//! the binding reads), `views.rs` (the view stack, counts, launch view, emission), `resources.rs`
//! (pending resources and their caps), `carried.rs` (what every document carries: global
//! attributes and their budget, user, connectivity, consent). [`Scopes::apply`] only routes.

mod carried;
mod resources;
mod sessions;
mod views;

use std::sync::Arc;

use crate::core::attrs::Attrs;
use crate::core::config::TrackingConsent;
use crate::core::context::Connectivity;
use crate::core::document::{Common, Document, Identity};
use crate::core::event::{Event, EventKind};
use crate::core::ids::IdGen;
use crate::core::stats::DispatchCounters;
use carried::Carried;
use sessions::{Resume, Session};
use views::ViewScope;

pub use sessions::SessionGate;
pub use views::LAUNCH_VIEW_NAME;

/// The call-time stamps of the event being applied.
#[derive(Clone, Copy, Debug)]
pub(super) struct At {
    pub(super) seq: u64,
    pub(super) wall_ms: i64,
    pub(super) mono_ns: u64,
}

/// The whole scope state of one pipeline (shared by its dispatchers behind a mutex).
pub struct Scopes {
    identity: Arc<Identity>,
    counters: Arc<DispatchCounters>,
    ids: IdGen,
    /// What every document carries: global attributes, user, connectivity, consent.
    carried: Carried,
    session: Option<Session>,
    /// `sessionSampleRate`, 0 to 100.
    sample_rate: f64,
    gate: Arc<SessionGate>,
    resume: Option<Resume>,
    /// Oldest first. Only the last one can be active; stopped ones stay until their document is
    /// emitted and their pending resources are stopped.
    views: Vec<ViewScope>,
}

impl Scopes {
    pub fn new(identity: Arc<Identity>, consent: TrackingConsent, counters: Arc<DispatchCounters>, ids: IdGen) -> Self {
        let sample_rate = identity.session_sample_rate;
        Self {
            identity,
            counters,
            ids,
            carried: Carried::new(consent),
            session: None,
            sample_rate,
            gate: Arc::default(),
            resume: None,
            views: Vec::new(),
        }
    }

    /// Caps what the global attributes add to every document.
    pub fn with_global_budget(mut self, max_bytes: u64) -> Self {
        self.carried.set_global_budget(max_bytes);
        self
    }

    /// What the binding reads to skip the calls of an untracked session.
    pub fn gate(&self) -> &Arc<SessionGate> {
        &self.gate
    }

    /// The connectivity documents carry until the first `SetConnectivity` event.
    pub fn with_connectivity(mut self, connectivity: Option<Connectivity>) -> Self {
        self.carried.connectivity = connectivity.map(Arc::new);
        self
    }

    /// Applies one event; its non-view documents are appended to `out`, touched views are marked.
    /// Each event goes to its concern's rule.
    pub fn apply(&mut self, ev: Event, out: &mut Vec<Document>) {
        let Event { seq, wall_ms, mono_ns, kind, attrs } = ev;
        let at = At { seq, wall_ms, mono_ns };
        match kind {
            EventKind::AddAttribute { key, value } => self.carried.add_attribute(key, value, &self.counters),
            EventKind::RemoveAttribute { key } => self.carried.remove_attribute(&key),
            EventKind::SetUser(user) => self.carried.user = user.map(Arc::new),
            EventKind::SetConsent(consent) => self.carried.consent = consent,
            EventKind::SetConnectivity(c) => self.carried.connectivity = Some(Arc::new(c)),
            EventKind::StopSession => self.stop_session(&at),
            EventKind::KeepAlive => self.keep_alive(&at),
            EventKind::AddTiming { name } => self.add_timing(&at, name),
            EventKind::StartView { key, name } => {
                self.open_session(&at, false);
                self.start_view(&at, key.into(), name.into(), attrs);
            }
            EventKind::StopView { key } => self.stop_view(&at, &key, attrs),
            EventKind::Action { action_type, name } => self.add_action(&at, action_type, name, attrs, out),
            EventKind::Error { message, source, stack, is_crash, details } => {
                self.add_error(&at, message, source, stack, is_crash, details, attrs, out)
            }
            EventKind::StartResource { key, method, url } => self.start_resource(&at, key, method, url, attrs),
            EventKind::StopResource { key, status_code, kind, size, details } => {
                self.stop_resource(&at, key, status_code, kind, size, details, attrs, out)
            }
            EventKind::StopResourceWithError { key, message, error_type } => {
                self.fail_resource(&at, key, message, error_type, attrs, out)
            }
            EventKind::LongTask { duration_ns, start_wall_ms } => {
                self.add_long_task(&at, duration_ns, start_wall_ms, attrs, out)
            }
            EventKind::AppLaunch { duration_ns, start_wall_ms } => {
                self.add_app_launch(&at, duration_ns, start_wall_ms, attrs, out)
            }
        }
    }

    pub(super) fn common(&self, date: i64, session_id: Arc<str>, attrs: Attrs) -> Common {
        Common {
            date,
            identity: Arc::clone(&self.identity),
            session_id,
            usr: self.carried.user.clone(),
            connectivity: self.carried.connectivity.clone(),
            global: Arc::clone(&self.carried.global),
            attrs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sessions::Session;
    use super::*;
    use crate::core::coalesce::{Moment, ViewPolicy};
    use crate::core::config::{SESSION_INACTIVITY_MS, SESSION_MAX_DURATION_MS};
    use crate::core::document::Identity;
    use crate::core::event::ActionType;

    fn scopes() -> (Scopes, Arc<DispatchCounters>) {
        let counters = Arc::new(DispatchCounters::default());
        let identity = Arc::new(Identity::new("app", "svc", "1", None, "harmonyos"));
        (Scopes::new(identity, TrackingConsent::Granted, Arc::clone(&counters), IdGen::with_seed(1)), counters)
    }

    fn ev(seq: u64, wall_ms: i64, kind: EventKind) -> Event {
        Event { seq, wall_ms, mono_ns: wall_ms as u64 * 1_000_000, kind, attrs: Attrs::default() }
    }

    fn tap(seq: u64, wall_ms: i64) -> Event {
        ev(seq, wall_ms, EventKind::Action { action_type: ActionType::Tap, name: "t".into() })
    }

    #[test]
    fn sessions_expire_strictly_after_their_limits() {
        let s = Session { id: "s".into(), start_ms: 0, last_ms: 0, tracked: true };
        assert!(!s.expired_at(SESSION_INACTIVITY_MS));
        assert!(s.expired_at(SESSION_INACTIVITY_MS + 1));
        assert!(!s.expired_at(-5), "a clock stepped back does not expire it");
        let busy = Session { id: "s".into(), start_ms: 0, last_ms: SESSION_MAX_DURATION_MS, tracked: true };
        assert!(!busy.expired_at(SESSION_MAX_DURATION_MS));
        assert!(busy.expired_at(SESSION_MAX_DURATION_MS + 1));
    }

    #[test]
    fn touches_between_two_emissions_are_counted_as_saved_writes() {
        let (mut s, counters) = scopes();
        let mut out = Vec::new();
        s.apply(ev(1, 0, EventKind::StartView { key: "k".into(), name: "n".into() }), &mut out);
        for seq in 2..5 {
            s.apply(tap(seq, seq as i64), &mut out);
        }
        assert_eq!(out.len(), 3, "actions only; the view waits");
        assert!(s.has_dirty_views());
        s.emit_views(ViewPolicy::new(1_000), Moment::Forced, 5_000_000, &mut out);
        assert!(!s.has_dirty_views());
        let Some(Document::View(v)) = out.last() else { panic!("no view document") };
        assert_eq!((v.action_count, v.document_version, v.time_spent_ns), (3, 1, 4_000_000));
        assert_eq!(counters.view_writes_saved.get(), 3, "4 touches, 1 write");
    }

    #[test]
    fn an_action_without_a_view_opens_the_launch_view_in_a_new_session() {
        let (mut s, counters) = scopes();
        let mut out = Vec::new();
        s.apply(tap(1, 10), &mut out);
        s.emit_views(ViewPolicy::new(1_000), Moment::Forced, 10_000_000, &mut out);
        assert_eq!(s.active_view_key(), Some(LAUNCH_VIEW_NAME));
        assert_eq!(counters.sessions_started.get(), 1);
        assert_eq!(counters.view_writes_saved.get(), 0, "opening and counting is one write");
        assert!(s.session_id(10).is_some());
    }
}
