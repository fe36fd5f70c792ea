//! The host imitating ArkTS's Node-API where the binding's correctness depends on the difference
//! (test builds only, cargo feature `arkts-semantics`; docs/arkts-napi.md has the whole audit).
//!
//! - `napi_wrap` on ArkTS keeps the native pointer in a wrapper object stored under an ordinary
//!   property of the wrapped object, `_napiwrapper` (writable, configurable, not enumerable), and
//!   wraps an object that already wraps something again instead of refusing; `napi_unwrap` reads
//!   that property with an ordinary get, prototype chain included. So a script can copy the
//!   wrapper to any object (`o._napiwrapper = pipeline._napiwrapper`), and `Object.create(p)`
//!   unwraps to `p`'s pointer. Here the same: the pointer is wrapped (with Node's own `napi_wrap`)
//!   into a fresh plain object, which is defined under `_napiwrapper`.
//! - `napi_get_value_string_utf8` on ArkTS writes a lone UTF-16 surrogate as its own three bytes
//!   (`ED A0..BF 80..BF`, not UTF-8) where Node writes U+FFFD. Here strings are read as UTF-16 and
//!   written in that form.

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
        let property = sys::napi_property_descriptor {
            utf8name: WRAPPER.as_ptr(),
            name: ptr::null_mut(),
            method: None,
            getter: None,
            setter: None,
            value: wrapper,
            attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        };
        ok(sys::napi_define_properties(env, object, 1, &property))
    }
}

/// ArkTS's UTF-8 of a string: as Node's, except that a lone surrogate is written as its own
/// three bytes. None when the value is not a string.
pub(super) fn utf8(env: sys::napi_env, v: sys::napi_value) -> Option<Vec<u8>> {
    let mut len = 0usize;
    // SAFETY: a null buffer asks for the length in UTF-16 units.
    ok(unsafe { sys::napi_get_value_string_utf16(env, v, ptr::null_mut(), 0, &mut len) }).ok()?;
    let mut units = vec![0u16; len + 1];
    let mut written = 0usize;
    // SAFETY: units has len + 1 elements, the NUL included.
    ok(unsafe { sys::napi_get_value_string_utf16(env, v, units.as_mut_ptr(), len + 1, &mut written) }).ok()?;
    let mut out = Vec::with_capacity(written * 3);
    for unit in char::decode_utf16(units[..written].iter().copied()) {
        match unit {
            Ok(c) => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            Err(lone) => {
                let s = u32::from(lone.unpaired_surrogate());
                out.extend_from_slice(&[
                    0xE0 | (s >> 12) as u8,
                    0x80 | ((s >> 6) & 0x3F) as u8,
                    0x80 | (s & 0x3F) as u8,
                ]);
            }
        }
    }
    Some(out)
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
