//! Views: a stack whose last one may be active; counts of what happened on each, the launch view
//! opened for an event that finds none, the cap on stopped views waiting for resources, and the
//! emission of each owed view's document when the policy lets it out ([`crate::core::coalesce`]).

use std::collections::VecDeque;
use std::sync::Arc;

use super::resources::Pending;
use super::{At, Scopes};
use crate::core::attrs::Attrs;
use crate::core::coalesce::{DirtyMark, Moment, Verdict, ViewPolicy};
use crate::core::config::MAX_STOPPED_VIEWS_WITH_PENDING;
use crate::core::context::Connectivity;
use crate::core::document::{
    ActionDocument, AppLaunchDocument, Common, CustomTimings, Document, ErrorDocument, Identity, LongTaskDocument,
    ViewDocument, ViewRef, FROZEN_FRAME_NS,
};
use crate::core::event::{ActionType, Attributes, ErrorDetails, ErrorSource, UserInfo};
use crate::core::ids::Uuid;
use crate::core::text::Text;

/// Name and key (its `url`) of the view an action, error or resource opens when no view is active,
/// so nothing reported before the first `startView` is lost. The seed SDK's name.
pub const LAUNCH_VIEW_NAME: &str = "ApplicationLaunch";

#[derive(Clone, Debug)]
pub(super) struct ViewScope {
    pub(super) key: Arc<str>,
    pub(super) view: ViewRef,
    pub(super) session_id: Arc<str>,
    pub(super) start_wall_ms: i64,
    pub(super) start_mono_ns: u64,
    /// Monotonic time of the last event that touched the view while active (or of its stop).
    pub(super) end_mono_ns: u64,
    pub(super) active: bool,
    /// Its session is tracked (sampled in): only then are its documents written.
    pub(super) tracked: bool,
    pub(super) action_count: u64,
    pub(super) error_count: u64,
    pub(super) crash_count: u64,
    pub(super) resource_count: u64,
    pub(super) long_task_count: u64,
    pub(super) frozen_frame_count: u64,
    /// startView's attributes, then stopView's merged over them.
    pub(super) attrs: Attrs,
    /// User and global attributes in force at the last event that touched the view: its document
    /// carries these whenever it is emitted.
    pub(super) usr: Option<Arc<UserInfo>>,
    pub(super) connectivity: Option<Arc<Connectivity>>,
    pub(super) global: Arc<Attributes>,
    /// Resources started on this view and not stopped yet, oldest first.
    pub(super) pending: Pending,
    pub(super) document_version: u64,
    pub(super) custom_timings: Arc<CustomTimings>,
    pub(super) mark: DirtyMark,
}

impl ViewScope {
    pub(super) fn document(&mut self, identity: &Arc<Identity>) -> Document {
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
            long_task_count: self.long_task_count,
            frozen_frame_count: self.frozen_frame_count,
            custom_timings: Arc::clone(&self.custom_timings),
        })
    }
}

impl Scopes {
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

    /// Key of the active view, if any.
    pub fn active_view_key(&self) -> Option<&str> {
        self.views.last().filter(|v| v.active).map(|v| &*v.key)
    }

    /// `addTiming`: the time since the active view started, under `name`.
    pub(super) fn add_timing(&mut self, at: &At, name: String) {
        if self.live_session(at) {
            if let Some(i) = self.active_index() {
                let view = &mut self.views[i];
                let since_start = at.mono_ns.saturating_sub(view.start_mono_ns);
                Arc::make_mut(&mut view.custom_timings).insert(name, since_start);
                self.touch(i, at);
            }
        }
    }

    /// An action: counted on its view, its document appended.
    pub(super) fn add_action(
        &mut self,
        at: &At,
        action_type: ActionType,
        name: Text,
        attrs: Attrs,
        out: &mut Vec<Document>,
    ) {
        let Some((common, view, id)) = self.on_view(at, attrs, |v| v.action_count += 1) else { return };
        out.push(Document::Action(ActionDocument { common, view, id, action_type, target_name: name }));
    }

