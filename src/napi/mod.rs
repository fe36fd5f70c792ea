//! The binding: the only code that imports napi-ohos. It checks and copies arguments into core
//! values, implements the core's seams for a JS thread (clock, `setTimeout` scheduler, JS event
//! mapper), and exposes one class, `RumPipeline`, exactly as DESIGN.md's interface says; its methods check their
//! receiver themselves (`receiver`).

mod attributes;
mod convert;
mod floor;
mod host;
mod lifecycle;
#[cfg(not(target_env = "ohos"))]
mod node_host;
mod options;
mod pipeline;
mod receiver;
mod stats;

use napi_ohos::bindgen_prelude::*;

use convert::ArgError;

/// Throws a bad argument as `TypeError` / `RangeError` and returns the pending-exception error
/// napi-derive expects (it does not throw a second time). A NUL in the message (from a property
/// name) is written `\0`: the engine takes C strings, and would refuse the message.
pub(crate) fn throw(env: &Env, e: ArgError) -> Error {
    let e = match e {
        ArgError::Range(m) => ArgError::Range(m.replace('\0', "\\0")),
        ArgError::Type(m) => ArgError::Type(m.replace('\0', "\\0")),
        ArgError::Js(m) => ArgError::Js(m.replace('\0', "\\0")),
    };
    let (thrown, msg) = match e {
        ArgError::Range(m) => (env.throw_range_error(&m, None), m),
        ArgError::Type(m) | ArgError::Js(m) => (env.throw_type_error(&m, None), m),
    };
    match thrown {
        Ok(()) => Error::new(Status::PendingException, msg),
        Err(_) => Error::new(Status::InvalidArg, msg),
    }
}
