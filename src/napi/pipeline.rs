//! `BindingPipeline`: what JS and ArkTS see as `RumPipeline`, the one class of the library. Each
//! method checks and copies its arguments (a bad one throws `TypeError`/`RangeError` naming the
//! method and argument, and changes nothing), then hands one captured event to this thread's
//! dispatcher. The methods JS can call, with their TypeScript signatures, are listed once in
//! `src/interface.rs`; [`methods`] turns that list into the class. Options are read in
//! [`options`], counters in [`stats`], and the paths where JS may no longer run in [`lifecycle`].
//!
//! [`methods`]: super::methods
//! [`options`]: super::options
//! [`stats`]: super::stats
//! [`lifecycle`]: super::lifecycle

use std::cell::RefCell;
use std::fmt::Display;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use napi_ohos::bindgen_prelude::*;

use super::args::{ArgError, ArgResult, Args, Field, Sub};
use super::clock::HostClock;
use super::error_details::{read_error_details, MAX_DATE_MS};
use super::js::{Instances, Js, Value, Visitor, Wrapped};
use super::lifecycle::{is_fresh_receiver, Teardown};
use super::mapper::JsMapper;
use super::options::{read_connectivity, BindingPipelineOptions};
use super::scheduler::{HostDispatcher, HostScheduler, TimerTarget};
use super::stats::{BindingPipelineStats, Sources};
use super::throw;
use super::timing::{duration_ns, read_resource_details};
use crate::core::attrs::Attrs;
use crate::core::config::{Config, TrackingConsent, MAX_ACTIONS_PER_CALL};
use crate::core::dispatch::{Dispatcher, Inbox};
use crate::core::event::{ActionType, ErrorSource, EventKind, HttpMethod, ResourceKind, UserInfo};
use crate::core::globals::OverBudget;
use crate::core::handover;
use crate::core::registry::{self, AttachError, Pipeline};
use crate::core::seam::Clock;
use crate::core::storage::FlushOutcome;
use crate::log;

/// Untracked calls one handover may report: a capture buffer rechecks the session long before.
const MAX_SKIPPED: f64 = 1e9;

/// A RUM pipeline on this JS thread: capture, adaptive dispatch, coalescing, batch writer.
pub struct BindingPipeline {
    pub(super) pipeline: Arc<Pipeline>,
    dispatcher: Rc<RefCell<HostDispatcher>>,
    /// Where calls made while the dispatcher is busy (from inside the event mapper) go.
    inbox: Inbox<HostClock>,
    /// The dispatcher's clock (same origin): when each call entered.
    clock: HostClock,
    /// Keeps the timer delivery alive as long as the pipeline.
    _timers: TimerTarget,
    max_event: usize,
    /// The JS environment's teardown hook; removed when the pipeline is dropped.
    teardown: Teardown,
    /// The function Map-like attributes are read with, made at the first Map.
    visitor: Visitor,
}

thread_local! {
    /// The pipelines alive on this JS thread: only their wrappers are accepted as receivers.
    static PIPELINES: Instances<BindingPipeline> = const { Instances::new() };
}

impl Wrapped for BindingPipeline {
    fn instances() -> &'static std::thread::LocalKey<Instances<Self>> {
        &PIPELINES
    }
}

impl Drop for BindingPipeline {
    /// Runs in a GC finalizer: no JS may be called. Events still queued are processed now.
    fn drop(&mut self) {
        self.teardown.collected(&self.dispatcher);
    }
}

/// Runs `f` with argument errors thrown as JS errors.
pub(super) fn checked<T>(js: Js<'_>, f: impl FnOnce() -> ArgResult<T>) -> Result<T> {
    f().map_err(|e| throw(js, e))
}

/// `new RumPipeline(options)`: builds the pipeline and wraps it into `this`.
pub fn construct(js: Js<'_>, this: Value<'_>, options: Value<'_>) -> Result<()> {
    if !is_fresh_receiver(js, this) {
        return Err(throw(js, ArgError::Type("RumPipeline: must be called with new".into())));
    }
    let pipeline = BindingPipeline::new(js, options)?;
    js.wrap(this, pipeline)
        .map_err(|_| throw(js, ArgError::Type("RumPipeline: must be called with new on a fresh object".into())))
}

