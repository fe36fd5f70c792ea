//! The calls a JS thread's capture buffer hands over in one crossing (docs/how-it-works.md,
//! "Capture in JS").
//! (Longer than most files: one format's parser, whose every refusal is tested here; the tests are
//! a third of it.)
//!
//! The facade's `CallBuffer` checks and snapshots each call in JS, stamps it with its JS clock,
//! and at the end of the turn, in a slice, or before a drain, hands a run of them to the pipeline
//! as one JSON text made by `JSON.stringify`:
//!
//! ```text
//! [now, [code, stamp, ...arguments], [code, stamp, ...arguments], ...]
//! ```
//!
//! `now` and every `stamp` are milliseconds on the same JS clock (any origin, fractions allowed):
//! a call's age at the handover is `now - stamp`, which the binding turns into its wall-clock and
//! monotonic times. The codes and their arguments:
//!
//! | code | call | arguments after the stamp |
//! |---|---|---|
//! | 0 | `addAction` | type, name, keys, values |
//! | 1 | `startView` | key, name, keys, values |
//! | 2 | `stopView` | key, keys, values |
//! | 3 | `startResource` | key, method, url, keys, values |
//! | 4 | `stopResource` | key, statusCode, kind, sizeBytes, keys, values, timing, trace |
//! | 5 | `addTiming` | name |
//!
//! A call's attributes are two fields, `keys` and `values`: `null, null` for none; an array of the
//! keys (strings) and one of their values (JSON values) in the same order; or, for keys a call
//! before it in the same text gave already, a **shape**: the index of that keys array among the
//! text's keys arrays (0 for the first, in order), and the values. A burst's calls mostly carry the
//! same keys, which are then written once per text instead of once per call
//! (docs/benchmarks.md, "The handover's text"); the attributes are rebuilt here as the JSON object
//! `{"k1":v1,...}` that the event documents take. `sizeBytes` is a number or `null`; `timing` is `null` or the
//! resource's phases flat, `[start, duration]` in ms for each of redirect, dns, connect, ssl,
//! firstByte and download in that order (12 elements; a phase that did not happen is two `null`s);
//! `trace` is `null` or `[traceId, spanId]`, the hex of the request's `traceparent`.
//!
//! **Pieces.** A long string among a call's values (JSON.stringify writes a string character by
//! character, so a long one is most of what a run costs it) may travel beside the text instead of
//! in it: the value is then its length in UTF-16 units, and the shape says which values are so
//! moved, by a mask after its keys (`["k1","k2",mask]`: bit `i` set for each value `i` moved, at
//! most the first 31; no mask, none). The strings themselves follow the text in the same string,
//! in the run's order, each after a [`PIECE_SEPARATOR`], a line feed (`[text, ...pieces]
//! .join("\n")`: a `JSON.stringify` text read on its own is copied once more first, since V8
//! flattens the string it made in parts before a crossing can read it, while `join` copies it as
//! it is). `JSON.stringify` never writes a line feed raw (it writes no whitespace and escapes
//! every control character in a string), so the first one ends the text; and no two pieces
//! around one make a surrogate pair.
//!
//! The JS side has already refused every bad argument at its call, so text that breaks these
//! rules is not a host's mistake but a caller of `ingest` that is not the facade: it is refused
//! whole, and nothing is recorded.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::attrs::Attrs;
use super::event::{ActionType, EventKind, HttpMethod, ResourceDetails, ResourceKind, ResourceTiming, TraceIds};
use super::json_text::{any_needs_escape, write_str};
use super::text::from_engine_utf8;

/// One handed-over call: how long before the handover it was made, and what it was.
#[derive(Debug, PartialEq)]
pub struct Handed {
    /// Nanoseconds between the call and the handover (never negative).
    pub age_ns: u64,
    pub kind: EventKind,
    pub attrs: Attrs,
}

/// Why a handover text was refused.
#[derive(Debug, PartialEq, Eq)]
pub struct HandoverError(pub String);

impl fmt::Display for HandoverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Largest status code a resource may carry (as `stopResource` checks it).
const MAX_STATUS_CODE: f64 = 999.0;
/// Largest size in bytes: the largest integer a JS number holds exactly.
const MAX_SIZE_BYTES: f64 = 9_007_199_254_740_991.0;

/// What ends the text and separates two pieces (see the module doc).
pub const PIECE_SEPARATOR: char = '\n';

/// Parses a handover as the engine wrote it in UTF-8 ([`from_engine_utf8`]: a lone surrogate, or
/// any byte that is not UTF-8, is U+FFFD): the text, then, after the first line feed, its pieces
/// if it has any; as [`parse_with_pieces`] does.
pub fn parse_engine_utf8(bytes: &[u8], max_bytes: usize) -> Result<Vec<Handed>, HandoverError> {
    let (text, pieces) = match memchr::memchr(PIECE_SEPARATOR as u8, bytes) {
        Some(end) => (&bytes[..end], &bytes[end + 1..]),
        None => (bytes, &[][..]),
    };
    parse_with_pieces(&from_engine_utf8(text), &from_engine_utf8(pieces), max_bytes)
}

