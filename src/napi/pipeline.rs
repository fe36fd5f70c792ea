//! `RumPipeline`: the one class JS and ArkTS see. Each method checks and copies its arguments
//! (a bad one throws `TypeError`/`RangeError` naming the method and argument, and changes nothing),
//! then hands one captured event to this thread's dispatcher. Options are read in [`options`],
//! counters in [`stats`], and the paths where JS may no longer run in [`lifecycle`].
//!
//! [`options`]: super::options
//! [`stats`]: super::stats
//! [`lifecycle`]: super::lifecycle

use std::cell::RefCell;
use std::fmt::Display;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::*;

use super::convert::{ArgError, ArgResult, Field, Reader, Sub};
use super::host::{HostClock, HostDispatcher, HostScheduler, JsMapper, TimerTarget};
use super::lifecycle::{is_fresh_receiver, Teardown};
use super::options::{read_connectivity, PipelineOptions};
use super::receiver;
use super::stats::{PipelineStats, Sources};
use super::throw;
use crate::core::attrs::Attrs;
use crate::core::config::{global_attribute_bytes, Config, TrackingConsent, MAX_ACTIONS_PER_CALL};
use crate::core::dispatch::{Dispatcher, Inbox};
use crate::core::event::{ActionType, ErrorSource, EventKind, HttpMethod, ResourceKind, UserInfo};
use crate::core::registry::{self, AttachError, Shared};
use crate::core::seam::Clock;
use crate::core::storage::{Batch, FlushOutcome, StorageError};
use crate::log;

/// A RUM pipeline on this JS thread: capture, adaptive dispatch, coalescing, batch writer.
#[napi]
pub struct RumPipeline {
    shared: Arc<Shared>,
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
    /// A weak reference to the function Map-like attributes are read with (`Reader::visitor`),
    /// made at the first Map and again if the engine collects it. Freed with the environment.
    visitor: Rc<std::cell::Cell<napi_ohos::sys::napi_ref>>,
}

impl Drop for RumPipeline {
    /// Runs in a GC finalizer: no JS may be called. Events still queued are processed now.
    fn drop(&mut self) {
        receiver::forget(self);
        self.teardown.collected(&self.dispatcher);
    }
}

/// Runs `f` with argument errors thrown as JS errors.
fn checked<T>(env: &Env, f: impl FnOnce() -> ArgResult<T>) -> Result<T> {
    f().map_err(|e| throw(env, e))
}

#[napi]
impl RumPipeline {
    #[napi(constructor, catch_unwind, ts_args_type = "options: PipelineOptions")]
    pub fn new(env: Env, this: This, options: Unknown) -> Result<Self> {
        let r = Reader::new(env.raw(), "RumPipeline");
        // Tagged before anything can fail: the methods accept only receivers with this tag.
        if !is_fresh_receiver(&env, this.object.raw()) || !receiver::tag(&env, this.object.raw()) {
            return Err(throw(&env, ArgError::Type("RumPipeline: must be called with new".into())));
        }
        let options = checked(&env, || PipelineOptions::read(&r, options.raw()))?;
        let config = Config::try_from(options)
            .map_err(|e| throw(&env, ArgError::Range(format!("RumPipeline: options.{} {}", e.field, e.reason))))?;
        let max_event = usize::try_from(config.event_max_bytes).unwrap_or(usize::MAX);
        let shared = registry::attach(config).map_err(|e| {
            let (AttachError::Dir(m) | AttachError::Storage(m) | AttachError::Conflict(m)) = e;
            throw(&env, ArgError::Range(format!("RumPipeline: options.storageDir {m}")))
        })?;
        let timers: TimerTarget = Rc::new(RefCell::new(None));
        let scheduler = HostScheduler::new(&env, timers.clone())?;
        let clock = HostClock::new();
        let dispatcher = Rc::new(RefCell::new(Dispatcher::new(shared.pipeline.clone(), clock.clone(), scheduler)));
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
            &env,
            Rc::downgrade(&dispatcher),
            Arc::downgrade(&shared),
            Duration::from_millis(shared.config.flush_timeout_ms.into()),
        )?;
        Ok(Self { shared, dispatcher, inbox, clock, _timers: timers, max_event, teardown, visitor: Rc::default() })
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

    fn reader(&self, env: &Env, method: &'static str) -> Reader {
        Reader::keeping_visitor(env.raw(), method, &self.visitor)
    }

