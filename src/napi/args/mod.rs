//! JS arguments → core values, copied once, with errors that name the method and the argument.
//!
//! [`Args`] is one call's reading context (the engine, the method's name, the property names kept
//! as engine strings); what it reads is split by kind: strings, numbers, booleans and closed sets
//! in `scalars.rs`, arrays and array-likes in `lists.rs`, property names in `names.rs`, attribute
//! maps and JSON-like values (plain objects and Map-likes) in `attributes.rs`.
//!
//! Every value is read exactly once, through the fence's calls ([`super::js`]); nothing is
//! stringified to JSON and parsed back.

mod attributes;
mod lists;
mod names;
mod scalars;

use std::fmt::{self, Display};

use super::js::{Js, Value, ValueType, Visitor};

pub use names::Names;

/// A bad argument: becomes a JS `TypeError` (wrong type) or `RangeError` (bad value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgError {
    Type(String),
    Range(String),
    /// A JS exception was pending (thrown by a getter or proxy trap), cleared and wrapped.
    Js(String),
}

pub type ArgResult<T> = Result<T, ArgError>;

/// How a value's kind reads in an error message.
pub fn kind_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::String => "a string",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::External => "an external",
        ValueType::BigInt => "a BigInt",
        #[cfg(not(target_env = "ohos"))]
        ValueType::Symbol => "a symbol",
        ValueType::Unknown => "an unknown value",
    }
}

/// One call's arguments being read: where errors are attributed.
pub struct Args<'e> {
    pub js: Js<'e>,
    pub method: &'static str,
    /// Property names read many times in this call, made into engine strings once.
    names: Names<'e>,
    /// Where Map-like attributes find their `forEach` visitor between calls (a pipeline's); a
    /// call without one makes it when it reads a Map-like.
    pub visitor: Option<&'e Visitor>,
    /// The visitor's function once found in this call (a call may read a Map-like per element).
    pub visitor_function: std::cell::Cell<Option<Value<'e>>>,
}

/// The path of a value inside an argument (`attributes.user.name`, `attributes.list[3]`), built
/// lazily: formatted only when an error names it, so reading a value allocates no path.
#[derive(Clone, Copy)]
pub struct Sub<'a> {
    parent: &'a dyn Display,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(u32),
    Text(&'static str),
}

impl<'a> Sub<'a> {
    pub fn key(parent: &'a dyn Display, key: &'a str) -> Self {
        Self { parent, step: Step::Key(key) }
    }

    pub fn index(parent: &'a dyn Display, i: u32) -> Self {
        Self { parent, step: Step::Index(i) }
    }

    pub fn text(parent: &'a dyn Display, text: &'static str) -> Self {
        Self { parent, step: Step::Text(text) }
    }
}

impl Display for Sub<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.step {
            Step::Key(k) => write!(f, "{}.{k}", self.parent),
            Step::Index(i) => write!(f, "{}[{i}]", self.parent),
            Step::Text(t) => write!(f, "{}{t}", self.parent),
        }
    }
}

/// A named argument, inside another value's path when `within` is set (`events[3].name` in
/// `addActions`) and alone otherwise (`name` in `addAction`).
#[derive(Clone, Copy)]
pub struct Field<'a> {
    pub within: Option<&'a dyn Display>,
    pub name: &'a str,
}

impl Display for Field<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.within {
            Some(w) => write!(f, "{w}.{}", self.name),
            None => f.write_str(self.name),
        }
    }
}

/// Errors attributed to one method's arguments.
#[derive(Clone, Copy)]
pub struct Blame {
    pub method: &'static str,
}

impl Blame {
    pub fn type_err(self, arg: impl Display, msg: impl Display) -> ArgError {
        ArgError::Type(format!("{}: {arg} {msg}", self.method))
    }

    pub fn range_err(self, arg: impl Display, msg: impl Display) -> ArgError {
        ArgError::Range(format!("{}: {arg} {msg}", self.method))
    }

    /// An engine call failed: a JS exception may be pending (a throwing getter, a proxy trap).
    /// It is cleared and its message wrapped, so the caller sees which argument was being read.
    pub fn failed(self, js: Js<'_>, arg: impl Display) -> ArgError {
        let detail = take_exception(js).unwrap_or_else(|| "the engine refused the value".to_owned());
        ArgError::Js(format!("{}: reading {arg} threw: {detail}", self.method))
    }
}

impl<'e> Args<'e> {
    pub fn new(js: Js<'e>, method: &'static str) -> Self {
        Self { js, method, names: Names::default(), visitor: None, visitor_function: std::cell::Cell::new(None) }
    }

    /// Arguments whose Map-likes are read with the visitor `kept` (made once per pipeline).
    pub fn keeping_visitor(js: Js<'e>, method: &'static str, kept: &'e Visitor) -> Self {
        Self { visitor: Some(kept), ..Self::new(js, method) }
    }

    pub fn blame(&self) -> Blame {
        Blame { method: self.method }
    }

    pub fn type_err(&self, arg: impl Display, msg: impl Display) -> ArgError {
        self.blame().type_err(arg, msg)
    }

    pub fn range_err(&self, arg: impl Display, msg: impl Display) -> ArgError {
        self.blame().range_err(arg, msg)
    }

    /// See [`Blame::failed`].
    pub fn failed(&self, arg: impl Display) -> ArgError {
        self.blame().failed(self.js, arg)
    }

    pub fn kind(&self, v: Value<'_>) -> ValueType {
        self.js.kind(v)
    }

    pub fn is_undefined(&self, v: Value<'_>) -> bool {
        self.kind(v) == ValueType::Undefined
    }

    pub fn is_nullish(&self, v: Value<'_>) -> bool {
        matches!(self.kind(v), ValueType::Undefined | ValueType::Null)
    }

    /// An optional argument: `undefined` and `null` are None, anything else is `read`.
    pub fn optional<'v, T>(&self, v: Value<'v>, read: impl FnOnce(Value<'v>) -> ArgResult<T>) -> ArgResult<Option<T>> {
        if self.is_nullish(v) {
            return Ok(None);
        }
        read(v).map(Some)
    }

    pub fn is_function(&self, v: Value<'_>) -> bool {
        self.kind(v) == ValueType::Function
    }

    pub fn is_object(&self, v: Value<'_>) -> bool {
        self.kind(v) == ValueType::Object
    }
}

/// Clears a pending exception and returns its message, if one was pending.
pub fn take_exception(js: Js<'_>) -> Option<String> {
    js.take_exception().map(|exc| describe(js, exc))
}

/// `String(exc.message ?? exc)` without running user code that could throw again.
///
/// Reading `message` runs user code (a getter, a proxy trap), which may throw in turn. That
/// second exception is cleared too: left pending, it would be thrown into the caller (or the
/// timer, where it is uncaught) and would make every later engine call of this native call fail,
/// `setTimeout` for the next slice included.
fn describe(js: Js<'_>, exc: Value<'_>) -> String {
    let text = |v: Value<'_>| scalars::owned_text::<String>(js, v);
    if js.kind(exc) == ValueType::Object {
        match js.named(exc, c"message") {
            Some(msg) if js.kind(msg) == ValueType::String => {
                if let Some(s) = text(msg) {
                    return s;
                }
            }
            Some(_) => {}
            None => {
                js.take_exception();
                return "a value whose message getter threw was thrown".to_owned();
            }
        }
    }
    if js.kind(exc) == ValueType::String {
        if let Some(s) = text(exc) {
            return s;
        }
    }
    "a non-Error value was thrown".to_owned()
}