/// Parses a handover text that has no pieces. `max_bytes` (`eventMaxBytes`) bounds each string
/// and each call's attributes, as the call's own checks did.
pub fn parse(text: &str, max_bytes: usize) -> Result<Vec<Handed>, HandoverError> {
    parse_with_pieces(text, "", max_bytes)
}

/// Parses a handover text and its pieces (the module doc): every piece must be taken by a value
/// of the text, in order.
pub fn parse_with_pieces(text: &str, pieces: &str, max_bytes: usize) -> Result<Vec<Handed>, HandoverError> {
    let text = without_lone_surrogates(text);
    let mut de = serde_json::Deserializer::from_str(&text);
    let mut pieces = Pieces { text: pieces, at: 0, taken: 0 };
    let calls =
        de.deserialize_seq(Calls { max_bytes, pieces: &mut pieces }).map_err(|e| HandoverError(e.to_string()))?;
    de.end().map_err(|e| HandoverError(e.to_string()))?;
    if pieces.at < pieces.text.len() {
        return Err(HandoverError(format!(
            "{} bytes of pieces left after the {} that the calls took",
            pieces.text.len() - pieces.at,
            pieces.taken
        )));
    }
    Ok(calls)
}

/// A run's pieces, taken in order.
struct Pieces<'t> {
    text: &'t str,
    /// Where the next piece (or its separator) starts, in bytes.
    at: usize,
    taken: usize,
}

impl<'t> Pieces<'t> {
    /// The next piece, `units` UTF-16 units long (a character past U+FFFF is two, as JS counts).
    fn take(&mut self, units: usize) -> Result<&'t str, String> {
        let mut rest = &self.text[self.at..];
        if self.taken > 0 {
            rest = rest
                .strip_prefix(PIECE_SEPARATOR)
                .ok_or_else(|| format!("piece {} does not follow a separator", self.taken))?;
        }
        let start = self.text.len() - rest.len();
        let end = match rest.as_bytes().get(..units) {
            // Almost every piece: ASCII, a byte a unit.
            Some(head) if head.is_ascii() => start + units,
            _ => {
                let mut counted = 0;
                let mut end = rest.len();
                for (i, c) in rest.char_indices() {
                    if counted >= units {
                        end = i;
                        break;
                    }
                    counted += c.len_utf16();
                }
                if counted != units {
                    return Err(format!("piece {} is not {units} units long", self.taken));
                }
                start + end
            }
        };
        self.at = end;
        self.taken += 1;
        Ok(&self.text[start..end])
    }
}

struct Calls<'p, 't> {
    max_bytes: usize,
    pieces: &'p mut Pieces<'t>,
}

impl<'de> Visitor<'de> for Calls<'_, '_> {
    type Value = Vec<Handed>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array [now, ...calls]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let now: f64 = seq.next_element()?.ok_or_else(|| de::Error::custom("the array has no `now`"))?;
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut shapes = Shapes::default();
        while let Some(call) = seq.next_element_seed(CallSeed {
            now,
            max_bytes: self.max_bytes,
            index: out.len(),
            shapes: &mut shapes,
            pieces: &mut *self.pieces,
        })? {
            out.push(call);
        }
        Ok(out)
    }
}

/// The keys arrays a text has given so far, each key as its JSON text (quoted, escaped), all in
/// one list (`shapes` holds where each array starts, how many keys it has and its mask of moved
/// values), and the values of the call being read: three buffers for every call of the text.
#[derive(Default)]
struct Shapes<'de> {
    keys: Vec<&'de str>,
    shapes: Vec<Shape>,
    values: Vec<&'de RawValue>,
}

/// One keys array of a text: where its keys start in [`Shapes::keys`], how many, and which of
/// its values are pieces.
#[derive(Clone, Copy)]
struct Shape {
    start: usize,
    count: usize,
    moved: u32,
}

/// Room the buffers of [`Shapes`] take at their first use: a call's attributes have a few members.
const FIRST_MEMBERS: usize = 8;

/// What a call's `keys` field gave.
enum Keys {
    /// `null`: no attributes.
    None,
    /// An array of keys, or the index of one before it: a shape of [`Shapes`].
    Shape(usize),
}

