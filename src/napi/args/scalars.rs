//! Strings, numbers, booleans and closed sets of strings.

use std::fmt::Display;

use std::borrow::Cow;

use super::{kind_name, ArgError, ArgResult, Args};
use crate::core::text::{from_engine_utf8, Text};
use crate::napi::js::{Js, Value, ValueType};

/// Strings up to about this many UTF-8 bytes are copied through a stack buffer in one engine call;
/// longer ones take a length query first. 1 KiB covers names, keys and typical attribute values.
pub const STACK_STRING_BYTES: usize = 1024;

/// A JS string's text as `T`. Most strings fit a stack buffer: one engine call, then `T` makes the
/// only allocation, if any; a longer one is copied into a buffer `T` takes over. A lone surrogate
/// is U+FFFD on every engine ([`from_engine_utf8`]). None when the engine refused the value.
pub(super) fn owned_text<T: for<'a> From<&'a str> + From<String>>(js: Js<'_>, v: Value<'_>) -> Option<T> {
    let short = js.short_utf8::<STACK_STRING_BYTES, _>(v, |bytes| bytes.map(|b| T::from(&*from_engine_utf8(b))))?;
    if let Some(text) = short {
        return Some(text);
    }
    let mut buf = Vec::new();
    js.append_utf8(v, &mut buf, STACK_STRING_BYTES).ok()?;
    Some(match from_engine_utf8(&buf) {
        Cow::Borrowed(_) => {
            buf.shrink_to_fit();
            // Valid: checked by from_engine_utf8 just above.
            T::from(String::from_utf8(buf).unwrap_or_default())
        }
        Cow::Owned(text) => T::from(text),
    })
}

impl Args<'_> {
    /// A JS string as an owned `String` of its exact size (a key, a message: kept with the event,
    /// so no spare capacity).
    pub fn raw_string(&self, v: Value<'_>, arg: impl Display + Copy) -> ArgResult<String> {
        self.text_of(v, arg)
    }

    fn text_of<T: for<'a> From<&'a str> + From<String>>(&self, v: Value<'_>, arg: impl Display + Copy) -> ArgResult<T> {
        owned_text(self.js, v).ok_or_else(|| self.failed(arg))
    }

    /// A required string.
    pub fn string(&self, v: Value<'_>, arg: impl Display + Copy) -> ArgResult<String> {
        self.string_as(v, arg)
    }

    /// A required string's UTF-8 as the engine writes it, appended to `out` (a buffer with room
    /// takes it in one engine call); the caller makes it valid ([`from_engine_utf8`]).
    pub fn string_bytes(&self, v: Value<'_>, arg: impl Display + Copy, out: &mut Vec<u8>) -> ArgResult<()> {
        self.js
            .append_utf8(v, out, STACK_STRING_BYTES)
            .map_err(|()| self.refused(v, arg, ValueType::String, "a string"))
    }

    /// A string argument as `T` (a `String`, or a [`Text`] that holds a short one inline).
    fn string_as<T: for<'a> From<&'a str> + From<String>>(
        &self,
        v: Value<'_>,
        arg: impl Display + Copy,
    ) -> ArgResult<T> {
        // Read first: the engine refuses a value of another kind with a status (both engines,
        // docs/arkts-napi.md), and only then is its kind asked for, for the message.
        owned_text(self.js, v).ok_or_else(|| self.refused(v, arg, ValueType::String, "a string"))
    }

    /// Why the engine refused to read `v` as `expected`: a `TypeError` naming its kind, or (a
    /// value of the right kind the engine still could not read) a plain failure.
    fn refused(&self, v: Value<'_>, arg: impl Display + Copy, expected: ValueType, what: &str) -> ArgError {
        match self.kind(v) {
            t if t == expected => self.failed(arg),
            t => self.type_err(arg, format_args!("must be {what}, got {}", kind_name(t))),
        }
    }

    /// A string no longer than `max` bytes.
    pub fn bounded_string(&self, v: Value<'_>, arg: impl Display + Copy, max: usize) -> ArgResult<String> {
        let s = self.string(v, arg)?;
        self.within(arg, s.len(), max)?;
        Ok(s)
    }

    /// A string no longer than `max` bytes, as a [`Text`]: a short one takes no allocation.
    pub fn bounded_text(&self, v: Value<'_>, arg: impl Display + Copy, max: usize) -> ArgResult<Text> {
        let text: Text = self.string_as(v, arg)?;
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
    pub fn opt_string(&self, v: Value<'_>, arg: impl Display + Copy) -> ArgResult<Option<String>> {
        match self.kind(v) {
            ValueType::Undefined | ValueType::Null => Ok(None),
            _ => self.string(v, arg).map(Some),
        }
    }

    /// A finite number.
    pub fn number(&self, v: Value<'_>, arg: impl Display + Copy) -> ArgResult<f64> {
        let n = self.js.number_of(v).ok_or_else(|| self.refused(v, arg, ValueType::Number, "a number"))?;
        if !n.is_finite() {
            return Err(self.range_err(arg, format_args!("must be finite, got {n}")));
        }
        Ok(n)
    }

    /// An optional number, NaN and infinities included (the caller decides what they mean):
    /// `undefined` and `null` are None.
    pub fn opt_any_number(&self, v: Value<'_>, arg: impl Display + Copy) -> ArgResult<Option<f64>> {
        match self.kind(v) {
            ValueType::Undefined | ValueType::Null => Ok(None),
            ValueType::Number => self.js.number_of(v).map(Some).ok_or_else(|| self.failed(arg)),
            t => Err(self.type_err(arg, format_args!("must be a number, got {}", kind_name(t)))),
        }
    }

    /// An integer within `[min, max]`.
    pub fn integer(&self, v: Value<'_>, arg: impl Display + Copy, min: f64, max: f64) -> ArgResult<u64> {
        let n = self.number(v, arg)?;
        if n.fract() != 0.0 || n < min || n > max {
            return Err(self.range_err(arg, format_args!("must be an integer from {min} to {max}, got {n}")));
        }
        Ok(n as u64)
    }

    pub fn opt_integer(&self, v: Value<'_>, arg: impl Display + Copy, min: f64, max: f64) -> ArgResult<Option<u64>> {
        self.optional(v, |v| self.integer(v, arg, min, max))
    }

    pub fn boolean(&self, v: Value<'_>, arg: impl Display + Copy) -> ArgResult<bool> {
        self.js.boolean_of(v).ok_or_else(|| self.refused(v, arg, ValueType::Boolean, "a boolean"))
    }

    /// A string out of a closed set, parsed by `parse`.
    pub fn enumerated<T>(
        &self,
        v: Value<'_>,
        arg: impl Display + Copy,
        parse: fn(&str) -> Option<T>,
        allowed: &[&str],
    ) -> ArgResult<T> {
        let t = self.kind(v);
        if t != ValueType::String {
            return Err(self.type_err(arg, format_args!("must be a string, got {}", kind_name(t))));
        }
        // The set's names are short: read into a small stack buffer, no allocation. A longer
        // string cannot be one of them (it is read whole only for the error message).
        const SHORT: usize = 32;
        let parsed = self
            .js
            .short_utf8::<SHORT, _>(v, |bytes| bytes.and_then(|b| parse(&from_engine_utf8(b))))
            .ok_or_else(|| self.failed(arg))?;
        parsed.map_or_else(
            || {
                let s = self.raw_string(v, arg)?;
                Err(self.range_err(arg, format_args!("must be one of {}, got {s:?}", allowed.join(", "))))
            },
            Ok,
        )
    }
}
