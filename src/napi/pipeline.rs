//! `RumPipeline`: the one class JS and ArkTS see. Each method checks and copies its arguments
//! (a bad one throws `TypeError`/`RangeError` naming the method and argument, and changes nothing),
//! then hands one captured event to this thread's dispatcher.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::ptr::{self, NonNull};
use std::rc::{self, Rc};
use std::sync::{Arc, Weak};
use std::time::Duration;

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::*;
use napi_ohos::sys;

use super::convert::{ArgError, ArgResult, Reader, Sub};
use super::host::{HostClock, HostScheduler, JsMapper, TimerTarget};
use super::registry::{self, AttachError, Shared};
use super::throw;
use crate::core::config::{Config, TrackingConsent, MAX_ACTIONS_PER_CALL};
use crate::core::dispatch::{Dispatcher, Inbox};
use crate::core::event::{ActionType, Attributes, ErrorSource, EventKind, ResourceKind, UserInfo};
use crate::core::seam::Clock;
use crate::core::storage::{FlushOutcome, StorageError};
use crate::log;

type HostDispatcher = Dispatcher<HostClock, HostScheduler>;

/// Options of `new RumPipeline(options)`.
#[napi(object)]
pub struct PipelineOptions {
    /// Directory the pipeline owns; batches go to `<storageDir>/rum/`. On HarmonyOS, a folder under
    /// the application's `filesDir`. Pipelines with the same directory share one writer.
    pub storage_dir: String,
    /// RUM application id (`application.id` of every document).
    pub application_id: String,
    /// `service` of every document. @default ""
    pub service: Option<String>,
    /// `version` of every document. @default ""
    pub version: Option<String>,
    /// `env` of every document, when set.
    pub env: Option<String>,
    /// Initial tracking consent. @default "granted"
    #[napi(ts_type = "TrackingConsent")]
    pub tracking_consent: Option<String>,
    /// Time the SDK may spend on the caller's turn before it queues, ms. @default 4
    pub turn_budget_ms: Option<f64>,
    /// Queued events at most; at the bound a slice runs before the next event is queued. @default 5000
    pub queue_capacity: Option<f64>,
    /// Roll the active batch past this size, bytes. @default 524288
    pub batch_max_bytes: Option<f64>,
    /// Roll an active batch older than this, ms. @default 10000
    pub batch_window_ms: Option<f64>,
    /// All batch files together stay within this, bytes. @default 4194304
    pub disk_quota_bytes: Option<f64>,
    /// Batch files at most. @default 200
    pub max_batch_files: Option<f64>,
    /// Older batches are deleted, not uploaded, ms. @default 82800000 (23 h)
    pub batch_max_age_ms: Option<f64>,
    /// A larger document is dropped and counted; a larger argument is refused, bytes; at most
    /// 67108864 (64 MiB). @default 524288
    pub event_max_bytes: Option<f64>,
    /// `flush()` and `markCrash()` wait at most this long for the writer, ms. @default 2000
    pub flush_timeout_ms: Option<f64>,
}

/// Counters of the pipeline (all threads' dispatchers and the writer together).
#[napi(object)]
pub struct PipelineStats {
    pub calls_inline: i64,
    pub calls_queued: i64,
    pub queue_length: i64,
    pub queue_high_water: i64,
    pub slices_run: i64,
    pub slices_at_capacity: i64,
    pub longest_slice_us: i64,
    pub longest_inline_turn_us: i64,
    pub drains: i64,
    pub documents_produced: i64,
    pub view_writes_saved: i64,
    pub mapper_errors: i64,
    pub mapper_dropped: i64,
    pub slice_errors: i64,
    pub resources_dropped: i64,
    pub documents_written: i64,
    pub bytes_written: i64,
    pub bytes_on_disk: i64,
    pub batches_on_disk: i64,
    pub batches_sealed: i64,
    pub evicted_batches_quota: i64,
    pub evicted_batches_count: i64,
    pub evicted_batches_age: i64,
    pub evicted_events_quota: i64,
    pub evicted_events_count: i64,
    pub evicted_events_age: i64,
    pub dropped_oversize: i64,
    pub dropped_consent: i64,
    pub dropped_pre_consent_full: i64,
    pub dropped_write_error: i64,
    pub write_errors: i64,
    pub flush_timeouts: i64,
    pub batches_claimed: i64,
    pub batches_delivered: i64,
    pub batches_released: i64,
    /// `nextBatch()` / `completeBatch()` calls that found the writer holding the directory past
    /// 16 ms (a stalled disk): `nextBatch()` returned null, `completeBatch()` left its change to
    /// the writer.
    pub upload_waits_given_up: i64,
    /// File operations of `nextBatch()` / `completeBatch()` that failed (claim, read, delete,
    /// release): logged and counted, never thrown; the batch stays for a later call.
    pub upload_errors: i64,
}

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
    /// Registered as the JS environment's teardown hook; owned here, freed in `drop`.
    exit: NonNull<ExitHook>,
}

