//! JS values → core values, copied once, with errors that name the method and the argument.
//!
//! Raw Node-API calls are used here (and only here) because the generic conversions of
//! napi-derive report errors without the method or argument name and go through more calls than
//! the hot path can afford. Every value is read exactly once; nothing is stringified to JSON and
//! parsed back.

use std::borrow::Cow;
use std::ffi::{CStr, CString};
use std::fmt::{self, Display};
use std::ptr;

use napi_ohos::sys;
use serde_json::{Map, Number, Value};

use crate::core::event::Attributes;

/// Attribute values nested deeper than this are refused: real attributes are shallow, and the
/// limit is what turns a cyclic object into a clear error instead of a stack overflow.
pub const MAX_ATTRIBUTE_DEPTH: usize = 16;

/// Strings up to about this many UTF-8 bytes are copied through a stack buffer in one engine call;
/// longer ones take a length query first. 1 KiB covers names, keys and typical attribute values.
const STACK_STRING_BYTES: usize = 1024;

/// Approximate JSON cost of a value that is not a string (numbers, booleans, null, punctuation).
const SCALAR_COST: usize = 8;

/// Array elements reserved before any is read: the rest grow as elements are actually read.
const ARRAY_RESERVE: usize = 256;

/// A bad argument: becomes a JS `TypeError` (wrong type) or `RangeError` (bad value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgError {
    Type(String),
    Range(String),
    /// A JS exception is already pending (thrown by a getter or proxy trap we cleared and wrapped).
    Js(String),
}

pub type ArgResult<T> = Result<T, ArgError>;

const UNDEFINED: i32 = 0;
const NULL: i32 = 1;
const BOOLEAN: i32 = 2;
const NUMBER: i32 = 3;
const STRING: i32 = 4;
const SYMBOL: i32 = 5;
const OBJECT: i32 = 6;
const FUNCTION: i32 = 7;
const EXTERNAL: i32 = 8;
const BIGINT: i32 = 9;

fn type_name(t: i32) -> &'static str {
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
#[derive(Clone, Copy)]
pub struct Reader {
    pub env: sys::napi_env,
    pub method: &'static str,
}

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

impl Reader {
    pub fn new(env: sys::napi_env, method: &'static str) -> Self {
        Self { env, method }
    }

    pub fn type_err(&self, arg: impl Display + Copy, msg: impl std::fmt::Display) -> ArgError {
        ArgError::Type(format!("{}: {arg} {msg}", self.method))
    }

    pub fn range_err(&self, arg: impl Display + Copy, msg: impl std::fmt::Display) -> ArgError {
        ArgError::Range(format!("{}: {arg} {msg}", self.method))
    }

