//! Attribute maps and JSON-like values, copied out of the engine straight into the JSON text the
//! documents will carry ([`Attrs`]): strings land in the output buffer as the engine writes them
//! and are escaped there, numbers are formatted once, and no map, key string or value tree is
//! built, so a captured call holds one allocation for its attributes. The text may not grow past
//! `eventMaxBytes` (checked as it is written, and before reading a length or a key list the
//! caller decides), so no argument can make the binding read or allocate more than that.

use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi_ohos::sys;
use serde_json::Value;

use super::convert::{
    type_name, ArgError, ArgResult, Reader, Sub, BOOLEAN, FUNCTION, NULL, NUMBER, OBJECT, STRING, UNDEFINED,
};
use crate::core::attrs::Attrs;
use crate::core::event::Attributes;
use crate::core::json_text::{any_needs_escape, write_str};

/// Attribute values nested deeper than this are refused: real attributes are shallow, and the
/// limit is what turns a cyclic object into a clear error instead of a stack overflow.
pub const MAX_ATTRIBUTE_DEPTH: usize = 16;

/// Members of a Map-like checked for a repeated key by comparing each with the others; past this
/// many the text is rebuilt through a map, which also drops repeats.
const DUPLICATE_SCAN_MAX: usize = 32;

thread_local! {
    /// The encoders' scratch buffer, kept between calls: the text is written here and copied out
    /// once, at its exact size, so a captured call holds one allocation and the heap is not left
    /// with a hole per call (a buffer grown for the engine's copy, then shrunk).
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Scratch buffers larger than this are not kept (one huge argument should not pin its memory).
const SCRATCH_KEEP_BYTES: usize = 64 * 1024;

/// The JSON text being written for one argument, with its budget.
struct Encoder<'r> {
    r: &'r Reader,
    out: Vec<u8>,
    /// `eventMaxBytes`: the text may not grow past it.
    max: usize,
    max_depth: usize,
}