/// What the JS environment's teardown hook needs (a script that never calls `stop()`, a worker
/// terminated with events queued). Its address is the hook's argument, so it lives at a fixed
/// place from the constructor to the pipeline's drop, which frees it: a hook removed by a
/// collected pipeline leaves nothing behind.
struct ExitHook {
    env: sys::napi_env,
    dispatcher: rc::Weak<RefCell<HostDispatcher>>,
    shared: Weak<Shared>,
    timeout: Duration,
    has_mapper: Cell<bool>,
    /// The hook ran: the environment is ending, and `env` must not be used any more.
    ran: Cell<bool>,
}

/// The environment is being torn down (Node: main thread exit or `worker.terminate()`; ArkTS: a
/// worker or the ability ending). No JS can run any more: this thread's queue is processed
/// without timers and without the event mapper, the JS references are released while `env` is
/// still alive, and the writer is flushed. Whether the pipeline's finalizer runs after this (it
/// does on Node, during the same teardown) or never, nothing queued is lost and nothing touches
/// `env` later.
unsafe extern "C" fn on_env_teardown(arg: *mut c_void) {
    // SAFETY: arg is the ExitHook the pipeline registered and still owns (its drop removes the
    // hook before freeing it, unless the hook already ran).
    let hook = unsafe { &*arg.cast::<ExitHook>() };
    hook.ran.set(true);
    let run = AssertUnwindSafe(|| {
        if let Some(d) = hook.dispatcher.upgrade() {
            drain_without_js(&d, hook.has_mapper.get(), "the JS environment ended");
        }
        if let Some(shared) = hook.shared.upgrade() {
            if !matches!(shared.storage.flush(hook.timeout), FlushOutcome::Done) {
                log::warn("the writer did not finish before the JS environment ended");
            }
        }
    });
    // A panic may not unwind into the engine.
    let _ = catch_unwind(run);
}

/// Processes this thread's queue where no JS may run (a GC finalizer, the environment's
/// teardown): the scheduler is detached first, so no `setTimeout` is called, and the event mapper
/// is removed (queued events are written without it, logged).
fn drain_without_js(dispatcher: &RefCell<HostDispatcher>, has_mapper: bool, when: &str) {
    let Ok(mut d) = dispatcher.try_borrow_mut() else { return };
    d.scheduler().detach();
    d.set_mapper(None);
    if has_mapper && d.queue_len() > 0 {
        log::warn(&format!("{when} with queued events: they are written without the event mapper"));
    }
    d.drain();
}

impl RumPipeline {
    fn exit(&self) -> &ExitHook {
        // SAFETY: exit is owned by self and freed only in its drop.
        unsafe { self.exit.as_ref() }
    }
}

impl Drop for RumPipeline {
    /// Runs in a GC finalizer: no JS may be called. A pipeline collected with events still queued
    /// processes them now (without timers or the event mapper), so none is lost.
    fn drop(&mut self) {
        let exit = self.exit();
        let (has_mapper, ran, env) = (exit.has_mapper.get(), exit.ran.get(), exit.env);
        // A panic may not unwind into the engine (this runs in an `extern "C"` finalizer).
        let _ = catch_unwind(AssertUnwindSafe(|| {
            drain_without_js(&self.dispatcher, has_mapper, "a RumPipeline was collected")
        }));
        if !ran {
            // SAFETY: the hook was registered on env, which is alive (its teardown hook has not
            // run), with this exact function and argument.
            unsafe { sys::napi_remove_env_cleanup_hook(env, Some(on_env_teardown), self.exit.as_ptr().cast()) };
        }
        // SAFETY: allocated by Box::into_raw in the constructor; the hook no longer refers to it
        // (removed above, or already run), and nothing else does.
        drop(unsafe { Box::from_raw(self.exit.as_ptr()) });
    }
}

