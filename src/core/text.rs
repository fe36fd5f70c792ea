//! Short strings held inline: an action's name.
//!
//! A queued event is what a burst leaves in memory, and every allocation it holds is one more
//! allocation on the JS thread and one more free on the writer thread (a free of another thread's
//! memory, which contends with the JS thread's next allocation). An action's name is short in
//! practice (`tap on Buy`, `sync message 17`), so it is held inside the event up to
//! [`INLINE_BYTES`]; with the attributes' one buffer ([`super::attrs::Attrs`]) an action then costs
//! one allocation. A longer name takes one exact allocation, as a `Box<str>` would.

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
}
