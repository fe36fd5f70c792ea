//! How a `RumPipeline` begins and ends where JS may no longer run: the receiver check of its
//! constructor, the JS environment's teardown hook, and the drain of a collected pipeline.
//!
//! Nothing queued is lost on any of these paths: the queue is processed without timers and
//! without the event mapper, and the writer is flushed.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::rc;
use std::sync::Weak;
use std::time::Duration;

use napi_ohos::bindgen_prelude::*;
use napi_ohos::sys;

use super::host::HostDispatcher;
use crate::core::registry::Shared;
use crate::core::storage::FlushOutcome;
use crate::log;

/// Whether the constructor's receiver can become a pipeline. Called without `new`, the receiver is
/// the global object (which would become the pipeline, alive forever) or whatever `call` was given;
/// an object that already wraps a native value makes the wrap fail after the constructor returned,
/// and the pipeline built for it (its writer thread, its open directory) would never be freed.
pub fn is_fresh_receiver(env: &Env, this: sys::napi_value) -> bool {
    let raw = env.raw();
    let (mut global, mut is_global, mut wrapped) = (ptr::null_mut(), false, ptr::null_mut());
    // SAFETY: this is the receiver of the current call, on env's thread; napi_unwrap only reads
    // (and fails without throwing on an object that wraps nothing).
    unsafe {
        if sys::napi_get_global(raw, &mut global) != sys::Status::napi_ok
            || sys::napi_strict_equals(raw, this, global, &mut is_global) != sys::Status::napi_ok
        {
            return false;
        }
        let already = sys::napi_unwrap(raw, this, &mut wrapped) == sys::Status::napi_ok;
        !is_global && !already
    }
}

/// The pipeline's registration as a teardown hook of its JS environment (a script that never
/// calls `stop()`, a worker terminated with events queued). The hook's argument lives at a fixed
/// place from [`Teardown::register`] to this value's drop, which removes the hook (unless it ran)
/// and frees it: a collected pipeline leaves nothing behind.
pub struct Teardown {
    hook: NonNull<Hook>,
}

/// What the teardown hook needs.
struct Hook {
    env: sys::napi_env,
    dispatcher: rc::Weak<RefCell<HostDispatcher>>,
    shared: Weak<Shared>,
    timeout: Duration,
    has_mapper: Cell<bool>,
    /// The hook ran: the environment is ending, and `env` must not be used any more.
    ran: Cell<bool>,
}

impl Teardown {
    pub fn register(
        env: &Env,
        dispatcher: rc::Weak<RefCell<HostDispatcher>>,
        shared: Weak<Shared>,
        timeout: Duration,
    ) -> Result<Self> {
        let hook = Box::new(Hook {
            env: env.raw(),
            dispatcher,
            shared,
            timeout,
            has_mapper: Cell::new(false),
            ran: Cell::new(false),
        });
        let hook = NonNull::from(Box::leak(hook));
        // SAFETY: env is this call's live env; the argument stays valid until our drop removes
        // the hook and frees it.
        let status = unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(on_env_teardown), hook.as_ptr().cast()) };
        if status != sys::Status::napi_ok {
            // SAFETY: never registered: freed once, here.
            drop(unsafe { Box::from_raw(hook.as_ptr()) });
            return Err(Error::new(
                Status::GenericFailure,
                "RumPipeline: cannot register the environment teardown hook",
            ));
        }
        Ok(Self { hook })
    }

    fn hook(&self) -> &Hook {
        // SAFETY: the hook is owned by self and freed only in its drop.
        unsafe { self.hook.as_ref() }
    }

    /// Whether an event mapper is installed (the drains here run without it, and say so).
    pub fn set_has_mapper(&self, has: bool) {
        self.hook().has_mapper.set(has);
    }

    /// The pipeline is being collected (a GC finalizer: no JS may be called). Events still queued
    /// are processed now, so none is lost.
    pub fn collected(&self, dispatcher: &RefCell<HostDispatcher>) {
        let has_mapper = self.hook().has_mapper.get();
        // A panic may not unwind into the engine (this runs in an `extern "C"` finalizer).
        let _ =
            catch_unwind(AssertUnwindSafe(|| drain_without_js(dispatcher, has_mapper, "a RumPipeline was collected")));
    }
}

impl Drop for Teardown {
    fn drop(&mut self) {
        let (ran, env) = (self.hook().ran.get(), self.hook().env);
        if !ran {
            // SAFETY: the hook was registered on env, which is alive (its teardown hook has not
            // run), with this exact function and argument.
            let status =
                unsafe { sys::napi_remove_env_cleanup_hook(env, Some(on_env_teardown), self.hook.as_ptr().cast()) };
            if status != sys::Status::napi_ok {
                // The engine may still call it: leaking the hook is the only safe choice.
                log::warn("cannot remove the environment teardown hook of a collected RumPipeline");
                return;
            }
        }
        // SAFETY: allocated by Box::leak in register; the hook no longer refers to it (removed
        // above, or already run), and nothing else does.
        drop(unsafe { Box::from_raw(self.hook.as_ptr()) });
    }
}

/// The environment is being torn down (Node: main thread exit or `worker.terminate()`; ArkTS: a
/// worker or the ability ending). No JS can run any more: this thread's queue is processed
/// without timers and without the event mapper, and the writer is flushed. Whether the pipeline's
/// finalizer runs after this (it does on Node, during the same teardown) or never, nothing queued
/// is lost and nothing touches `env` later.
unsafe extern "C" fn on_env_teardown(arg: *mut c_void) {
    // SAFETY: arg is the Hook a Teardown registered and still owns (its drop removes the hook
    // before freeing it, unless the hook already ran).
    let hook = unsafe { &*arg.cast::<Hook>() };
    hook.ran.set(true);
    let run = AssertUnwindSafe(|| {
        if let Some(d) = hook.dispatcher.upgrade() {
            drain_without_js(&d, hook.has_mapper.get(), "the JS environment ended");
        }
        if let Some(shared) = hook.shared.upgrade() {
            if !matches!(shared.storage.flush(hook.timeout), FlushOutcome::Done) {
                log::warn("the writer did not finish before the JS environment ended");
            }
        }
    });
    // A panic may not unwind into the engine.
    let _ = catch_unwind(run);
}

/// Processes this thread's queue where no JS may run (a GC finalizer, the environment's
/// teardown): the scheduler is detached first, so no `setTimeout` is called, and the event mapper
/// is removed (queued events are written without it, logged).
fn drain_without_js(dispatcher: &RefCell<HostDispatcher>, has_mapper: bool, when: &str) {
    let Ok(mut d) = dispatcher.try_borrow_mut() else { return };
    d.scheduler().detach();
    d.set_mapper(None);
    if has_mapper && d.queue_len() > 0 {
        log::warn(&format!("{when} with queued events: they are written without the event mapper"));
    }
    d.drain();
}
