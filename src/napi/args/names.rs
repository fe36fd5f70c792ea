//! Property names: read once through a C string, or, when one call reads the same name many times
//! (each element of `addActions`, each Map-like's probes), through an engine string made once.

use std::borrow::Cow;
use std::cell::Cell;
use std::ffi::{c_char, CStr, CString};
use std::fmt::Display;

use super::{ArgResult, Args, Sub};
use crate::napi::js::Value;

/// Names a call keeps as engine strings: the fields of `addActions`' elements (`type`, `name`,
/// `attributes`) and the Map-like probes (`entries`, `get`, `size`, `forEach`).
const KEYS_KEPT: usize = 8;

/// The names one call has read, by the address of their literal, and the engine string of those
/// read twice or more.
pub struct Names<'e> {
    keys: Cell<[(*const c_char, Option<Value<'e>>); KEYS_KEPT]>,
}

impl Default for Names<'_> {
    fn default() -> Self {
        Self { keys: Cell::new([(std::ptr::null(), None); KEYS_KEPT]) }
    }
}

impl<'e> Args<'e> {
    /// `obj[name]` for a name that may be read many times in this call: from its second read on,
    /// the name is an engine string made once, and each read a `napi_get_property`, cheaper than
    /// `napi_get_named_property`, which makes the string again every time (counted in
    /// docs/benchmarks.md, "The caller's cost, counted"). None when the read failed (the exception
    /// is left for the caller).
    ///
    /// Only at the call's own level: a string made inside a callback the engine runs during this
    /// call (a Map-like's `forEach`) would die with that callback's handle scope.
    pub fn named_often(&self, obj: Value<'_>, name: &'static CStr) -> Option<Value<'e>> {
        let mut keys = self.names.keys.get();
        let slot = keys.iter().position(|(at, _)| *at == name.as_ptr());
        let key = match slot.map(|i| (i, keys[i].1)) {
            Some((_, Some(key))) => key,
            // Read once before in this call: the name is read often, make it a string now.
            Some((i, None)) => {
                let name_str = name.to_str().ok()?;
                let Some(key) = self.js.string(name_str) else { return self.js.named(obj, name) };
                keys[i].1 = Some(key);
                self.names.keys.set(keys);
                key
            }
            // The first read in this call (most calls read a name once): as `named`, remembered.
            None => {
                if let Some(free) = keys.iter_mut().find(|(at, _)| at.is_null()) {
                    *free = (name.as_ptr(), None);
                    self.names.keys.set(keys);
                }
                return self.js.named(obj, name);
            }
        };
        self.js.property(obj, key)
    }

    /// [`Args::field`] for a name read many times in one call ([`Args::named_often`]).
    pub fn field_often(&self, obj: Value<'_>, name: &'static CStr, arg: impl Display + Copy) -> ArgResult<Value<'e>> {
        self.named_often(obj, name).ok_or_else(|| self.failed(Sub::key(&arg, name.to_str().unwrap_or_default())))
    }

    /// `obj[name]` for a property of an argument object, with errors attributed to `arg.name`.
    /// The name is NUL-terminated in a stack buffer (names are short literals): no allocation.
    pub fn field(&self, obj: Value<'_>, name: &str, arg: impl Display + Copy) -> ArgResult<Value<'e>> {
        const STACK: usize = 64;
        let mut buf = [0u8; STACK];
        let c = match buf.get_mut(..name.len()) {
            Some(dst) if name.len() < STACK && !name.contains('\0') => {
                dst.copy_from_slice(name.as_bytes());
                CStr::from_bytes_until_nul(&buf).map(Cow::Borrowed).ok()
            }
            _ => CString::new(name).ok().map(Cow::Owned),
        };
        let c = c.ok_or_else(|| self.range_err(arg, "has a NUL in a property name"))?;
        self.js.named(obj, &c).ok_or_else(|| self.failed(Sub::key(&arg, name)))
    }
}
