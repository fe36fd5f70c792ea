//! The receiver check of `RumPipeline`'s methods: a method called on anything that is not a
//! pipeline (`RumPipeline.prototype.stats.call({})`, `this` undefined or a number) throws
//! `TypeError: RumPipeline.stats: called on an object that is not a RumPipeline`, named like every
//! other error of the library.
//!
//! napi-ohos registers the class with `napi_define_class`, and Node.js gives each prototype method
//! a V8 signature: the engine itself throws `TypeError: Illegal invocation`, without the method's
//! name, before any native code runs. Functions made by `napi_create_function` have no signature,
//! so once the classes are registered, [`check_receivers`] replaces every prototype method with
//! one of those, whose callback checks the receiver and then calls the same Rust method. The
//! `#[napi]` attributes stay on the methods in `pipeline.rs`: they write `index.d.ts`, and the
//! callbacks napi-derive generates for them stay registered on the class but are shadowed (the
//! prototype's properties now hold the functions made here), so they are never called.
//!
//! Without the signature, `napi_unwrap` alone would accept an object wrapped by any addon (Node's
//! wrap key is one per isolate), and its native pointer would be taken for a `RumPipeline`. So
//! the constructor type-tags its object ([`tag`]) and a receiver is accepted only with that tag;
//! the last pipeline accepted on the thread is remembered, so the common case costs one pointer
//! comparison more than before and no Node-API call (see [`receiver`] for why that is sound).

use std::cell::Cell;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::*;
use napi_ohos::sys;

use super::convert::ArgError;
use super::pipeline::RumPipeline;
use super::throw;

/// Node-API's `napi_type_tag`: 128 bits compared as a whole.
#[repr(C)]
struct TypeTag {
    lower: u64,
    upper: u64,
}

// Node-API 8 functions napi-sys-ohos does not declare; both are exported by Node.js and by
// HarmonyOS' libace_napi.z.so (scripts/ohos-napi-symbols.txt).
extern "C" {
    fn napi_type_tag_object(env: sys::napi_env, value: sys::napi_value, tag: *const TypeTag) -> sys::napi_status;
    fn napi_check_object_type_tag(
        env: sys::napi_env,
        value: sys::napi_value,
        tag: *const TypeTag,
        result: *mut bool,
    ) -> sys::napi_status;
}

/// A fixed random value in every pipeline's type tag: no other addon's tag is equal by accident
/// (tags are usually small counters or other random constants).
const TAG_SEED: u64 = 0x09f5_83d5_d242_862a;

/// Its address tells this loaded copy of the library from any other (a second copy, or another
/// version whose `RumPipeline` may have another layout): they have their own.
static INSTANCE: u8 = 0;

/// The tag of pipelines made by this copy of the library in `env`. An object tagged by another
/// copy, or in another environment (another addon has its own `napi_env` on Node.js), does not
/// carry it, so its native pointer is never read as this library's `RumPipeline`.
fn tag_of(env: sys::napi_env) -> TypeTag {
    TypeTag { lower: TAG_SEED ^ (ptr::addr_of!(INSTANCE) as u64), upper: env as u64 }
}

/// Marks the constructor's receiver as a pipeline of this library in `env`; false when it cannot
/// be (an object another addon already tagged). Called after `is_fresh_receiver`, so the object
/// wraps nothing yet; an object left tagged by a constructor that failed later is accepted again.
pub fn tag(env: &Env, this: sys::napi_value) -> bool {
    let tag = tag_of(env.raw());
    let mut ours = false;
    // SAFETY: this is the receiver of the current constructor call, on env's thread; tag outlives
    // both calls (Node-API copies it).
    unsafe {
        if napi_check_object_type_tag(env.raw(), this, &tag, &mut ours) == sys::Status::napi_ok && ours {
            return true;
        }
        napi_type_tag_object(env.raw(), this, &tag) == sys::Status::napi_ok
    }
}

