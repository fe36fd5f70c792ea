//! Resources: started on the view active at their start, stopped by key (the newest pending
//! start of that key, on any view of the stack); capped per view and across stopped views.

use std::collections::VecDeque;
use std::sync::Arc;

use super::{At, Scopes};
use crate::core::attrs::Attrs;
use crate::core::config::MAX_PENDING_RESOURCES_PER_VIEW;
use crate::core::document::{Document, ErrorDocument, ErrorResource, ResourceDocument, ViewRef};
use crate::core::event::{ErrorCategory, ErrorDetails, ErrorSource, HttpMethod, ResourceDetails, ResourceKind};
use crate::core::ids::Uuid;

#[derive(Clone, Debug)]
pub(super) struct PendingResource {
    pub(super) key: String,
    pub(super) id: Uuid,
    pub(super) method: HttpMethod,
    pub(super) url: String,
    pub(super) start_wall_ms: i64,
    pub(super) start_mono_ns: u64,
    pub(super) attrs: Attrs,
}

impl Scopes {
    /// Resources started and not yet stopped, all views together.
    pub fn pending_resources(&self) -> usize {
        self.views.iter().map(|v| v.pending.len()).sum()
    }

    /// `startResource`: pending on the active view (or a launch view) until its stop.
    pub(super) fn start_resource(&mut self, at: &At, key: String, method: HttpMethod, url: String, attrs: Attrs) {
        let Some(i) = self.view_for(at) else { return };
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

    /// `stopResource`: the resource document, on the view and session the resource started in.
    #[allow(clippy::too_many_arguments)] // the event's own fields, moved out of `apply`'s match
    pub(super) fn stop_resource(
        &mut self,
        at: &At,
        key: String,
        status_code: u16,
        kind: ResourceKind,
        size: Option<u64>,
        details: Option<Box<ResourceDetails>>,
        attrs: Attrs,
        out: &mut Vec<Document>,
    ) {
        let Some(Ended { p, view, session_id }) = self.end_resource(at, &key, Outcome::Loaded) else {
            return;
        };
        let common = self.common(p.start_wall_ms, session_id, p.attrs.merged(attrs));
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
            details,
        }));
    }

    /// `stopResourceWithError`: the request failed without a response. Instead of a resource, an
    /// error of source `network` naming it (`error.resource`, status 0, as the mobile SDKs report
    /// a transport failure), counted on the resource's view, at the time of the failure.
    pub(super) fn fail_resource(
        &mut self,
        at: &At,
        key: String,
        message: String,
        error_type: Option<String>,
        attrs: Attrs,
        out: &mut Vec<Document>,
    ) {
        let Some(Ended { p, view, session_id }) = self.end_resource(at, &key, Outcome::Failed) else {
            return;
        };
        let common = self.common(at.wall_ms, session_id, p.attrs.merged(attrs));
        let details = ErrorDetails { error_type, category: Some(ErrorCategory::Network), ..ErrorDetails::default() };
        out.push(Document::Error(ErrorDocument {
            common,
            view,
            id: self.ids.uuid(),
            message,
            source: ErrorSource::Network,
            stack: None,
            is_crash: false,
            details: Some(Box::new(details)),
            resource: Some(Box::new(ErrorResource { method: p.method, status_code: 0, url: p.url })),
        }));
    }

    /// Takes the newest pending start of `key` off its view, where its outcome is counted; None
    /// when none is pending (counted) or its session is untracked.
    fn end_resource(&mut self, at: &At, key: &str, outcome: Outcome) -> Option<Ended> {
        // Closes an expired session first, but a stop never starts one: the resource
        // belongs to the view (and session) it started in.
        self.live_session(at);
        let found = self
            .views
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, v)| v.pending.iter().position(|p| p.key == key).map(|pos| (i, pos)));
        let Some((i, pos)) = found else {
            self.counters.resources_unmatched.incr();
            return None;
        };
        let v = self.views.get_mut(i)?;
        let p = v.pending.remove(pos)?;
        match outcome {
            Outcome::Loaded => v.resource_count += 1,
            Outcome::Failed => v.error_count += 1,
        }
        let (view, session_id, tracked) = (v.view.clone(), Arc::clone(&v.session_id), v.tracked);
        self.touch(i, at);
        tracked.then_some(Ended { p, view, session_id })
    }
}

/// How a resource ended: what its view counts.
enum Outcome {
    Loaded,
    Failed,
}

/// A resource taken off its view: its start, and the view and session it belongs to.
struct Ended {
    p: PendingResource,
    view: ViewRef,
    session_id: Arc<str>,
}

/// Pending resources of one view, oldest first.
pub(super) type Pending = VecDeque<PendingResource>;
