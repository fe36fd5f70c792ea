//! A teardown hook of the JS environment (`napi_add_env_cleanup_hook`): runs when the environment
//! ends (Node: the main thread's exit or `worker.terminate()`; ArkTS: a worker or the ability
//! ending), unless it was removed first.
//!
//! Raw calls: napi-ohos' `Env::remove_env_cleanup_hook` does not free the hook's data, and a
//! collected pipeline must leave nothing behind.

use std::cell::Cell;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use napi_ohos::sys;

use super::Js;

/// A hook registered with its state; dropping it removes the hook (unless it ran) and frees both.
pub struct TeardownHook<S: 'static> {
    hook: NonNull<Hook<S>>,
}

struct Hook<S> {
    env: sys::napi_env,
    state: S,
    on_teardown: fn(&S),
    /// The hook ran: the environment is ending, and `env` must not be used any more.
    ran: Cell<bool>,
}

impl<S: 'static> TeardownHook<S> {
    /// Registers `on_teardown(&state)` to run when the environment ends. No JS may run then: the
    /// function must not call into the engine. A panic in it is caught.
    pub fn register(js: Js<'_>, state: S, on_teardown: fn(&S)) -> Result<Self, ()> {
        let hook = NonNull::from(Box::leak(Box::new(Hook { env: js.env, state, on_teardown, ran: Cell::new(false) })));
        // SAFETY: env is this call's live env; the argument stays valid until our drop removes
        // the hook and frees it.
        let status = unsafe { sys::napi_add_env_cleanup_hook(js.env, Some(run::<S>), hook.as_ptr().cast()) };
        if status != sys::Status::napi_ok {
            // SAFETY: never registered: freed once, here.
            drop(unsafe { Box::from_raw(hook.as_ptr()) });
            return Err(());
        }
        Ok(Self { hook })
    }

    fn hook(&self) -> &Hook<S> {
        // SAFETY: the hook is owned by self and freed only in its drop.
        unsafe { self.hook.as_ref() }
    }

    pub fn state(&self) -> &S {
        &self.hook().state
    }
}

impl<S: 'static> Drop for TeardownHook<S> {
    fn drop(&mut self) {
        let (ran, env) = (self.hook().ran.get(), self.hook().env);
        if !ran {
            // SAFETY: registered on env, which is alive (its teardown hook has not run), with this
            // exact function and argument.
            let status = unsafe { sys::napi_remove_env_cleanup_hook(env, Some(run::<S>), self.hook.as_ptr().cast()) };
            if status != sys::Status::napi_ok {
                // The engine may still call it: leaking the hook is the only safe choice.
                crate::log::warn("cannot remove an environment teardown hook; it is kept");
                return;
            }
        }
        // SAFETY: allocated by Box::leak in register; the engine no longer refers to it (removed
        // above, or already run), and nothing else does.
        drop(unsafe { Box::from_raw(self.hook.as_ptr()) });
    }
}

/// The engine's call of a hook.
unsafe extern "C" fn run<S>(arg: *mut c_void) {
    // SAFETY: arg is the Hook a TeardownHook registered and still owns (its drop removes the hook
    // before freeing it, unless the hook already ran).
    let hook = unsafe { &*arg.cast::<Hook<S>>() };
    hook.ran.set(true);
    // A panic may not unwind into the engine.
    let _ = catch_unwind(AssertUnwindSafe(|| (hook.on_teardown)(&hook.state)));
}