impl Encoder<'_> {
    fn new(r: &Reader, max: usize, extra_depth: usize) -> Encoder<'_> {
        // A getter run while reading may call the binding again: it then gets a buffer of its own.
        let out = SCRATCH.with(|s| s.try_borrow_mut().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default());
        Encoder { r, out, max, max_depth: MAX_ATTRIBUTE_DEPTH + extra_depth }
    }

    /// Room for `n` more bytes, or the argument makes the event too large.
    fn room(&self, at: &dyn Display, n: usize) -> ArgResult<()> {
        if self.out.len().saturating_add(n) > self.max {
            return Err(self
                .r
                .range_err(at, format_args!("makes the event larger than eventMaxBytes ({} bytes)", self.max)));
        }
        Ok(())
    }

    fn push(&mut self, at: &dyn Display, bytes: &[u8]) -> ArgResult<()> {
        self.room(at, bytes.len())?;
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// A JS string as a JSON string: its UTF-8 lands in the buffer, then is escaped in place when
    /// it has anything to escape (rare).
    fn string(&mut self, value: sys::napi_value, at: &dyn Display) -> ArgResult<()> {
        self.push(at, b"\"")?;
        let start = self.out.len();
        self.r.append_utf8(value, at, &mut self.out)?;
        if any_needs_escape(&self.out[start..]) {
            let raw = self.out.split_off(start);
            let text = std::str::from_utf8(&raw).map_err(|_| self.r.range_err(at, "is not valid UTF-16 text"))?;
            self.out.truncate(start - 1);
            write_str(&mut self.out, text);
        } else {
            self.out.push(b'"');
        }
        self.room(at, 0)
    }

    /// A number as serde_json writes it: integral ones in the safe range as integers (`3`, not
    /// `3.0`), others in their shortest form.
    fn number(&mut self, n: f64, at: &dyn Display) -> ArgResult<()> {
        const SAFE: f64 = 9_007_199_254_740_991.0;
        if !n.is_finite() {
            return Err(self.r.range_err(at, format_args!("must be finite, got {n}")));
        }
        if n.fract() == 0.0 && n.abs() <= SAFE {
            let mut b = itoa::Buffer::new();
            return self.push(at, b.format(n as i64).as_bytes());
        }
        let text = serde_json::Number::from_f64(n).map(|x| x.to_string()).unwrap_or_else(|| "null".into());
        self.push(at, text.as_bytes())
    }

    /// One JSON-like value; false for what JSON drops as a member (`undefined`).
    fn value(&mut self, value: sys::napi_value, at: &dyn Display, depth: usize) -> ArgResult<bool> {
        let r = self.r;
        if depth > self.max_depth {
            return Err(r.range_err(at, format_args!("nests deeper than {MAX_ATTRIBUTE_DEPTH} levels (is it cyclic?)")));
        }
        match r.type_of(value) {
            UNDEFINED => return Ok(false),
            NULL => self.push(at, b"null")?,
            // The type is known: read the value without asking for it again.
            BOOLEAN => {
                let mut b = false;
                // SAFETY: value is a boolean.
                r.check(unsafe { sys::napi_get_value_bool(r.env, value, &mut b) }, at)?;
                self.push(at, if b { b"true" } else { b"false" })?;
            }
            NUMBER => {
                let mut n = 0f64;
                // SAFETY: value is a number.
                r.check(unsafe { sys::napi_get_value_double(r.env, value, &mut n) }, at)?;
                self.number(n, at)?;
            }
            STRING => self.string(value, at)?,
            OBJECT if r.is_date(value) => {
                let mut ms = 0f64;
                // SAFETY: value is a Date.
                r.check(unsafe { sys::napi_get_date_value(r.env, value, &mut ms) }, at)?;
                if !ms.is_finite() {
                    return Err(r.range_err(at, "is an invalid Date"));
                }
                self.number(ms, at)?;
            }
            OBJECT if r.is_array(value) => self.array(value, at, depth)?,
            OBJECT => self.members(value, at, depth)?,
            t => {
                return Err(
                    r.type_err(at, format_args!("cannot be {}: attribute values must be JSON-like", type_name(t)))
                )
            }
        }
        Ok(true)
    }

    fn array(&mut self, value: sys::napi_value, at: &dyn Display, depth: usize) -> ArgResult<()> {
        let r = self.r;
        let mut len = 0u32;
        // SAFETY: value is an array.
        r.check(unsafe { sys::napi_get_array_length(r.env, value, &mut len) }, at)?;
        // Every element takes at least a byte of JSON: a huge (or sparse) length is refused before
        // anything is read; nothing is reserved for it.
        self.room(at, len as usize)?;
        self.push(at, b"[")?;
        for i in 0..len {
            if i > 0 {
                self.push(at, b",")?;
            }
            let item = r.element(value, i, at)?;
            // A hole or `undefined` is `null` in JSON.
            if !self.value(item, &Sub::index(&at, i), depth + 1)? {
                self.push(at, b"null")?;
            }
        }
        self.push(at, b"]")
    }

    /// An object's own enumerable string-keyed members.
    fn members(&mut self, obj: sys::napi_value, at: &dyn Display, depth: usize) -> ArgResult<()> {
        let r = self.r;
        let mut names = ptr::null_mut();
        // SAFETY: obj is an object; proxies run their ownKeys trap here and may throw.
        let status = unsafe {
            sys::napi_get_all_property_names(
                r.env,
                obj,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut names,
            )
        };
        r.check(status, at)?;
        let mut len = 0u32;
        // SAFETY: names is an array.
        r.check(unsafe { sys::napi_get_array_length(r.env, names, &mut len) }, at)?;
        // Every member takes at least 4 bytes of JSON (`"":x,`): refused before any is read.
        if (len as usize).saturating_mul(4) > self.max.saturating_sub(self.out.len()) {
            return Err(r.range_err(at, format_args!("has {len} keys: it makes the event larger than eventMaxBytes")));
        }
        self.push(at, b"{")?;
        let mut first = true;
        for i in 0..len {
            let mut key = ptr::null_mut();
            // SAFETY: i < len.
            r.check(unsafe { sys::napi_get_element(r.env, names, i, &mut key) }, at)?;
            let mut value = ptr::null_mut();
            // SAFETY: key is a string of obj; getters and proxy traps may throw.
            let status = unsafe { sys::napi_get_property(r.env, obj, key, &mut value) };
            if status != sys::Status::napi_ok {
                let name = r.raw_string(key, at)?;
                return Err(r.napi_failed(Sub::key(&at, &name)));
            }
            self.member(key, value, at, depth, &mut first)?;
        }
        self.push(at, b"}")
    }

    /// `"key":value`, or nothing when the value is `undefined` (as JSON.stringify skips it). A
    /// value's errors name its key, which is only decoded then.
    fn member(
        &mut self,
        key: sys::napi_value,
        value: sys::napi_value,
        at: &dyn Display,
        depth: usize,
        first: &mut bool,
    ) -> ArgResult<()> {
        let mark = self.out.len();
        if !*first {
            self.push(at, b",")?;
        }
        self.string(key, at)?;
        self.push(at, b":")?;
        let written = self.value(value, &KeyPath { r: self.r, parent: at, key }, depth + 1)?;
        if written {
            *first = false;
        } else {
            self.out.truncate(mark);
        }
        Ok(())
    }

    /// The entries of a Map-like object (a JS `Map` or ArkTS `collections.Map`), written one by
    /// one, each within the budget as it is read (so an endless iteration ends in a RangeError);
    /// false for any other object. Through its `forEach`, which hands each entry to a native
    /// callback (one engine call for the map, none per entry), or through its iterator when it
    /// has no `forEach`.
    fn map_entries(&mut self, obj: sys::napi_value, at: &dyn Display) -> ArgResult<bool> {
        let r = self.r;
        if !is_map(r, obj) {
            return Ok(false);
        }
        self.push(at, b"{")?;
        let read = match r.named_often(obj, c"forEach").filter(|f| r.type_of(*f) == FUNCTION) {
            Some(for_each) => self.map_for_each(obj, for_each, at)?,
            None => false,
        };
        if !read {
            r.take_exception();
            self.map_iterate(obj, at)?;
        }
        self.push(at, b"}")?;
        Ok(true)
    }

    /// `obj.forEach(visit)`: the engine calls [`visit_entry`] with each `(value, key)`. An error
    /// of ours throws inside `forEach` to end it, and is reported instead of that throw. False
    /// when `forEach` threw before it gave any entry (a platform that refuses a native callback
    /// there, or a Map-like's own `forEach` failing): the caller reads the iterator instead.
    fn map_for_each(&mut self, obj: sys::napi_value, for_each: sys::napi_value, at: &dyn Display) -> ArgResult<bool> {
        let r = self.r;
        let visitor = r.visitor(at)?;
        let mut visit = Visit { enc: self, at, first: true, visited: false, error: None };
        // The function carries no state: it finds it through VISITING, which holds it for the
        // call below and no longer (a Map-like that keeps the function and calls it later finds
        // nothing; one that calls it from within another map's forEach writes to that map, as
        // that map's own visitor would).
        let outer = VISITING.with(|v| v.replace((&mut visit as *mut Visit).cast()));
        let mut result = ptr::null_mut();
        // SAFETY: for_each is a function (checked); obj is its receiver.
        let status = unsafe { sys::napi_call_function(r.env, obj, for_each, 1, &visitor, &mut result) };
        VISITING.with(|v| v.set(outer));
        if let Some(e) = visit.error.take() {
            r.take_exception();
            return Err(e);
        }
        if status != sys::Status::napi_ok && !visit.visited {
            return Ok(false);
        }
        r.check(status, at).map(|()| true)
    }

    /// The entries of a Map-like without `forEach`, through its iterator.
    fn map_iterate(&mut self, obj: sys::napi_value, at: &dyn Display) -> ArgResult<()> {
        let r = self.r;
        let entries_fn = r.field(obj, "entries", at)?;
        let mut iter = ptr::null_mut();
        // SAFETY: entries_fn is a function (checked by is_map); obj is its receiver.
        let status = unsafe { sys::napi_call_function(r.env, obj, entries_fn, 0, ptr::null(), &mut iter) };
        if status != sys::Status::napi_ok || r.type_of(iter) != OBJECT {
            return Err(r.napi_failed(at));
        }
        let next = r.field(iter, "next", at)?;
        let mut first = true;
        loop {
            let mut step = ptr::null_mut();
            // SAFETY: next is the iterator's next method.
            let status = unsafe { sys::napi_call_function(r.env, iter, next, 0, ptr::null(), &mut step) };
            if status != sys::Status::napi_ok || r.type_of(step) != OBJECT {
                return Err(r.napi_failed(at));
            }
            let done = r.field(step, "done", at)?;
            if r.type_of(done) == BOOLEAN && r.boolean(done, at)? {
                return Ok(());
            }
            let pair = r.field(step, "value", at)?;
            let k = r.field(pair, "0", at)?;
            let v = r.field(pair, "1", at)?;
            self.entry(k, v, at, &mut first)?;
        }
    }

    /// One entry of a Map-like.
    fn entry(
        &mut self,
        key: sys::napi_value,
        value: sys::napi_value,
        at: &dyn Display,
        first: &mut bool,
    ) -> ArgResult<()> {
        if self.r.type_of(key) != STRING {
            return Err(self.r.type_err(at, "must be a Map with string keys"));
        }
        // Every entry takes at least 4 bytes: an endless iteration of empty keys still ends.
        self.room(at, 4)?;
        self.member(key, value, at, 0, first)
    }

    fn finish(mut self) -> Attrs {
        // The encoder writes UTF-8 (the engine's output and ASCII punctuation).
        let attrs = match std::str::from_utf8(&self.out) {
            Ok(text) => Attrs::from_json_object(text.to_owned()),
            Err(_) => Attrs::default(),
        };
        self.give_back();
        attrs
    }

    fn give_back(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        if out.capacity() <= SCRATCH_KEEP_BYTES {
            out.clear();
            SCRATCH.with(|s| {
                if let Ok(mut v) = s.try_borrow_mut() {
                    if v.capacity() < out.capacity() {
                        *v = out;
                    }
                }
            });
        }
    }
}