/// The largest `eventMaxBytes`: the budget is all that bounds what one argument may make the
/// binding read and allocate (a sparse array's length, an iterator's entries), so it must stay far
/// below what a device can allocate.
const EVENT_MAX_BYTES_CAP: f64 = 67_108_864.0;

fn positive(r: &Reader, v: Option<f64>, arg: &str, default: u64, max: f64) -> ArgResult<u64> {
    match v {
        None => Ok(default),
        Some(n) if !n.is_finite() => Err(r.range_err(arg, format_args!("must be finite, got {n}"))),
        Some(n) if n.fract() != 0.0 || n < 1.0 || n > max => {
            Err(r.range_err(arg, format_args!("must be an integer from 1 to {max}, got {n}")))
        }
        Some(n) => Ok(n as u64),
    }
}

impl PipelineOptions {
    /// Reads the options object field by field, so a wrong type names its option.
    fn read(r: &Reader, obj: sys::napi_value) -> ArgResult<Self> {
        if !r.is_object(obj) {
            return Err(r.type_err("options", "must be an object with storageDir and applicationId"));
        }
        let s = |name: &str| -> ArgResult<String> {
            let v = r.field(obj, name, "options")?;
            r.string(v, &format!("options.{name}"))
        };
        let os = |name: &str| -> ArgResult<Option<String>> {
            let v = r.field(obj, name, "options")?;
            r.opt_string(v, &format!("options.{name}"))
        };
        let on = |name: &str| -> ArgResult<Option<f64>> {
            let v = r.field(obj, name, "options")?;
            if r.is_nullish(v) {
                return Ok(None);
            }
            r.number(v, &format!("options.{name}")).map(Some).or_else(|e| match e {
                // NaN and Infinity are bad values of a number: a RangeError naming the option.
                ArgError::Range(_) => {
                    let mut n = 0f64;
                    // SAFETY: v is a number (number() only fails with Range on non-finite numbers).
                    unsafe { sys::napi_get_value_double(r.env, v, &mut n) };
                    Ok(Some(n))
                }
                other => Err(other),
            })
        };
        Ok(Self {
            storage_dir: s("storageDir")?,
            application_id: s("applicationId")?,
            service: os("service")?,
            version: os("version")?,
            env: os("env")?,
            tracking_consent: os("trackingConsent")?,
            turn_budget_ms: on("turnBudgetMs")?,
            queue_capacity: on("queueCapacity")?,
            batch_max_bytes: on("batchMaxBytes")?,
            batch_window_ms: on("batchWindowMs")?,
            disk_quota_bytes: on("diskQuotaBytes")?,
            max_batch_files: on("maxBatchFiles")?,
            batch_max_age_ms: on("batchMaxAgeMs")?,
            event_max_bytes: on("eventMaxBytes")?,
            flush_timeout_ms: on("flushTimeoutMs")?,
        })
    }

