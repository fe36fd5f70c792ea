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

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use super::attrs::Attrs;
use super::coalesce::{DirtyMark, Moment, Verdict, ViewPolicy};
use super::config::{
    global_attribute_bytes, TrackingConsent, MAX_PENDING_RESOURCES_PER_VIEW, MAX_STOPPED_VIEWS_WITH_PENDING,
    SESSION_INACTIVITY_MS, SESSION_MAX_DURATION_MS,
};
use super::context::Connectivity;
use super::document::{
    ActionDocument, Common, CustomTimings, Document, ErrorDocument, Identity, ResourceDocument, ViewDocument, ViewRef,
};
use super::event::{Attributes, Event, EventKind, HttpMethod, UserInfo};
use super::ids::{IdGen, Uuid};
use super::stats::DispatchCounters;

/// Name and key (its `url`) of the view an action, error or resource opens when no view is active,
/// so nothing reported before the first `startView` is lost. The seed SDK's name.
pub const LAUNCH_VIEW_NAME: &str = "ApplicationLaunch";

/// The call-time stamps of the event being applied.
#[derive(Clone, Copy, Debug)]
struct At {
    seq: u64,
    wall_ms: i64,
    mono_ns: u64,
}

#[derive(Clone, Debug)]
struct Session {
    id: Arc<str>,
    start_ms: i64,
    last_ms: i64,
    /// Drawn once, when the session starts (`sessionSampleRate`): an untracked session writes
    /// nothing, and its calls are skipped on the caller's turn ([`SessionGate`]).
    tracked: bool,
}

/// What the binding reads without the scope lock to skip a call of a session that is not tracked
/// before copying its arguments: such a call would write nothing, so it costs the caller a few
/// atomic loads. It still counts as the session's activity, so the session lasts as long as an
/// unsampled one would have, and the next session is drawn at the same moment.
#[derive(Debug, Default)]
pub struct SessionGate {
    untracked: AtomicBool,
    start_ms: AtomicI64,
    last_ms: AtomicI64,
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

    fn open(&self, s: &Session) {
        self.start_ms.store(s.start_ms, Ordering::Relaxed);
        self.last_ms.store(s.last_ms, Ordering::Relaxed);
        self.untracked.store(!s.tracked, Ordering::Release);
    }

    fn close(&self) {
        self.untracked.store(false, Ordering::Release);
    }

    /// The latest activity the binding noted for the untracked session.
    fn last_ms(&self) -> i64 {
        self.last_ms.load(Ordering::Relaxed)
    }
}

impl Session {
    /// Judged by an event's own wall-clock time. A clock stepped backwards never expires a session
    /// (the differences are negative).
    fn expired_at(&self, now_ms: i64) -> bool {
        now_ms.saturating_sub(self.last_ms) > SESSION_INACTIVITY_MS
            || now_ms.saturating_sub(self.start_ms) > SESSION_MAX_DURATION_MS
    }
}

/// The view that was on screen when its session ended; the next session reopens it (new id), as
/// the user is still looking at it.
#[derive(Clone, Debug)]
struct Resume {
    key: Arc<str>,
    name: Arc<str>,
    attrs: Attrs,
}

#[derive(Clone, Debug)]
struct PendingResource {
    key: String,
    id: Uuid,
    method: HttpMethod,
    url: String,
    start_wall_ms: i64,
    start_mono_ns: u64,
    attrs: Attrs,
}

#[derive(Clone, Debug)]
struct ViewScope {
    key: Arc<str>,
    view: ViewRef,
    session_id: Arc<str>,
    start_wall_ms: i64,
    start_mono_ns: u64,
    /// Monotonic time of the last event that touched the view while active (or of its stop).
    end_mono_ns: u64,
    active: bool,
    /// Its session is tracked (sampled in): only then are its documents written.
    tracked: bool,
    action_count: u64,
    error_count: u64,
    crash_count: u64,
    resource_count: u64,
    /// startView's attributes, then stopView's merged over them.
    attrs: Attrs,
    /// User and global attributes in force at the last event that touched the view: its document
    /// carries these whenever it is emitted.
    usr: Option<Arc<UserInfo>>,
    connectivity: Option<Arc<Connectivity>>,
    global: Arc<Attributes>,
    /// Resources started on this view and not stopped yet, oldest first.
    pending: VecDeque<PendingResource>,
    document_version: u64,
    custom_timings: Arc<CustomTimings>,
    mark: DirtyMark,
}