    /// An error: counted on its view (a crash also ends the view), its document appended.
    #[allow(clippy::too_many_arguments)] // the event's own fields, moved out of `apply`'s match
    pub(super) fn add_error(
        &mut self,
        at: &At,
        message: String,
        source: ErrorSource,
        stack: Option<String>,
        is_crash: bool,
        details: Option<Box<ErrorDetails>>,
        attrs: Attrs,
        out: &mut Vec<Document>,
    ) {
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
        let doc = self.on_view(at, attrs, count);
        if is_crash {
            self.enforce_stopped_cap();
        }
        let Some((mut common, view, id)) = doc else { return };
        // A crash reported after the fact (a system event delivered at the next launch) carries
        // the time it happened.
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
            resource: None,
        }));
    }

    /// A long task: counted on the active view (a frozen frame on both counters, as the mobile
    /// SDKs count them), dated at its start.
    pub(super) fn add_long_task(
        &mut self,
        at: &At,
        duration_ns: u64,
        start_wall_ms: Option<i64>,
        attrs: Attrs,
        out: &mut Vec<Document>,
    ) {
        let count = |v: &mut ViewScope| {
            v.long_task_count += 1;
            if duration_ns >= FROZEN_FRAME_NS {
                v.frozen_frame_count += 1;
            }
        };
        let Some((mut common, view, id)) = self.on_view(at, attrs, count) else { return };
        common.date = start_wall_ms.unwrap_or_else(|| at.wall_ms - (duration_ns / 1_000_000) as i64);
        out.push(Document::LongTask(LongTaskDocument { common, view, id, duration_ns }));
    }

    /// The app launch vital, on the active view (the launch view before the first page's), dated
    /// at the process start.
    pub(super) fn add_app_launch(
        &mut self,
        at: &At,
        duration_ns: u64,
        start_wall_ms: i64,
        attrs: Attrs,
        out: &mut Vec<Document>,
    ) {
        let Some((mut common, view, id)) = self.on_view(at, attrs, |_| {}) else { return };
        common.date = start_wall_ms;
        out.push(Document::AppLaunch(AppLaunchDocument { common, view, id, duration_ns }));
    }

    pub(super) fn active_index(&self) -> Option<usize> {
        let last = self.views.len().checked_sub(1)?;
        self.views[last].active.then_some(last)
    }

    /// An action or error lands on the active view (or a launch view): `count` counts it there,
    /// the view is touched, and the document gets its common fields, the view and a new id.
    pub(super) fn on_view(
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
    pub(super) fn touch(&mut self, i: usize, at: &At) {
        let Some(v) = self.views.get_mut(i) else { return };
        if v.active {
            v.end_mono_ns = v.end_mono_ns.max(at.mono_ns);
        }
        v.usr = self.carried.user.clone();
        v.connectivity = self.carried.connectivity.clone();
        v.global = Arc::clone(&self.carried.global);
        if v.mark.mark(at.seq) {
            self.counters.view_writes_saved.incr();
        }
    }

    pub(super) fn touch_active(&mut self, at: &At) {
        if let Some(i) = self.active_index() {
            self.touch(i, at);
        }
    }

    /// The active view, or a launch view opened for this event (needs a live session).
    pub(super) fn view_for(&mut self, at: &At) -> Option<usize> {
        self.open_session(at, true);
        if let Some(i) = self.active_index() {
            return Some(i);
        }
        self.start_view(at, LAUNCH_VIEW_NAME.into(), LAUNCH_VIEW_NAME.into(), Attrs::default());
        self.active_index()
    }

    pub(super) fn start_view(&mut self, at: &At, key: Arc<str>, name: Arc<str>, attrs: Attrs) {
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
            long_task_count: 0,
            frozen_frame_count: 0,
            attrs,
            usr: None,
            connectivity: None,
            global: Arc::clone(&self.carried.global),
            pending: VecDeque::new(),
            custom_timings: Arc::default(),
            document_version: 0,
            mark: DirtyMark::default(),
        });
        self.touch(self.views.len() - 1, at);
    }

    pub(super) fn stop_view(&mut self, at: &At, key: &str, attrs: Attrs) {
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
    pub(super) fn enforce_stopped_cap(&mut self) {
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
