//! A call's attributes as they are captured: the JSON object text the documents will carry, in
//! one allocation.
//!
//! The binding writes this text while it copies the arguments out of the engine (escaping done
//! once, while the bytes are hot), so a queued event holds one buffer instead of a tree of maps,
//! strings and values, and the writer splices the bytes into the document instead of serializing
//! them again. What needs the attributes as values (merging a stop's attributes over a start's,
//! the event mapper, tests) parses them back; those paths are rare.
//!
//! The text is always one JSON object written by [`Attrs::from_map`] or the binding's encoder
//! (`{"k":v,...}`, compact, keys unique), which is what the scanning below relies on.

use std::fmt;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// serde_json's token for a raw JSON value (`serde_json::value::RawValue`'s `Serialize` impl):
/// `serde_json::to_writer` copies such text as it is and `serde_json::to_value` parses it, and the
/// writer's serializer (`storage::json`) does the same, so one `Serialize` impl serves all three.
/// A test below checks that serde_json still treats it so.
pub const RAW_JSON_TOKEN: &str = "$serde_json::private::RawValue";

/// Attributes as compact JSON object text; empty text is the empty object.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Attrs {
    json: Box<str>,
}

impl Attrs {
    /// The text of an object its writer guarantees is compact JSON with unique keys (the
    /// binding's encoder writes it so as it copies a call's arguments).
    pub fn from_json_object(json: String) -> Self {
        debug_assert!(json.starts_with('{') && json.ends_with('}'), "not an object: {json}");
        if json == "{}" {
            return Self::default();
        }
        Self { json: json.into_boxed_str() }
    }

    /// The attributes of a map (tests, merges, the mapper's values).
    pub fn from_map(map: &Map<String, Value>) -> Self {
        if map.is_empty() {
            return Self::default();
        }
        // A map of JSON values always serializes.
        Self { json: serde_json::to_string(map).unwrap_or_default().into_boxed_str() }
    }

    pub fn is_empty(&self) -> bool {
        self.json.is_empty()
    }

    /// The JSON text (`{}` when empty).
    pub fn as_json(&self) -> &str {
        if self.json.is_empty() {
            "{}"
        } else {
            &self.json
        }
    }

    /// Bytes held (what a queued event costs for its attributes).
    pub fn heap_bytes(&self) -> usize {
        self.json.len()
    }

    /// The attributes as a map (parsed back; for the rare paths that need values).
    pub fn to_map(&self) -> Map<String, Value> {
        if self.json.is_empty() {
            return Map::new();
        }
        serde_json::from_str(&self.json).unwrap_or_default()
    }

    /// `over`'s attributes merged over these (`over` wins), as a stop's over a start's.
    pub fn merged(self, over: Attrs) -> Attrs {
        if over.is_empty() {
            return self;
        }
        if self.is_empty() {
            return over;
        }
        let mut map = self.to_map();
        map.extend(over.to_map());
        Attrs::from_map(&map)
    }

    /// `(key, raw value)` of each member, in order.
    pub fn entries(&self) -> Entries<'_> {
        let inner = self.json.get(1..self.json.len().saturating_sub(1)).unwrap_or("");
        Entries { rest: inner }
    }

    /// Whether a member is named `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.entries().any(|(k, _)| k.matches(key))
    }
}

impl fmt::Debug for Attrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_json())
    }
}

/// A member's key as written (a JSON string, quotes included).
#[derive(Clone, Copy, Debug)]
pub struct Key<'a>(&'a str);

impl<'a> Key<'a> {
    /// The key as written, quotes and escapes included.
    pub fn as_written(self) -> &'a str {
        self.0
    }

    /// The key's text: borrowed when it has no escape (the usual case), decoded otherwise.
    pub fn decoded(self) -> std::borrow::Cow<'a, str> {
        let inner = &self.0[1..self.0.len() - 1];
        if !inner.contains('\\') {
            return std::borrow::Cow::Borrowed(inner);
        }
        std::borrow::Cow::Owned(serde_json::from_str::<String>(self.0).unwrap_or_default())
    }

    fn matches(self, key: &str) -> bool {
        self.decoded() == key
    }
}