impl ViewScope {
    fn document(&mut self, identity: &Arc<Identity>) -> Document {
        self.document_version += 1;
        Document::View(ViewDocument {
            common: Common {
                date: self.start_wall_ms,
                identity: Arc::clone(identity),
                session_id: Arc::clone(&self.session_id),
                usr: self.usr.clone(),
                connectivity: self.connectivity.clone(),
                global: Arc::clone(&self.global),
                attrs: self.attrs.clone(),
            },
            view: self.view.clone(),
            document_version: self.document_version,
            time_spent_ns: self.end_mono_ns.saturating_sub(self.start_mono_ns),
            is_active: self.active,
            action_count: self.action_count,
            error_count: self.error_count,
            crash_count: self.crash_count,
            resource_count: self.resource_count,
            custom_timings: Arc::clone(&self.custom_timings),
        })
    }
}

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// Inactivity or total duration: the view ended with its last event.
    Expired,
    /// `stopSession`: the view ends at that call.
    Stopped,
}

/// The whole scope state of one pipeline (shared by its dispatchers behind a mutex).
pub struct Scopes {
    identity: Arc<Identity>,
    counters: Arc<DispatchCounters>,
    ids: IdGen,
    global: Arc<Attributes>,
    /// What `global` adds to every document (see `global_attribute_bytes`), and its cap. The
    /// binding refuses an `addAttribute` past the cap at its call, in call order; across threads
    /// the calls are applied in another order, so the cap is held here too.
    global_bytes: u64,
    global_max_bytes: u64,
    user: Option<Arc<UserInfo>>,
    connectivity: Option<Arc<Connectivity>>,
    consent: TrackingConsent,
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
            global: Arc::new(Attributes::new()),
            global_bytes: 0,
            global_max_bytes: u64::MAX,
            user: None,
            connectivity: None,
            consent,
            session: None,
            sample_rate,
            gate: Arc::default(),
            resume: None,
            views: Vec::new(),
        }
    }

    /// Caps what the global attributes add to every document.
    pub fn with_global_budget(mut self, max_bytes: u64) -> Self {
        self.global_max_bytes = max_bytes;
        self
    }

    /// What the binding reads to skip the calls of an untracked session.
    pub fn gate(&self) -> &Arc<SessionGate> {
        &self.gate
    }

    /// The connectivity documents carry until the first `SetConnectivity` event.
    pub fn with_connectivity(mut self, connectivity: Option<Connectivity>) -> Self {
        self.connectivity = connectivity.map(Arc::new);
        self
    }

    /// Applies one event; its non-view documents are appended to `out`, touched views are marked.
    pub fn apply(&mut self, ev: Event, out: &mut Vec<Document>) {
        let Event { seq, wall_ms, mono_ns, kind, attrs } = ev;
        let at = At { seq, wall_ms, mono_ns };
        match kind {
            EventKind::AddAttribute { key, value } => {
                let before = self.global.get(&key).map_or(0, |v| global_attribute_bytes(&key, v));
                let total = self.global_bytes.saturating_sub(before) + global_attribute_bytes(&key, &value);
                if total > self.global_max_bytes {
                    // Only when calls from several threads were applied in another order than
                    // they were made (one thread's are refused at the call).
                    self.counters.attributes_refused.incr();
                    crate::log::warn(&format!(
                        "addAttribute({key:?}) not applied: the global attributes would take {total} bytes of every \
                         document, more than {}",
                        self.global_max_bytes
                    ));
                    return;
                }
                self.global_bytes = total;
                // Copy-on-write: documents already built keep the map of their call.
                Arc::make_mut(&mut self.global).insert(key, value);
            }
            EventKind::RemoveAttribute { key } => {
                if let Some(v) = self.global.get(&key) {
                    self.global_bytes = self.global_bytes.saturating_sub(global_attribute_bytes(&key, v));
                    Arc::make_mut(&mut self.global).remove(&key);
                }
            }
            EventKind::SetUser(user) => self.user = user.map(Arc::new),
            EventKind::SetConsent(consent) => self.consent = consent,
            EventKind::SetConnectivity(c) => self.connectivity = Some(Arc::new(c)),
            EventKind::StopSession => {
                if self.live_session(&at) {
                    self.end_session(&at, Ending::Stopped);
                }
            }
            EventKind::KeepAlive => {
                if self.live_session(&at) {
                    self.touch_active(&at);
                }
            }
            EventKind::AddTiming { name } => {
                if self.live_session(&at) {
                    if let Some(i) = self.active_index() {
                        let view = &mut self.views[i];
                        let since_start = at.mono_ns.saturating_sub(view.start_mono_ns);
                        Arc::make_mut(&mut view.custom_timings).insert(name, since_start);
                        self.touch(i, &at);
                    }
                }
            }
            EventKind::StartView { key, name } => {
                self.open_session(&at, false);
                self.start_view(&at, key.into(), name.into(), attrs);
            }
            EventKind::StopView { key } => self.stop_view(&at, &key, attrs),
            EventKind::Action { action_type, name } => {
                let Some((common, view, id)) = self.on_view(&at, attrs, |v| v.action_count += 1) else { return };
                out.push(Document::Action(ActionDocument { common, view, id, action_type, target_name: name }));
            }
            EventKind::Error { message, source, stack, is_crash, details } => {
                // A crash counts on its view (`view.crash.count`), and ends it: the app is going
                // down, so no later update will close it. Its final document is what the mobile
                // SDKs write for a crashed view (dd-sdk-android's late crash report): the crash
                // counted, `is_active: false`, time spent up to the crash.
                let count = |v: &mut ViewScope| {
                    v.error_count += 1;
                    if is_crash {
                        v.crash_count += 1;
                        v.end_mono_ns = v.end_mono_ns.max(at.mono_ns);
                        v.active = false;
                    }
                };
                let doc = self.on_view(&at, attrs, count);
                if is_crash {
                    self.enforce_stopped_cap();
                }
                let Some((mut common, view, id)) = doc else { return };
                // A crash reported after the fact (a system event delivered at the next launch)
                // carries the time it happened.
                if let Some(date) = details.as_ref().and_then(|d| d.date_ms) {
                    common.date = date;
                }
                let is_crash = is_crash || details.as_ref().is_some_and(|d| d.is_crash);
                out.push(Document::Error(ErrorDocument {
                    common,
                    view,
                    id,
                    message,
                    source,
                    stack,
                    is_crash,
                    details,
                }));
            }
            EventKind::StartResource { key, method, url } => {
                let Some(i) = self.view_for(&at) else { return };
                let id = self.ids.uuid();
                let Some(v) = self.views.get_mut(i) else { return };
                let mut dropped = 0;
                // A key restarted before it stopped: the earlier start can never be paired.
                if let Some(pos) = v.pending.iter().position(|p| p.key == key) {
                    v.pending.remove(pos);
                    dropped += 1;
                }
                if v.pending.len() >= MAX_PENDING_RESOURCES_PER_VIEW {
                    v.pending.pop_front();
                    dropped += 1;
                }
                v.pending.push_back(PendingResource {
                    key,
                    id,
                    method,
                    url,
                    start_wall_ms: at.wall_ms,
                    start_mono_ns: at.mono_ns,
                    attrs,
                });
                self.counters.resources_dropped.add(dropped);
            }
            EventKind::StopResource { key, status_code, kind, size } => {
                // Closes an expired session first, but a stop never starts one: the resource
                // belongs to the view (and session) it started in.
                self.live_session(&at);
                let found = self
                    .views
                    .iter()
                    .enumerate()
                    .rev()
                    .find_map(|(i, v)| v.pending.iter().position(|p| p.key == key).map(|pos| (i, pos)));
                let Some((i, pos)) = found else {
                    self.counters.resources_unmatched.incr();
                    return;
                };
                let Some(v) = self.views.get_mut(i) else { return };
                let Some(p) = v.pending.remove(pos) else { return };
                v.resource_count += 1;
                let (view, session_id, tracked) = (v.view.clone(), Arc::clone(&v.session_id), v.tracked);
                self.touch(i, &at);
                if !tracked {
                    return;
                }
                let merged = p.attrs.merged(attrs);
                let common = self.common(p.start_wall_ms, session_id, merged);
                out.push(Document::Resource(ResourceDocument {
                    common,
                    view,
                    id: p.id,
                    kind,
                    url: p.url,
                    method: p.method,
                    status_code,
                    size,
                    duration_ns: at.mono_ns.saturating_sub(p.start_mono_ns),
                }));
            }
        }
    }

    /// Appends the document of each owed view that `policy` lets out at `moment` (oldest view
    /// first), at monotonic `now_ns`; then forgets stopped views that owe nothing and wait for no
    /// resource. Returns when the earliest view left owed is due, if any.
    pub fn emit_views(
        &mut self,
        policy: ViewPolicy,
        moment: Moment,
        now_ns: u64,
        out: &mut Vec<Document>,
    ) -> Option<u64> {
        let mut due: Option<u64> = None;
        for v in &mut self.views {
            if !v.tracked {
                v.mark.take(); // an untracked session writes nothing: nothing is owed
                continue;
            }
            match policy.verdict(&v.mark, v.active, moment, now_ns) {
                Verdict::Clean => {}
                Verdict::Write => {
                    v.mark.take();
                    v.mark.written_at(now_ns);
                    out.push(v.document(&self.identity));
                }
                Verdict::Wait { due_ns } => due = Some(due.map_or(due_ns, |d| d.min(due_ns))),
            }
        }
        self.views.retain(|v| v.active || v.mark.is_dirty() || !v.pending.is_empty());
        due
    }

    /// True when some view owes a document.
    pub fn has_dirty_views(&self) -> bool {
        self.views.iter().any(|v| v.mark.is_dirty())
    }

    /// The current session's id, if one is live at `now_ms` (no event is needed to expire it).
    pub fn session_id(&self, now_ms: i64) -> Option<Arc<str>> {
        self.session.as_ref().filter(|s| !s.expired_at(now_ms)).map(|s| Arc::clone(&s.id))
    }

    /// Key of the active view, if any.
    pub fn active_view_key(&self) -> Option<&str> {
        self.views.last().filter(|v| v.active).map(|v| &*v.key)
    }

    /// Resources started and not yet stopped, all views together.
    pub fn pending_resources(&self) -> usize {
        self.views.iter().map(|v| v.pending.len()).sum()
    }

    fn active_index(&self) -> Option<usize> {
        let last = self.views.len().checked_sub(1)?;
        self.views[last].active.then_some(last)
    }

    fn common(&self, date: i64, session_id: Arc<str>, attrs: Attrs) -> Common {
        Common {
            date,
            identity: Arc::clone(&self.identity),
            session_id,
            usr: self.user.clone(),
            connectivity: self.connectivity.clone(),
            global: Arc::clone(&self.global),
            attrs,
        }
    }

    /// An action or error lands on the active view (or a launch view): `count` counts it there,
    /// the view is touched, and the document gets its common fields, the view and a new id.
    fn on_view(
        &mut self,
        at: &At,
        attrs: Attrs,
        count: impl FnOnce(&mut ViewScope),
    ) -> Option<(Common, ViewRef, Uuid)> {
        let i = self.view_for(at)?;
        let v = self.views.get_mut(i)?;
        count(v);
        let (view, session_id, tracked) = (v.view.clone(), Arc::clone(&v.session_id), v.tracked);
        self.touch(i, at);
        if !tracked {
            return None;
        }
        let id = self.ids.uuid();
        Some((self.common(at.wall_ms, session_id, attrs), view, id))
    }

    /// Records that the event touched view `i`: time spent grows while it is active, its document
    /// takes the context in force now, and it owes a document.
    fn touch(&mut self, i: usize, at: &At) {
        let Some(v) = self.views.get_mut(i) else { return };
        if v.active {
            v.end_mono_ns = v.end_mono_ns.max(at.mono_ns);
        }
        v.usr = self.user.clone();
        v.connectivity = self.connectivity.clone();
        v.global = Arc::clone(&self.global);
        if v.mark.mark(at.seq) {
            self.counters.view_writes_saved.incr();
        }
    }

    fn touch_active(&mut self, at: &At) {
        if let Some(i) = self.active_index() {
            self.touch(i, at);
        }
    }

    /// Whether a session is live at the event's time; an expired one is ended here (its view gets
    /// its final document) and a live one is extended.
    fn live_session(&mut self, at: &At) -> bool {
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
    fn open_session(&mut self, at: &At, resume: bool) {
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

    fn end_session(&mut self, at: &At, how: Ending) {
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

    /// The active view, or a launch view opened for this event (needs a live session).
    fn view_for(&mut self, at: &At) -> Option<usize> {
        self.open_session(at, true);
        if let Some(i) = self.active_index() {
            return Some(i);
        }
        self.start_view(at, LAUNCH_VIEW_NAME.into(), LAUNCH_VIEW_NAME.into(), Attrs::default());
        self.active_index()
    }

    fn start_view(&mut self, at: &At, key: Arc<str>, name: Arc<str>, attrs: Attrs) {
        let Some((session_id, tracked)) = self.session.as_ref().map(|s| (Arc::clone(&s.id), s.tracked)) else { return };
        if let Some(i) = self.active_index() {
            if let Some(v) = self.views.get_mut(i) {
                v.end_mono_ns = v.end_mono_ns.max(at.mono_ns);
                v.active = false;
            }
            self.touch(i, at);
            self.enforce_stopped_cap();
        }
        let id: Arc<str> = self.ids.uuid().into();
        self.views.push(ViewScope {
            view: ViewRef { id, name, url: Arc::clone(&key) },
            key,
            session_id,
            start_wall_ms: at.wall_ms,
            start_mono_ns: at.mono_ns,
            end_mono_ns: at.mono_ns,
            active: true,
            tracked,
            action_count: 0,
            error_count: 0,
            crash_count: 0,
            resource_count: 0,
            attrs,
            usr: None,
            connectivity: None,
            global: Arc::clone(&self.global),
            pending: VecDeque::new(),
            custom_timings: Arc::default(),
            document_version: 0,
            mark: DirtyMark::default(),
        });
        self.touch(self.views.len() - 1, at);
    }

    fn stop_view(&mut self, at: &At, key: &str, attrs: Attrs) {
        if !self.live_session(at) {
            // Its session ended first (and wrote its final document): do not reopen it later.
            if self.resume.as_ref().is_some_and(|r| &*r.key == key) {
                self.resume = None;
            }
            return;
        }
        let Some(i) = self.active_index().filter(|&i| &*self.views[i].key == key) else { return };
        if let Some(v) = self.views.get_mut(i) {
            v.end_mono_ns = v.end_mono_ns.max(at.mono_ns);
            v.active = false;
            v.attrs = std::mem::take(&mut v.attrs).merged(attrs);
        }
        self.touch(i, at);
        self.enforce_stopped_cap();
    }

    /// Past the cap, the oldest stopped view with pending resources gives them up (counted); it
    /// is forgotten once its document is out.
    fn enforce_stopped_cap(&mut self) {
        let mut waiting = self.views.iter().filter(|v| !v.active && !v.pending.is_empty()).count();
        for v in &mut self.views {
            if waiting <= MAX_STOPPED_VIEWS_WITH_PENDING {
                break;
            }
            if !v.active && !v.pending.is_empty() {
                self.counters.resources_dropped.add(v.pending.len() as u64);
                v.pending.clear();
                waiting -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
