//! JS values → core values, copied once, with errors that name the method and the argument:
//! the primitives (strings, numbers, enums, arrays) here, attribute maps in `attributes`.
//!
//! Argument reading uses raw Node-API calls (here and in `attributes`) because the generic
//! conversions of napi-derive report errors without the method or argument name and go through
//! more calls than the hot path can afford. Every value is read exactly once; nothing is stringified to JSON and
//! parsed back.

use std::borrow::Cow;
use std::ffi::{CStr, CString};
use std::fmt::{self, Display};
use std::ptr;

use napi_ohos::sys;

use crate::core::text::Text;

/// Strings up to about this many UTF-8 bytes are copied through a stack buffer in one engine call;
/// longer ones take a length query first. 1 KiB covers names, keys and typical attribute values.
const STACK_STRING_BYTES: usize = 1024;

/// A bad argument: becomes a JS `TypeError` (wrong type) or `RangeError` (bad value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgError {
    Type(String),
    Range(String),
    /// A JS exception is already pending (thrown by a getter or proxy trap we cleared and wrapped).
    Js(String),
}

pub type ArgResult<T> = Result<T, ArgError>;

pub(super) const UNDEFINED: i32 = 0;
pub(super) const NULL: i32 = 1;
pub(super) const BOOLEAN: i32 = 2;
pub(super) const NUMBER: i32 = 3;
pub(super) const STRING: i32 = 4;
const SYMBOL: i32 = 5;
pub(super) const OBJECT: i32 = 6;
pub(super) const FUNCTION: i32 = 7;
const EXTERNAL: i32 = 8;
const BIGINT: i32 = 9;
/// Not a Node-API type: `napi_typeof` itself failed.
const UNKNOWN: i32 = -1;

pub(super) fn type_name(t: i32) -> &'static str {
    match t {
        UNDEFINED => "undefined",
        NULL => "null",
        BOOLEAN => "a boolean",
        NUMBER => "a number",
        STRING => "a string",
        SYMBOL => "a symbol",
        OBJECT => "an object",
        FUNCTION => "a function",
        EXTERNAL => "an external",
        BIGINT => "a BigInt",
        _ => "an unknown value",
    }
}

/// One argument being read: where errors are attributed.
pub struct Reader {
    pub env: sys::napi_env,
    pub method: &'static str,
    /// The function Map-likes' `forEach` is called with (`attributes::visitor`), once made or
    /// found in this call.
    pub(super) visitor: std::cell::Cell<sys::napi_value>,
    /// Where a pipeline keeps it between calls (a weak reference: the engine may collect it, and
    /// it is made again then).
    pub(super) kept_visitor: Option<std::rc::Rc<std::cell::Cell<sys::napi_ref>>>,
    /// Property names made into engine strings in this call, by the address of their literal.
    keys: std::cell::Cell<[(*const std::ffi::c_char, sys::napi_value); KEYS_KEPT]>,
}

/// Property names a call keeps as engine strings: the fields of `addActions`' elements (`type`,
/// `name`, `attributes`) and the Map-like probes (`entries`, `get`, `size`, `forEach`).
const KEYS_KEPT: usize = 8;

/// The path of a value inside an argument (`attributes.user.name`, `attributes.list[3]`), built
/// lazily: formatted only when an error names it, so reading a value allocates no path.
#[derive(Clone, Copy)]
pub struct Sub<'a> {
    parent: &'a dyn Display,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(u32),
    Text(&'static str),
}

impl<'a> Sub<'a> {
    pub fn key(parent: &'a dyn Display, key: &'a str) -> Self {
        Self { parent, step: Step::Key(key) }
    }

    pub fn index(parent: &'a dyn Display, i: u32) -> Self {
        Self { parent, step: Step::Index(i) }
    }

    pub fn text(parent: &'a dyn Display, text: &'static str) -> Self {
        Self { parent, step: Step::Text(text) }
    }
}

impl Display for Sub<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.step {
            Step::Key(k) => write!(f, "{}.{k}", self.parent),
            Step::Index(i) => write!(f, "{}[{i}]", self.parent),
            Step::Text(t) => write!(f, "{}{t}", self.parent),
        }
    }
}

/// A named argument, inside another value's path when `within` is set (`events[3].name` in
/// `addActions`) and alone otherwise (`name` in `addAction`).
#[derive(Clone, Copy)]
pub struct Field<'a> {
    pub within: Option<&'a dyn Display>,
    pub name: &'a str,
}

impl Display for Field<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.within {
            Some(w) => write!(f, "{w}.{}", self.name),
            None => f.write_str(self.name),
        }
    }
}

