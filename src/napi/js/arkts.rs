//! The host imitating ArkTS's Node-API where the binding's correctness depends on the difference
//! (test builds only, cargo feature `arkts-semantics`; docs/arkts-napi.md has the whole audit).
//!
//! `napi_wrap` on ArkTS keeps the native pointer in a wrapper object stored under an ordinary,
//! enumerable, writable property of the wrapped object, `_napiwrapper`, and wraps an object that
//! already wraps something again instead of refusing; `napi_unwrap` reads that property. So a
//! script can copy the wrapper to any object (`o._napiwrapper = pipeline._napiwrapper`), and the
//! native pointer lives as long as the wrapper object, whichever objects hold it. Here the same:
//! the pointer is wrapped (with Node's own `napi_wrap`) into a fresh plain object, which is put
//! under `_napiwrapper`.

use std::ffi::c_void;
use std::ptr;

use napi_ohos::sys;

use super::ok;

/// The property ArkTS keeps a wrapper in.
const WRAPPER: &std::ffi::CStr = c"_napiwrapper";

type Finalizer = unsafe extern "C" fn(sys::napi_env, *mut c_void, *mut c_void);

/// ArkTS's `napi_wrap`: a wrapper object under `_napiwrapper`, replacing any earlier one.
pub(super) fn wrap(
    env: sys::napi_env,
    object: sys::napi_value,
    native: *mut c_void,
    finalize: Finalizer,
) -> Result<(), ()> {
    let mut wrapper = ptr::null_mut();
    // SAFETY: env is live; the wrapper is a fresh object of the current scope; native stays valid
    // until finalize runs, when the wrapper object is collected.
    unsafe {
        ok(sys::napi_create_object(env, &mut wrapper))?;
        ok(sys::napi_wrap(env, wrapper, native, Some(finalize), ptr::null_mut(), ptr::null_mut()))?;
        ok(sys::napi_set_named_property(env, object, WRAPPER.as_ptr(), wrapper))
    }
}

/// ArkTS's `napi_unwrap`: the pointer of the wrapper found under `_napiwrapper`, if any.
pub(super) fn unwrap(env: sys::napi_env, object: sys::napi_value) -> Option<*mut c_void> {
    let is_object = |v: sys::napi_value| {
        let mut t = sys::ValueType::napi_undefined;
        // SAFETY: v is a live handle of env.
        let status = unsafe { sys::napi_typeof(env, v, &mut t) };
        status == sys::Status::napi_ok && (t == sys::ValueType::napi_object || t == sys::ValueType::napi_function)
    };
    if !is_object(object) {
        return None;
    }
    let mut wrapper = ptr::null_mut();
    // SAFETY: object is a live object of env; a getter that throws leaves an exception, cleared.
    if unsafe { sys::napi_get_named_property(env, object, WRAPPER.as_ptr(), &mut wrapper) } != sys::Status::napi_ok {
        let mut exc = ptr::null_mut();
        // SAFETY: env is live; clears what the getter threw.
        unsafe { sys::napi_get_and_clear_last_exception(env, &mut exc) };
        return None;
    }
    if !is_object(wrapper) {
        return None;
    }
    let mut native = ptr::null_mut();
    // SAFETY: wrapper is a live object of env; napi_unwrap fails without throwing when it wraps
    // nothing.
    let status = unsafe { sys::napi_unwrap(env, wrapper, &mut native) };
    (status == sys::Status::napi_ok && !native.is_null()).then_some(native)
}