impl<'de> Shapes<'de> {
    /// A call's attributes from its `keys` and `values` fields (read by [`KeysSeed`] and
    /// [`ValuesSeed`]; `values` says whether it was an array, now in `self.values`), the values
    /// the mask names taken from `pieces`: see the module doc.
    fn attrs(&self, keys: Keys, values: bool, pieces: &mut Pieces<'_>, max: usize) -> Result<Attrs, String> {
        let shape = match keys {
            Keys::None if !values => return Ok(Attrs::default()),
            Keys::None => return Err("keys must be an array of strings or a shape's index".to_owned()),
            Keys::Shape(_) if !values => return Err("values must be an array".to_owned()),
            Keys::Shape(shape) => shape,
        };
        let Shape { start, count, moved } = self.shapes[shape];
        let (keys, values) = (&self.keys[start..start + count], &self.values);
        if values.len() != keys.len() {
            return Err(format!("gives {} values for {} keys", values.len(), keys.len()));
        }
        if keys.is_empty() {
            return Ok(Attrs::default());
        }
        // `{` and `}`, a colon a member and a comma between two (a piece's escapes are counted once
        // it is written).
        let len = keys.iter().zip(values).map(|(k, v)| k.len() + v.get().len() + 2).sum::<usize>() + 1;
        if len > max {
            return Err(format!("make the event larger than eventMaxBytes ({max} bytes)"));
        }
        let mut json = String::with_capacity(len);
        for (i, (k, v)) in keys.iter().zip(values).enumerate() {
            json.push(if i == 0 { '{' } else { ',' });
            json.push_str(k);
            json.push(':');
            if i >= MAX_MOVED_VALUES || moved & (1 << i) == 0 {
                json.push_str(v.get());
                continue;
            }
            let units = v.get().parse::<usize>().map_err(|_| format!("value {i} is a piece, not its length"))?;
            // Room for the piece: its units (its bytes, for ASCII) and quotes.
            json.reserve(units + 2);
            push_json_string(&mut json, pieces.take(units)?)?;
        }
        json.push('}');
        if moved != 0 && json.len() > max {
            return Err(format!("make the event larger than eventMaxBytes ({max} bytes)"));
        }
        Ok(Attrs::from_json_object(json))
    }
}

/// Most values one mask can name: bits 0 to 30, which JS's `1 << i` keeps a positive integer.
const MAX_MOVED_VALUES: usize = 31;

/// A shape's mask of moved values (the module doc), as its raw text: a positive integer naming
/// only values of the shape.
fn moved_mask(raw: &str, values: usize) -> Result<u32, String> {
    let named = values.min(MAX_MOVED_VALUES);
    match raw.parse::<u32>() {
        Ok(mask) if mask != 0 && mask >> named == 0 => Ok(mask),
        _ => {
            Err(format!("a mask of moved values must be an integer naming some of the first {named} values, got {raw}"))
        }
    }
}

/// Appends `s` as a JSON string, escaped as JSON.stringify writes the strings of the text.
fn push_json_string(json: &mut String, s: &str) -> Result<(), String> {
    if !any_needs_escape(s.as_bytes()) {
        json.push('"');
        json.push_str(s);
        json.push('"');
        return Ok(());
    }
    let mut escaped = Vec::with_capacity(s.len() + 8);
    write_str(&mut escaped, s);
    // Escapes are ASCII and the runs between them whole characters of `s`: always UTF-8.
    json.push_str(std::str::from_utf8(&escaped).map_err(|_| "a piece could not be escaped".to_owned())?);
    Ok(())
}

/// Reads a call's `keys` field in one pass: `null`, an array of strings (a new shape, its keys
/// kept as their JSON text) or the index of a shape before it.
struct KeysSeed<'s, 'de>(&'s mut Shapes<'de>);

/// A field's seed that is its own visitor, read as whatever the text holds (`deserialize_any`).
macro_rules! any_value_seed {
    ($seed:ident, $value:ty) => {
        impl<'de> de::DeserializeSeed<'de> for $seed<'_, 'de> {
            type Value = $value;

            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<$value, D::Error> {
                d.deserialize_any(self)
            }
        }
    };
}

any_value_seed!(KeysSeed, Keys);

impl<'de> Visitor<'de> for KeysSeed<'_, 'de> {
    type Value = Keys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the attributes' keys: null, an array of strings or a shape's index")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Keys, E> {
        Ok(Keys::None)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Keys, E> {
        let shapes = self.0.shapes.len();
        match usize::try_from(n) {
            Ok(i) if i < shapes => Ok(Keys::Shape(i)),
            _ => Err(E::custom(format!("shape {n} is not one of the {shapes} before it"))),
        }
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Keys, E> {
        Err(E::custom(format!("shape {n} is not one of the {} before it", self.0.shapes.len())))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Keys, E> {
        if n.fract() == 0.0 && n >= 0.0 && n < u64::MAX as f64 {
            return self.visit_u64(n as u64);
        }
        Err(E::custom(format!("shape {n} is not one of the {} before it", self.0.shapes.len())))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Keys, A::Error> {
        if self.0.keys.capacity() == 0 {
            self.0.keys.reserve(FIRST_MEMBERS);
        }
        let start = self.0.keys.len();
        let mut moved = 0;
        while let Some(key) = seq.next_element::<&'de RawValue>()? {
            let refused = if key.get().starts_with('"') {
                self.0.keys.push(key.get());
                continue;
            } else if !key.get().starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
                "keys must be an array of strings".to_owned()
            } else {
                // The shape's mask: its last element.
                match (moved_mask(key.get(), self.0.keys.len() - start), seq.next_element::<IgnoredAny>()?) {
                    (Ok(mask), None) => {
                        moved = mask;
                        break;
                    }
                    (Ok(_), Some(_)) => "a keys array's mask must be its last element".to_owned(),
                    (Err(why), _) => why,
                }
            };
            self.0.keys.truncate(start);
            return Err(de::Error::custom(refused));
        }
        self.0.shapes.push(Shape { start, count: self.0.keys.len() - start, moved });
        Ok(Keys::Shape(self.0.shapes.len() - 1))
    }
}

/// Reads a call's `values` field into a buffer as the raw text of each element: true for an
/// array, false for `null`.
struct ValuesSeed<'s, 'de>(&'s mut Vec<&'de RawValue>);

any_value_seed!(ValuesSeed, bool);

impl<'de> Visitor<'de> for ValuesSeed<'_, 'de> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the attributes' values, an array or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        self.0.clear();
        if self.0.capacity() == 0 {
            self.0.reserve(FIRST_MEMBERS);
        }
        while let Some(v) = seq.next_element::<&'de RawValue>()? {
            self.0.push(v);
        }
        Ok(true)
    }
}