thread_local! {
    /// The environment and native pointer of the last receiver [`receiver`] accepted on this
    /// thread; cleared by [`forget`] when that pipeline is dropped. No destructor: usable until
    /// the thread's very end.
    static LAST: Cell<(sys::napi_env, *const RumPipeline)> = const { Cell::new((ptr::null_mut(), ptr::null())) };
}

/// A pipeline is being dropped: it must not be remembered as a checked receiver any more.
pub fn forget(pipeline: &RumPipeline) {
    let dropped: *const RumPipeline = pipeline;
    let _ = LAST.try_with(|last| {
        if last.get().1 == dropped {
            last.set((ptr::null_mut(), ptr::null()));
        }
    });
}

/// The pipeline `this` is, or None when it is not one this library made in `env`.
///
/// Soundness: a pointer is read as a `RumPipeline` only in two cases.
/// - The object carries [`tag_of`]`(env)`. Only [`tag`] sets it, from the constructor, on an
///   object that wrapped nothing; napi-ohos then wraps it with the boxed `RumPipeline`, and a wrap
///   cannot be replaced while it lasts (`napi_wrap` refuses a wrapped object). So its wrapped
///   pointer is a `RumPipeline` of this library, alive while the object is (it is freed by the
///   object's finalizer). A tagged object whose wrap failed has no pointer: `napi_unwrap` fails.
///   Native code that removes our wrap and wraps something else could defeat this, as native
///   code can defeat anything; JS cannot.
/// - The pointer equals the one last accepted on this thread in the same `env` ([`LAST`]). That
///   pointer is the address of a live pipeline: it is cleared when the pipeline is dropped (on its
///   JS thread, this thread: the finalizer runs there). Whatever object carried it, it points at
///   that live `RumPipeline`, used on its own thread.
///
/// # Safety
/// `this` is a live handle of the current call on env's thread.
unsafe fn receiver<'a>(env: sys::napi_env, this: sys::napi_value) -> Option<&'a RumPipeline> {
    let mut native: *mut c_void = ptr::null_mut();
    // SAFETY: the caller's contract; napi_unwrap fails without throwing on a primitive or an
    // object that wraps nothing.
    if unsafe { sys::napi_unwrap(env, this, &mut native) } != sys::Status::napi_ok || native.is_null() {
        return None;
    }
    let native = native.cast_const().cast::<RumPipeline>();
    let remembered = LAST.try_with(|last| last.get() == (env, native)).unwrap_or(false);
    if !remembered {
        let (tag, mut ours) = (tag_of(env), false);
        // SAFETY: as above; tag outlives the call.
        let status = unsafe { napi_check_object_type_tag(env, this, &tag, &mut ours) };
        if status != sys::Status::napi_ok || !ours {
            return None;
        }
        let _ = LAST.try_with(|last| last.set((env, native)));
    }
    // SAFETY: a live RumPipeline of this library (see above), used on its JS thread for this call.
    Some(unsafe { &*native })
}