/// Members of an [`Attrs`]: a scan of its (well-formed, compact) text.
pub struct Entries<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (Key<'a>, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.rest.strip_prefix(',').unwrap_or(self.rest);
        if s.is_empty() {
            return None;
        }
        let key_end = string_end(s, 0)?;
        let key = &s[..key_end];
        let value_start = key_end + 1; // the ':'
        let value_end = value_end(s, value_start)?;
        self.rest = &s[value_end..];
        Some((Key(key), &s[value_start..value_end]))
    }
}

/// The index just past the JSON string starting at `at` (a `"`).
fn string_end(s: &str, at: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the compact JSON value starting at `at`.
fn value_end(s: &str, at: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = at;
    let mut depth = 0usize;
    loop {
        match *b.get(i)? {
            b'"' => i = string_end(s, i)?,
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            b',' if depth == 0 => return Some(i),
            _ => i += 1,
        }
        if depth == 0 && b.get(i).is_none_or(|&c| c == b',') {
            return Some(i);
        }
    }
}

/// JSON text written as it is by every serializer that knows serde_json's raw value.
pub struct RawJson<'a>(pub &'a str);

impl Serialize for RawJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut raw = s.serialize_struct(RAW_JSON_TOKEN, 1)?;
        raw.serialize_field(RAW_JSON_TOKEN, self.0)?;
        raw.end()
    }
}

impl Serialize for Attrs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RawJson(self.as_json()).serialize(s)
    }
}

/// `global` attributes merged with a call's (the call's win), without building a merged map: the
/// call's members are spliced as they were captured.
pub struct Merged<'a> {
    pub global: &'a Map<String, Value>,
    pub call: &'a Attrs,
}

impl Serialize for Merged<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.global.is_empty() {
            return self.call.serialize(s);
        }
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.global {
            if !self.call.contains_key(k) {
                m.serialize_entry(k, v)?;
            }
        }
        for (k, v) in self.call.entries() {
            m.serialize_entry(&k.decoded(), &RawJson(v))?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn attrs(v: Value) -> Attrs {
        match v {
            Value::Object(m) => Attrs::from_map(&m),
            _ => panic!("an object"),
        }
    }

    #[test]
    fn serde_json_still_splices_the_raw_token() {
        let text = r#"{"a":[1,{"b":"}"}],"c":null}"#;
        assert_eq!(serde_json::to_string(&RawJson(text)).unwrap(), text);
        assert_eq!(serde_json::to_value(RawJson(text)).unwrap(), json!({ "a": [1, { "b": "}" }], "c": null }));
    }

    #[test]
    fn entries_scan_nested_values_and_escaped_keys() {
        let a = attrs(json!({ "s": "x,\"}y", "n": [1, [2, {"k": "]"}]], "o": { "p": {} }, "e\"sc": 1.5, "t": true }));
        let got: Vec<(String, String)> = a.entries().map(|(k, v)| (k.decoded().into_owned(), v.to_owned())).collect();
        let want: Vec<(String, String)> = a.to_map().iter().map(|(k, v)| (k.clone(), v.to_string())).collect();
        assert_eq!(got, want);
        assert!(a.contains_key("e\"sc") && a.contains_key("t") && !a.contains_key("p"));
        assert_eq!(Attrs::default().entries().count(), 0);
        assert_eq!(Attrs::default().as_json(), "{}");
    }

    #[test]
    fn merges_let_the_later_attributes_win() {
        let start = attrs(json!({ "a": 1, "b": 2 }));
        let stop = attrs(json!({ "b": 3, "c": 4 }));
        assert_eq!(Value::Object(start.merged(stop).to_map()), json!({ "a": 1, "b": 3, "c": 4 }));
        let global = json!({ "g": 1, "b": "global" });
        let Value::Object(global) = global else { unreachable!() };
        let call = attrs(json!({ "b": "call" }));
        let text = serde_json::to_string(&Merged { global: &global, call: &call }).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), json!({ "g": 1, "b": "call" }));
    }
}