struct CallSeed<'s, 'de, 't> {
    now: f64,
    max_bytes: usize,
    index: usize,
    shapes: &'s mut Shapes<'de>,
    pieces: &'s mut Pieces<'t>,
}

impl<'de> de::DeserializeSeed<'de> for CallSeed<'_, 'de, '_> {
    type Value = Handed;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Handed, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CallSeed<'_, 'de, '_> {
    type Value = Handed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a call [code, stamp, ...arguments]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Handed, A::Error> {
        let at = |what: &str| de::Error::custom(format!("call {}: {what}", self.index));
        let next = |seq: &mut A, what: &str| -> Result<Field<'de>, A::Error> {
            seq.next_element::<Field>()?.ok_or_else(|| at(&format!("has no {what}")))
        };
        let code = next(&mut seq, "code")?.number().ok_or_else(|| at("code must be a number"))?;
        let stamp =
            next(&mut seq, "stamp")?.number().filter(|s| s.is_finite()).ok_or_else(|| at("stamp must be a number"))?;
        let max = self.max_bytes;
        let text = |f: Field, what: &str| f.text(max).map_err(|why| at(&format!("{what} {why}")));
        let (shapes, pieces) = (self.shapes, self.pieces);
        let mut attrs = |seq: &mut A| -> Result<Attrs, A::Error> {
            let keys = seq.next_element_seed(KeysSeed(shapes))?.ok_or_else(|| at("has no keys"))?;
            let values = seq.next_element_seed(ValuesSeed(&mut shapes.values))?.ok_or_else(|| at("has no values"))?;
            shapes.attrs(keys, values, pieces, max).map_err(|why| at(&format!("attributes: {why}")))
        };
        let (kind, attrs) = match code as u8 {
            0 if code == 0.0 => {
                let t = text(next(&mut seq, "type")?, "type")?;
                let action_type = ActionType::parse(&t).ok_or_else(|| at(&format!("unknown action type {t:?}")))?;
                let name = text(next(&mut seq, "name")?, "name")?;
                (EventKind::Action { action_type, name: name.into() }, attrs(&mut seq)?)
            }
            1 if code == 1.0 => {
                let key = text(next(&mut seq, "key")?, "key")?;
                let name = text(next(&mut seq, "name")?, "name")?;
                (EventKind::StartView { key, name }, attrs(&mut seq)?)
            }
            2 if code == 2.0 => (EventKind::StopView { key: text(next(&mut seq, "key")?, "key")? }, attrs(&mut seq)?),
            3 if code == 3.0 => {
                let key = text(next(&mut seq, "key")?, "key")?;
                let m = text(next(&mut seq, "method")?, "method")?;
                let method = HttpMethod::parse_any_case(&m).ok_or_else(|| at(&format!("unknown method {m:?}")))?;
                let url = text(next(&mut seq, "url")?, "url")?;
                (EventKind::StartResource { key, method, url }, attrs(&mut seq)?)
            }
            4 if code == 4.0 => {
                let key = text(next(&mut seq, "key")?, "key")?;
                let status = next(&mut seq, "statusCode")?.number().filter(|s| integer_within(*s, MAX_STATUS_CODE));
                let status_code = status.ok_or_else(|| at("statusCode must be an integer from 0 to 999"))? as u16;
                let k = text(next(&mut seq, "kind")?, "kind")?;
                let kind = ResourceKind::parse(&k).ok_or_else(|| at(&format!("unknown resource kind {k:?}")))?;
                let size = match next(&mut seq, "sizeBytes")? {
                    Field::Null => None,
                    f => Some(
                        f.number()
                            .filter(|s| integer_within(*s, MAX_SIZE_BYTES))
                            .ok_or_else(|| at("sizeBytes must be null or an integer from 0 to 2^53 - 1"))?
                            as u64,
                    ),
                };
                let attrs = attrs(&mut seq)?;
                let timing = match next(&mut seq, "timing")? {
                    Field::Null => None,
                    f => Some(f.timing().map_err(|why| at(&format!("timing {why}")))?),
                };
                let trace = match next(&mut seq, "trace")? {
                    Field::Null => None,
                    f => Some(f.trace().map_err(|why| at(&format!("trace {why}")))?),
                };
                let details = (timing.is_some() || trace.is_some())
                    .then(|| Box::new(ResourceDetails { timing: timing.unwrap_or_default(), trace }));
                (EventKind::StopResource { key, status_code, kind, size, details }, attrs)
            }
            5 if code == 5.0 => {
                (EventKind::AddTiming { name: text(next(&mut seq, "name")?, "name")? }, Attrs::default())
            }
            _ => return Err(at(&format!("unknown code {code}"))),
        };
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(at("has more elements than its code takes"));
        }
        let age_ms = (self.now - stamp).max(0.0);
        // Whole nanoseconds; an age past u64 (a broken clock) saturates.
        Ok(Handed { age_ns: (age_ms * 1e6) as u64, kind, attrs })
    }
}