impl Drop for Encoder<'_> {
    /// An encoder dropped on an error gives its buffer back too.
    fn drop(&mut self) {
        self.give_back();
    }
}

thread_local! {
    /// The [`Visit`] of the `forEach` call in progress on this thread (nested calls, from a getter
    /// read inside an entry, save and restore the outer one).
    static VISITING: std::cell::Cell<*mut std::ffi::c_void> = const { std::cell::Cell::new(ptr::null_mut()) };
}

/// What [`visit_entry`] needs while a Map-like's `forEach` runs: the encoder, where errors point,
/// and the first error.
struct Visit<'e, 'r> {
    enc: &'e mut Encoder<'r>,
    at: &'e dyn Display,
    first: bool,
    /// Whether `forEach` gave an entry.
    visited: bool,
    error: Option<ArgError>,
}

/// The callback a Map-like's `forEach` calls with `(value, key)`: writes the entry, or records
/// the error and throws to end the iteration. A panic is caught (no unwinding into the engine)
/// and reported as an error of the argument.
unsafe extern "C" fn visit_entry(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 2;
    let mut argv = [ptr::null_mut(); 2];
    // SAFETY: called by the engine with this callback's info; argv has room for argc values.
    let status =
        unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) };
    // Taken while this entry is written: a getter that calls the visitor again finds nothing.
    let state = VISITING.with(|v| v.replace(ptr::null_mut()));
    if status != sys::Status::napi_ok || state.is_null() {
        VISITING.with(|v| v.set(state));
        return ptr::null_mut();
    }
    // SAFETY: `state` is the `Visit` of the `map_for_each` call in progress, alive until that
    // call returns, and no other reference to it exists while VISITING does not hold it.
    let visit = unsafe { &mut *state.cast::<Visit>() };
    visit_with(env, visit, argv);
    VISITING.with(|v| v.set(state));
    ptr::null_mut()
}