    /// A Node-API call failed: a JS exception may be pending (a throwing getter, a proxy trap).
    /// It is cleared and its message wrapped, so the caller sees which argument was being read.
    fn napi_failed(&self, arg: impl Display + Copy) -> ArgError {
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

    pub fn type_of(&self, value: sys::napi_value) -> i32 {
        let mut t = UNDEFINED;
        // SAFETY: value belongs to this env's current handle scope.
        unsafe { sys::napi_typeof(self.env, value, &mut t) };
        t
    }

    /// `obj[name]`, or None when the read failed (the pending exception is left for the caller).
    pub fn named(&self, obj: sys::napi_value, name: &std::ffi::CStr) -> Option<sys::napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: obj is an object of this env; name is NUL-terminated.
        let status = unsafe { sys::napi_get_named_property(self.env, obj, name.as_ptr(), &mut out) };
        (status == sys::Status::napi_ok).then_some(out)
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

    fn raw_string(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<String> {
        // Most strings fit a stack buffer: one engine call instead of a length query and a copy.
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
        // A truncated copy ends within 4 bytes (one UTF-8 character) of the buffer's end, since
        // the engine never splits a character; anything shorter is the whole string.
        if written + 4 < STACK_STRING_BYTES {
            // SAFETY: the engine initialised the first `written` bytes.
            let bytes = unsafe { std::slice::from_raw_parts(stack.as_ptr().cast::<u8>(), written) };
            return String::from_utf8(bytes.to_vec()).map_err(|_| self.range_err(arg, "is not valid UTF-16 text"));
        }
        let mut len = 0usize;
        // SAFETY: a null buffer asks for the length in bytes, excluding the NUL.
        let status = unsafe { sys::napi_get_value_string_utf8(self.env, value, ptr::null_mut(), 0, &mut len) };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(arg));
        }
        // Uninitialised capacity, not a zeroed buffer: the engine writes every byte we keep.
        let mut buf: Vec<u8> = Vec::with_capacity(len + 1);
        // SAFETY: buf has room for len bytes plus the NUL the engine writes.
        let status =
            unsafe { sys::napi_get_value_string_utf8(self.env, value, buf.as_mut_ptr().cast(), len + 1, &mut written) };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(arg));
        }
        // SAFETY: the engine wrote `written` (≤ len) bytes of UTF-8 at the start of buf.
        unsafe { buf.set_len(written.min(len)) };
        // The engine converts lone surrogates to U+FFFD, so this is valid UTF-8; stay safe anyway.
        String::from_utf8(buf).map_err(|_| self.range_err(arg, "is not valid UTF-16 text"))
    }

    /// A required string.
    pub fn string(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<String> {
        match self.type_of(value) {
            STRING => self.raw_string(value, arg),
            t => Err(self.type_err(arg, format_args!("must be a string, got {}", type_name(t)))),
        }
    }

    /// A string no longer than `max` bytes.
    pub fn bounded_string(&self, value: sys::napi_value, arg: impl Display + Copy, max: usize) -> ArgResult<String> {
        let s = self.string(value, arg)?;
        if s.len() > max {
            return Err(self.range_err(arg, format_args!("is {} bytes, more than the {max} allowed", s.len())));
        }
        Ok(s)
    }

    /// An optional string: `undefined` and `null` are None.
    pub fn opt_string(&self, value: sys::napi_value, arg: impl Display + Copy) -> ArgResult<Option<String>> {
        match self.type_of(value) {
            UNDEFINED | NULL => Ok(None),
            _ => self.string(value, arg).map(Some),
        }
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
        unsafe { sys::napi_get_value_double(self.env, value, &mut n) };
        if !n.is_finite() {
            return Err(self.range_err(arg, format_args!("must be finite, got {n}")));
        }
        Ok(n)
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
        unsafe { sys::napi_get_value_bool(self.env, value, &mut b) };
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
        let s = self.string(value, arg)?;
        parse(&s).ok_or_else(|| self.range_err(arg, format_args!("must be one of {}, got {s:?}", allowed.join(", "))))
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
            unsafe { sys::napi_get_array_length(self.env, value, &mut len) };
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

    fn is_array(&self, value: sys::napi_value) -> bool {
        let mut b = false;
        // SAFETY: value is a live handle.
        unsafe { sys::napi_is_array(self.env, value, &mut b) };
        b
    }

    fn is_date(&self, value: sys::napi_value) -> bool {
        let mut b = false;
        // SAFETY: value is a live handle.
        unsafe { sys::napi_is_date(self.env, value, &mut b) };
        b
    }

    /// Own enumerable string keys and their values; more than `max_keys` keys is refused before
    /// any is read.
    pub fn keys(
        &self,
        obj: sys::napi_value,
        arg: impl Display + Copy,
        max_keys: usize,
    ) -> ArgResult<Vec<(String, sys::napi_value)>> {
        let mut names = ptr::null_mut();
        // SAFETY: obj is an object; proxies run their ownKeys trap here and may throw.
        let status = unsafe {
            sys::napi_get_all_property_names(
                self.env,
                obj,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut names,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(self.napi_failed(arg));
        }
        let mut len = 0u32;
        // SAFETY: names is an array.
        unsafe { sys::napi_get_array_length(self.env, names, &mut len) };
        if len as usize > max_keys {
            return Err(
                self.range_err(arg, format_args!("has {len} keys: it makes the event larger than eventMaxBytes"))
            );
        }
        let mut out = Vec::with_capacity(len as usize);
        for i in 0..len {
            let mut key = ptr::null_mut();
            // SAFETY: i < len.
            unsafe { sys::napi_get_element(self.env, names, i, &mut key) };
            let name = self.raw_string(key, arg)?;
            let mut value = ptr::null_mut();
            // SAFETY: key is a string of obj; getters and proxy traps may throw.
            let status = unsafe { sys::napi_get_property(self.env, obj, key, &mut value) };
            if status != sys::Status::napi_ok {
                return Err(self.napi_failed(Sub::key(&arg, &name)));
            }
            out.push((name, value));
        }
        Ok(out)
    }

    /// Attributes: `undefined`/`null` → none; a plain object (or a Sendable object, read by its
    /// properties) → its own enumerable properties; a `Map` (or `collections.Map`) → its entries.
    /// Values must be JSON-like; `undefined` members are skipped as `JSON.stringify` does, Dates
    /// become their epoch milliseconds. The copy is refused if it exceeds `max_bytes` of JSON.
    pub fn attributes(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        max_bytes: usize,
    ) -> ArgResult<Attributes> {
        self.object_of(value, arg, max_bytes, 0)
    }

    /// A whole document (what the event mapper returns), read like attributes. Attributes sit one
    /// level down in it (`context`, `usr`), so it may nest one level deeper than attributes may:
    /// otherwise a document carrying the deepest attributes accepted could not be read back, and
    /// the mapper's changes (a redaction) were dropped in favour of the unchanged document.
    pub fn document(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        max_bytes: usize,
    ) -> ArgResult<Attributes> {
        self.object_of(value, arg, max_bytes, 1)
    }

    fn object_of(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        max_bytes: usize,
        extra_depth: usize,
    ) -> ArgResult<Attributes> {
        match self.type_of(value) {
            UNDEFINED | NULL => Ok(Attributes::new()),
            OBJECT => {
                let mut budget =
                    Budget { left: max_bytes, max: max_bytes, max_depth: MAX_ATTRIBUTE_DEPTH + extra_depth };
                if self.is_array(value) {
                    return Err(self.type_err(arg, "must be an object of attributes, got an array"));
                }
                if let Some(map) = self.map_entries(value, arg, &mut budget)? {
                    return Ok(map);
                }
                match self.json(value, &arg, 0, &mut budget)? {
                    Some(Value::Object(map)) => Ok(map),
                    _ => Ok(Attributes::new()),
                }
            }
            t => Err(self.type_err(arg, format_args!("must be an object of attributes, got {}", type_name(t)))),
        }
    }

    /// The entries of a Map-like object (a JS `Map` or ArkTS `collections.Map`), read through its
    /// iterator and converted one by one, each charged to the budget as it is read (so an endless
    /// iterator ends in a RangeError); None for any other object.
    fn map_entries(
        &self,
        obj: sys::napi_value,
        arg: impl Display + Copy,
        budget: &mut Budget,
    ) -> ArgResult<Option<Attributes>> {
        if !self.is_map(obj) {
            return Ok(None);
        }
        let entries_fn = self.field(obj, "entries", arg)?;
        let mut iter = ptr::null_mut();
        // SAFETY: entries_fn is a function (checked by is_map); obj is its receiver.
        let status = unsafe { sys::napi_call_function(self.env, obj, entries_fn, 0, ptr::null(), &mut iter) };
        if status != sys::Status::napi_ok || self.type_of(iter) != OBJECT {
            return Err(self.napi_failed(arg));
        }
        let next = self.field(iter, "next", arg)?;
        let mut out = Map::new();
        loop {
            let mut step = ptr::null_mut();
            // SAFETY: next is the iterator's next method.
            let status = unsafe { sys::napi_call_function(self.env, iter, next, 0, ptr::null(), &mut step) };
            if status != sys::Status::napi_ok || self.type_of(step) != OBJECT {
                return Err(self.napi_failed(arg));
            }
            let done = self.field(step, "done", arg)?;
            if self.type_of(done) == BOOLEAN && self.boolean(done, arg)? {
                return Ok(Some(out));
            }
            let pair = self.field(step, "value", arg)?;
            let k = self.field(pair, "0", arg)?;
            let v = self.field(pair, "1", arg)?;
            let key = self
                .string(k, Sub::text(&arg, " key"))
                .map_err(|_| self.type_err(arg, "must be a Map with string keys"))?;
            budget.spend(self, &arg, key.len() + 4)?;
            if let Some(v) = self.json(v, &Sub::key(&arg, &key), 1, budget)? {
                out.insert(key, v);
            }
        }
    }

    /// A Map-like: has callable `entries` and `get` and a numeric `size`.
    fn is_map(&self, obj: sys::napi_value) -> bool {
        let has = |name: &std::ffi::CStr, t: i32| self.named(obj, name).map(|v| self.type_of(v) == t).unwrap_or(false);
        let yes = has(c"entries", FUNCTION) && has(c"get", FUNCTION) && has(c"size", NUMBER);
        // A throwing getter during the probe is not a Map; clear it so the real read reports it.
        self.take_exception();
        yes
    }

    /// One JSON-like value; None for members JSON drops (`undefined`).
    fn json(
        &self,
        value: sys::napi_value,
        at: &dyn Display,
        depth: usize,
        budget: &mut Budget,
    ) -> ArgResult<Option<Value>> {
        if depth > budget.max_depth {
            return Err(
                self.range_err(at, format_args!("nests deeper than {MAX_ATTRIBUTE_DEPTH} levels (is it cyclic?)"))
            );
        }
        match self.type_of(value) {
            UNDEFINED => Ok(None),
            NULL => {
                budget.spend(self, at, SCALAR_COST)?;
                Ok(Some(Value::Null))
            }
            BOOLEAN => {
                budget.spend(self, at, SCALAR_COST)?;
                self.boolean(value, at).map(|b| Some(Value::Bool(b)))
            }
            NUMBER => {
                budget.spend(self, at, SCALAR_COST)?;
                let n = self.number(value, at)?;
                Ok(Some(number_value(n)))
            }
            STRING => {
                let s = self.raw_string(value, at)?;
                budget.spend(self, at, s.len() + 2)?;
                Ok(Some(Value::String(s)))
            }
            OBJECT if self.is_date(value) => {
                let mut ms = 0f64;
                // SAFETY: value is a Date.
                unsafe { sys::napi_get_date_value(self.env, value, &mut ms) };
                if !ms.is_finite() {
                    return Err(self.range_err(at, "is an invalid Date"));
                }
                budget.spend(self, at, SCALAR_COST)?;
                Ok(Some(number_value(ms)))
            }
            OBJECT if self.is_array(value) => {
                let len = self.length(value, at)?;
                // Every element costs at least a byte of JSON: a huge (or sparse) length is
                // refused before anything is read. The length is the caller's: even within the
                // budget it reserves no more than a page of elements up front (a length of 2^32-1
                // under a large eventMaxBytes asked for 128 GiB at once, and the process aborted).
                budget.spend(self, at, len as usize)?;
                let mut out = Vec::with_capacity((len as usize).min(ARRAY_RESERVE));
                for i in 0..len {
                    let item = self.element(value, i, at)?;
                    let v = match self.json(item, &Sub::index(&at, i), depth + 1, budget)? {
                        Some(v) => v,
                        // A hole or `undefined` is `null` in JSON, and costs what null costs.
                        None => {
                            budget.spend(self, &Sub::index(&at, i), SCALAR_COST)?;
                            Value::Null
                        }
                    };
                    out.push(v);
                }
                Ok(Some(Value::Array(out)))
            }
            OBJECT => {
                let mut out = Map::new();
                // Every member costs at least 4 bytes of JSON (`"":x,`).
                for (k, v) in self.keys(value, at, budget.left / 4)? {
                    budget.spend(self, at, k.len() + 4)?;
                    if let Some(v) = self.json(v, &Sub::key(&at, &k), depth + 1, budget)? {
                        out.insert(k, v);
                    }
                }
                Ok(Some(Value::Object(out)))
            }
            t => Err(self.type_err(at, format_args!("cannot be {}: attribute values must be JSON-like", type_name(t)))),
        }
    }
}

/// Integral numbers in the safe range stay integers in JSON (`3`, not `3.0`).
fn number_value(n: f64) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if n.fract() == 0.0 && n.abs() <= SAFE {
        Value::Number(Number::from(n as i64))
    } else {
        Number::from_f64(n).map(Value::Number).unwrap_or(Value::Null)
    }
}

/// JSON bytes an argument may still take.
struct Budget {
    left: usize,
    max: usize,
    /// Deepest nesting allowed.
    max_depth: usize,
}

impl Budget {
    fn spend(&mut self, r: &Reader, at: &dyn Display, n: usize) -> ArgResult<()> {
        if n > self.left {
            return Err(r.range_err(at, format_args!("makes the event larger than eventMaxBytes ({} bytes)", self.max)));
        }
        self.left -= n;
        Ok(())
    }
}
