//! Attribute maps and JSON-like values, copied out of the engine with a byte budget
//! (`eventMaxBytes`) charged as they are read, so no argument can make the binding read or
//! allocate more than the budget allows.

use std::fmt::Display;
use std::ptr;

use napi_ohos::sys;
use serde_json::{Map, Number, Value};

use super::convert::{type_name, ArgResult, Reader, Sub, BOOLEAN, FUNCTION, NULL, NUMBER, OBJECT, STRING, UNDEFINED};
use crate::core::event::Attributes;

/// Attribute values nested deeper than this are refused: real attributes are shallow, and the
/// limit is what turns a cyclic object into a clear error instead of a stack overflow.
pub const MAX_ATTRIBUTE_DEPTH: usize = 16;

/// Approximate JSON cost of a value that is not a string (numbers, booleans, null, punctuation).
const SCALAR_COST: usize = 8;

/// Array elements reserved before any is read: the rest grow as elements are actually read.
const ARRAY_RESERVE: usize = 256;

impl Reader {
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
        self.check(unsafe { sys::napi_get_array_length(self.env, names, &mut len) }, arg)?;
        if len as usize > max_keys {
            return Err(
                self.range_err(arg, format_args!("has {len} keys: it makes the event larger than eventMaxBytes"))
            );
        }
        let mut out = Vec::with_capacity(len as usize);
        for i in 0..len {
            let mut key = ptr::null_mut();
            // SAFETY: i < len.
            self.check(unsafe { sys::napi_get_element(self.env, names, i, &mut key) }, arg)?;
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
                // Its type is known (an object, not an array): its members at once. A Date has
                // none, as JSON.stringify's object members would be.
                self.members(value, &arg, 0, &mut budget)
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
            // The type is known: read the value without asking for it again (one Node-API call
            // per scalar, where the checked readers take two).
            BOOLEAN => {
                budget.spend(self, at, SCALAR_COST)?;
                let mut b = false;
                // SAFETY: value is a boolean.
                self.check(unsafe { sys::napi_get_value_bool(self.env, value, &mut b) }, at)?;
                Ok(Some(Value::Bool(b)))
            }
            NUMBER => {
                budget.spend(self, at, SCALAR_COST)?;
                let mut n = 0f64;
                // SAFETY: value is a number.
                self.check(unsafe { sys::napi_get_value_double(self.env, value, &mut n) }, at)?;
                if !n.is_finite() {
                    return Err(self.range_err(at, format_args!("must be finite, got {n}")));
                }
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
                self.check(unsafe { sys::napi_get_date_value(self.env, value, &mut ms) }, at)?;
                if !ms.is_finite() {
                    return Err(self.range_err(at, "is an invalid Date"));
                }
                budget.spend(self, at, SCALAR_COST)?;
                Ok(Some(number_value(ms)))
            }
            OBJECT if self.is_array(value) => {
                let mut len = 0u32;
                // SAFETY: value is an array.
                self.check(unsafe { sys::napi_get_array_length(self.env, value, &mut len) }, at)?;
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
            OBJECT => self.members(value, at, depth, budget).map(|m| Some(Value::Object(m))),
            t => Err(self.type_err(at, format_args!("cannot be {}: attribute values must be JSON-like", type_name(t)))),
        }
    }

    /// An object's own enumerable members, each read as a JSON-like value.
    fn members(
        &self,
        value: sys::napi_value,
        at: &dyn Display,
        depth: usize,
        budget: &mut Budget,
    ) -> ArgResult<Attributes> {
        let mut out = Map::new();
        // Every member costs at least 4 bytes of JSON (`"":x,`).
        for (k, v) in self.keys(value, at, budget.left / 4)? {
            budget.spend(self, at, k.len() + 4)?;
            if let Some(v) = self.json(v, &Sub::key(&at, &k), depth + 1, budget)? {
                out.insert(k, v);
            }
        }
        Ok(out)
    }

    /// One attribute value on its own (`addAttribute`'s): the checks and the budget of a value
    /// inside an attribute map; `undefined` is refused (it would set nothing).
    pub fn attribute_value(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        max_bytes: usize,
    ) -> ArgResult<Value> {
        let mut budget = Budget { left: max_bytes, max: max_bytes, max_depth: MAX_ATTRIBUTE_DEPTH };
        self.json(value, &arg, 1, &mut budget)?.ok_or_else(|| self.type_err(arg, "must not be undefined"))
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