fn visit_with(env: sys::napi_env, visit: &mut Visit, argv: [sys::napi_value; 2]) {
    if visit.error.is_some() {
        return;
    }
    let enc = &mut *visit.enc;
    let (value, key) = (argv[0], argv[1]);
    visit.visited = true;
    let at = visit.at;
    let mut first = visit.first;
    let written = catch_unwind(AssertUnwindSafe(|| enc.entry(key, value, at, &mut first)))
        .unwrap_or_else(|_| Err(enc.r.range_err(at, "could not be read (a panic in the binding)")));
    visit.first = first;
    if let Err(e) = written {
        visit.error = Some(e);
        // Ends forEach; map_for_each clears it and reports the error instead.
        // SAFETY: env is the live env of this callback.
        unsafe { sys::napi_throw_error(env, ptr::null(), c"rum-native: attribute error".as_ptr()) };
    }
}

/// `parent.key` in an error message, the key read from the engine only when a message is built.
struct KeyPath<'a> {
    r: &'a Reader,
    parent: &'a dyn Display,
    key: sys::napi_value,
}

impl Display for KeyPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.r.raw_string(self.key, "key").unwrap_or_default();
        write!(f, "{}", Sub::key(&self.parent, &key))
    }
}

/// A Map-like: has callable `entries` and `get` and a numeric `size`.
fn is_map(r: &Reader, obj: sys::napi_value) -> bool {
    let has =
        |name: &'static std::ffi::CStr, t: i32| r.named_often(obj, name).map(|v| r.type_of(v) == t).unwrap_or(false);
    let yes = has(c"entries", FUNCTION) && has(c"get", FUNCTION) && has(c"size", NUMBER);
    // A throwing getter during the probe is not a Map; clear it so the real read reports it.
    r.take_exception();
    yes
}

/// Whether two members of `a` share a key (a Map-like whose iterator repeats one). Keys are
/// compared as written: the encoder writes one string one way only. No allocation.
fn has_repeated_key(a: &Attrs) -> bool {
    let mut keys = [""; DUPLICATE_SCAN_MAX];
    for (i, (key, _)) in a.entries().enumerate() {
        let Some(slot) = keys.get_mut(i) else { return true };
        *slot = key.as_written();
        if keys[..i].contains(&keys[i]) {
            return true;
        }
    }
    false
}

