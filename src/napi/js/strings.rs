//! Strings out of the engine into buffers, and into the engine.
//!
//! Raw `napi_get_value_string_utf8` with our own buffers: napi-ohos' `String` conversion asks for
//! the length, allocates and copies (two engine calls and an allocation per string), where a stack
//! buffer takes one call and no allocation for the short strings that are almost all of them. A
//! queued `addAction` copies two strings and makes one allocation in all (`benches/napi-calls.mjs`);
//! napi-ohos' conversion would make it three, with two more engine calls.

use std::mem::MaybeUninit;
use std::ptr;

use napi_ohos::sys;

use super::{ok, Js, Value};

/// Bytes a copy may end short of its buffer's end and still be whole: the engine never splits a
/// UTF-8 character (at most 4 bytes) and writes a NUL after the text.
const CHAR_MAX: usize = 4;

/// A byte of every buffer the engine is not told about: ArkTS may write one byte past the size it
/// was given when a two-byte string ends in U+0000 characters (docs/arkts-napi.md).
const SPARE: usize = 1;

/// Most UTF-8 bytes one UTF-16 unit becomes (a pair of units, four).
const UTF8_PER_UNIT: usize = 3;

impl<'e> Js<'e> {
    /// Hands `f` the string's UTF-8 when it is shorter than about `N` bytes, copied into a stack
    /// buffer in one engine call; `f(None)` when it is longer (nothing was allocated). None when
    /// the engine refused the value (not a string).
    pub fn short_utf8<const N: usize, R>(self, v: Value<'_>, f: impl FnOnce(Option<&[u8]>) -> R) -> Option<R> {
        #[cfg(feature = "arkts-semantics")]
        {
            let bytes = super::arkts::utf8(self.env, v.raw())?;
            return Some(f((bytes.len() + CHAR_MAX < N - SPARE).then_some(&bytes[..])));
        }
        #[allow(unreachable_code)]
        let mut stack = [MaybeUninit::<u8>::uninit(); N];
        let mut written = 0usize;
        // SAFETY: the buffer has N bytes; the engine is told of N - SPARE and writes at most that
        // many (the NUL included; ArkTS perhaps one more), and reports how many it wrote before
        // the NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf8(self.env, v.raw(), stack.as_mut_ptr().cast(), N - SPARE, &mut written)
        };
        ok(status).ok()?;
        if written + CHAR_MAX >= N - SPARE {
            return Some(f(None));
        }
        // SAFETY: the engine initialised the first `written` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(stack.as_ptr().cast::<u8>(), written) };
        Some(f(Some(bytes)))
    }

    /// Appends the string's UTF-8 to `out`: first into `room` bytes of spare capacity (one engine
    /// call for a string that fits), else after a query of its UTF-16 length, into enough for
    /// any text of that length. Err when the engine refused the value.
    pub fn append_utf8(self, v: Value<'_>, out: &mut Vec<u8>, room: usize) -> Result<(), ()> {
        #[cfg(feature = "arkts-semantics")]
        {
            let _ = room;
            out.extend_from_slice(&super::arkts::utf8(self.env, v.raw()).ok_or(())?);
            return Ok(());
        }
        #[allow(unreachable_code)]
        let start = out.len();
        out.reserve(room);
        let room = out.capacity() - start - SPARE;
        let mut written = 0usize;
        // SAFETY: out has `room` + SPARE bytes of spare capacity past `start`; the engine writes at
        // most `room` (the NUL included; ArkTS perhaps one more) and reports how many it wrote
        // before the NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf8(self.env, v.raw(), out.as_mut_ptr().add(start).cast(), room, &mut written)
        };
        ok(status)?;
        if written + CHAR_MAX < room {
            // SAFETY: the engine initialised `written` bytes past `start`.
            unsafe { out.set_len(start + written) };
            return Ok(());
        }
        // Sized from the UTF-16 length, which both engines keep (the UTF-8 length is a scan of
        // the whole string): a unit takes at most three bytes of UTF-8, a lone surrogate's three
        // on ArkTS included. Capacity the text does not use is never touched (a large buffer's
        // pages are not even mapped in); the caller shrinks what it keeps.
        let mut units = 0usize;
        // SAFETY: a null buffer asks for the length in UTF-16 units.
        ok(unsafe { sys::napi_get_value_string_utf16(self.env, v.raw(), ptr::null_mut(), 0, &mut units) })?;
        let len = units.saturating_mul(UTF8_PER_UNIT);
        // Uninitialised capacity, not zeroed: the engine writes every byte kept.
        out.reserve(len + 1 + SPARE);
        // SAFETY: out has room for len bytes plus the NUL past `start`.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                v.raw(),
                out.as_mut_ptr().add(start).cast(),
                len + 1,
                &mut written,
            )
        };
        ok(status)?;
        // SAFETY: the engine wrote `written` (≤ len) bytes past `start`.
        unsafe { out.set_len(start + written.min(len)) };
        Ok(())
    }

    /// A new JS string.
    pub fn string(self, s: &str) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: s is s.len() bytes of UTF-8; out receives a handle of the current scope.
        ok(unsafe { sys::napi_create_string_utf8(self.env, s.as_ptr().cast(), s.len() as isize, &mut out) })
            .ok()
            .map(|()| self.value(out))
    }
}