    /// The shape of every method that records one event: note when the call entered, read its
    /// arguments (a bad one throws and records nothing), hand the event on.
    fn record(
        &self,
        env: &Env,
        method: &'static str,
        read: impl FnOnce(&Reader) -> ArgResult<(EventKind, Attrs)>,
    ) -> Result<()> {
        let started = self.clock.mono_ns();
        let r = self.reader(env, method);
        let (kind, attrs) = checked(env, || read(&r))?;
        self.submit(started, kind, attrs);
        Ok(())
    }

    /// Whether this call lands in an untracked session (`sessionSampleRate`) and returns at once,
    /// before its arguments are read: it would write nothing. Not while events are queued (one
    /// of them could end the session) nor from inside the event mapper.
    fn untracked(&self) -> bool {
        let Ok(d) = self.dispatcher.try_borrow() else { return false };
        d.queue_len() == 0 && self.shared.pipeline.skips_untracked(self.clock.wall_ms())
    }

    fn attrs(&self, r: &Reader, v: &Unknown) -> ArgResult<Attrs> {
        r.attributes(v.raw(), "attributes", self.max_event)
    }

    fn text(&self, r: &Reader, v: &Unknown, arg: &str) -> ArgResult<String> {
        r.bounded_string(v.raw(), arg, self.max_event)
    }

    fn opt_text(&self, r: &Reader, v: &Unknown, arg: &str) -> ArgResult<Option<String>> {
        if r.is_nullish(v.raw()) {
            return Ok(None);
        }
        self.text(r, v, arg).map(Some)
    }

    /// Starts (or restarts) the view `key`.
    #[napi(catch_unwind, ts_args_type = "key: string, name: string, attributes?: Attributes")]
    pub fn start_view(&self, env: Env, key: Unknown, name: Unknown, attributes: Unknown) -> Result<()> {
        self.record(&env, "startView", |r| {
            let key = self.text(r, &key, "key")?;
            let name = self.text(r, &name, "name")?;
            Ok((EventKind::StartView { key, name }, self.attrs(r, &attributes)?))
        })
    }

    /// Stops the view `key` (its final document has `is_active: false`).
    #[napi(catch_unwind, ts_args_type = "key: string, attributes?: Attributes")]
    pub fn stop_view(&self, env: Env, key: Unknown, attributes: Unknown) -> Result<()> {
        self.record(&env, "stopView", |r| {
            Ok((EventKind::StopView { key: self.text(r, &key, "key")? }, self.attrs(r, &attributes)?))
        })
    }