impl Reader {
    pub fn new(env: sys::napi_env, method: &'static str) -> Self {
        Self {
            env,
            method,
            visitor: std::cell::Cell::new(ptr::null_mut()),
            kept_visitor: None,
            keys: std::cell::Cell::new([(ptr::null(), ptr::null_mut()); KEYS_KEPT]),
        }
    }

    /// A reader that finds the Map-like visitor where a pipeline keeps it, and keeps it there.
    pub fn keeping_visitor(
        env: sys::napi_env,
        method: &'static str,
        kept: &std::rc::Rc<std::cell::Cell<sys::napi_ref>>,
    ) -> Self {
        Self { kept_visitor: Some(std::rc::Rc::clone(kept)), ..Self::new(env, method) }
    }

    pub fn type_err(&self, arg: impl Display + Copy, msg: impl std::fmt::Display) -> ArgError {
        ArgError::Type(format!("{}: {arg} {msg}", self.method))
    }

    pub fn range_err(&self, arg: impl Display + Copy, msg: impl std::fmt::Display) -> ArgError {
        ArgError::Range(format!("{}: {arg} {msg}", self.method))
    }

    /// A Node-API call failed: a JS exception may be pending (a throwing getter, a proxy trap).
    /// It is cleared and its message wrapped, so the caller sees which argument was being read.
    pub(super) fn napi_failed(&self, arg: impl Display + Copy) -> ArgError {
        let detail = self.take_exception().unwrap_or_else(|| "the engine refused the value".to_owned());
        ArgError::Js(format!("{}: reading {arg} threw: {detail}", self.method))
    }

    /// Clears a pending exception and returns its message, if one was pending.
    pub fn take_exception(&self) -> Option<String> {
        let mut pending = false;
        // SAFETY: env is the live env of the current call.
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if !pending {
            return None;
        }
        let mut exc = ptr::null_mut();
        // SAFETY: an exception is pending; this clears it and hands it back.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exc) };
        Some(self.describe(exc))
    }

    /// `String(exc.message ?? exc)` without running user code that could throw again.
    ///
    /// Reading `message` runs user code (a getter, a proxy trap), which may throw in turn. That
    /// second exception is cleared too: left pending, it would be thrown into the caller (or the
    /// timer, where it is uncaught) and would make every later Node-API call of this native call
    /// fail, `setTimeout` for the next slice included.
    fn describe(&self, value: sys::napi_value) -> String {
        if value.is_null() {
            return "unknown error".to_owned();
        }
        if self.type_of(value) == OBJECT {
            match self.named(value, c"message") {
                Some(msg) if self.type_of(msg) == STRING => {
                    if let Ok(s) = self.raw_string(msg, "message") {
                        return s;
                    }
                }
                Some(_) => {}
                None => {
                    self.clear_exception();
                    return "a value whose message getter threw was thrown".to_owned();
                }
            }
        }
        if self.type_of(value) == STRING {
            if let Ok(s) = self.raw_string(value, "exception") {
                return s;
            }
        }
        "a non-Error value was thrown".to_owned()
    }

