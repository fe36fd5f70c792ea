//! Attribute maps and JSON-like values, copied out of the engine straight into the JSON text the
//! documents will carry ([`Attrs`]): strings land in the output buffer as the engine writes them
//! and are escaped there, numbers are formatted once, and no map, key string or value tree is
//! built, so a captured call holds one allocation for its attributes. The text may not grow past
//! `eventMaxBytes` (checked as it is written, and before reading a length or a key list the
//! caller decides), so no argument can make the binding read or allocate more than that.
//!
//! The encoder's methods take the engine (`js`) of the scope their values belong to: the call's
//! own, or, for a Map-like read through its `forEach`, the scope of the visitor's callback.

use std::cell::RefCell;
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_json::Value as Json;

use super::scalars::{owned_text, STACK_STRING_BYTES};
use super::{kind_name, ArgResult, Args, Blame, Sub};
use crate::core::attrs::Attrs;
use crate::core::event::Attributes;
use crate::core::json_text::{any_needs_escape, write_str};
use crate::core::text::from_engine_utf8;
use crate::napi::js::{Js, Value, ValueType, Visited, Visitor};

/// Attribute values nested deeper than this are refused: real attributes are shallow, and the
/// limit is what turns a cyclic object into a clear error instead of a stack overflow.
pub const MAX_ATTRIBUTE_DEPTH: usize = 16;

/// Members of a Map-like checked for a repeated key by comparing each with the others; past this
/// many the text is rebuilt through a map, which also drops repeats.
const DUPLICATE_SCAN_MAX: usize = 32;

/// Scratch buffers larger than this are not kept (one huge argument should not pin its memory).
const SCRATCH_KEEP_BYTES: usize = 64 * 1024;