/// `JSON.stringify` writes a lone surrogate of a JS string as its escape (`"\ud800"`), which is
/// not a Unicode scalar value, so no Rust string (and no intake) takes it: each becomes U+FFFD,
/// as the native methods' copy of such a string makes it. Escaped pairs are kept. Text without
/// any surrogate escape is returned as it is (JSON.stringify writes other characters raw).
fn without_lone_surrogates(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\ud") && !text.contains("\\uD") {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let hex_at = |i: usize| -> Option<u16> {
        let digits = b.get(i + 2..i + 6)?;
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        // Backslashes only occur in JSON strings, each starting an escape of two or six bytes.
        if b.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let unit = hex_at(i);
        let lone = match unit {
            Some(0xD800..=0xDBFF) => {
                let low =
                    if b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u') { hex_at(i + 6) } else { None };
                if matches!(low, Some(0xDC00..=0xDFFF)) {
                    i += 12;
                    continue;
                }
                true
            }
            Some(0xDC00..=0xDFFF) => true,
            _ => false,
        };
        if lone {
            out.push_str(&text[copied..i]);
            out.push_str("\\ufffd");
            copied = i + 6;
        }
        i += 6;
    }
    out.push_str(&text[copied.min(text.len())..]);
    std::borrow::Cow::Owned(out)
}

fn integer_within(n: f64, max: f64) -> bool {
    n.fract() == 0.0 && (0.0..=max).contains(&n)
}

/// One element of a call: kept as its raw text until its code says what it must be.
enum Field<'de> {
    Null,
    Number(f64),
    String(String),
    Raw(&'de RawValue),
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        let text = raw.get();
        Ok(match text.as_bytes().first() {
            Some(b'n') if text == "null" => Field::Null,
            Some(b'"') => Field::String(serde_json::from_str(text).map_err(de::Error::custom)?),
            Some(b'-' | b'0'..=b'9') => Field::Number(serde_json::from_str(text).map_err(de::Error::custom)?),
            _ => Field::Raw(raw),
        })
    }
}

