//! The calls a JS thread's capture buffer hands over in one crossing (docs/how-it-works.md,
//! "Capture in JS"): the facade's `CallBuffer` checks and snapshots each call in JS, stamps it with
//! its JS clock, and at the end of the turn, in a slice, or before a drain, hands a run of them to
//! the pipeline as one JSON text made by `JSON.stringify`:
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
//! `trace` is `null` or `[traceId, spanId]`, the hex of the request's `traceparent`. The JS side has already
//! refused every bad argument at its call, so text that breaks these rules is not a host's mistake
//! but a caller of `ingest` that is not the facade: it is refused whole, and nothing is recorded.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::attrs::Attrs;
use super::event::{ActionType, EventKind, HttpMethod, ResourceDetails, ResourceKind, ResourceTiming, TraceIds};
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

/// Parses a handover text as the engine wrote it in UTF-8 ([`from_engine_utf8`]: a lone
/// surrogate, or any byte that is not UTF-8, is U+FFFD), as [`parse`] does.
pub fn parse_engine_utf8(bytes: &[u8], max_bytes: usize) -> Result<Vec<Handed>, HandoverError> {
    parse(&from_engine_utf8(bytes), max_bytes)
}

/// Parses a handover text. `max_bytes` (`eventMaxBytes`) bounds each string and each call's
/// attributes, as the call's own checks did.
pub fn parse(text: &str, max_bytes: usize) -> Result<Vec<Handed>, HandoverError> {
    let text = without_lone_surrogates(text);
    let mut de = serde_json::Deserializer::from_str(&text);
    let calls = de.deserialize_seq(Calls { max_bytes }).map_err(|e| HandoverError(e.to_string()))?;
    de.end().map_err(|e| HandoverError(e.to_string()))?;
    Ok(calls)
}

struct Calls {
    max_bytes: usize,
}

impl<'de> Visitor<'de> for Calls {
    type Value = Vec<Handed>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array [now, ...calls]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let now: f64 = seq.next_element()?.ok_or_else(|| de::Error::custom("the array has no `now`"))?;
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut shapes = Shapes::default();
        while let Some(call) =
            seq.next_element_seed(CallSeed { now, max_bytes: self.max_bytes, index: out.len(), shapes: &mut shapes })?
        {
            out.push(call);
        }
        Ok(out)
    }
}

/// The keys arrays a text has given so far, each key as its JSON text (quoted, escaped), all in
/// one list (`shapes` holds where each array starts and how many keys it has), and the values of
/// the call being read: three buffers for every call of the text.
#[derive(Default)]
struct Shapes<'de> {
    keys: Vec<&'de str>,
    shapes: Vec<(usize, usize)>,
    values: Vec<&'de RawValue>,
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
    /// [`ValuesSeed`]; `values` says whether it was an array, now in `self.values`): see the
    /// module doc.
    fn attrs(&self, keys: Keys, values: bool, max: usize) -> Result<Attrs, String> {
        let shape = match keys {
            Keys::None if !values => return Ok(Attrs::default()),
            Keys::None => return Err("keys must be an array of strings or a shape's index".to_owned()),
            Keys::Shape(_) if !values => return Err("values must be an array".to_owned()),
            Keys::Shape(shape) => shape,
        };
        let (start, count) = self.shapes[shape];
        let (keys, values) = (&self.keys[start..start + count], &self.values);
        if values.len() != keys.len() {
            return Err(format!("gives {} values for {} keys", values.len(), keys.len()));
        }
        if keys.is_empty() {
            return Ok(Attrs::default());
        }
        // `{` and `}`, a colon a member and a comma between two.
        let len = keys.iter().zip(values).map(|(k, v)| k.len() + v.get().len() + 2).sum::<usize>() + 1;
        if len > max {
            return Err(format!("make the event larger than eventMaxBytes ({max} bytes)"));
        }
        let mut json = String::with_capacity(len);
        for (i, (k, v)) in keys.iter().zip(values).enumerate() {
            json.push(if i == 0 { '{' } else { ',' });
            json.push_str(k);
            json.push(':');
            json.push_str(v.get());
        }
        json.push('}');
        Ok(Attrs::from_json_object(json))
    }
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
        while let Some(key) = seq.next_element::<&'de RawValue>()? {
            if !key.get().starts_with('"') {
                self.0.keys.truncate(start);
                return Err(de::Error::custom("keys must be an array of strings"));
            }
            self.0.keys.push(key.get());
        }
        self.0.shapes.push((start, self.0.keys.len() - start));
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

struct CallSeed<'s, 'de> {
    now: f64,
    max_bytes: usize,
    index: usize,
    shapes: &'s mut Shapes<'de>,
}

impl<'de> de::DeserializeSeed<'de> for CallSeed<'_, 'de> {
    type Value = Handed;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Handed, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CallSeed<'_, 'de> {
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
        let shapes = self.shapes;
        let mut attrs = |seq: &mut A| -> Result<Attrs, A::Error> {
            let keys = seq.next_element_seed(KeysSeed(shapes))?.ok_or_else(|| at("has no keys"))?;
            let values = seq.next_element_seed(ValuesSeed(&mut shapes.values))?.ok_or_else(|| at("has no values"))?;
            shapes.attrs(keys, values, max).map_err(|why| at(&format!("attributes: {why}")))
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
            (r#"[1,[0,1,"tap","a",[1],[1]]]"#, "keys must be an array of strings"),
            (r#"[1,[0,1,"tap","a",["k"],[1,2]]]"#, "gives 2 values for 1 keys"),
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