thread_local! {
    /// The encoders' scratch buffer, kept between calls: the text is written here and copied out
    /// once, at its exact size, so a captured call holds one allocation and the heap is not left
    /// with a hole per call (a buffer grown for the engine's copy, then shrunk).
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The JSON text being written for one argument, with its budget.
struct Encoder<'a, 'e> {
    args: &'a Args<'e>,
    blame: Blame,
    out: Vec<u8>,
    /// `eventMaxBytes`: the text may not grow past it.
    max: usize,
    max_depth: usize,
}

impl<'a, 'e> Encoder<'a, 'e> {
    fn new(args: &'a Args<'e>, max: usize, extra_depth: usize) -> Self {
        // A getter run while reading may call the binding again: it then gets a buffer of its own.
        let out = SCRATCH.with(|s| s.try_borrow_mut().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default());
        Encoder { args, blame: args.blame(), out, max, max_depth: MAX_ATTRIBUTE_DEPTH + extra_depth }
    }

    /// Room for `n` more bytes, or the argument makes the event too large.
    fn room(&self, at: &dyn Display, n: usize) -> ArgResult<()> {
        if self.out.len().saturating_add(n) > self.max {
            return Err(self
                .blame
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
    fn string(&mut self, js: Js<'_>, v: Value<'_>, at: &dyn Display) -> ArgResult<()> {
        self.push(at, b"\"")?;
        let start = self.out.len();
        js.append_utf8(v, &mut self.out, STACK_STRING_BYTES).map_err(|()| self.blame.failed(js, at))?;
        if any_needs_escape(&self.out[start..]) {
            let raw = self.out.split_off(start);
            self.out.truncate(start - 1);
            write_str(&mut self.out, &from_engine_utf8(&raw));
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
            return Err(self.blame.range_err(at, format_args!("must be finite, got {n}")));
        }
        if n.fract() == 0.0 && n.abs() <= SAFE {
            let mut b = itoa::Buffer::new();
            return self.push(at, b.format(n as i64).as_bytes());
        }
        let text = serde_json::Number::from_f64(n).map(|x| x.to_string()).unwrap_or_else(|| "null".into());
        self.push(at, text.as_bytes())
    }

    /// One JSON-like value; false for what JSON drops as a member (`undefined`).
    fn value(&mut self, js: Js<'_>, v: Value<'_>, at: &dyn Display, depth: usize) -> ArgResult<bool> {
        if depth > self.max_depth {
            return Err(self
                .blame
                .range_err(at, format_args!("nests deeper than {MAX_ATTRIBUTE_DEPTH} levels (is it cyclic?)")));
        }
        match js.kind(v) {
            ValueType::Undefined => return Ok(false),
            ValueType::Null => self.push(at, b"null")?,
            // The kind is known: read the value without asking for it again.
            ValueType::Boolean => {
                let b = js.boolean_of(v).ok_or_else(|| self.blame.failed(js, at))?;
                self.push(at, if b { b"true" } else { b"false" })?;
            }
            ValueType::Number => {
                let n = js.number_of(v).ok_or_else(|| self.blame.failed(js, at))?;
                self.number(n, at)?;
            }
            ValueType::String => self.string(js, v, at)?,
            ValueType::Object if js.is_date(v) => {
                let ms = js.date_ms(v).ok_or_else(|| self.blame.failed(js, at))?;
                if !ms.is_finite() {
                    return Err(self.blame.range_err(at, "is an invalid Date"));
                }
                self.number(ms, at)?;
            }
            ValueType::Object if js.is_array(v) => self.array(js, v, at, depth)?,
            ValueType::Object => self.members(js, v, at, depth)?,
            t => {
                return Err(self
                    .blame
                    .type_err(at, format_args!("cannot be {}: attribute values must be JSON-like", kind_name(t))))
            }
        }
        Ok(true)
    }

    fn array(&mut self, js: Js<'_>, v: Value<'_>, at: &dyn Display, depth: usize) -> ArgResult<()> {
        let len = js.array_length(v).ok_or_else(|| self.blame.failed(js, at))?;
        // Every element takes at least a byte of JSON: a huge (or sparse) length is refused before
        // anything is read; nothing is reserved for it.
        self.room(at, len as usize)?;
        self.push(at, b"[")?;
        for i in 0..len {
            if i > 0 {
                self.push(at, b",")?;
            }
            let item = js.element(v, i).ok_or_else(|| self.blame.failed(js, Sub::index(&at, i)))?;
            // A hole or `undefined` is `null` in JSON.
            if !self.value(js, item, &Sub::index(&at, i), depth + 1)? {
                self.push(at, b"null")?;
            }
        }
        self.push(at, b"]")
    }

    /// An object's own enumerable string-keyed members.
    fn members(&mut self, js: Js<'_>, obj: Value<'_>, at: &dyn Display, depth: usize) -> ArgResult<()> {
        let names = js.own_keys(obj).ok_or_else(|| self.blame.failed(js, at))?;
        let len = js.array_length(names).ok_or_else(|| self.blame.failed(js, at))?;
        // Every member takes at least 4 bytes of JSON (`"":x,`): refused before any is read.
        if (len as usize).saturating_mul(4) > self.max.saturating_sub(self.out.len()) {
            return Err(self
                .blame
                .range_err(at, format_args!("has {len} keys: it makes the event larger than eventMaxBytes")));
        }
        self.push(at, b"{")?;
        let mut first = true;
        for i in 0..len {
            let key = js.element(names, i).ok_or_else(|| self.blame.failed(js, at))?;
            let Some(value) = js.property(obj, key) else {
                let name = owned_text::<String>(js, key).unwrap_or_default();
                return Err(self.blame.failed(js, Sub::key(&at, &name)));
            };
            self.member(js, key, value, at, depth, &mut first)?;
        }
        self.push(at, b"}")
    }

    /// `"key":value`, or nothing when the value is `undefined` (as JSON.stringify skips it). A
    /// value's errors name its key, which is only decoded then.
    fn member(
        &mut self,
        js: Js<'_>,
        key: Value<'_>,
        value: Value<'_>,
        at: &dyn Display,
        depth: usize,
        first: &mut bool,
    ) -> ArgResult<()> {
        let mark = self.out.len();
        if !*first {
            self.push(at, b",")?;
        }
        self.string(js, key, at)?;
        self.push(at, b":")?;
        let written = self.value(js, value, &KeyPath { js, parent: at, key }, depth + 1)?;
        if written {
            *first = false;
        } else {
            self.out.truncate(mark);
        }
        Ok(())
    }

    /// A Map-like: has callable `entries` and `get` and a numeric `size`. Map-likes are read at
    /// an argument's top level only, in the call's own scope: the probes use the call's cache of
    /// property names.
    fn is_map(&self, obj: Value<'_>) -> bool {
        let (args, js) = (self.args, self.args.js);
        let has = |name, t| args.named_often(obj, name).is_some_and(|v| js.kind(v) == t);
        let yes =
            has(c"entries", ValueType::Function) && has(c"get", ValueType::Function) && has(c"size", ValueType::Number);
        // A throwing getter during the probe is not a Map; clear it so the real read reports it.
        js.take_exception();
        yes
    }

    /// The entries of a Map-like object (a JS `Map` or ArkTS `collections.Map`), written one by
    /// one, each within the budget as it is read (so an endless iteration ends in a RangeError);
    /// false for any other object. Through its `forEach` with the native visitor (one engine call
    /// for the map, none per entry), or through its iterator when it has no `forEach` or its
    /// `forEach` refuses the visitor.
    fn map_entries(&mut self, obj: Value<'_>, at: &dyn Display) -> ArgResult<bool> {
        let (args, js) = (self.args, self.args.js);
        if !self.is_map(obj) {
            return Ok(false);
        }
        self.push(at, b"{")?;
        let read = match args.named_often(obj, c"forEach").filter(|f| js.kind(*f) == ValueType::Function) {
            Some(for_each) => self.map_for_each(js, obj, for_each, at)?,
            None => false,
        };
        if !read {
            js.take_exception();
            self.map_iterate(js, obj, at)?;
        }
        self.push(at, b"}")?;
        Ok(true)
    }

    /// `obj.forEach(visitor)`; false when `forEach` threw before it gave any entry.
    fn map_for_each(&mut self, js: Js<'_>, obj: Value<'_>, for_each: Value<'_>, at: &dyn Display) -> ArgResult<bool> {
        let args = self.args;
        let visitor = match args.visitor_function.get() {
            Some(f) => f,
            None => {
                let made = match args.visitor {
                    Some(kept) => kept.function(args.js),
                    None => Visitor::make(args.js),
                };
                let Some(f) = made else { return Err(self.blame.failed(js, at)) };
                args.visitor_function.set(Some(f));
                f
            }
        };
        let mut first = true;
        let visited = Visitor::for_each(js, obj, for_each, visitor, |js, value, key| {
            catch_unwind(AssertUnwindSafe(|| self.entry(js, key, value, at, &mut first)))
                .unwrap_or_else(|_| Err(self.blame.range_err(at, "could not be read (a panic in the binding)")))
        });
        match visited {
            Visited::All => Ok(true),
            Visited::Refused => Ok(false),
            Visited::Stopped(e) => Err(e),
            Visited::Failed => Err(self.blame.failed(js, at)),
        }
    }

    /// The entries of a Map-like without a usable `forEach`, through its iterator.
    fn map_iterate(&mut self, js: Js<'_>, obj: Value<'_>, at: &dyn Display) -> ArgResult<()> {
        let blame = self.blame;
        let field = |o, name| js.named(o, name).ok_or_else(|| blame.failed(js, at));
        let entries = field(obj, c"entries")?;
        let iter = js.call(obj, entries, []).filter(|i| js.kind(*i) == ValueType::Object);
        let iter = iter.ok_or_else(|| self.blame.failed(js, at))?;
        let next = field(iter, c"next")?;
        let mut first = true;
        loop {
            let step = js.call(iter, next, []).filter(|s| js.kind(*s) == ValueType::Object);
            let step = step.ok_or_else(|| self.blame.failed(js, at))?;
            let done = field(step, c"done")?;
            if js.kind(done) == ValueType::Boolean && js.boolean_of(done).ok_or_else(|| self.blame.failed(js, at))? {
                return Ok(());
            }
            let pair = field(step, c"value")?;
            let (k, v) = (field(pair, c"0")?, field(pair, c"1")?);
            self.entry(js, k, v, at, &mut first)?;
        }
    }

    /// One entry of a Map-like.
    fn entry(
        &mut self,
        js: Js<'_>,
        key: Value<'_>,
        value: Value<'_>,
        at: &dyn Display,
        first: &mut bool,
    ) -> ArgResult<()> {
        if js.kind(key) != ValueType::String {
            return Err(self.blame.type_err(at, "must be a Map with string keys"));
        }
        // Every entry takes at least 4 bytes: an endless iteration of empty keys still ends.
        self.room(at, 4)?;
        self.member(js, key, value, at, 0, first)
    }

    /// The text as the engine wrote it, made valid UTF-8 (ArkTS writes a lone surrogate as bytes
    /// that are not UTF-8; JSON punctuation is ASCII, so a replacement never touches it).
    fn text(&self) -> std::borrow::Cow<'_, str> {
        from_engine_utf8(&self.out)
    }

    fn finish(mut self) -> Attrs {
        let attrs = Attrs::from_json_object(self.text().into_owned());
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

impl Drop for Encoder<'_, '_> {
    /// An encoder dropped on an error gives its buffer back too.
    fn drop(&mut self) {
        self.give_back();
    }
}

/// `parent.key` in an error message, the key read from the engine only when a message is built.
struct KeyPath<'a, 'c> {
    js: Js<'c>,
    parent: &'a dyn Display,
    key: Value<'c>,
}

impl Display for KeyPath<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = owned_text::<String>(self.js, self.key).unwrap_or_default();
        write!(f, "{}", Sub::key(&self.parent, &key))
    }
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

impl Args<'_> {
    /// Attributes: `undefined`/`null` → none; a plain object (or a Sendable object, read by its
    /// properties) → its own enumerable properties; a `Map` (or `collections.Map`) → its entries.
    /// Values must be JSON-like; `undefined` members are skipped as `JSON.stringify` does, Dates
    /// become their epoch milliseconds. The text may not exceed `max_bytes`.
    pub fn attributes(&self, v: Value<'_>, arg: impl Display + Copy, max_bytes: usize) -> ArgResult<Attrs> {
        self.object_of(v, &arg, max_bytes, 0)
    }

    /// Attributes as values (a user's `extra`): read as [`Args::attributes`], then parsed.
    pub fn attribute_map(&self, v: Value<'_>, arg: impl Display + Copy, max_bytes: usize) -> ArgResult<Attributes> {
        Ok(self.attributes(v, arg, max_bytes)?.to_map())
    }

    /// A whole document (what the event mapper returns), read like attributes. Attributes sit one
    /// level down in it (`context`, `usr`), so it may nest one level deeper than attributes may:
    /// otherwise a document carrying the deepest attributes accepted could not be read back, and
    /// the mapper's changes (a redaction) were dropped in favour of the unchanged document.
    pub fn document(&self, v: Value<'_>, arg: impl Display + Copy, max_bytes: usize) -> ArgResult<Attributes> {
        Ok(self.object_of(v, &arg, max_bytes, 1)?.to_map())
    }

    fn object_of(&self, v: Value<'_>, arg: &dyn Display, max_bytes: usize, extra_depth: usize) -> ArgResult<Attrs> {
        match self.kind(v) {
            ValueType::Undefined | ValueType::Null => Ok(Attrs::default()),
            ValueType::Object => {
                if self.js.is_array(v) {
                    return Err(self.type_err(arg, "must be an object of attributes, got an array"));
                }
                let mut enc = Encoder::new(self, max_bytes, extra_depth);
                if enc.map_entries(v, arg)? {
                    let attrs = enc.finish();
                    // A custom Map-like may repeat a key: keep the last, as a Map would.
                    return Ok(if has_repeated_key(&attrs) { Attrs::from_map(&attrs.to_map()) } else { attrs });
                }
                // Its kind is known (an object, not an array): its members at once. A Date has
                // none, as JSON.stringify's object members would be.
                enc.members(self.js, v, arg, 0)?;
                Ok(enc.finish())
            }
            t => Err(self.type_err(arg, format_args!("must be an object of attributes, got {}", kind_name(t)))),
        }
    }

    /// One attribute value on its own (`addAttribute`'s): the checks and the budget of a value
    /// inside an attribute map; `undefined` is refused (it would set nothing).
    pub fn attribute_value(&self, v: Value<'_>, arg: impl Display + Copy, max_bytes: usize) -> ArgResult<Json> {
        let mut enc = Encoder::new(self, max_bytes, 0);
        if !enc.value(self.js, v, &arg, 1)? {
            return Err(self.type_err(arg, "must not be undefined"));
        }
        serde_json::from_str(&enc.text()).map_err(|e| self.range_err(arg, format_args!("cannot be read back: {e}")))
    }
}
