//! Short strings held inline: an action's name.
//!
//! A queued event is what a burst leaves in memory, and every allocation it holds is one more
//! allocation on the JS thread and one more free on the writer thread (a free of another thread's
//! memory, which contends with the JS thread's next allocation). An action's name is short in
//! practice (`tap on Buy`, `sync message 17`), so it is held inside the event up to
//! [`INLINE_BYTES`]; with the attributes' one buffer ([`super::attrs::Attrs`]) an action then costs
//! one allocation. A longer name takes one exact allocation, as a `Box<str>` would.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use serde::{Serialize, Serializer};

/// Bytes held inline: the struct is 32 bytes (a `String` is 24), and names up to this length,
/// most of them, take no allocation.
pub const INLINE_BYTES: usize = 30;

/// A string of any length; up to [`INLINE_BYTES`] bytes without an allocation.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE_BYTES] },
    Heap(Box<str>),
}

impl Text {
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Only `From<&str>` fills `bytes`, with the first `len` bytes of a `str`.
            Repr::Inline { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default(),
            Repr::Heap(s) => s,
        }
    }

    /// Bytes it holds on the heap (what a queued event costs for it).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Inline { .. } => 0,
            Repr::Heap(s) => s.len(),
        }
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        match u8::try_from(s.len()) {
            Ok(len) if s.len() <= INLINE_BYTES => {
                let mut bytes = [0; INLINE_BYTES];
                bytes[..s.len()].copy_from_slice(s.as_bytes());
                Self(Repr::Inline { len, bytes })
            }
            _ => Self(Repr::Heap(s.into())),
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        if s.len() <= INLINE_BYTES {
            Self::from(s.as_str())
        } else {
            Self(Repr::Heap(s.into_boxed_str()))
        }
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Text as a JS engine wrote it in UTF-8, made valid: a lone UTF-16 surrogate, which Node writes
/// as U+FFFD and ArkTS as the surrogate's own three bytes (`ED A0..BF 80..BF`, not UTF-8), is one
/// U+FFFD either way, so both engines give the same text; `C0 80`, the modified UTF-8 of U+0000
/// that ArkTS's converter writes when not asked for a buffer's bytes (Node-API asks; a device's
/// own conversion library might not), is U+0000, one character as it was; any other invalid byte
/// is U+FFFD. Valid text (almost all of it) is borrowed as it is.
pub fn from_engine_utf8(bytes: &[u8]) -> Cow<'_, str> {
    let first = match std::str::from_utf8(bytes) {
        Ok(text) => return Cow::Borrowed(text),
        Err(e) => e,
    };
    let mut out = String::with_capacity(bytes.len() + 2);
    let mut rest = bytes;
    let mut error = Some(first);
    while let Some(e) = error {
        let (valid, after) = rest.split_at(e.valid_up_to());
        out.push_str(std::str::from_utf8(valid).unwrap_or_default());
        let (c, skip) = match after {
            [0xC0, 0x80, ..] => ('\0', 2),
            [0xED, 0xA0..=0xBF, 0x80..=0xBF, ..] => (char::REPLACEMENT_CHARACTER, 3),
            _ => (char::REPLACEMENT_CHARACTER, e.error_len().unwrap_or(after.len())),
        };
        out.push(c);
        rest = &after[skip..];
        error = std::str::from_utf8(rest).err();
    }
    out.push_str(std::str::from_utf8(rest).unwrap_or_default());
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_inline_and_long_ones_on_the_heap_with_the_same_content() {
        let short = "é".repeat(INLINE_BYTES / 2); // two bytes a character: exactly INLINE_BYTES
        let long = format!("{short}x");
        for (s, heap) in [("", 0), ("tap on Buy", 0), (short.as_str(), 0), (long.as_str(), long.len())] {
            for t in [Text::from(s), Text::from(s.to_owned())] {
                assert_eq!(t.as_str(), s);
                assert_eq!(t.heap_bytes(), heap, "{s:?}");
                assert_eq!(t, s);
                assert_eq!(format!("{t}"), s);
                assert_eq!(serde_json::to_string(&t).unwrap(), serde_json::to_string(s).unwrap());
            }
        }
        assert_eq!(std::mem::size_of::<Text>(), 32);
    }

    #[test]
    fn engine_text_is_borrowed_when_valid_and_a_lone_surrogate_is_one_replacement_character() {
        assert!(matches!(from_engine_utf8("a 😀 é".as_bytes()), Cow::Borrowed("a 😀 é")));
        // Node's form of "a\uD800b" and ArkTS's (the surrogate's three bytes) read the same.
        assert_eq!(from_engine_utf8(b"a\xEF\xBF\xBDb"), "a\u{FFFD}b");
        assert_eq!(from_engine_utf8(b"a\xED\xA0\x80b"), "a\u{FFFD}b");
        assert_eq!(from_engine_utf8(b"\xED\xBF\xBF\xED\xA0\x80"), "\u{FFFD}\u{FFFD}");
        // Other invalid bytes, and a truncated sequence at the end.
        assert_eq!(from_engine_utf8(b"x\xFFy\xE2\x82"), "x\u{FFFD}y\u{FFFD}");
        // U+0000 as either form ArkTS's converter writes: one character, as in the JS string.
        assert_eq!(from_engine_utf8(b"a\0b"), "a\0b");
        assert_eq!(from_engine_utf8(b"a\xC0\x80b\xC0"), "a\0b\u{FFFD}");
    }
}