    /// The core config, every value checked.
    fn into_config(self, r: &Reader) -> ArgResult<Config> {
        let d = Config::default();
        const BIG: f64 = 9_007_199_254_740_991.0;
        let consent = match self.tracking_consent.as_deref() {
            None => d.tracking_consent,
            Some(s) => TrackingConsent::parse(s).ok_or_else(|| {
                r.range_err(
                    "options.trackingConsent",
                    format_args!("must be granted, not_granted or pending, got {s:?}"),
                )
            })?,
        };
        let config = Config {
            storage_dir: PathBuf::from(self.storage_dir),
            application_id: self.application_id,
            service: self.service.unwrap_or_default(),
            version: self.version.unwrap_or_default(),
            env: self.env,
            tracking_consent: consent,
            turn_budget_ms: positive(r, self.turn_budget_ms, "options.turnBudgetMs", d.turn_budget_ms.into(), 1_000.0)?
                as u32,
            queue_capacity: positive(r, self.queue_capacity, "options.queueCapacity", d.queue_capacity as u64, 1e6)?
                as usize,
            batch_max_bytes: positive(r, self.batch_max_bytes, "options.batchMaxBytes", d.batch_max_bytes, BIG)?,
            batch_window_ms: positive(r, self.batch_window_ms, "options.batchWindowMs", d.batch_window_ms, BIG)?,
            disk_quota_bytes: positive(r, self.disk_quota_bytes, "options.diskQuotaBytes", d.disk_quota_bytes, BIG)?,
            max_batch_files: positive(r, self.max_batch_files, "options.maxBatchFiles", d.max_batch_files.into(), 1e6)?
                as u32,
            batch_max_age_ms: positive(r, self.batch_max_age_ms, "options.batchMaxAgeMs", d.batch_max_age_ms, BIG)?,
            event_max_bytes: positive(
                r,
                self.event_max_bytes,
                "options.eventMaxBytes",
                d.event_max_bytes,
                EVENT_MAX_BYTES_CAP,
            )?,
            flush_timeout_ms: positive(
                r,
                self.flush_timeout_ms,
                "options.flushTimeoutMs",
                d.flush_timeout_ms.into(),
                60_000.0,
            )? as u32,
            ..d
        };
        config.validate().map_err(|e| r.range_err(&format!("options.{}", e.field), &e.reason))?;
        Ok(config)
    }
}

