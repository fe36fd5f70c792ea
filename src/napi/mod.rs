//! The binding: the only code that imports napi-ohos. It checks and copies arguments into core
//! values, implements the core's seams for a JS thread, and exposes one class, `RumPipeline`.
//!
//! - `js/`: the fence. Every raw Node-API call of the binding, behind a safe API (values,
//!   strings, properties, calls, references, the class and its receiver check); nothing outside
//!   it needs an unchecked block (`tests/layout.rs` holds the binding to that).
//! - `methods.rs`: the class, made from the one list of its methods (`src/interface.rs`);
//!   `pipeline.rs`: what each method does (`BindingPipeline`).
//! - `args/`: arguments read into core values, with errors naming the method and argument;
//!   `options.rs`: the constructor's options; `stats.rs`: `stats()`.
//! - The core's seams on a JS thread: `clock.rs`, `scheduler.rs` (`setTimeout`), `mapper.rs` (the
//!   event mapper); `lifecycle.rs`: the paths where JS may no longer run.
//! - `floor.rs`: the benchmarks' floor.
//!
//! Types JS sees are named `Binding*` in Rust (their JS names are unprefixed), so they are not
//! taken for the core's.

mod args;
mod clock;
mod error_details;
mod floor;
mod js;
mod lifecycle;
mod mapper;
mod methods;
mod options;
mod pipeline;
mod scheduler;
mod stats;
mod timing;
mod upload;

use napi_ohos::bindgen_prelude::*;

use args::ArgError;
use js::Js;

/// Throws a bad argument as `TypeError` / `RangeError` and returns the pending-exception error
/// a callback ends with (it does not throw a second time). A NUL in the message (from a property
/// name) is written `\0`: the engine takes C strings, and would refuse the message.
pub(crate) fn throw(js: Js<'_>, e: ArgError) -> Error {
    let env = js.env();
    let (thrown, msg) = match e {
        ArgError::Range(m) => {
            let m = m.replace('\0', "\\0");
            (env.throw_range_error(&m, None), m)
        }
        ArgError::Type(m) | ArgError::Js(m) => {
            let m = m.replace('\0', "\\0");
            (env.throw_type_error(&m, None), m)
        }
    };
    match thrown {
        Ok(()) => Error::new(Status::PendingException, msg),
        Err(_) => Error::new(Status::InvalidArg, msg),
    }
}