/// One method's body behind its receiver check: reads `N` arguments, checks `this`, runs `call`
/// and throws its error, as napi-derive's callback does (`catch_unwind` included: a panic becomes
/// an `Error` with the panic's message, never an unwind into the engine).
///
/// Inlined into each callback, as napi-derive writes each callback's body in full: the callback
/// is then one function in profiles, not a jump to a shared one.
///
/// # Safety
/// `env` and `info` are those of the current callback.
#[inline(always)]
unsafe fn call_checked<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    name: &'static str,
    call: impl for<'a> FnOnce(&'a RumPipeline, Env, [Unknown<'a>; N]) -> Result<sys::napi_value>,
) -> sys::napi_value {
    let run = AssertUnwindSafe(|| {
        let (mut argc, mut argv, mut this) = (N, [ptr::null_mut(); N], ptr::null_mut());
        // SAFETY: the caller's contract; argv has room for argc values.
        let status =
            unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), &mut this, ptr::null_mut()) };
        if status != sys::Status::napi_ok {
            return Err(Error::new(Status::from(status), format!("RumPipeline.{name}: cannot read the call")));
        }
        // SAFETY: this is the receiver of the current call.
        let Some(pipeline) = (unsafe { receiver(env, this) }) else {
            let message = format!("RumPipeline.{name}: called on an object that is not a RumPipeline");
            return Err(throw(&Env::from(env), ArgError::Type(message)));
        };
        // SAFETY: live handles of this call's scope (missing arguments are `undefined`).
        let args = argv.map(|v| unsafe { Unknown::from_raw_unchecked(env, v) });
        call(pipeline, Env::from(env), args)
    });
    let result = catch_unwind(run).unwrap_or_else(|panic| {
        let message = if let Some(s) = panic.downcast_ref::<String>() {
            s.clone()
        } else if let Some(s) = panic.downcast_ref::<&str>() {
            (*s).to_string()
        } else {
            format!("panic from Rust code: {panic:?}")
        };
        Err(Error::new(Status::GenericFailure, message))
    });
    result.unwrap_or_else(|e| {
        // SAFETY: env is the current callback's; a pending exception is left as it is.
        unsafe { JsError::from(e).throw_into(env) };
        ptr::null_mut()
    })
}

/// A method's return value as JS sees it.
fn to_js<T: ToNapiValue>(env: sys::napi_env, result: Result<T>) -> Result<sys::napi_value> {
    // SAFETY: env is the current callback's.
    result.and_then(|v| unsafe { T::to_napi_value(env, v) })
}

/// A prototype method: its JS name and its checked callback.
struct Method {
    name: &'static str,
    callback: unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value,
}

/// How many identifiers: the number of arguments a callback reads.
macro_rules! count {
    () => { 0 };
    ($head:ident $($tail:ident)*) => { 1 + count!($($tail)*) };
}

/// One callback per method in `on_prototype` (named as the Rust method, which names it in
/// profiles: benches/napi-calls.mjs collects `on_prototype::add_action`), and [`METHODS`].
macro_rules! prototype_methods {
    ($($fn:ident: $js:literal |$p:ident, $env:ident $(, $arg:ident)*| $call:expr,)*) => {
        /// The checked callbacks of `RumPipeline`'s prototype methods.
        mod on_prototype {
            use super::*;
            $(
                #[doc = concat!("`RumPipeline.prototype.", $js, "` with its receiver checked.")]
                pub(super) unsafe extern "C" fn $fn(
                    env: sys::napi_env,
                    info: sys::napi_callback_info,
                ) -> sys::napi_value {
                    // SAFETY: called by the engine as this function's callback.
                    unsafe {
                        call_checked::<{ count!($($arg)*) }>(env, info, $js, |$p, $env, [$($arg),*]| {
                            to_js($env.raw(), $call)
                        })
                    }
                }
            )*
        }

        /// Every method of `RumPipeline.prototype`. A method missing here would keep the engine's
        /// `Illegal invocation`: tests/node/hardening.test.mjs calls every prototype method on
        /// wrong receivers and fails on it.
        const METHODS: &[Method] = &[$(Method { name: $js, callback: on_prototype::$fn }),*];
    };
}