impl BindingPipeline {
    fn new(js: Js<'_>, options: Value<'_>) -> Result<Self> {
        let r = Args::new(js, "RumPipeline");
        let options = checked(js, || BindingPipelineOptions::read(&r, options))?;
        let config = Config::try_from(options)
            .map_err(|e| throw(js, ArgError::Range(format!("RumPipeline: options.{} {}", e.field, e.reason))))?;
        let max_event = usize::try_from(config.event_max_bytes).unwrap_or(usize::MAX);
        let pipeline = registry::attach(config).map_err(|e| {
            let (AttachError::Dir(m) | AttachError::Storage(m) | AttachError::Conflict(m)) = e;
            throw(js, ArgError::Range(format!("RumPipeline: options.storageDir {m}")))
        })?;
        let timers: TimerTarget = Rc::new(RefCell::new(None));
        let scheduler = HostScheduler::new(js, timers.clone())?;
        let clock = HostClock::new();
        let dispatcher = Rc::new(RefCell::new(Dispatcher::new(pipeline.sequencer.clone(), clock, scheduler)));
        let inbox = dispatcher.borrow().inbox();
        let weak = Rc::downgrade(&dispatcher);
        *timers.borrow_mut() = Some(Box::new(move |timer| {
            if let Some(d) = weak.upgrade() {
                if let Ok(mut d) = d.try_borrow_mut() {
                    d.on_timer(timer);
                }
            }
        }));
        let teardown = Teardown::register(
            js,
            Rc::downgrade(&dispatcher),
            Arc::downgrade(&pipeline),
            Duration::from_millis(pipeline.config.flush_timeout_ms.into()),
        )?;
        Ok(Self {
            pipeline,
            dispatcher,
            inbox,
            clock,
            _timers: timers,
            max_event,
            teardown,
            visitor: Visitor::default(),
        })
    }

    /// Hands one event to the dispatcher, or to the inbox when called from inside the mapper.
    /// `started` is when the JS call entered, so the turn is charged for the argument copy too.
    fn submit(&self, started: u64, kind: EventKind, attrs: Attrs) {
        match self.dispatcher.try_borrow_mut() {
            Ok(mut d) => d.call_from(started, kind, attrs),
            Err(_) => self.inbox.push(kind, attrs),
        }
    }

    /// Processes the whole queue now, unless called from inside the mapper (no nested drain).
    fn drain(&self) {
        if let Ok(mut d) = self.dispatcher.try_borrow_mut() {
            d.drain();
        }
    }