    /// Clears a pending exception, if any, without reading it (reading it could throw again).
    fn clear_exception(&self) {
        let mut pending = false;
        // SAFETY: env is the live env of the current call.
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if pending {
            let mut exc = ptr::null_mut();
            // SAFETY: an exception is pending; this clears it.
            unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exc) };
        }
    }

    /// The value's type; `UNKNOWN` when the engine cannot tell (every check then refuses it).
    pub fn type_of(&self, value: sys::napi_value) -> i32 {
        let mut t = UNDEFINED;
        // SAFETY: value belongs to this env's current handle scope.
        let status = unsafe { sys::napi_typeof(self.env, value, &mut t) };
        if status == sys::Status::napi_ok {
            t
        } else {
            UNKNOWN
        }
    }

    /// A Node-API call's status as a result: a failure is reported as reading `arg` failed.
    pub(super) fn check(&self, status: sys::napi_status, arg: impl Display + Copy) -> ArgResult<()> {
        if status == sys::Status::napi_ok {
            Ok(())
        } else {
            Err(self.napi_failed(arg))
        }
    }

    /// `obj[name]` for a name that may be read many times in one call (each element of
    /// `addActions`, each Map-like): from its second read on, the name is an engine string made
    /// once per call, and each read a `napi_get_property`, about 450 instructions less than
    /// `napi_get_named_property` in Node, which makes the string again every time. None when the
    /// read failed (the pending exception is left for the caller).
    pub fn named_often(&self, obj: sys::napi_value, name: &'static std::ffi::CStr) -> Option<sys::napi_value> {
        let mut keys = self.keys.get();
        let slot = keys.iter().position(|(at, _)| *at == name.as_ptr());
        let key = match slot.map(|i| keys[i].1) {
            Some(key) if !key.is_null() => key,
            // Read once before in this call: the name is read often, make it a string now.
            Some(_) => {
                let mut key = ptr::null_mut();
                // SAFETY: name has count_bytes() bytes before its NUL.
                let status = unsafe {
                    sys::napi_create_string_utf8(self.env, name.as_ptr(), name.count_bytes() as isize, &mut key)
                };
                if status != sys::Status::napi_ok {
                    return self.named(obj, name);
                }
                if let Some(i) = slot {
                    keys[i].1 = key;
                    self.keys.set(keys);
                }
                key
            }
            // The first read in this call (most calls read a name once): as `named`, remembered.
            None => {
                if let Some(free) = keys.iter_mut().find(|(at, _)| at.is_null()) {
                    *free = (name.as_ptr(), ptr::null_mut());
                    self.keys.set(keys);
                }
                return self.named(obj, name);
            }
        };
        let mut out = ptr::null_mut();
        // SAFETY: obj is an object of this env; key is a string made in this call.
        let status = unsafe { sys::napi_get_property(self.env, obj, key, &mut out) };
        (status == sys::Status::napi_ok).then_some(out)
    }

    /// `obj[name]`, or None when the read failed (the pending exception is left for the caller).
    pub fn named(&self, obj: sys::napi_value, name: &std::ffi::CStr) -> Option<sys::napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: obj is an object of this env; name is NUL-terminated.
        let status = unsafe { sys::napi_get_named_property(self.env, obj, name.as_ptr(), &mut out) };
        (status == sys::Status::napi_ok).then_some(out)
    }

    /// [`Reader::field`] for a name read many times in one call ([`Reader::named_often`]).
    pub fn field_often(
        &self,
        obj: sys::napi_value,
        name: &'static std::ffi::CStr,
        arg: impl Display + Copy,
    ) -> ArgResult<sys::napi_value> {
        self.named_often(obj, name).ok_or_else(|| self.napi_failed(Sub::key(&arg, name.to_str().unwrap_or_default())))
    }

    /// `obj[name]` for a property of an argument object, with errors attributed to `arg.name`.
    /// The name is NUL-terminated in a stack buffer (names are short literals): no allocation.
    pub fn field(&self, obj: sys::napi_value, name: &str, arg: impl Display + Copy) -> ArgResult<sys::napi_value> {
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
        self.named(obj, &c).ok_or_else(|| self.napi_failed(Sub::key(&arg, name)))
    }

    /// A JS string as an owned `String` of its exact size (a key, a message: kept with the event,
    /// so no spare capacity).
    pub(super) fn raw_string(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<String> {
        self.owned_text(value, arg)
    }

    /// A JS string's text as `T`. Most strings fit a stack buffer: one engine call, then `T`
    /// makes the only allocation, if any; a longer one is copied into a buffer `T` takes over.
    fn owned_text<T: for<'a> From<&'a str> + From<String>>(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
    ) -> ArgResult<T> {
        let mut stack = [std::mem::MaybeUninit::<u8>::uninit(); STACK_STRING_BYTES];
        let mut written = 0usize;
        // SAFETY: the buffer has STACK_STRING_BYTES bytes; the engine writes at most that many
        // (the NUL included) and reports how many it wrote before the NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                value,
                stack.as_mut_ptr().cast(),
                STACK_STRING_BYTES,
                &mut written,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(arg));
        }
        // The engine converts lone surrogates to U+FFFD, so this is valid UTF-8; stay safe anyway.
        let invalid = |_| self.range_err(arg, "is not valid UTF-16 text");
        if written + 4 < STACK_STRING_BYTES {
            // SAFETY: the engine initialised the first `written` bytes.
            let bytes = unsafe { std::slice::from_raw_parts(stack.as_ptr().cast::<u8>(), written) };
            return std::str::from_utf8(bytes).map(T::from).map_err(invalid);
        }
        let mut buf = Vec::new();
        self.append_utf8(value, arg, &mut buf)?;
        buf.shrink_to_fit();
        String::from_utf8(buf).map(T::from).map_err(|e| invalid(e.utf8_error()))
    }

    /// Appends a JS string's UTF-8 bytes to `out`. Most strings fit `STACK_STRING_BYTES` of spare
    /// room: one engine call instead of a length query and a copy; the bytes land in place.
    pub(super) fn append_utf8(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        out: &mut Vec<u8>,
    ) -> ArgResult<()> {
        let start = out.len();
        out.reserve(STACK_STRING_BYTES);
        let room = out.capacity() - start;
        let mut written = 0usize;
        // SAFETY: out has `room` bytes of spare capacity past `start`; the engine writes at most
        // that many (the NUL included) and reports how many it wrote before the NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf8(self.env, value, out.as_mut_ptr().add(start).cast(), room, &mut written)
        };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(arg));
        }
        // A truncated copy ends within 4 bytes (one UTF-8 character) of the room's end, since the
        // engine never splits a character; anything shorter is the whole string.
        if written + 4 < room {
            // SAFETY: the engine initialised `written` bytes past `start`.
            unsafe { out.set_len(start + written) };
            return Ok(());
        }
        let mut len = 0usize;
        // SAFETY: a null buffer asks for the length in bytes, excluding the NUL.
        let status = unsafe { sys::napi_get_value_string_utf8(self.env, value, ptr::null_mut(), 0, &mut len) };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(arg));
        }
        // Uninitialised capacity, not zeroed: the engine writes every byte kept.
        out.reserve(len + 1);
        // SAFETY: out has room for len bytes plus the NUL past `start`.
        let status = unsafe {
            sys::napi_get_value_string_utf8(self.env, value, out.as_mut_ptr().add(start).cast(), len + 1, &mut written)
        };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(arg));
        }
        // SAFETY: the engine wrote `written` (≤ len) bytes past `start`.
        unsafe { out.set_len(start + written.min(len)) };
        Ok(())
    }

    /// A required string.
    pub fn string(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<String> {
        self.string_as(value, arg)
    }

    /// A string argument as `T` (a `String`, or a [`Text`] that holds a short one inline).
    fn string_as<T: for<'a> From<&'a str> + From<String>>(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
    ) -> ArgResult<T> {
        match self.type_of(value) {
            STRING => self.owned_text(value, arg),
            t => Err(self.type_err(arg, format_args!("must be a string, got {}", type_name(t)))),
        }
    }

    /// A string no longer than `max` bytes.
    pub fn bounded_string(&self, value: sys::napi_value, arg: impl Display + Copy, max: usize) -> ArgResult<String> {
        let s = self.string(value, arg)?;
        self.within(arg, s.len(), max)?;
        Ok(s)
    }

    /// A string no longer than `max` bytes, as a [`Text`]: a short one takes no allocation.
    pub fn bounded_text(&self, value: sys::napi_value, arg: impl Display + Copy, max: usize) -> ArgResult<Text> {
        let text: Text = self.string_as(value, arg)?;
        self.within(arg, text.len(), max)?;
        Ok(text)
    }

    fn within(&self, arg: impl Display + Copy, len: usize, max: usize) -> ArgResult<()> {
        if len > max {
            return Err(self.range_err(arg, format_args!("is {len} bytes, more than the {max} allowed")));
        }
        Ok(())
    }

    /// An optional string: `undefined` and `null` are None.
    pub fn opt_string(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<Option<String>> {
        match self.type_of(value) {
            UNDEFINED | NULL => Ok(None),
            _ => self.string(value, arg).map(Some),
        }
    }

    pub fn is_undefined(&self, value: sys::napi_value) -> bool {
        self.type_of(value) == UNDEFINED
    }

    pub fn is_nullish(&self, value: sys::napi_value) -> bool {
        matches!(self.type_of(value), UNDEFINED | NULL)
    }

    pub fn is_function(&self, value: sys::napi_value) -> bool {
        self.type_of(value) == FUNCTION
    }

    pub fn is_object(&self, value: sys::napi_value) -> bool {
        self.type_of(value) == OBJECT
    }

    /// A finite number.
    pub fn number(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<f64> {
        let t = self.type_of(value);
        if t != NUMBER {
            return Err(self.type_err(arg, format_args!("must be a number, got {}", type_name(t))));
        }
        let mut n = 0f64;
        // SAFETY: value is a number.
        self.check(unsafe { sys::napi_get_value_double(self.env, value, &mut n) }, arg)?;
        if !n.is_finite() {
            return Err(self.range_err(arg, format_args!("must be finite, got {n}")));
        }
        Ok(n)
    }

    /// An optional number, NaN and infinities included (the caller decides what they mean):
    /// `undefined` and `null` are None.
    pub fn opt_any_number(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<Option<f64>> {
        match self.type_of(value) {
            UNDEFINED | NULL => Ok(None),
            NUMBER => {
                let mut n = 0f64;
                // SAFETY: value is a number.
                let status = unsafe { sys::napi_get_value_double(self.env, value, &mut n) };
                if status != sys::Status::napi_ok {
                    return Err(self.napi_failed(arg));
                }
                Ok(Some(n))
            }
            t => Err(self.type_err(arg, format_args!("must be a number, got {}", type_name(t)))),
        }
    }

    /// An integer within `[min, max]`.
    pub fn integer(&self, value: sys::napi_value, arg: impl Display + Copy, min: f64, max: f64) -> ArgResult<u64> {
        let n = self.number(value, arg)?;
        if n.fract() != 0.0 || n < min || n > max {
            return Err(self.range_err(arg, format_args!("must be an integer from {min} to {max}, got {n}")));
        }
        Ok(n as u64)
    }

    pub fn opt_integer(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        min: f64,
        max: f64,
    ) -> ArgResult<Option<u64>> {
        if self.is_nullish(value) {
            return Ok(None);
        }
        self.integer(value, arg, min, max).map(Some)
    }

    pub fn boolean(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<bool> {
        let t = self.type_of(value);
        if t != BOOLEAN {
            return Err(self.type_err(arg, format_args!("must be a boolean, got {}", type_name(t))));
        }
        let mut b = false;
        // SAFETY: value is a boolean.
        self.check(unsafe { sys::napi_get_value_bool(self.env, value, &mut b) }, arg)?;
        Ok(b)
    }

    /// A string out of a closed set, parsed by `parse`.
    pub fn enumerated<T>(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        parse: fn(&str) -> Option<T>,
        allowed: &[&str],
    ) -> ArgResult<T> {
        let t = self.type_of(value);
        if t != STRING {
            return Err(self.type_err(arg, format_args!("must be a string, got {}", type_name(t))));
        }
        // The set's names are short: read into a small stack buffer, no allocation. A longer
        // string cannot be one of them (it is read whole only for the error message).
        const SHORT: usize = 32;
        let mut stack = [0u8; SHORT];
        let mut written = 0usize;
        // SAFETY: the buffer has SHORT bytes; the engine writes at most that many, NUL included.
        let status =
            unsafe { sys::napi_get_value_string_utf8(self.env, value, stack.as_mut_ptr().cast(), SHORT, &mut written) };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(arg));
        }
        let parsed =
            (written + 4 < SHORT).then(|| std::str::from_utf8(&stack[..written]).ok().and_then(parse)).flatten();
        parsed.map_or_else(
            || {
                let s = self.raw_string(value, arg)?;
                Err(self.range_err(arg, format_args!("must be one of {}, got {s:?}", allowed.join(", "))))
            },
            Ok,
        )
    }

    /// The length of an array or an array-like (`length` + indices, as a Sendable
    /// `collections.Array` is read from native code). Nothing is read or reserved for the elements
    /// yet: a caller checks the length against its own limit first, since it comes from the host.
    pub fn length(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<u32> {
        if self.type_of(value) != OBJECT {
            return Err(self.type_err(arg, format_args!("must be an array, got {}", type_name(self.type_of(value)))));
        }
        if self.is_array(value) {
            let mut len = 0u32;
            // SAFETY: value is an array.
            self.check(unsafe { sys::napi_get_array_length(self.env, value, &mut len) }, arg)?;
            return Ok(len);
        }
        let length = self.field(value, "length", arg)?;
        if self.type_of(length) != NUMBER {
            return Err(self.type_err(arg, "must be an array or array-like with a numeric length"));
        }
        Ok(self.integer(length, Sub::text(&arg, ".length"), 0.0, u32::MAX as f64)? as u32)
    }

    /// Element `i` of an array or array-like (getters and proxy traps may throw).
    pub fn element(&self, value: sys::napi_value, i: u32, arg: impl Display + Copy) -> ArgResult<sys::napi_value> {
        let mut el = ptr::null_mut();
        // SAFETY: value is an object; a failure leaves an exception we report.
        let status = unsafe { sys::napi_get_element(self.env, value, i, &mut el) };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(Sub::index(&arg, i)));
        }
        Ok(el)
    }

    /// Whether the value is an array (false when the engine cannot tell).
    pub(super) fn is_array(&self, value: sys::napi_value) -> bool {
        let mut b = false;
        // SAFETY: value is a live handle.
        let status = unsafe { sys::napi_is_array(self.env, value, &mut b) };
        status == sys::Status::napi_ok && b
    }

    /// Whether the value is a Date (false when the engine cannot tell).
    pub(super) fn is_date(&self, value: sys::napi_value) -> bool {
        let mut b = false;
        // SAFETY: value is a live handle.
        let status = unsafe { sys::napi_is_date(self.env, value, &mut b) };
        status == sys::Status::napi_ok && b
    }
}