prototype_methods! {
    start_view: "startView" |p, env, key, name, attributes| p.start_view(env, key, name, attributes),
    stop_view: "stopView" |p, env, key, attributes| p.stop_view(env, key, attributes),
    add_action: "addAction" |p, env, t, name, attributes| p.add_action(env, t, name, attributes),
    add_actions: "addActions" |p, env, events| p.add_actions(env, events),
    add_error: "addError" |p, env, message, source, stack, attrs| p.add_error(env, message, source, stack, attrs),
    mark_crash: "markCrash" |p, env, message, stack| p.mark_crash(env, message, stack),
    start_resource: "startResource" |p, env, key, method, url, attrs| p.start_resource(env, key, method, url, attrs),
    stop_resource: "stopResource" |p, env, key, status, kind, size, attrs| {
        p.stop_resource(env, key, status, kind, size, attrs)
    },
    add_timing: "addTiming" |p, env, name| p.add_timing(env, name),
    add_attribute: "addAttribute" |p, env, key, value| p.add_attribute(env, key, value),
    remove_attribute: "removeAttribute" |p, env, key| p.remove_attribute(env, key),
    set_user: "setUser" |p, env, user| p.set_user(env, user),
    set_tracking_consent: "setTrackingConsent" |p, env, consent| p.set_tracking_consent(env, consent),
    set_connectivity: "setConnectivity" |p, env, connectivity| p.set_connectivity(env, connectivity),
    session_id: "sessionId" |p, env| Ok(p.session_id()),
    stop_session: "stopSession" |p, env| { p.stop_session(); Ok(()) },
    keep_alive: "keepAlive" |p, env| { p.keep_alive(); Ok(()) },
    flush: "flush" |p, env| Ok(p.flush()),
    stop: "stop" |p, env| Ok(p.stop()),
    set_event_mapper: "setEventMapper" |p, env, mapper| p.set_event_mapper(env, mapper),
    stats: "stats" |p, env| Ok(p.stats()),
    next_batch: "nextBatch" |p, env| p.next_batch(&env),
    complete_batch: "completeBatch" |p, env, id, delivered| p.complete_batch(env, id, delivered),
}

/// Runs once per JS environment, after napi-ohos defined the classes: replaces each method of
/// `RumPipeline.prototype` with its checked callback, keeping the attributes napi-derive gives
/// methods (writable, enumerable, configurable: the redefinition is allowed). The new functions
/// are named as the methods (`.name`), have `.length` 0 as before, and no V8 signature.
// Called only by napi-ohos' module registration: napi-derive registers nothing in `cfg(test)`.
#[cfg_attr(test, allow(dead_code))]
#[napi(module_exports)]
pub fn check_receivers(exports: Object, env: Env) -> Result<()> {
    let fail = |what: &str| Error::new(Status::GenericFailure, format!("RumPipeline: cannot {what}"));
    let raw = env.raw();
    let (mut class, mut prototype) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: the module's exports and env, during its registration on env's thread.
    unsafe {
        if sys::napi_get_named_property(raw, exports.raw(), c"RumPipeline".as_ptr(), &mut class) != sys::Status::napi_ok
            || sys::napi_get_named_property(raw, class, c"prototype".as_ptr(), &mut prototype) != sys::Status::napi_ok
        {
            return Err(fail("find RumPipeline.prototype"));
        }
    }
    // The descriptors point into `names` until napi_define_properties returns.
    let names = METHODS.iter().map(|m| CString::new(m.name)).collect::<std::result::Result<Vec<_>, _>>();
    let names = names.map_err(|_| fail("name a method"))?;
    let mut properties = Vec::with_capacity(METHODS.len());
    for (m, name) in METHODS.iter().zip(&names) {
        let mut function = ptr::null_mut();
        // SAFETY: as above; the name is m.name.len() bytes of UTF-8.
        let status = unsafe {
            sys::napi_create_function(
                raw,
                m.name.as_ptr().cast(),
                m.name.len() as isize,
                Some(m.callback),
                ptr::null_mut(),
                &mut function,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(fail(&format!("create RumPipeline.{}", m.name)));
        }
        properties.push(sys::napi_property_descriptor {
            utf8name: name.as_ptr(),
            name: ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value: function,
            attributes: sys::PropertyAttributes::writable
                | sys::PropertyAttributes::enumerable
                | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        });
    }
    // SAFETY: as above; properties and the names they point to are alive for the call.
    let status = unsafe { sys::napi_define_properties(raw, prototype, properties.len(), properties.as_ptr()) };
    if status != sys::Status::napi_ok {
        return Err(fail("define the methods of RumPipeline.prototype"));
    }
    Ok(())
}