    pub(super) fn args<'e>(&'e self, js: Js<'e>, method: &'static str) -> Args<'e> {
        Args::keeping_visitor(js, method, &self.visitor)
    }

    /// The shape of every method that records one event: note when the call entered, read its
    /// arguments (a bad one throws and records nothing), hand the event on.
    fn record<'e>(
        &'e self,
        js: Js<'e>,
        method: &'static str,
        read: impl FnOnce(&Args<'e>) -> ArgResult<(EventKind, Attrs)>,
    ) -> Result<()> {
        let started = self.clock.mono_ns();
        let r = self.args(js, method);
        let (kind, attrs) = checked(js, || read(&r))?;
        self.submit(started, kind, attrs);
        Ok(())
    }

    /// [`record`](Self::record), unless the call lands in an untracked session: then it returns
    /// at once, its arguments unread.
    fn record_event<'e>(
        &'e self,
        js: Js<'e>,
        method: &'static str,
        read: impl FnOnce(&Args<'e>) -> ArgResult<(EventKind, Attrs)>,
    ) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        self.record(js, method, read)
    }

    /// Whether this call lands in an untracked session (`sessionSampleRate`) and returns at once,
    /// before its arguments are read: it would write nothing. Not while events are queued (one
    /// of them could end the session) nor from inside the event mapper.
    fn untracked(&self) -> bool {
        self.nothing_queued() && self.pipeline.sequencer.skips_untracked(self.clock.wall_ms())
    }

    /// This thread's queue is empty and the dispatcher free (not inside the event mapper).
    fn nothing_queued(&self) -> bool {
        self.dispatcher.try_borrow().is_ok_and(|d| d.queue_len() == 0)
    }

    fn attrs(&self, r: &Args<'_>, v: Value<'_>) -> ArgResult<Attrs> {
        r.attributes(v, "attributes", self.max_event)
    }

    fn text(&self, r: &Args<'_>, v: Value<'_>, arg: &str) -> ArgResult<String> {
        r.bounded_string(v, arg, self.max_event)
    }

    fn opt_text(&self, r: &Args<'_>, v: Value<'_>, arg: &str) -> ArgResult<Option<String>> {
        if r.is_nullish(v) {
            return Ok(None);
        }
        self.text(r, v, arg).map(Some)
    }

    pub fn start_view<'e>(&'e self, js: Js<'e>, key: Value<'e>, name: Value<'e>, attributes: Value<'e>) -> Result<()> {
        self.record(js, "startView", |r| {
            let key = self.text(r, key, "key")?;
            let name = self.text(r, name, "name")?;
            Ok((EventKind::StartView { key, name }, self.attrs(r, attributes)?))
        })
    }

    pub fn stop_view<'e>(&'e self, js: Js<'e>, key: Value<'e>, attributes: Value<'e>) -> Result<()> {
        self.record(js, "stopView", |r| {
            Ok((EventKind::StopView { key: self.text(r, key, "key")? }, self.attrs(r, attributes)?))
        })
    }

    pub fn add_action<'e>(&'e self, js: Js<'e>, t: Value<'e>, name: Value<'e>, attributes: Value<'e>) -> Result<()> {
        self.record_event(js, "addAction", |r| self.action(r, t, name, attributes, None))
    }

    /// One action's arguments. Inside `addActions`, `within` is the element's path
    /// (`events[3]`), which prefixes the argument names in errors.
    fn action(
        &self,
        r: &Args<'_>,
        t: Value<'_>,
        name: Value<'_>,
        attributes: Value<'_>,
        within: Option<&dyn Display>,
    ) -> ArgResult<(EventKind, Attrs)> {
        let at = |name| Field { within, name };
        let action_type = r.enumerated(t, at("type"), ActionType::parse, ActionType::ALL)?;
        let name = r.bounded_text(name, at("name"), self.max_event)?;
        let attrs = r.attributes(attributes, at("attributes"), self.max_event)?;
        Ok((EventKind::Action { action_type, name }, attrs))
    }

    pub fn add_actions<'e>(&'e self, js: Js<'e>, events: Value<'e>) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        let started = self.clock.mono_ns();
        let r = self.args(js, "addActions");
        let batch = checked(js, || {
            let len = r.length(events, "events")?;
            if len > MAX_ACTIONS_PER_CALL {
                return Err(r.range_err(
                    "events",
                    format_args!("has {len} elements, more than the {MAX_ACTIONS_PER_CALL} one call may carry"),
                ));
            }
            let mut out = Vec::with_capacity(len as usize);
            for i in 0..len {
                let item = r.element(events, i, "events")?;
                let at = Sub::index(&"events", i);
                if !r.is_object(item) {
                    return Err(r.type_err(at, "must be an object { type, name, attributes? }"));
                }
                let field = |name| r.field_often(item, name, at);
                let (t, n, a) = (field(c"type")?, field(c"name")?, field(c"attributes")?);
                out.push(self.action(&r, t, n, a, Some(&at))?);
            }
            Ok(out)
        })?;
        match self.dispatcher.try_borrow_mut() {
            Ok(mut d) => d.call_batch_from(started, batch),
            Err(_) => batch.into_iter().for_each(|(k, a)| self.inbox.push(k, a)),
        }
        Ok(())
    }

    pub fn add_error<'e>(
        &'e self,
        js: Js<'e>,
        message: Value<'e>,
        source: Value<'e>,
        stack: Value<'e>,
        attributes: Value<'e>,
        details: Value<'e>,
    ) -> Result<()> {
        self.record_event(js, "addError", |r| {
            let message = self.text(r, message, "message")?;
            let source = r.enumerated(source, "source", ErrorSource::parse, ErrorSource::ALL)?;
            let stack = self.opt_text(r, stack, "stack")?;
            let attrs = self.attrs(r, attributes)?;
            let details = read_error_details(r, details, self.max_event, false)?;
            Ok((EventKind::Error { message, source, stack, is_crash: false, details }, attrs))
        })
    }

    pub fn mark_crash<'e>(
        &'e self,
        js: Js<'e>,
        message: Value<'e>,
        stack: Value<'e>,
        details: Value<'e>,
    ) -> Result<bool> {
        self.record(js, "markCrash", |r| {
            let message = self.text(r, message, "message")?;
            let stack = self.opt_text(r, stack, "stack")?;
            let details = read_error_details(r, details, self.max_event, true)?;
            Ok((
                EventKind::Error { message, source: ErrorSource::Source, stack, is_crash: true, details },
                Attrs::default(),
            ))
        })?;
        Ok(self.outcome(self.pipeline.storage.flush_crash(self.timeout())))
    }

    pub fn start_resource<'e>(
        &'e self,
        js: Js<'e>,
        key: Value<'e>,
        method: Value<'e>,
        url: Value<'e>,
        attributes: Value<'e>,
    ) -> Result<()> {
        self.record_event(js, "startResource", |r| {
            let key = self.text(r, key, "key")?;
            let method = r.enumerated(method, "method", HttpMethod::parse_any_case, HttpMethod::ALL)?;
            let url = self.text(r, url, "url")?;
            Ok((EventKind::StartResource { key, method, url }, self.attrs(r, attributes)?))
        })
    }

    #[allow(clippy::too_many_arguments)] // one per JS argument, as the interface lists them
    pub fn stop_resource<'e>(
        &'e self,
        js: Js<'e>,
        key: Value<'e>,
        status_code: Value<'e>,
        kind: Value<'e>,
        size_bytes: Value<'e>,
        attributes: Value<'e>,
        details: Value<'e>,
    ) -> Result<()> {
        self.record_event(js, "stopResource", |r| {
            let key = self.text(r, key, "key")?;
            let status_code = r.integer(status_code, "statusCode", 0.0, 999.0)? as u16;
            let kind = r.enumerated(kind, "kind", ResourceKind::parse, ResourceKind::ALL)?;
            let size = r.opt_integer(size_bytes, "sizeBytes", 0.0, 9_007_199_254_740_991.0)?;
            let attrs = self.attrs(r, attributes)?;
            let details = read_resource_details(r, details)?;
            Ok((EventKind::StopResource { key, status_code, kind, size, details }, attrs))
        })
    }

    pub fn stop_resource_with_error<'e>(
        &'e self,
        js: Js<'e>,
        key: Value<'e>,
        message: Value<'e>,
        error_type: Value<'e>,
        attributes: Value<'e>,
    ) -> Result<()> {
        self.record_event(js, "stopResourceWithError", |r| {
            let key = self.text(r, key, "key")?;
            let message = self.text(r, message, "message")?;
            let error_type = self.opt_text(r, error_type, "errorType")?;
            Ok((EventKind::StopResourceWithError { key, message, error_type }, self.attrs(r, attributes)?))
        })
    }

    pub fn add_long_task<'e>(
        &'e self,
        js: Js<'e>,
        duration: Value<'e>,
        attributes: Value<'e>,
        started_at: Value<'e>,
    ) -> Result<()> {
        self.record_event(js, "addLongTask", |r| {
            let duration_ns = duration_ns(r, duration, "durationMs")?;
            let attrs = self.attrs(r, attributes)?;
            let start_wall_ms = r.opt_integer(started_at, "startedAt", 0.0, MAX_DATE_MS)?.map(|d| d as i64);
            Ok((EventKind::LongTask { duration_ns, start_wall_ms }, attrs))
        })
    }

    pub fn add_app_launch<'e>(
        &'e self,
        js: Js<'e>,
        duration: Value<'e>,
        started_at: Value<'e>,
        attributes: Value<'e>,
    ) -> Result<()> {
        self.record_event(js, "addAppLaunch", |r| {
            let duration_ns = duration_ns(r, duration, "durationMs")?;
            let start_wall_ms = r.integer(started_at, "startedAt", 0.0, MAX_DATE_MS)? as i64;
            Ok((EventKind::AppLaunch { duration_ns, start_wall_ms }, self.attrs(r, attributes)?))
        })
    }

    pub fn add_timing<'e>(&'e self, js: Js<'e>, name: Value<'e>) -> Result<()> {
        self.record_event(js, "addTiming", |r| {
            Ok((EventKind::AddTiming { name: self.text(r, name, "name")? }, Attrs::default()))
        })
    }

    pub fn add_attribute<'e>(&'e self, js: Js<'e>, key: Value<'e>, value: Value<'e>) -> Result<()> {
        self.record(js, "addAttribute", |r| {
            let key = self.text(r, key, "key")?;
            // The same checks as an attribute's value.
            let value = r.attribute_value(value, "value", self.max_event)?;
            self.pipeline.sequencer.reserve_global(&key, &value).map_err(|OverBudget { total, max }| {
                ArgError::Range(format!(
                    "addAttribute: the global attributes would take {total} bytes of every document, more than \
                     {max} (half of eventMaxBytes); remove some with removeAttribute"
                ))
            })?;
            Ok((EventKind::AddAttribute { key, value }, Attrs::default()))
        })
    }

    pub fn remove_attribute<'e>(&'e self, js: Js<'e>, key: Value<'e>) -> Result<()> {
        self.record(js, "removeAttribute", |r| {
            let key = self.text(r, key, "key")?;
            self.pipeline.sequencer.release_global(&key);
            Ok((EventKind::RemoveAttribute { key }, Attrs::default()))
        })
    }

    pub fn set_user<'e>(&'e self, js: Js<'e>, user: Value<'e>) -> Result<()> {
        self.record(js, "setUser", |r| {
            if r.is_nullish(user) {
                return Ok((EventKind::SetUser(None), Attrs::default()));
            }
            if !r.is_object(user) {
                return Err(r.type_err("user", "must be an object { id?, name?, email?, extra? } or null"));
            }
            let get = |name: &str| -> ArgResult<Option<String>> {
                let v = r.field(user, name, "user")?;
                if r.is_nullish(v) {
                    return Ok(None);
                }
                r.bounded_string(v, &format!("user.{name}"), self.max_event).map(Some)
            };
            let extra = r.field(user, "extra", "user")?;
            let user = UserInfo {
                id: get("id")?,
                name: get("name")?,
                email: get("email")?,
                extra: r.attribute_map(extra, "user.extra", self.max_event)?,
            };
            Ok((EventKind::SetUser(Some(user)), Attrs::default()))
        })
    }

    pub fn set_tracking_consent<'e>(&'e self, js: Js<'e>, consent: Value<'e>) -> Result<()> {
        self.record(js, "setTrackingConsent", |r| {
            let consent = r.enumerated(consent, "consent", TrackingConsent::parse, TrackingConsent::ALL)?;
            Ok((EventKind::SetConsent(consent), Attrs::default()))
        })
    }

    pub fn set_connectivity<'e>(&'e self, js: Js<'e>, connectivity: Value<'e>) -> Result<()> {
        self.record(js, "setConnectivity", |r| {
            let c = read_connectivity(r, connectivity, "connectivity")?;
            Ok((EventKind::SetConnectivity(c), Attrs::default()))
        })
    }

    pub fn ingest<'e>(
        &'e self,
        js: Js<'e>,
        calls: Value<'e>,
        slice: Value<'e>,
        spent_ms: Value<'e>,
        skipped: Value<'e>,
    ) -> Result<bool> {
        let started = self.clock.mono_ns();
        let r = self.args(js, "ingest");
        // Read into the buffer of an earlier text when there is one: its pages are mapped in.
        let mut text = self.dispatcher.try_borrow().map(|d| d.text_buffer()).unwrap_or_default();
        let (slice, spent_ms, skipped) = checked(js, || {
            let spent = r.number(spent_ms, "spentMs")?;
            if !(spent.is_finite() && spent >= 0.0) {
                return Err(r.range_err("spentMs", format_args!("must be a finite number of ms from 0, got {spent}")));
            }
            let skipped = r.integer(skipped, "skipped", 0.0, MAX_SKIPPED)?;
            r.string_bytes(calls, "calls", &mut text)?;
            Ok((r.boolean(slice, "slice")?, spent, skipped))
        })?;
        let refused = |e: handover::HandoverError| {
            throw(js, ArgError::Type(format!("ingest: calls is not a capture buffer's handover: {e}")))
        };
        self.pipeline.sequencer.counters().calls_untracked.add(skipped);
        let parse = |text: &[u8]| handover::parse_engine_utf8(text, self.max_event).map_err(refused);
        // What the JS side spent, and what reading (and parsing) the text took here.
        let js_spent = || ((spent_ms * 1e6) as u64).saturating_add(self.clock.mono_ns().saturating_sub(started));
        match self.dispatcher.try_borrow_mut() {
            // A slice's text is parsed (and processed) off this thread (core::dispatch::parse_ahead).
            Ok(mut d) if slice => d.hand_over_slice(text, self.max_event, js_spent()).map_err(refused)?,
            Ok(mut d) => d.hand_over_turn(text, self.max_event, js_spent()).map_err(refused)?,
            Err(_) => self.inbox.push_handed(parse(&text)?),
        }
        Ok(self.nothing_queued() && self.pipeline.sequencer.session_untracked(self.clock.wall_ms()))
    }

    pub fn session_id(&self, _js: Js<'_>) -> Result<Option<String>> {
        Ok(match self.dispatcher.try_borrow_mut() {
            Ok(mut d) => d.session_id(),
            Err(_) => self.inbox.session_id(),
        })
    }

    pub fn stop_session(&self, _js: Js<'_>) -> Result<()> {
        let started = self.clock.mono_ns();
        self.submit(started, EventKind::StopSession, Attrs::default());
        Ok(())
    }

    pub fn keep_alive(&self, _js: Js<'_>) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        let started = self.clock.mono_ns();
        self.submit(started, EventKind::KeepAlive, Attrs::default());
        Ok(())
    }

    pub fn flush(&self, _js: Js<'_>) -> Result<bool> {
        self.drain();
        Ok(self.outcome(self.pipeline.storage.flush(self.timeout())))
    }

    pub fn stop(&self, _js: Js<'_>) -> Result<bool> {
        match self.dispatcher.try_borrow_mut() {
            Ok(mut d) => d.stop(),
            // From inside the event mapper: no nested drain (the queue goes on through its
            // slices), but the pipeline does stop queuing, as the caller was told.
            Err(_) => self.pipeline.sequencer.mark_stopped(),
        }
        Ok(self.outcome(self.pipeline.storage.flush(self.timeout())))
    }

    pub fn set_event_mapper<'e>(&'e self, js: Js<'e>, mapper: Value<'e>) -> Result<()> {
        let r = self.args(js, "setEventMapper");
        let mapper = checked(js, || {
            if r.is_nullish(mapper) {
                return Ok(None);
            }
            if !r.is_function(mapper) {
                return Err(r.type_err("mapper", "must be a function or null"));
            }
            Ok(Some(mapper))
        })?;
        let mapper = match mapper {
            None => None,
            Some(f) => Some(JsMapper::new(js, f, self.max_event.saturating_mul(2))?),
        };
        match self.dispatcher.try_borrow_mut() {
            Ok(mut d) => {
                self.teardown.set_has_mapper(mapper.is_some());
                d.set_mapper(mapper.map(|m| Box::new(m) as _));
                Ok(())
            }
            // Not a bad argument: a call at the wrong moment, so a plain Error.
            Err(_) => Err(Error::new(
                Status::GenericFailure,
                "setEventMapper: cannot be called from inside the event mapper; call it after the mapper returns",
            )),
        }
    }

    pub fn stats(&self, _js: Js<'_>) -> Result<BindingPipelineStats> {
        let storage = self.pipeline.storage.counters();
        Ok(BindingPipelineStats::read(&Sources { dispatch: self.pipeline.sequencer.counters(), storage: &storage }))
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.pipeline.config.flush_timeout_ms.into())
    }

    fn outcome(&self, o: FlushOutcome) -> bool {
        match o {
            FlushOutcome::Done => true,
            FlushOutcome::TimedOut => {
                log::warn("flush timed out; the writer goes on in the background");
                false
            }
            FlushOutcome::Failed(why) => {
                log::warn(&format!("flush failed: {why}"));
                false
            }
        }
    }
}