impl Field<'_> {
    fn number(&self) -> Option<f64> {
        match self {
            Field::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// `[start, duration, ...]` for the six phases, as the module doc lists them.
    fn timing(self) -> Result<ResourceTiming, String> {
        let Field::Raw(raw) = self else { return Err("must be null or an array".to_owned()) };
        let flat: Vec<Option<f64>> =
            serde_json::from_str(raw.get()).map_err(|_| "must be an array of numbers and nulls".to_owned())?;
        if flat.len() != 12 {
            return Err(format!("has {} elements, not 12", flat.len()));
        }
        let mut phases = [None; 6];
        for (i, pair) in flat.chunks_exact(2).enumerate() {
            phases[i] = match (pair[0], pair[1]) {
                (None, None) => None,
                (Some(start), Some(duration)) => Some((start, duration)),
                _ => return Err("gives a phase's start without its duration, or the other way".to_owned()),
            };
        }
        ResourceTiming::from_ms(phases)
    }

    /// `[traceId, spanId]` in hex.
    fn trace(self) -> Result<TraceIds, String> {
        let Field::Raw(raw) = self else { return Err("must be null or an array".to_owned()) };
        let ids: (String, String) =
            serde_json::from_str(raw.get()).map_err(|_| "must be [traceId, spanId], two strings".to_owned())?;
        TraceIds::from_hex(&ids.0, &ids.1)
    }

    fn text(self, max: usize) -> Result<String, String> {
        match self {
            Field::String(s) if s.len() <= max => Ok(s),
            Field::String(s) => Err(format!("is {} bytes, more than the {max} allowed", s.len())),
            _ => Err("must be a string".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::event::Phase;

    #[test]
    fn calls_come_out_in_order_with_their_ages_and_attributes_as_written() {
        let text = r#"[1000.5,[0,990.5,"tap","buy",["n","s"],[1,"a\"b"]],[1,1000.5,"k","Home",null,null],
            [4,1000,"r",200,"xhr",null,null,null,null,null],[5,999,"ready"]]"#;
        let calls = parse(text, 1024).unwrap();
        assert_eq!(calls.len(), 4);
        assert_eq!(calls[0].age_ns, 10_000_000);
        assert_eq!(calls[0].kind, EventKind::Action { action_type: ActionType::Tap, name: "buy".into() });
        assert_eq!(calls[0].attrs.as_json(), r#"{"n":1,"s":"a\"b"}"#);
        assert_eq!(calls[1].age_ns, 0);
        assert!(calls[1].attrs.is_empty());
        assert!(matches!(calls[2].kind, EventKind::StopResource { status_code: 200, size: None, .. }));
        assert_eq!(calls[3].kind, EventKind::AddTiming { name: "ready".into() });
    }

    #[test]
    fn a_shape_gives_the_keys_of_an_earlier_call_and_attributes_come_out_as_objects() {
        let text = r#"[9,[0,1,"tap","a",["k","n"],["x",{"deep":[1]}]],[2,2,"v",["z"],[true]],
            [0,3,"tap","b",0,["y",2]],[1,4,"v","V",1,[null]],[2,5,"v",[],[]],[2,6,"v",2,[]]]"#;
        let calls = parse(text, 1024).unwrap();
        let json: Vec<_> = calls.iter().map(|c| c.attrs.as_json().to_owned()).collect();
        assert_eq!(
            json,
            [r#"{"k":"x","n":{"deep":[1]}}"#, r#"{"z":true}"#, r#"{"k":"y","n":2}"#, r#"{"z":null}"#, "{}", "{}"]
        );
        assert!(calls[4].attrs.is_empty() && calls[5].attrs.is_empty());
        // The bound is the rebuilt object's: {"k":"0123456"} is 15 bytes.
        assert!(parse(r#"[1,[0,1,"tap","a",["k"],["0123456"]]]"#, 15).is_ok());
        assert!(parse(r#"[1,[0,1,"tap","a",["k"],["01234567"]]]"#, 15).is_err());
    }

    #[test]
    fn pieces_give_the_values_the_mask_names_in_order_as_the_text_would_have() {
        let long = "a \"quoted\" \\ line\nwith \u{1}, a tab\t, \u{e9}t\u{e9} and \u{1f600}";
        let units = long.encode_utf16().count();
        let inline = format!(
            r#"[1,[0,1,"tap","a",["p","n","q"],[{},2,"x"]],[2,2,"v",0,["y",3,{}]],[0,3,"tap","b",0,["é",5,"z"]]]"#,
            serde_json::to_string(long).unwrap(),
            serde_json::to_string("plain").unwrap()
        );
        // The third call's shape is the first's, its mask included.
        let moved = format!(
            r#"[1,[0,1,"tap","a",["p","n","q",1],[{units},2,"x"]],[2,2,"v",["p","n","q",4],["y",3,5]],[0,3,"tap","b",0,[1,5,"z"]]]"#
        );
        let pieces = format!("{long}\nplain\né");
        let expected = parse(&inline, 1024).unwrap();
        assert_eq!(parse_with_pieces(&moved, &pieces, 1024).unwrap(), expected);
        assert_eq!(
            expected[0].attrs.as_json(),
            format!(r#"{{"p":{},"n":2,"q":"x"}}"#, serde_json::to_string(long).unwrap())
        );
        // As the engine hands them over: after the text's first line feed.
        let bytes = [moved.as_bytes(), b"\n", pieces.as_bytes()].concat();
        assert_eq!(parse_engine_utf8(&bytes, 1024).unwrap(), expected);
        // A piece of only a separator's character, and an empty one.
        let calls = parse_with_pieces(r#"[1,[2,1,"v",["a","b",3],[1,0]]]"#, "\n\n", 64).unwrap();
        assert_eq!(calls[0].attrs.as_json(), r#"{"a":"\n","b":""}"#);
        // The bound counts a piece as written: {"k":"0123456"} is 15 bytes.
        assert!(parse_with_pieces(r#"[1,[2,1,"v",["k",1],[7]]]"#, "0123456", 15).is_ok());
        assert!(parse_with_pieces(r#"[1,[2,1,"v",["k",1],[8]]]"#, "01234567", 15).is_err());
    }

    #[test]
    fn lone_surrogates_at_the_ends_of_two_pieces_stay_two_replacement_characters() {
        // "a\uD83D" and "\uDE00b" as Node writes them: each lone surrogate already U+FFFD.
        let calls = parse_with_pieces(r#"[1,[2,1,"v",["x","y",3],[2,2]]]"#, "a\u{fffd}\n\u{fffd}b", 64).unwrap();
        let decoded: serde_json::Value = serde_json::from_str(calls[0].attrs.as_json()).unwrap();
        assert_eq!(decoded, serde_json::json!({"x": "a\u{fffd}", "y": "\u{fffd}b"}));
        // As ArkTS writes them: the surrogates' own three bytes each.
        let bytes = b"[1,[2,1,\"v\",[\"x\",\"y\",3],[2,2]]]\na\xED\xA0\xBD\n\xED\xB8\x80b";
        assert_eq!(parse_engine_utf8(bytes, 64).unwrap(), calls);
        // U+0000 in a piece, as modified UTF-8 (C0 80) too: one unit either way.
        for nul in [&b"\0"[..], b"\xC0\x80"] {
            let bytes = [&b"[1,[2,1,\"v\",[\"x\",\"y\",3],[3,1]]]\na"[..], nul, b"b\nc"].concat();
            let calls = parse_engine_utf8(&bytes, 64).unwrap();
            assert_eq!(calls[0].attrs.as_json(), r#"{"x":"a\u0000b","y":"c"}"#);
        }
    }

    #[test]
    fn the_text_ends_at_its_first_line_feed_and_pieces_may_hold_any_character() {
        let moved = "[1,[0,1,\"tap\",\"a\\nb \u{e9}\u{1f600}\",[\"p\",\"q\",3],[3,5]]]";
        let bytes = format!("{moved}\nx\ny\n\0\u{e9}\n\u{1f600}");
        let calls = parse_engine_utf8(bytes.as_bytes(), 64).unwrap();
        assert_eq!(
            calls[0].kind,
            EventKind::Action { action_type: ActionType::Tap, name: "a\nb \u{e9}\u{1f600}".into() }
        );
        assert_eq!(calls[0].attrs.as_json(), "{\"p\":\"x\\ny\",\"q\":\"\\u0000\u{e9}\\n\u{1f600}\"}");
        // No line feed: the whole string is the text.
        assert_eq!(parse_engine_utf8(br#"[1,[5,1,"ready"]]"#, 64).unwrap().len(), 1);
    }

    #[test]
    fn pieces_that_do_not_match_their_values_are_refused_whole() {
        for (text, pieces, why) in [
            (r#"[1,[2,1,"v",["k",1],[5]]]"#, "abc", "piece 0 is not 5 units long"),
            (r#"[1,[2,1,"v",["k",1],[3]]]"#, "\u{1f600}", "piece 0 is not 3 units long"),
            (r#"[1,[2,1,"v",["k",1],[1]]]"#, "\u{1f600}", "piece 0 is not 1 units long"),
            (r#"[1,[2,1,"v",["k","l",3],[1,1]]]"#, "ab", "piece 1 does not follow a separator"),
            (r#"[1,[2,1,"v",["k",1],[1]]]"#, "a\nb", "2 bytes of pieces left after the 1"),
            (r#"[1,[2,1,"v",["k"],["a"]]]"#, "b", "1 bytes of pieces left after the 0"),
            (r#"[1,[2,1,"v",["k",1],["a"]]]"#, "a", "value 0 is a piece, not its length"),
            (r#"[1,[2,1,"v",["k",2],[1]]]"#, "a", "naming some of the first 1 values, got 2"),
            (r#"[1,[2,1,"v",["k",0],[1]]]"#, "a", "got 0"),
            (r#"[1,[2,1,"v",["k",-1],[1]]]"#, "a", "got -1"),
            (r#"[1,[2,1,"v",["k",1.5],[1]]]"#, "a", "got 1.5"),
            (r#"[1,[2,1,"v",[1,"k"],[1]]]"#, "a", "naming some of the first 0 values, got 1"),
            (r#"[1,[2,1,"v",["k",1,2],[1]]]"#, "a", "mask must be its last element"),
            (r#"[1,[2,1,"v",["k",1],[1,1]]]"#, "a", "gives 2 values for 1 keys"),
        ] {
            let e = parse_with_pieces(text, pieces, 64).unwrap_err();
            assert!(e.0.contains(why), "{text} {pieces:?}: {e}");
        }
    }

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters_and_pairs_stay() {
        let text = r#"[1,[0,1,"tap","a\ud800b\\ud800",["s","pair","end"],["\udc00","\ud83d\ude00","\ud83d"]]]"#;
        let calls = parse(text, 1024).unwrap();
        assert_eq!(calls[0].kind, EventKind::Action { action_type: ActionType::Tap, name: "a\u{fffd}b\\ud800".into() });
        assert_eq!(calls[0].attrs.as_json(), r#"{"s":"\ufffd","pair":"\ud83d\ude00","end":"\ufffd"}"#);
        assert_eq!(without_lone_surrogates(r#"["plain \n",1]"#), r#"["plain \n",1]"#);
    }

    #[test]
    fn text_as_an_engine_wrote_it_is_made_valid_before_it_is_parsed() {
        // ArkTS writes a lone surrogate in a string (not escaped) as its own three bytes.
        let text = b"[1,[0,1,\"tap\",\"a\xED\xA0\x80b\",[\"k\"],[\"\xFF\"]]]";
        let calls = parse_engine_utf8(text, 1024).unwrap();
        assert_eq!(calls[0].kind, EventKind::Action { action_type: ActionType::Tap, name: "a\u{fffd}b".into() });
        assert_eq!(calls[0].attrs.as_json(), "{\"k\":\"\u{fffd}\"}");
        assert!(parse_engine_utf8(b"[1,[9,1]]", 1024).is_err(), "the rules of parse still hold");
    }

    #[test]
    fn a_resource_keeps_its_timing_phases_in_ns_and_its_trace_ids() {
        let text = r#"[1,[4,1,"r",200,"native",10,null,null,[null,null,0,1.5,1.5,2,null,null,3.5,4,7.5,0.25],
            ["4bf92f3577b34da6a3ce929d0e0e4736","00f067aa0ba902b7"]]]"#;
        let calls = parse(text, 1024).unwrap();
        let EventKind::StopResource { details: Some(d), size: Some(10), .. } = &calls[0].kind else {
            panic!("{:?}", calls[0].kind)
        };
        let t = &d.timing;
        assert_eq!(
            d.trace,
            Some(TraceIds { trace_id: 0x4bf92f3577b34da6a3ce929d0e0e4736, span_id: 0x00f067aa0ba902b7 })
        );
        let phase = |start, duration| Some(Phase { start, duration });
        assert_eq!(
            *t,
            ResourceTiming {
                redirect: None,
                dns: phase(0, 1_500_000),
                connect: phase(1_500_000, 2_000_000),
                ssl: None,
                first_byte: phase(3_500_000, 4_000_000),
                download: phase(7_500_000, 250_000),
            }
        );
    }

    #[test]
    fn a_stamp_after_now_is_age_zero() {
        let calls = parse(r#"[5,[2,9,"k",null,null]]"#, 64).unwrap();
        assert_eq!(calls[0].age_ns, 0);
    }

    #[test]
    fn text_that_breaks_a_rule_is_refused_whole() {
        for (text, why) in [
            (r#"[1,[0,1,"poke","a",null,null]]"#, "unknown action type"),
            (r#"[1,[0,1,"tap","a",{"k":1},null]]"#, "expected the attributes' keys: null, an array"),
            (r#"[1,[0,1,"tap","a",[true],[1]]]"#, "keys must be an array of strings"),
            (r#"[1,[0,1,"tap","a",["k"],[1,2,3]]]"#, "gives 3 values for 1 keys"),
            (r#"[1,[0,1,"tap","a",["k"],{"k":1}]]"#, "values, an array or null"),
            (r#"[1,[0,1,"tap","a",null,[1]]]"#, "keys must be an array of strings or a shape's index"),
            (r#"[1,[0,1,"tap","a",["k"],null]]"#, "values must be an array"),
            (r#"[1,[0,1,"tap","a",-1,[1]]]"#, "shape -1 is not"),
            (r#"[1,[0,1,"tap","a",0,[1]]]"#, "shape 0 is not one of the 0 before it"),
            (r#"[1,[0,1,"tap","a",["k"],[1]],[0,1,"tap","a",1,[1]]]"#, "shape 1 is not one of the 1 before it"),
            (r#"[1,[0,1,"tap","a",["k"],[1]],[0,1,"tap","a",0.5,[1]]]"#, "shape 0.5"),
            (r#"[1,[0,1,"tap",7,null,null]]"#, "name must be a string"),
            (r#"[1,[9,1]]"#, "unknown code"),
            (r#"[1,[0.5,1]]"#, "unknown code"),
            (r#"[1,[2,1,"k",null,null,5]]"#, "more elements"),
            (r#"[1,[4,1,"r",1000,"xhr",null,null,null,null,null]]"#, "statusCode"),
            (r#"[1,[4,1,"r",200,"xhr",-1,null,null,null,null]]"#, "sizeBytes"),
            (r#"[1,[4,1,"r",200,"xhr",null,null,null,[1,2],null]]"#, "2 elements, not 12"),
            (
                r#"[1,[4,1,"r",200,"xhr",null,null,null,[1,null,0,0,0,0,0,0,0,0,0,0],null]]"#,
                "start without its duration",
            ),
            (r#"[1,[4,1,"r",200,"xhr",null,null,null,[null,null,-1,2,0,0,0,0,0,0,0,0],null]]"#, "dns.start must be"),
            (r#"[1,[4,1,"r",200,"xhr",null,null,null,{"dns":1},null]]"#, "timing must be an array"),
            (
                r#"[1,[4,1,"r",200,"xhr",null,null,null,null,["00000000000000000000000000000000","00f067aa0ba902b7"]]]"#,
                "not all zeros",
            ),
            (
                r#"[1,[4,1,"r",200,"xhr",null,null,null,null,["4bf92f3577b34da6a3ce929d0e0e4736","xyz"]]]"#,
                "spanId must be 16 hex",
            ),
            (r#"[1,[4,1,"r",200,"xhr",null,null,null,null,"abc"]]"#, "trace must be null or an array"),
            (r#"[1,[2,"x","k",null,null]]"#, "stamp"),
            (r#"[1,[2,1,"k"]]"#, "has no keys"),
            (r#"[1,[2,1,"k",null]]"#, "has no values"),
            (r#"[1,[0,1,"tap","a",["k"],["012345678"]]]"#, "eventMaxBytes"),
            (r#"[1,[5,1,"01234567890123456"]]"#, "17 bytes, more than the 16 allowed"),
            (r#"[1,[2,1,"k",null,null]] x"#, "trailing"),
            (r#"[]"#, "no `now`"),
        ] {
            let e = parse(text, 16).unwrap_err();
            assert!(e.0.contains(why), "{text}: {e}");
        }
    }
}