    /// Records a user action on the current view.
    #[napi(catch_unwind, ts_args_type = "type: ActionType, name: string, attributes?: Attributes")]
    pub fn add_action(&self, env: Env, action_type: Unknown, name: Unknown, attributes: Unknown) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        self.record(&env, "addAction", |r| self.action(r, &action_type, &name, &attributes, None))
    }

    /// One action's arguments. Inside `addActions`, `within` is the element's path
    /// (`events[3]`), which prefixes the argument names in errors.
    fn action(
        &self,
        r: &Reader,
        t: &Unknown,
        name: &Unknown,
        attributes: &Unknown,
        within: Option<&dyn Display>,
    ) -> ArgResult<(EventKind, Attrs)> {
        let at = |name| Field { within, name };
        let action_type = r.enumerated(t.raw(), at("type"), ActionType::parse, ActionType::ALL)?;
        let name = r.bounded_text(name.raw(), at("name"), self.max_event)?;
        let attrs = r.attributes(attributes.raw(), at("attributes"), self.max_event)?;
        Ok((EventKind::Action { action_type, name }, attrs))
    }

    /// Records many actions in one call: `events` is an array (or a Sendable `collections.Array`)
    /// of `{ type, name, attributes? }`. All are checked before any is recorded.
    #[napi(catch_unwind, ts_args_type = "events: Array<ActionEvent>")]
    pub fn add_actions(&self, env: Env, events: Unknown) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        let started = self.clock.mono_ns();
        let r = self.reader(&env, "addActions");
        let batch = checked(&env, || {
            let len = r.length(events.raw(), "events")?;
            if len > MAX_ACTIONS_PER_CALL {
                return Err(r.range_err(
                    "events",
                    format_args!("has {len} elements, more than the {MAX_ACTIONS_PER_CALL} one call may carry"),
                ));
            }
            let mut out = Vec::with_capacity(len as usize);
            for i in 0..len {
                let item = r.element(events.raw(), i, "events")?;
                let at = Sub::index(&"events", i);
                if !r.is_object(item) {
                    return Err(r.type_err(at, "must be an object { type, name, attributes? }"));
                }
                let field = |name: &'static std::ffi::CStr| -> ArgResult<Unknown> {
                    let v = r.field_often(item, name, at)?;
                    // SAFETY: v is a live handle of this call's scope.
                    Ok(unsafe { Unknown::from_raw_unchecked(r.env, v) })
                };
                let (t, n, a) = (field(c"type")?, field(c"name")?, field(c"attributes")?);
                out.push(self.action(&r, &t, &n, &a, Some(&at))?);
            }
            Ok(out)
        })?;
        match self.dispatcher.try_borrow_mut() {
            Ok(mut d) => d.call_batch_from(started, batch),
            Err(_) => batch.into_iter().for_each(|(k, a)| self.inbox.push(k, a)),
        }
        Ok(())
    }

    /// Records an error; everything called before it is processed first.
    #[napi(
        catch_unwind,
        ts_args_type = "message: string, source: ErrorSource, stack?: string, attributes?: Attributes"
    )]
    pub fn add_error(
        &self,
        env: Env,
        message: Unknown,
        source: Unknown,
        stack: Unknown,
        attributes: Unknown,
    ) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        self.record(&env, "addError", |r| {
            let message = self.text(r, &message, "message")?;
            let source = r.enumerated(source.raw(), "source", ErrorSource::parse, ErrorSource::ALL)?;
            let stack = self.opt_text(r, &stack, "stack")?;
            Ok((EventKind::Error { message, source, stack, is_crash: false }, self.attrs(r, &attributes)?))
        })
    }

    /// Records a crash after everything called before it, writes it to disk and fsyncs. Returns
    /// false as `flush()` does.
    #[napi(catch_unwind, ts_args_type = "message: string, stack?: string")]
    pub fn mark_crash(&self, env: Env, message: Unknown, stack: Unknown) -> Result<bool> {
        self.record(&env, "markCrash", |r| {
            let message = self.text(r, &message, "message")?;
            let stack = self.opt_text(r, &stack, "stack")?;
            Ok((EventKind::Error { message, source: ErrorSource::Source, stack, is_crash: true }, Attrs::default()))
        })?;
        Ok(self.outcome(self.shared.storage.flush_crash(self.timeout())))
    }

    /// Starts a resource (a network request) identified by `key`.
    #[napi(catch_unwind, ts_args_type = "key: string, method: string, url: string, attributes?: Attributes")]
    pub fn start_resource(
        &self,
        env: Env,
        key: Unknown,
        method: Unknown,
        url: Unknown,
        attributes: Unknown,
    ) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        self.record(&env, "startResource", |r| {
            let key = self.text(r, &key, "key")?;
            let method = r.enumerated(method.raw(), "method", HttpMethod::parse_any_case, HttpMethod::ALL)?;
            let url = self.text(r, &url, "url")?;
            Ok((EventKind::StartResource { key, method, url }, self.attrs(r, &attributes)?))
        })
    }

    /// Stops the resource `key` and records it.
    #[napi(
        catch_unwind,
        ts_args_type = "key: string, statusCode: number, kind: ResourceKind, sizeBytes?: number, attributes?: Attributes"
    )]
    pub fn stop_resource(
        &self,
        env: Env,
        key: Unknown,
        status_code: Unknown,
        kind: Unknown,
        size_bytes: Unknown,
        attributes: Unknown,
    ) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        self.record(&env, "stopResource", |r| {
            let key = self.text(r, &key, "key")?;
            let status_code = r.integer(status_code.raw(), "statusCode", 0.0, 999.0)? as u16;
            let kind = r.enumerated(kind.raw(), "kind", ResourceKind::parse, ResourceKind::ALL)?;
            let size = r.opt_integer(size_bytes.raw(), "sizeBytes", 0.0, 9_007_199_254_740_991.0)?;
            Ok((EventKind::StopResource { key, status_code, kind, size }, self.attrs(r, &attributes)?))
        })
    }

    /// Records a named timing on the current view: `view.custom_timings[name]`, ns since the view
    /// started (a later call with the same name replaces it).
    #[napi(catch_unwind, ts_args_type = "name: string")]
    pub fn add_timing(&self, env: Env, name: Unknown) -> Result<()> {
        if self.untracked() {
            return Ok(());
        }
        self.record(&env, "addTiming", |r| {
            Ok((EventKind::AddTiming { name: self.text(r, &name, "name")? }, Attrs::default()))
        })
    }

    /// Sets a global attribute for events called after this.
    #[napi(catch_unwind, ts_args_type = "key: string, value: AttributeValue")]
    pub fn add_attribute(&self, env: Env, key: Unknown, value: Unknown) -> Result<()> {
        self.record(&env, "addAttribute", |r| {
            let key = self.text(r, &key, "key")?;
            // The same checks as an attribute's value.
            let value = r.attribute_value(value.raw(), "value", self.max_event)?;
            let bytes = global_attribute_bytes(&key, &value);
            self.shared.pipeline.reserve_global(&key, bytes).map_err(|(total, max)| {
                ArgError::Range(format!(
                    "addAttribute: the global attributes would take {total} bytes of every document, more than \
                     {max} (half of eventMaxBytes); remove some with removeAttribute"
                ))
            })?;
            Ok((EventKind::AddAttribute { key, value }, Attrs::default()))
        })
    }

    /// Removes a global attribute for events called after this.
    #[napi(catch_unwind, ts_args_type = "key: string")]
    pub fn remove_attribute(&self, env: Env, key: Unknown) -> Result<()> {
        self.record(&env, "removeAttribute", |r| {
            let key = self.text(r, &key, "key")?;
            self.shared.pipeline.release_global(&key);
            Ok((EventKind::RemoveAttribute { key }, Attrs::default()))
        })
    }

    /// Sets (or with `null`, clears) the user. Events called before keep the previous user.
    #[napi(catch_unwind, ts_args_type = "user: UserInfo | null")]
    pub fn set_user(&self, env: Env, user: Unknown) -> Result<()> {
        self.record(&env, "setUser", |r| {
            if r.is_nullish(user.raw()) {
                return Ok((EventKind::SetUser(None), Attrs::default()));
            }
            if !r.is_object(user.raw()) {
                return Err(r.type_err("user", "must be an object { id?, name?, email?, extra? } or null"));
            }
            let get = |name: &str| -> ArgResult<Option<String>> {
                let v = r.field(user.raw(), name, "user")?;
                if r.is_nullish(v) {
                    return Ok(None);
                }
                r.bounded_string(v, &format!("user.{name}"), self.max_event).map(Some)
            };
            let extra = r.field(user.raw(), "extra", "user")?;
            let user = UserInfo {
                id: get("id")?,
                name: get("name")?,
                email: get("email")?,
                extra: r.attribute_map(extra, "user.extra", self.max_event)?,
            };
            Ok((EventKind::SetUser(Some(user)), Attrs::default()))
        })
    }

    /// `granted` writes batches; `pending` buffers; `not_granted` drops. Events called before keep
    /// the consent of their call.
    #[napi(catch_unwind, ts_args_type = "consent: TrackingConsent")]
    pub fn set_tracking_consent(&self, env: Env, consent: Unknown) -> Result<()> {
        self.record(&env, "setTrackingConsent", |r| {
            let consent = r.enumerated(consent.raw(), "consent", TrackingConsent::parse, TrackingConsent::ALL)?;
            Ok((EventKind::SetConsent(consent), Attrs::default()))
        })
    }

    /// Sets the connectivity documents carry from this call on (`connectivity` of the RUM event
    /// format): call it when the network changes.
    #[napi(catch_unwind, ts_args_type = "connectivity: ConnectivityInfo")]
    pub fn set_connectivity(&self, env: Env, connectivity: Unknown) -> Result<()> {
        self.record(&env, "setConnectivity", |r| {
            let c = read_connectivity(r, connectivity.raw(), "connectivity")?;
            Ok((EventKind::SetConnectivity(c), Attrs::default()))
        })
    }

    /// The current session id after everything called before (null before the first event).
    #[napi(catch_unwind)]
    pub fn session_id(&self) -> Option<String> {
        match self.dispatcher.try_borrow_mut() {
            Ok(mut d) => d.session_id(),
            Err(_) => self.inbox.session_id(),
        }
    }

    /// Ends the session; the next event starts a new one.
    #[napi(catch_unwind)]
    pub fn stop_session(&self) {
        let started = self.clock.mono_ns();
        self.submit(started, EventKind::StopSession, Attrs::default());
    }

    /// Keeps the session alive (call on background and periodically).
    #[napi(catch_unwind)]
    pub fn keep_alive(&self) {
        if self.untracked() {
            return;
        }
        let started = self.clock.mono_ns();
        self.submit(started, EventKind::KeepAlive, Attrs::default());
    }

    /// Processes everything called before, writes it and seals the active batch. Returns false
    /// when the writer did not finish within `flushTimeoutMs`, or when a write failed since the
    /// previous flush (logged; counted in `stats().writeErrors`).
    #[napi(catch_unwind)]
    pub fn flush(&self) -> bool {
        self.drain();
        self.outcome(self.shared.storage.flush(self.timeout()))
    }

    /// Drains and flushes; afterwards every call is processed on the caller's turn.
    #[napi(catch_unwind)]
    pub fn stop(&self) -> bool {
        match self.dispatcher.try_borrow_mut() {
            Ok(mut d) => d.stop(),
            // From inside the event mapper: no nested drain (the queue goes on through its
            // slices), but the pipeline does stop queuing, as the caller was told.
            Err(_) => self.shared.pipeline.mark_stopped(),
        }
        self.outcome(self.shared.storage.flush(self.timeout()))
    }

    /// Installs (or with `null`, removes) a function run on this thread for each non-view
    /// document before it is written: return the document (changed or not), or null to drop it.
    #[napi(catch_unwind, ts_args_type = "mapper: ((document: RumDocument) => RumDocument | null) | null")]
    pub fn set_event_mapper(&self, env: Env, mapper: Unknown) -> Result<()> {
        let r = self.reader(&env, "setEventMapper");
        let mapper = checked(&env, || {
            if r.is_nullish(mapper.raw()) {
                return Ok(None);
            }
            if !r.is_function(mapper.raw()) {
                return Err(r.type_err("mapper", "must be a function or null"));
            }
            Ok(Some(mapper.raw()))
        })?;
        let mapper = match mapper {
            None => None,
            Some(f) => Some(JsMapper::new(env.raw(), f, self.max_event.saturating_mul(2))?),
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

    /// The pipeline's counters.
    #[napi(catch_unwind)]
    pub fn stats(&self) -> PipelineStats {
        let storage = self.shared.storage.counters();
        PipelineStats::read(&Sources { dispatch: self.shared.pipeline.counters(), storage: &storage })
    }

    /// Claims the oldest sealed batch for upload: `{ id, encoding, body, eventCount, bytes }` (the
    /// body is gzip-compressed NDJSON when `encoding` is "gzip", the default `batchEncoding`: send
    /// it with `Content-Encoding: gzip`; plain NDJSON when "identity"), or null when
    /// none is ready — or when the writer has held the directory for over 16 ms (a stalled disk;
    /// counted in `stats().uploadWaitsGivenUp`): the UI thread does not wait on the disk — or when
    /// claiming or reading the batch failed (logged, counted in `stats().uploadErrors`).
    #[napi(catch_unwind, ts_return_type = "NextBatch | null")]
    pub fn next_batch<'env>(&self, env: &'env Env) -> Result<Option<Object<'env>>> {
        let batch = match self.shared.storage.next_batch() {
            Ok(Some(b)) => b,
            Ok(None) | Err(StorageError::Busy(_)) => return Ok(None),
            // A fault of the disk, not of the caller: an uploader that does not catch must not
            // bring the app down. Counted in stats().uploadErrors.
            Err(e) => {
                log::warn(&format!("nextBatch: {e}"));
                return Ok(None);
            }
        };
        let id = batch.id.clone();
        batch_object(env, batch).inspect_err(|_| {
            // Nobody will complete this claim: release it so the next call returns it.
            let _ = self.shared.storage.complete_batch(&id, false);
        })
    }

    /// Ends a claim: `delivered` deletes the batch, otherwise it is released for a retry. An id
    /// that is not a claimed batch is a RangeError; a file operation that fails is logged and
    /// counted (`stats().uploadErrors`), not thrown.
    #[napi(catch_unwind, ts_args_type = "id: string, delivered: boolean")]
    pub fn complete_batch(&self, env: Env, id: Unknown, delivered: Unknown) -> Result<()> {
        let r = self.reader(&env, "completeBatch");
        let (id, delivered) =
            checked(&env, || Ok((r.string(id.raw(), "id")?, r.boolean(delivered.raw(), "delivered")?)))?;
        match self.shared.storage.complete_batch(&id, delivered) {
            Ok(()) => Ok(()),
            Err(e @ StorageError::UnknownBatch(_)) => {
                Err(throw(&env, ArgError::Range(format!("completeBatch: id {e}"))))
            }
            // As in nextBatch: counted in stats().uploadErrors, logged, not thrown.
            Err(e) => {
                log::warn(&format!("completeBatch: {e}"));
                Ok(())
            }
        }
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.shared.config.flush_timeout_ms.into())
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

/// `{ id, body, eventCount, bytes }` for a claimed batch. The body's bytes move into the
/// ArrayBuffer without a copy where the engine allows external buffers (napi-ohos copies them
/// where it does not).
fn batch_object(env: &Env, b: Batch) -> Result<Option<Object<'_>>> {
    let mut out = Object::new(env)?;
    out.set("id", b.id)?;
    out.set("encoding", b.encoding.as_str())?;
    out.set("eventCount", b.event_count as f64)?;
    out.set("bytes", b.bytes as f64)?;
    out.set("body", ArrayBuffer::from_data(env, b.body)?)?;
    Ok(Some(out))
}
