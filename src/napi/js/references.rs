//! What the binding keeps between calls: its environment, strong references to JS functions
//! (napi-ohos' `UnknownRef`), and weak references to functions it can make again.

use std::cell::{Cell, RefCell};
use std::ptr;

use napi_ohos::bindgen_prelude::FromNapiValue;
use napi_ohos::sys;
use napi_ohos::{JsValue, UnknownRef};

use super::{Js, Value};

/// The environment of the JS thread an object lives on, for calls made later on that thread (a
/// timer scheduled from the dispatcher, the event mapper). Kept only by objects that are dropped
/// or detached before their environment ends (the teardown hook detaches them), and not `Send`.
#[derive(Clone)]
pub struct EnvHandle {
    env: sys::napi_env,
}

impl EnvHandle {
    /// The engine, for a call made on this thread within a native call or a timer's callback.
    pub fn js(&self) -> Js<'_> {
        Js::from_raw(self.env)
    }
}

impl<'e> Js<'e> {
    /// This environment, kept for later calls on its thread ([`EnvHandle`]).
    pub fn keep_env(self) -> EnvHandle {
        EnvHandle { env: self.env }
    }
}

/// A strong reference to a JS value, deleted when dropped or released, on the thread that made
/// it (it is not `Send`).
pub struct Strong {
    env: EnvHandle,
    inner: RefCell<Option<UnknownRef<false>>>,
}

impl Strong {
    pub fn new(js: Js<'_>, value: Value<'_>) -> napi_ohos::Result<Self> {
        // SAFETY: value is a live handle of js's env; a reference with a count of 1 is made.
        let inner = unsafe { UnknownRef::<false>::from_napi_value(js.env, value.raw()) }?;
        Ok(Self { env: js.keep_env(), inner: RefCell::new(Some(inner)) })
    }

    /// The value, or None once released.
    pub fn get<'e>(&self, js: Js<'e>) -> Option<Value<'e>> {
        let inner = self.inner.borrow();
        let env = js.env();
        let raw = inner.as_ref()?.get_value(&env).ok()?.raw();
        (!raw.is_null()).then(|| js.value(raw))
    }

    /// Deletes the reference now, while the environment is known to be alive (its teardown
    /// hook); later calls and the drop do nothing.
    pub fn release(&self) {
        if let Some(r) = self.inner.borrow_mut().take() {
            let _ = r.unref(&self.env.js().env());
        }
    }
}

impl Drop for Strong {
    fn drop(&mut self) {
        self.release();
    }
}

/// A weak reference to a function the binding makes once and finds again while the engine keeps
/// it: making a function costs the engine far more than finding it through a weak reference
/// (counted in docs/benchmarks.md, "The caller's cost, counted"). napi-ohos' `Ref` has no weak
/// form, hence the raw calls. The reference itself is freed with the environment.
#[derive(Default)]
pub struct WeakFunction {
    raw: Cell<sys::napi_ref>,
}

impl WeakFunction {
    /// The function, or None before it was made or once the engine collected it.
    pub fn get<'e>(&self, js: Js<'e>) -> Option<Value<'e>> {
        let raw = self.raw.get();
        if raw.is_null() {
            return None;
        }
        let mut out = ptr::null_mut();
        // SAFETY: raw is a reference of this env (an owner lives in one env). Null when collected.
        let status = unsafe { sys::napi_get_reference_value(js.env, raw, &mut out) };
        (status == sys::Status::napi_ok && !out.is_null()).then(|| js.value(out))
    }

    /// Keeps `f` weakly (a count-0 reference keeps nothing alive), replacing the reference to a
    /// collected one.
    pub fn set(&self, js: Js<'_>, f: Value<'_>) {
        let mut weak = ptr::null_mut();
        // SAFETY: f is a live handle of this env.
        if unsafe { sys::napi_create_reference(js.env, f.raw(), 0, &mut weak) } == sys::Status::napi_ok {
            let old = self.raw.replace(weak);
            if !old.is_null() {
                // SAFETY: old is a reference of this env, no longer used.
                let _ = unsafe { sys::napi_delete_reference(js.env, old) };
            }
        }
    }
}
