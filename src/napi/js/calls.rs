//! Calling JS functions, making native ones, and the callbacks behind them.

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi_ohos::bindgen_prelude::{Error, JsError, Status};
use napi_ohos::sys;

use super::{ok, Js, Value};

/// A native function's callback, as the engine calls it. Made with [`callback!`](super::callback).
pub type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// The error a callback ends with: thrown into JS (or, when it says an exception is pending
/// already, that exception is left as it is).
pub type Thrown = Error;

/// What a native callback is given: the engine, `this` and its first `N` arguments (missing ones
/// are `undefined`).
pub struct CallbackArgs<'e, const N: usize> {
    pub js: Js<'e>,
    pub this: Value<'e>,
    pub args: [Value<'e>; N],
}

/// Defines a native callback: `callback!(fn name[N]("jsName") |call| body)` reads `this` and `N`
/// arguments into `call` ([`CallbackArgs`]) and runs `body`, which returns the call's result
/// (`Ok(None)` is `undefined`) or the error to throw. A panic is caught and thrown as an `Error`
/// with its message: nothing unwinds into the engine. The body is not in an `unsafe` context.
macro_rules! callback {
    ($(#[$meta:meta])* $vis:vis fn $name:ident[$n:expr]($js_name:expr) |$call:ident| $body:expr) => {
        $(#[$meta])*
        $vis unsafe extern "C" fn $name(
            env: napi_ohos::sys::napi_env,
            info: napi_ohos::sys::napi_callback_info,
        ) -> napi_ohos::sys::napi_value {
            // SAFETY: called by the engine as a native function's callback, with its env and info.
            let raw = unsafe { $crate::napi::js::RawCall::<{ $n }>::new(env, info) };
            $crate::napi::js::run_callback(raw, $js_name, |$call| $body)
        }
    };
}
pub(crate) use callback;

/// A callback's engine call, before its arguments are read.
#[doc(hidden)]
pub struct RawCall<const N: usize> {
    env: sys::napi_env,
    info: sys::napi_callback_info,
}

impl<const N: usize> RawCall<N> {
    /// # Safety
    /// `env` and `info` are those of the engine's current call of the callback making this.
    #[inline(always)]
    pub unsafe fn new(env: sys::napi_env, info: sys::napi_callback_info) -> Self {
        Self { env, info }
    }
}

/// The body of every [`callback!`]: inlined into each, as napi-derive writes each callback's body
/// in full, so a callback is one function in profiles (benches/napi-calls.mjs counts by its name).
#[doc(hidden)]
#[inline(always)]
pub fn run_callback<const N: usize>(
    raw: RawCall<N>,
    name: &'static str,
    body: impl for<'e> FnOnce(CallbackArgs<'e, N>) -> Result<Option<Value<'e>>, Thrown>,
) -> sys::napi_value {
    let RawCall { env, info } = raw;
    let run = AssertUnwindSafe(|| {
        let (mut argc, mut argv, mut this) = (N, [ptr::null_mut(); N], ptr::null_mut());
        // SAFETY: env and info are the current call's (RawCall::new); argv has room for argc values.
        let status =
            unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), &mut this, ptr::null_mut()) };
        if status != sys::Status::napi_ok {
            return Err(Error::new(Status::from(status), format!("{name}: cannot read the call")));
        }
        let js = Js::from_raw(env);
        body(CallbackArgs { js, this: js.value(this), args: argv.map(|v| js.value(v)) }).map(|v| v.map(Value::raw))
    });
    let result = catch_unwind(run).unwrap_or_else(|panic| {
        let message = if let Some(s) = panic.downcast_ref::<String>() {
            s.clone()
        } else if let Some(s) = panic.downcast_ref::<&str>() {
            (*s).to_string()
        } else {
            format!("panic from Rust code: {panic:?}")
        };
        Err(Error::new(Status::GenericFailure, message))
    });
    match result {
        Ok(v) => v.unwrap_or(ptr::null_mut()),
        Err(e) => {
            // SAFETY: env is the current callback's; a pending exception is left as it is.
            unsafe { JsError::from(e).throw_into(env) };
            ptr::null_mut()
        }
    }
}

impl<'e> Js<'e> {
    /// `f.call(this, ...args)`; None when it threw (the exception is pending) or the call failed.
    pub fn call<const N: usize>(self, this: Value<'_>, f: Value<'_>, args: [Value<'_>; N]) -> Option<Value<'e>> {
        self.call_raw(this, f, &args.map(Value::raw))
    }

    fn call_raw(self, this: Value<'_>, f: Value<'_>, argv: &[sys::napi_value]) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: this, f and argv are live handles of this env; argv.len() values.
        let status =
            unsafe { sys::napi_call_function(self.env, this.raw(), f.raw(), argv.len(), argv.as_ptr(), &mut out) };
        ok(status).ok().map(|()| self.value(out))
    }

    /// A new function named `name` whose calls run `callback`.
    pub fn function(self, name: &CStr, callback: Callback) -> Option<Value<'e>> {
        let mut out = ptr::null_mut();
        // SAFETY: name is name.count_bytes() bytes of UTF-8; the callback takes no data.
        let status = unsafe {
            sys::napi_create_function(
                self.env,
                name.as_ptr(),
                name.count_bytes() as isize,
                Some(callback),
                ptr::null_mut(),
                &mut out,
            )
        };
        ok(status).ok().map(|()| self.value(out))
    }
}
