//! The host side of the core's seams on a JS thread: the clock, the scheduler that yields through
//! the thread's own `setTimeout(fn, 0)`, and the JS event mapper.
//!
//! `setTimeout` is taken from the global object, so the same code yields on ArkTS (where it is a
//! 0 ms libuv timer on the thread's loop) and on Node.js.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use napi_ohos::bindgen_prelude::*;
use napi_ohos::sys;
use serde_json::Value;

use super::convert::{ArgError, Reader};
use crate::core::dispatch::Dispatcher;
use crate::core::document::Document;
use crate::core::seam::{Clock, EventMapper, MapOutcome, MapperError, Scheduler, Timer};
use crate::log;

/// The dispatcher of one JS thread.
pub type HostDispatcher = Dispatcher<HostClock, HostScheduler>;

/// Monotonic time from a per-thread origin, wall time from the system clock.
#[derive(Clone)]
pub struct HostClock {
    origin: Instant,
}

impl HostClock {
    pub fn new() -> Self {
        Self { origin: Instant::now() }
    }
}

impl Clock for HostClock {
    fn mono_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn wall_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A strong reference to a JS value, deleted when dropped or released (on the JS thread that made
/// it: the holders are not `Send`).
pub struct JsRef {
    env: sys::napi_env,
    /// Null once released.
    raw: Cell<sys::napi_ref>,
}

impl JsRef {
    pub fn new(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        let mut raw = ptr::null_mut();
        // SAFETY: value is a live handle of env.
        let status = unsafe { sys::napi_create_reference(env, value, 1, &mut raw) };
        if status != sys::Status::napi_ok {
            return Err(Error::new(Status::GenericFailure, "cannot keep a reference to a JS value"));
        }
        Ok(Self { env, raw: Cell::new(raw) })
    }

    /// The value, or None once released.
    pub fn value(&self) -> Option<sys::napi_value> {
        let raw = self.raw.get();
        if raw.is_null() {
            return None;
        }
        let mut out = ptr::null_mut();
        // SAFETY: raw is a live reference of env.
        let status = unsafe { sys::napi_get_reference_value(self.env, raw, &mut out) };
        (status == sys::Status::napi_ok && !out.is_null()).then_some(out)
    }

    /// Deletes the reference now, while env is known to be alive (its teardown hook); later
    /// calls and the drop do nothing.
    pub fn release(&self) {
        let raw = self.raw.replace(ptr::null_mut());
        if !raw.is_null() {
            // SAFETY: raw was created on env and is deleted once (it is null from now on).
            unsafe { sys::napi_delete_reference(self.env, raw) };
        }
    }
}

impl Drop for JsRef {
    fn drop(&mut self) {
        self.release();
    }
}

/// Where a fired timer is delivered: the pipeline sets it once its dispatcher exists.
pub type TimerTarget = Rc<RefCell<Option<Box<dyn Fn(Timer)>>>>;

/// Schedules the dispatcher's timers with the JS thread's `setTimeout(fn, delay)`.
pub struct HostScheduler {
    env: sys::napi_env,
    set_timeout: JsRef,
    turn_end: JsRef,
    slice: JsRef,
    views_due: JsRef,
    /// Set by [`HostScheduler::detach`]: no more timers, no more JS.
    detached: Cell<bool>,
}

impl HostScheduler {
    pub fn new(env: &Env, target: TimerTarget) -> Result<Self> {
        let raw_env = env.raw();
        let global = env.get_global()?;
        let set_timeout: Unknown = global.get_named_property("setTimeout")?;
        if set_timeout.get_type()? != ValueType::Function {
            return Err(Error::new(Status::FunctionExpected, "this JS engine has no global setTimeout"));
        }
        let make = |name: &str, timer: Timer| -> Result<JsRef> {
            let target = target.clone();
            let f = env.create_function_from_closure::<(), (), _>(name, move |_ctx| -> Result<()> {
                // A fired timer never throws into the event loop: a panic is caught and logged.
                let run = AssertUnwindSafe(|| {
                    if let Some(deliver) = target.borrow().as_ref() {
                        deliver(timer);
                    }
                });
                if catch_unwind(run).is_err() {
                    log::error("a scheduled slice panicked; the pipeline keeps running");
                }
                Ok(())
            })?;
            JsRef::new(raw_env, f.raw())
        };
        Ok(Self {
            env: raw_env,
            set_timeout: JsRef::new(raw_env, set_timeout.raw())?,
            turn_end: make("rumTurnEnd", Timer::TurnEnd)?,
            slice: make("rumSlice", Timer::Slice)?,
            views_due: make("rumViewsDue", Timer::ViewsDue)?,
            detached: Cell::new(false),
        })
    }

    /// From now on `schedule` does nothing, so the dispatcher can be drained where no JS may run
    /// (a GC finalizer, the environment's teardown). Releases the JS functions it held.
    pub fn detach(&self) {
        self.detached.set(true);
        self.set_timeout.release();
        self.turn_end.release();
        self.slice.release();
        self.views_due.release();
    }
}

impl Scheduler for HostScheduler {
    fn schedule_in(&self, timer: Timer, delay_ms: u32) -> bool {
        if self.detached.get() {
            return false;
        }
        let callback = match timer {
            Timer::TurnEnd => &self.turn_end,
            Timer::Slice => &self.slice,
            Timer::ViewsDue => &self.views_due,
        };
        let (Some(set_timeout), Some(callback)) = (self.set_timeout.value(), callback.value()) else {
            log::error("cannot schedule a slice: the timer function is gone");
            return false;
        };
        let mut delay = ptr::null_mut();
        let mut undefined = ptr::null_mut();
        let mut result = ptr::null_mut();
        // SAFETY: all handles belong to env on its own thread; setTimeout(callback, delay_ms).
        let status = unsafe {
            sys::napi_create_uint32(self.env, delay_ms, &mut delay);
            sys::napi_get_undefined(self.env, &mut undefined);
            let argv = [callback, delay];
            sys::napi_call_function(self.env, undefined, set_timeout, 2, argv.as_ptr(), &mut result)
        };
        if status != sys::Status::napi_ok {
            let why = Reader::new(self.env, "setTimeout").take_exception().unwrap_or_default();
            log::error(&format!("cannot schedule a slice with setTimeout: {why}"));
            return false;
        }
        true
    }
}

/// The host's `setEventMapper(fn)`: called on the JS thread with each non-view document as a
/// plain object; returns it (changed or not), or `null` to drop it.
pub struct JsMapper {
    env: sys::napi_env,
    func: JsRef,
    /// A returned document may not grow past this (the event size limit, with room for edits).
    max_bytes: usize,
}

impl JsMapper {
    pub fn new(env: sys::napi_env, func: sys::napi_value, max_bytes: usize) -> Result<Self> {
        Ok(Self { env, func: JsRef::new(env, func)?, max_bytes })
    }
}

impl EventMapper for JsMapper {
    /// Runs in a handle scope of its own: a drain maps thousands of documents in one native call,
    /// and without it every document object (and every value read back) stayed alive until that
    /// call returned, which ran the JS heap out of memory on large queues.
    fn map(&mut self, doc: &Document) -> std::result::Result<MapOutcome, MapperError> {
        let value = serde_json::to_value(doc).map_err(|e| MapperError(format!("cannot build the document: {e}")))?;
        let mut scope = ptr::null_mut();
        // SAFETY: env is this thread's live env; the scope is closed below, on every path.
        if unsafe { sys::napi_open_handle_scope(self.env, &mut scope) } != sys::Status::napi_ok {
            return Err(MapperError("cannot open a handle scope".into()));
        }
        let outcome = self.map_in_scope(value);
        // SAFETY: scope was opened above on this env and nothing created in it escapes: the
        // outcome holds Rust values only.
        unsafe { sys::napi_close_handle_scope(self.env, scope) };
        outcome
    }
}

impl JsMapper {
    fn map_in_scope(&mut self, value: Value) -> std::result::Result<MapOutcome, MapperError> {
        let func = self.func.value().ok_or_else(|| MapperError("the mapper function is gone".into()))?;
        let arg = to_js(self.env, &value).map_err(|e| {
            // A setter on Object.prototype may have thrown: never leave it pending.
            let why = Reader::new(self.env, "eventMapper").take_exception();
            MapperError(why.unwrap_or_else(|| e.to_string()))
        })?;
        let mut undefined = ptr::null_mut();
        let mut result = ptr::null_mut();
        // SAFETY: func and arg are live handles of env, on its thread.
        let status = unsafe {
            match sys::napi_get_undefined(self.env, &mut undefined) {
                sys::Status::napi_ok => {
                    let argv = [arg];
                    sys::napi_call_function(self.env, undefined, func, 1, argv.as_ptr(), &mut result)
                }
                failed => failed,
            }
        };
        let reader = Reader::new(self.env, "eventMapper");
        if status != sys::Status::napi_ok {
            let why = reader.take_exception().unwrap_or_else(|| "the call failed".to_owned());
            return Err(MapperError(format!("it threw: {why}")));
        }
        if reader.is_nullish(result) {
            // `undefined` (no return) keeps the document; `null` drops it.
            return Ok(if reader.is_undefined(result) { MapOutcome::Keep } else { MapOutcome::Drop });
        }
        if !reader.is_object(result) {
            return Err(MapperError("it must return the document object or null".into()));
        }
        match reader.document(result, "result", self.max_bytes) {
            Ok(map) => {
                let changed = Value::Object(map);
                Ok(if changed == value { MapOutcome::Keep } else { MapOutcome::Replace(changed) })
            }
            Err(ArgError::Type(m) | ArgError::Range(m) | ArgError::Js(m)) => Err(MapperError(m)),
        }
    }
}

/// A JSON value as a new JS value.
pub fn to_js(env: sys::napi_env, value: &Value) -> Result<sys::napi_value> {
    let mut out = ptr::null_mut();
    let ok = |status: sys::napi_status| -> Result<()> {
        if status == sys::Status::napi_ok {
            Ok(())
        } else {
            Err(Error::new(Status::GenericFailure, "cannot create a JS value"))
        }
    };
    // SAFETY: every call creates a value in env's current handle scope on its own thread.
    unsafe {
        match value {
            Value::Null => ok(sys::napi_get_null(env, &mut out))?,
            Value::Bool(b) => ok(sys::napi_get_boolean(env, *b, &mut out))?,
            Value::Number(n) => ok(sys::napi_create_double(env, n.as_f64().unwrap_or(f64::NAN), &mut out))?,
            Value::String(s) => ok(sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut out))?,
            Value::Array(items) => {
                ok(sys::napi_create_array_with_length(env, items.len(), &mut out))?;
                for (i, item) in items.iter().enumerate() {
                    let v = to_js(env, item)?;
                    ok(sys::napi_set_element(env, out, i as u32, v))?;
                }
            }
            Value::Object(map) => {
                ok(sys::napi_create_object(env, &mut out))?;
                // Defined, not assigned: an assignment of `__proto__` would set the object's
                // prototype instead of adding the key, and would run setters on
                // Object.prototype. Each member is an own data property, as JSON.parse makes it.
                let mut props = Vec::with_capacity(map.len());
                for (k, item) in map {
                    let mut key = ptr::null_mut();
                    ok(sys::napi_create_string_utf8(env, k.as_ptr().cast(), k.len() as isize, &mut key))?;
                    props.push(sys::napi_property_descriptor {
                        utf8name: ptr::null(),
                        name: key,
                        method: None,
                        getter: None,
                        setter: None,
                        value: to_js(env, item)?,
                        attributes: sys::PropertyAttributes::writable
                            | sys::PropertyAttributes::enumerable
                            | sys::PropertyAttributes::configurable,
                        data: ptr::null_mut(),
                    });
                }
                ok(sys::napi_define_properties(env, out, props.len(), props.as_ptr()))?;
            }
        }
    }
    Ok(out)
}
