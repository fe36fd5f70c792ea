//! The fence: every raw Node-API call and every `unsafe` of the binding is in this module, behind
//! a small safe API the rest of the binding is written against.
//!
//! - [`Js`] is the engine during one native call, [`Value`] a handle of that call: both carry the
//!   call's lifetime, so a handle cannot outlive the call (or the handle scope, [`Js::scope`]) that
//!   made it. Neither is `Send`: Node-API is used only on its environment's thread.
//! - What a value is and holds: [`Js::kind`] (napi-ohos' [`ValueType`]) and the readers of
//!   `values.rs`; strings into buffers in `strings.rs`; properties, elements and new values in
//!   `objects.rs`; calls, native functions and callbacks in `calls.rs`; references in
//!   `references.rs`; the environment's teardown hook in `cleanup.rs`; the one class the binding
//!   defines, with its receiver check, in `class.rs`; Map-likes' `forEach` with a native visitor in
//!   `visit.rs`; Node-only shims in `node.rs`.
//! - Where ArkTS's Node-API differs from Node's (docs/arkts-napi.md), the fence is right on both;
//!   with the test-only cargo feature `arkts-semantics` it behaves as ArkTS does where the host can
//!   imitate it (`arkts.rs`), and the Node suite runs once more against that build.
//!
//! Raw calls are used where napi-ohos has no safe equivalent, or where its equivalent costs more
//! on the hot path than the call it wraps (each such place says so in one sentence).

mod calls;
mod class;
mod cleanup;
mod objects;
mod references;
mod strings;
mod values;
mod visit;

#[cfg(feature = "arkts-semantics")]
mod arkts;
#[cfg(not(target_env = "ohos"))]
mod node;

use std::marker::PhantomData;

use napi_ohos::bindgen_prelude::{Env, ToNapiValue, Unknown};
use napi_ohos::sys;
use napi_ohos::JsValue;
pub use napi_ohos::ValueType;

pub(crate) use calls::callback;
#[doc(hidden)]
pub use calls::{run_callback, RawCall};
pub use calls::{Callback, Thrown};
pub use class::{Instances, Method, Wrapped};
pub use cleanup::TeardownHook;
pub use references::{EnvHandle, Strong, WeakFunction};
pub use visit::{Visited, Visitor};

/// The engine during one native call (or a handle scope within it), on its JS thread.
#[derive(Clone, Copy)]
pub struct Js<'e> {
    env: sys::napi_env,
    _call: PhantomData<&'e ()>,
}

/// A JS value's handle, valid while the call (or handle scope) `'e` lasts.
#[derive(Clone, Copy)]
pub struct Value<'e> {
    raw: sys::napi_value,
    _call: PhantomData<&'e ()>,
}

impl<'e> Js<'e> {
    /// The engine of a napi-ohos callback (an `Env` is only handed to code running in one).
    pub fn of(env: &'e Env) -> Self {
        Self::from_raw(env.raw())
    }

    fn from_raw(env: sys::napi_env) -> Self {
        Self { env, _call: PhantomData }
    }

    /// napi-ohos' view of the same environment, for its safe API (errors, objects, buffers).
    pub fn env(self) -> Env {
        Env::from_raw(self.env)
    }

    /// Whether two engines are the same environment.
    pub fn same_env(self, other: Js<'_>) -> bool {
        self.env == other.env
    }

    fn value(self, raw: sys::napi_value) -> Value<'e> {
        Value { raw, _call: PhantomData }
    }

    /// A value napi-ohos handed to this call.
    pub fn unknown(self, v: &Unknown<'e>) -> Value<'e> {
        self.value(v.raw())
    }

    /// The handle of a value napi-ohos made in this call (an object, an `ArrayBuffer`).
    pub fn handle<'v, V: JsValue<'v>>(self, v: &V) -> Value<'e> {
        self.value(v.raw())
    }

    /// Runs `f` in a handle scope of its own: handles made inside are released when it returns
    /// (a drain maps thousands of documents in one native call). None when no scope can be
    /// opened. `R` cannot hold a handle of the scope: `'s` is only known inside `f`.
    pub fn scope<R>(self, f: impl for<'s> FnOnce(Js<'s>) -> R) -> Option<R> {
        let mut scope = std::ptr::null_mut();
        // SAFETY: env is this call's live env, on its thread.
        if unsafe { sys::napi_open_handle_scope(self.env, &mut scope) } != sys::Status::napi_ok {
            return None;
        }
        let out = f(Js::from_raw(self.env));
        // SAFETY: opened above on this env; nothing made in it escapes (see the signature).
        unsafe { sys::napi_close_handle_scope(self.env, scope) };
        Some(out)
    }
}

impl<'e> Value<'e> {
    fn raw(self) -> sys::napi_value {
        self.raw
    }
}

/// A handle returned from a method as it is.
impl ToNapiValue for Value<'_> {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi_ohos::Result<sys::napi_value> {
        Ok(val.raw)
    }
}

/// A Node-API status as a plain result: `Err(())` when the call failed (a JS exception may be
/// pending; the caller reports it).
fn ok(status: sys::napi_status) -> Result<(), ()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(())
    }
}