impl Reader {
    /// The function Map-likes' `forEach` is called with: made once per call, or found where the
    /// pipeline keeps it (Node makes a function in about 12,000 instructions; a weak reference
    /// gives it back in a few hundred).
    fn visitor(&self, at: &dyn Display) -> ArgResult<sys::napi_value> {
        if !self.visitor.get().is_null() {
            return Ok(self.visitor.get());
        }
        let kept = self.kept_visitor.as_deref().map_or(ptr::null_mut(), std::cell::Cell::get);
        let mut f = ptr::null_mut();
        if !kept.is_null() {
            // SAFETY: kept is a reference of this env (a pipeline's, which lives in one env).
            // Null when the engine collected the function.
            let _ = unsafe { sys::napi_get_reference_value(self.env, kept, &mut f) };
        }
        if f.is_null() {
            // SAFETY: visit_entry is a callback of this shape; it takes no data.
            let status = unsafe {
                sys::napi_create_function(self.env, c"visit".as_ptr(), 5, Some(visit_entry), ptr::null_mut(), &mut f)
            };
            self.check(status, at)?;
            if let Some(slot) = &self.kept_visitor {
                let mut weak = ptr::null_mut();
                // SAFETY: f is a function of this env; a weak reference (count 0) keeps nothing
                // alive. The one it replaces, whose function was collected, is deleted.
                if unsafe { sys::napi_create_reference(self.env, f, 0, &mut weak) } == sys::Status::napi_ok {
                    let old = slot.replace(weak);
                    if !old.is_null() {
                        // SAFETY: old is a reference of this env, no longer used.
                        let _ = unsafe { sys::napi_delete_reference(self.env, old) };
                    }
                }
            }
        }
        self.visitor.set(f);
        Ok(f)
    }

    /// Attributes: `undefined`/`null` → none; a plain object (or a Sendable object, read by its
    /// properties) → its own enumerable properties; a `Map` (or `collections.Map`) → its entries.
    /// Values must be JSON-like; `undefined` members are skipped as `JSON.stringify` does, Dates
    /// become their epoch milliseconds. The text may not exceed `max_bytes`.
    pub fn attributes(&self, value: sys::napi_value, arg: impl Display + Copy, max_bytes: usize) -> ArgResult<Attrs> {
        self.object_of(value, &arg, max_bytes, 0)
    }

    /// Attributes as values (a user's `extra`): read as [`Reader::attributes`], then parsed.
    pub fn attribute_map(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        max_bytes: usize,
    ) -> ArgResult<Attributes> {
        Ok(self.attributes(value, arg, max_bytes)?.to_map())
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
        Ok(self.object_of(value, &arg, max_bytes, 1)?.to_map())
    }

    fn object_of(
        &self,
        value: sys::napi_value,
        arg: &dyn Display,
        max_bytes: usize,
        extra_depth: usize,
    ) -> ArgResult<Attrs> {
        match self.type_of(value) {
            UNDEFINED | NULL => Ok(Attrs::default()),
            OBJECT => {
                if self.is_array(value) {
                    return Err(self.type_err(arg, "must be an object of attributes, got an array"));
                }
                let mut enc = Encoder::new(self, max_bytes, extra_depth);
                if enc.map_entries(value, arg)? {
                    let attrs = enc.finish();
                    // A custom Map-like may repeat a key: keep the last, as a Map would.
                    return Ok(if has_repeated_key(&attrs) { Attrs::from_map(&attrs.to_map()) } else { attrs });
                }
                // Its type is known (an object, not an array): its members at once. A Date has
                // none, as JSON.stringify's object members would be.
                enc.members(value, arg, 0)?;
                Ok(enc.finish())
            }
            t => Err(self.type_err(arg, format_args!("must be an object of attributes, got {}", type_name(t)))),
        }
    }

    /// One attribute value on its own (`addAttribute`'s): the checks and the budget of a value
    /// inside an attribute map; `undefined` is refused (it would set nothing).
    pub fn attribute_value(
        &self,
        value: sys::napi_value,
        arg: impl Display + Copy,
        max_bytes: usize,
    ) -> ArgResult<Value> {
        let mut enc = Encoder::new(self, max_bytes, 0);
        if !enc.value(value, &arg, 1)? {
            return Err(self.type_err(arg, "must not be undefined"));
        }
        serde_json::from_slice(&enc.out).map_err(|e| self.range_err(arg, format_args!("cannot be read back: {e}")))
    }
}
