//! Properties and elements, read and defined; new values.
//!
//! Raw calls on the argument-reading path: napi-ohos' `Object::get_named_property` converts through
//! `FromNapiValue` with a `napi_typeof` of its own (the readers then ask the kind a second time),
//! and its key lists build a `Vec<String>` (an allocation per key, where the attribute encoder
//! writes each key straight into the document text: one allocation per call in all).

use std::ffi::CStr;
use std::ptr;

use napi_ohos::bindgen_prelude::ToNapiValue;
use napi_ohos::sys;

use super::{ok, Js, Value};

impl<'e> Js<'e> {
    /// `obj[name]`, or None when the read failed (a getter or proxy trap threw: the exception is
    /// left pending for the caller).
    pub fn named(self, obj: Value<'_>, name: &CStr) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: obj is a live handle of this env; name is NUL-terminated.
        ok(unsafe { sys::napi_get_named_property(self.env, obj.raw(), name.as_ptr(), &mut out) })
            .ok()
            .map(|()| self.value(out))
    }

    /// `obj[name] = value`.
    pub fn set_named(self, obj: Value<'_>, name: &CStr, value: Value<'_>) -> Result<(), ()> {
        // SAFETY: both are live handles of this env; name is NUL-terminated.
        ok(unsafe { sys::napi_set_named_property(self.env, obj.raw(), name.as_ptr(), value.raw()) })
    }

    /// `obj[key]` for a key that is already an engine value (a string made once and read many
    /// times, a key from a key list). None as in [`Js::named`].
    pub fn property(self, obj: Value<'_>, key: Value<'_>) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: both are live handles of this env.
        ok(unsafe { sys::napi_get_property(self.env, obj.raw(), key.raw(), &mut out) }).ok().map(|()| self.value(out))
    }

    /// `obj[i]` (getters and proxy traps may throw: None, the exception pending).
    pub fn element(self, obj: Value<'_>, i: u32) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: obj is a live handle of this env.
        ok(unsafe { sys::napi_get_element(self.env, obj.raw(), i, &mut out) }).ok().map(|()| self.value(out))
    }

    /// An `Array`'s length (None when it is not one).
    pub fn array_length(self, array: Value<'_>) -> Option<u32> {
        let mut len = 0u32;
        // SAFETY: array is a live handle of this env; a non-array is refused with a status.
        ok(unsafe { sys::napi_get_array_length(self.env, array.raw(), &mut len) }).ok().map(|()| len)
    }

    /// The object's own enumerable string keys, numbers as strings, as an array (proxies run
    /// their `ownKeys` trap here and may throw: None, the exception pending).
    pub fn own_keys(self, obj: Value<'_>) -> Option<Value<'e>> {
        let mut names = ptr::null_mut();
        // SAFETY: obj is a live handle of this env.
        let status = unsafe {
            sys::napi_get_all_property_names(
                self.env,
                obj.raw(),
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut names,
            )
        };
        ok(status).ok().map(|()| self.value(names))
    }

    /// A new empty object.
    pub fn object(self) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: out receives a handle of the current scope.
        ok(unsafe { sys::napi_create_object(self.env, &mut out) }).ok().map(|()| self.value(out))
    }

    /// A new array of `len` holes, filled with [`Js::set_element`].
    pub fn array(self, len: usize) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: out receives a handle of the current scope.
        ok(unsafe { sys::napi_create_array_with_length(self.env, len, &mut out) }).ok().map(|()| self.value(out))
    }

    pub fn set_element(self, array: Value<'_>, i: u32, v: Value<'_>) -> Result<(), ()> {
        // SAFETY: both are live handles of this env.
        ok(unsafe { sys::napi_set_element(self.env, array.raw(), i, v.raw()) })
    }

    /// Defines `members` as own data properties of `obj` (writable, enumerable, configurable), as
    /// `JSON.parse` makes them. Defined, not assigned: an assignment of `__proto__` would set the
    /// object's prototype instead of adding the key, and would run setters on `Object.prototype`.
    pub fn define_data(self, obj: Value<'_>, members: &[(Value<'_>, Value<'_>)]) -> Result<(), ()> {
        let props: Vec<_> =
            members.iter().map(|(key, value)| data_property(ptr::null(), key.raw(), value.raw())).collect();
        // SAFETY: obj and every key and value are live handles of this env; props outlives the call.
        ok(unsafe { sys::napi_define_properties(self.env, obj.raw(), props.len(), props.as_ptr()) })
    }

    pub fn double(self, n: f64) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: out receives a handle of the current scope.
        ok(unsafe { sys::napi_create_double(self.env, n, &mut out) }).ok().map(|()| self.value(out))
    }

    pub fn uint32(self, n: u32) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: out receives a handle of the current scope.
        ok(unsafe { sys::napi_create_uint32(self.env, n, &mut out) }).ok().map(|()| self.value(out))
    }

    pub fn boolean(self, b: bool) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: out receives a handle of the current scope.
        ok(unsafe { sys::napi_get_boolean(self.env, b, &mut out) }).ok().map(|()| self.value(out))
    }

    pub fn null(self) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: out receives a handle of the current scope.
        ok(unsafe { sys::napi_get_null(self.env, &mut out) }).ok().map(|()| self.value(out))
    }

    /// A Rust value as JS, through napi-ohos' conversion (what a method returns).
    pub fn to_js<T: ToNapiValue>(self, v: T) -> napi_ohos::Result<Value<'e>> {
        // SAFETY: env is this call's live env.
        unsafe { T::to_napi_value(self.env, v) }.map(|raw| self.value(raw))
    }
}

/// An own data property (writable, enumerable, configurable: what `JSON.parse` makes and what
/// napi-derive gives methods), named by `utf8name` (a C string) or, when that is null, by `name`.
pub(super) fn data_property(
    utf8name: *const std::ffi::c_char,
    name: sys::napi_value,
    value: sys::napi_value,
) -> sys::napi_property_descriptor {
    sys::napi_property_descriptor {
        utf8name,
        name,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable
            | sys::PropertyAttributes::enumerable
            | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    }
}
