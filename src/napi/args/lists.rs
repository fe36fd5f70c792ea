//! Arrays and array-likes (a Sendable `collections.Array` is not an `Array` to Node-API on ArkTS:
//! it is read by `length` and index).

use std::fmt::Display;

use super::{kind_name, ArgResult, Args, Sub};
use crate::napi::js::{Value, ValueType};

impl<'e> Args<'e> {
    /// The length of an array or an array-like. Nothing is read or reserved for the elements yet:
    /// a caller checks the length against its own limit first, since it comes from the host.
    pub fn length(&self, v: Value<'_>, arg: impl Display + Copy) -> ArgResult<u32> {
        let t = self.kind(v);
        if t != ValueType::Object {
            return Err(self.type_err(arg, format_args!("must be an array, got {}", kind_name(t))));
        }
        if self.js.is_array(v) {
            return self.js.array_length(v).ok_or_else(|| self.failed(arg));
        }
        let length = self.field(v, "length", arg)?;
        if self.kind(length) != ValueType::Number {
            return Err(self.type_err(arg, "must be an array or array-like with a numeric length"));
        }
        Ok(self.integer(length, Sub::text(&arg, ".length"), 0.0, u32::MAX as f64)? as u32)
    }

    /// Element `i` of an array or array-like (getters and proxy traps may throw).
    pub fn element(&self, v: Value<'_>, i: u32, arg: impl Display + Copy) -> ArgResult<Value<'e>> {
        self.js.element(v, i).ok_or_else(|| self.failed(Sub::index(&arg, i)))
    }
}
