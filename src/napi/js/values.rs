//! What a value is and what a primitive holds; pending exceptions.

use std::ffi::CStr;
use std::ptr;

use napi_ohos::sys;

use super::{ok, Js, Value, ValueType};

impl<'e> Js<'e> {
    /// The value's kind; `ValueType::Unknown` when the engine cannot tell (every check then
    /// refuses it).
    pub fn kind(self, v: Value<'_>) -> ValueType {
        let mut t = sys::ValueType::napi_undefined;
        // SAFETY: v is a live handle of this env.
        match ok(unsafe { sys::napi_typeof(self.env, v.raw(), &mut t) }) {
            Ok(()) => ValueType::from(t),
            Err(()) => ValueType::Unknown,
        }
    }

    /// Whether the value is an `Array` (false when the engine cannot tell). ArkTS answers false
    /// for a Sendable `collections.Array` (docs/arkts-napi.md): callers read array-likes by
    /// `length` and index.
    pub fn is_array(self, v: Value<'_>) -> bool {
        let mut b = false;
        // SAFETY: v is a live handle of this env.
        let status = unsafe { sys::napi_is_array(self.env, v.raw(), &mut b) };
        status == sys::Status::napi_ok && b
    }

    /// Whether the value is a `Date` (false when the engine cannot tell).
    pub fn is_date(self, v: Value<'_>) -> bool {
        let mut b = false;
        // SAFETY: v is a live handle of this env.
        let status = unsafe { sys::napi_is_date(self.env, v.raw(), &mut b) };
        status == sys::Status::napi_ok && b
    }

    /// A `Date`'s time value in milliseconds (None when it is not a Date).
    pub fn date_ms(self, v: Value<'_>) -> Option<f64> {
        let mut ms = 0f64;
        // SAFETY: v is a live handle of this env; a non-Date is refused with a status.
        ok(unsafe { sys::napi_get_date_value(self.env, v.raw(), &mut ms) }).ok().map(|()| ms)
    }

    /// A boolean's value (None when it is not a boolean).
    pub fn boolean_of(self, v: Value<'_>) -> Option<bool> {
        let mut b = false;
        // SAFETY: v is a live handle of this env; a non-boolean is refused with a status.
        ok(unsafe { sys::napi_get_value_bool(self.env, v.raw(), &mut b) }).ok().map(|()| b)
    }

    /// A number's value (None when it is not a number).
    pub fn number_of(self, v: Value<'_>) -> Option<f64> {
        let mut n = 0f64;
        // SAFETY: v is a live handle of this env; a non-number is refused with a status.
        ok(unsafe { sys::napi_get_value_double(self.env, v.raw(), &mut n) }).ok().map(|()| n)
    }

    /// `a === b` (false when the engine cannot tell).
    pub fn strict_equals(self, a: Value<'_>, b: Value<'_>) -> bool {
        let mut same = false;
        // SAFETY: both are live handles of this env.
        let status = unsafe { sys::napi_strict_equals(self.env, a.raw(), b.raw(), &mut same) };
        status == sys::Status::napi_ok && same
    }

    /// The global object.
    pub fn global(self) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: env is live; out receives a handle of the current scope.
        ok(unsafe { sys::napi_get_global(self.env, &mut out) }).ok().map(|()| self.value(out))
    }

    pub fn undefined(self) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: as in `global`.
        ok(unsafe { sys::napi_get_undefined(self.env, &mut out) }).ok().map(|()| self.value(out))
    }

    /// Whether a JS exception is pending.
    pub fn exception_pending(self) -> bool {
        let mut pending = false;
        // SAFETY: env is live.
        let status = unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        status == sys::Status::napi_ok && pending
    }

    /// Clears the pending exception, if any, and hands it back.
    pub fn take_exception(self) -> Option<Value<'e>> {
        if !self.exception_pending() {
            return None;
        }
        let mut exc = ptr::null_mut();
        // SAFETY: an exception is pending; this clears it and hands it back.
        let status = unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exc) };
        (status == sys::Status::napi_ok && !exc.is_null()).then(|| self.value(exc))
    }

    /// Throws a plain `Error` with `message` (to end an engine-driven iteration from a callback).
    pub fn throw_error(self, message: &CStr) {
        // SAFETY: env is live; the message is NUL-terminated.
        let _ = unsafe { sys::napi_throw_error(self.env, ptr::null(), message.as_ptr()) };
    }
}