/// Whether the constructor's receiver can become a pipeline. Called without `new`, the receiver is
/// the global object (which would become the pipeline, alive forever) or whatever `call` was given;
/// an object that already wraps a native value makes the wrap fail after the constructor returned,
/// and the pipeline built for it (its writer thread, its open directory) would never be freed.
fn is_fresh_receiver(env: &Env, this: sys::napi_value) -> bool {
    let raw = env.raw();
    let (mut global, mut is_global, mut wrapped) = (ptr::null_mut(), false, ptr::null_mut());
    // SAFETY: this is the receiver of the current call, on env's thread; napi_unwrap only reads
    // (and fails without throwing on an object that wraps nothing).
    unsafe {
        if sys::napi_get_global(raw, &mut global) == sys::Status::napi_ok {
            sys::napi_strict_equals(raw, this, global, &mut is_global);
        }
        let already = sys::napi_unwrap(raw, this, &mut wrapped) == sys::Status::napi_ok;
        !is_global && !already
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
        if !is_fresh_receiver(&env, this.object.raw()) {
            return Err(throw(&env, ArgError::Type("RumPipeline: must be called with new".into())));
        }
        let config = checked(&env, || PipelineOptions::read(&r, options.raw())?.into_config(&r))?;
        let max_event = usize::try_from(config.event_max_bytes).unwrap_or(usize::MAX);
        let shared = registry::attach(config).map_err(|e| {
            let msg = match e {
                AttachError::Dir(m) | AttachError::Storage(m) => format!("RumPipeline: options.storageDir {m}"),
                AttachError::Conflict(m) => format!("RumPipeline: options.storageDir {m}"),
            };
            throw(&env, ArgError::Range(msg))
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
        let exit = Box::new(ExitHook {
            env: env.raw(),
            dispatcher: Rc::downgrade(&dispatcher),
            shared: Arc::downgrade(&shared),
            timeout: Duration::from_millis(shared.config.flush_timeout_ms.into()),
            has_mapper: Cell::new(false),
            ran: Cell::new(false),
        });
        let exit = NonNull::from(Box::leak(exit));
        // SAFETY: env is this call's live env; the argument stays valid until the pipeline's
        // drop removes the hook and frees it.
        let status = unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(on_env_teardown), exit.as_ptr().cast()) };
        if status != sys::Status::napi_ok {
            // SAFETY: never registered: freed once, here.
            drop(unsafe { Box::from_raw(exit.as_ptr()) });
            return Err(Error::new(
                Status::GenericFailure,
                "RumPipeline: cannot register the environment teardown hook",
            ));
        }
        Ok(Self { shared, dispatcher, inbox, clock, _timers: timers, max_event, exit })
    }

    /// Hands one event to the dispatcher, or to the inbox when called from inside the mapper.
    /// `started` is when the JS call entered, so the turn is charged for the argument copy too.
    fn submit(&self, started: u64, kind: EventKind, attrs: Attributes) {
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
        Reader::new(env.raw(), method)
    }

    /// The shape of every method that records one event: note when the call entered, read its
    /// arguments (a bad one throws and records nothing), hand the event on.
    fn record(
        &self,
        env: &Env,
        method: &'static str,
        read: impl FnOnce(&Reader) -> ArgResult<(EventKind, Attributes)>,
    ) -> Result<()> {
        let started = self.clock.mono_ns();
        let r = self.reader(env, method);
        let (kind, attrs) = checked(env, || read(&r))?;
        self.submit(started, kind, attrs);
        Ok(())
    }

    fn attrs(&self, r: &Reader, v: &Unknown) -> ArgResult<Attributes> {
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
        self.record(&env, "addAction", |r| self.action(r, &action_type, &name, &attributes, None))
    }

    /// One action's arguments. `index` is its place in `addActions`, which prefixes the argument
    /// names in errors; the names are only built when an error needs them.
    fn action(
        &self,
        r: &Reader,
        t: &Unknown,
        name: &Unknown,
        attributes: &Unknown,
        index: Option<usize>,
    ) -> ArgResult<(EventKind, Attributes)> {
        let read = || -> ArgResult<(EventKind, Attributes)> {
            let action_type = r.enumerated(t.raw(), "type", ActionType::parse, ActionType::ALL)?;
            let name = r.bounded_string(name.raw(), "name", self.max_event)?;
            let attrs = r.attributes(attributes.raw(), "attributes", self.max_event)?;
            Ok((EventKind::Action { action_type, name }, attrs))
        };
        let Some(i) = index else { return read() };
        read().map_err(|e| {
            let prefix = |m: String| m.replacen(": ", &format!(": events[{i}]."), 1);
            match e {
                ArgError::Type(m) => ArgError::Type(prefix(m)),
                ArgError::Range(m) => ArgError::Range(prefix(m)),
                ArgError::Js(m) => ArgError::Js(m.replacen("reading ", &format!("reading events[{i}]."), 1)),
            }
        })
    }

    /// Records many actions in one call: `events` is an array (or a Sendable `collections.Array`)
    /// of `{ type, name, attributes? }`. All are checked before any is recorded.
    #[napi(catch_unwind, ts_args_type = "events: Array<ActionEvent>")]
    pub fn add_actions(&self, env: Env, events: Unknown) -> Result<()> {
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
                let field = |name: &str| -> ArgResult<Unknown> {
                    let v = r.field(item, name, at)?;
                    // SAFETY: v is a live handle of this call's scope.
                    Ok(unsafe { Unknown::from_raw_unchecked(r.env, v) })
                };
                let (t, n, a) = (field("type")?, field("name")?, field("attributes")?);
                out.push(self.action(&r, &t, &n, &a, Some(i as usize))?);
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
        self.record(&env, "addError", |r| {
            let message = self.text(r, &message, "message")?;
            let source = r.enumerated(source.raw(), "source", ErrorSource::parse, ErrorSource::ALL)?;
            let stack = self.opt_text(r, &stack, "stack")?;
            Ok((EventKind::Error { message, source, stack, is_crash: false }, self.attrs(r, &attributes)?))
        })
    }

    /// Records a crash after everything called before it, writes it to disk and fsyncs. Returns
    /// false when the writer did not finish within `flushTimeoutMs`.
    #[napi(catch_unwind, ts_args_type = "message: string, stack?: string")]
    pub fn mark_crash(&self, env: Env, message: Unknown, stack: Unknown) -> Result<bool> {
        self.record(&env, "markCrash", |r| {
            let message = self.text(r, &message, "message")?;
            let stack = self.opt_text(r, &stack, "stack")?;
            Ok((EventKind::Error { message, source: ErrorSource::Source, stack, is_crash: true }, Attributes::new()))
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
        self.record(&env, "startResource", |r| {
            let key = self.text(r, &key, "key")?;
            let method = self.text(r, &method, "method")?;
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
        self.record(&env, "addTiming", |r| {
            Ok((EventKind::AddTiming { name: self.text(r, &name, "name")? }, Attributes::new()))
        })
    }

    /// Sets a global attribute for events called after this.
    #[napi(catch_unwind, ts_args_type = "key: string, value: AttributeValue")]
    pub fn add_attribute(&self, env: Env, key: Unknown, value: Unknown) -> Result<()> {
        self.record(&env, "addAttribute", |r| {
            let key = self.text(r, &key, "key")?;
            // Read the value through the attribute path, so it gets the same checks.
            let mut holder = ptr::null_mut();
            // SAFETY: creates an object in this call's scope and sets one property on it.
            unsafe {
                sys::napi_create_object(r.env, &mut holder);
                sys::napi_set_named_property(r.env, holder, c"value".as_ptr(), value.raw());
            }
            let mut map = r.attributes(holder, "value", self.max_event).map_err(|e| match e {
                ArgError::Type(m) => ArgError::Type(m.replace("value.value", "value")),
                ArgError::Range(m) => ArgError::Range(m.replace("value.value", "value")),
                ArgError::Js(m) => ArgError::Js(m),
            })?;
            let value = map.remove("value").ok_or_else(|| r.type_err("value", "must not be undefined"))?;
            Ok((EventKind::AddAttribute { key, value }, Attributes::new()))
        })
    }

    /// Removes a global attribute for events called after this.
    #[napi(catch_unwind, ts_args_type = "key: string")]
    pub fn remove_attribute(&self, env: Env, key: Unknown) -> Result<()> {
        self.record(&env, "removeAttribute", |r| {
            Ok((EventKind::RemoveAttribute { key: self.text(r, &key, "key")? }, Attributes::new()))
        })
    }

    /// Sets (or with `null`, clears) the user. Events called before keep the previous user.
    #[napi(catch_unwind, ts_args_type = "user: UserInfo | null")]
    pub fn set_user(&self, env: Env, user: Unknown) -> Result<()> {
        self.record(&env, "setUser", |r| {
            if r.is_nullish(user.raw()) {
                return Ok((EventKind::SetUser(None), Attributes::new()));
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
                extra: r.attributes(extra, "user.extra", self.max_event)?,
            };
            Ok((EventKind::SetUser(Some(user)), Attributes::new()))
        })
    }

    /// `granted` writes batches; `pending` buffers; `not_granted` drops. Events called before keep
    /// the consent of their call.
    #[napi(catch_unwind, ts_args_type = "consent: TrackingConsent")]
    pub fn set_tracking_consent(&self, env: Env, consent: Unknown) -> Result<()> {
        self.record(&env, "setTrackingConsent", |r| {
            let consent =
                r.enumerated(consent.raw(), "consent", TrackingConsent::parse, &["granted", "not_granted", "pending"])?;
            Ok((EventKind::SetConsent(consent), Attributes::new()))
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
        self.submit(started, EventKind::StopSession, Attributes::new());
    }

    /// Keeps the session alive (call on background and periodically).
    #[napi(catch_unwind)]
    pub fn keep_alive(&self) {
        let started = self.clock.mono_ns();
        self.submit(started, EventKind::KeepAlive, Attributes::new());
    }

    /// Processes everything called before, writes it and seals the active batch. Returns false
    /// when the writer did not finish within `flushTimeoutMs`.
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
                self.exit().has_mapper.set(mapper.is_some());
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
        let d = self.shared.pipeline.counters();
        let s = self.shared.storage.counters();
        let n = |c: &crate::core::stats::Counter| i64::try_from(c.get()).unwrap_or(i64::MAX);
        PipelineStats {
            calls_inline: n(&d.calls_inline),
            calls_queued: n(&d.calls_queued),
            queue_length: n(&d.queue_length),
            queue_high_water: n(&d.queue_high_water),
            slices_run: n(&d.slices_run),
            slices_at_capacity: n(&d.slices_at_capacity),
            longest_slice_us: n(&d.longest_slice_us),
            longest_inline_turn_us: n(&d.longest_inline_turn_us),
            drains: n(&d.drains),
            documents_produced: n(&d.documents_produced),
            view_writes_saved: n(&d.view_writes_saved),
            mapper_errors: n(&d.mapper_errors),
            mapper_dropped: n(&d.mapper_dropped),
            slice_errors: n(&d.slice_errors),
            resources_dropped: n(&d.resources_dropped),
            documents_written: n(&s.documents_written),
            bytes_written: n(&s.bytes_written),
            bytes_on_disk: n(&s.bytes_on_disk),
            batches_on_disk: n(&s.batches_on_disk),
            batches_sealed: n(&s.batches_sealed),
            evicted_batches_quota: n(&s.evicted_batches_quota),
            evicted_batches_count: n(&s.evicted_batches_count),
            evicted_batches_age: n(&s.evicted_batches_age),
            evicted_events_quota: n(&s.evicted_events_quota),
            evicted_events_count: n(&s.evicted_events_count),
            evicted_events_age: n(&s.evicted_events_age),
            dropped_oversize: n(&s.dropped_oversize),
            dropped_consent: n(&s.dropped_consent),
            dropped_pre_consent_full: n(&s.dropped_pre_consent_full),
            dropped_write_error: n(&s.dropped_write_error),
            write_errors: n(&s.write_errors),
            flush_timeouts: n(&s.flush_timeouts),
            batches_claimed: n(&s.batches_claimed),
            batches_delivered: n(&s.batches_delivered),
            batches_released: n(&s.batches_released),
            upload_waits_given_up: n(&s.upload_waits_given_up),
            upload_errors: n(&s.upload_errors),
        }
    }

    /// Claims the oldest sealed batch for upload: `{ id, body, eventCount, bytes }`, or null when
    /// none is ready — or when the writer has held the directory for over 16 ms (a stalled disk;
    /// counted in `stats().uploadWaitsGivenUp`): the UI thread does not wait on the disk — or when
    /// claiming or reading the batch failed (logged, counted in `stats().uploadErrors`).
    #[napi(catch_unwind, ts_return_type = "NextBatch | null")]
    pub fn next_batch(&self, env: Env) -> Result<Unknown<'_>> {
        let batch = match self.shared.storage.next_batch() {
            Ok(b) => b,
            Err(StorageError::Busy(_)) => None,
            // A fault of the disk, not of the caller: an uploader that does not catch must not
            // bring the app down. Counted in stats().uploadErrors.
            Err(e) => {
                log::warn(&format!("nextBatch: {e}"));
                None
            }
        };
        let raw = env.raw();
        let mut out = ptr::null_mut();
        // SAFETY: values are created in this call's scope on the JS thread; the ArrayBuffer's
        // memory is owned by the engine and filled before it is handed out.
        unsafe {
            match batch {
                None => {
                    sys::napi_get_null(raw, &mut out);
                }
                Some(b) => {
                    sys::napi_create_object(raw, &mut out);
                    let mut data = ptr::null_mut();
                    let mut body = ptr::null_mut();
                    if sys::napi_create_arraybuffer(raw, b.body.len(), &mut data, &mut body) != sys::Status::napi_ok {
                        // Nobody will complete this claim: release it so the next call returns it.
                        let _ = self.shared.storage.complete_batch(&b.id, false);
                        return Err(Error::new(Status::GenericFailure, "nextBatch: cannot allocate the body"));
                    }
                    if !b.body.is_empty() {
                        ptr::copy_nonoverlapping(b.body.as_ptr(), data.cast::<u8>(), b.body.len());
                    }
                    let mut id = ptr::null_mut();
                    sys::napi_create_string_utf8(raw, b.id.as_ptr().cast(), b.id.len() as isize, &mut id);
                    let mut count = ptr::null_mut();
                    sys::napi_create_double(raw, b.event_count as f64, &mut count);
                    let mut bytes = ptr::null_mut();
                    sys::napi_create_double(raw, b.bytes as f64, &mut bytes);
                    sys::napi_set_named_property(raw, out, c"id".as_ptr(), id);
                    sys::napi_set_named_property(raw, out, c"body".as_ptr(), body);
                    sys::napi_set_named_property(raw, out, c"eventCount".as_ptr(), count);
                    sys::napi_set_named_property(raw, out, c"bytes".as_ptr(), bytes);
                }
            }
            Ok(Unknown::from_raw_unchecked(raw, out))
        }
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
