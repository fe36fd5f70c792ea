//! How a `RumPipeline` begins and ends where JS may no longer run: the receiver check of its
//! constructor, the JS environment's teardown hook, and the drain of a collected pipeline.
//!
//! Nothing queued is lost on any of these paths: the queue is processed without timers and
//! without the event mapper, and the writer is flushed.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc;
use std::sync::Weak;
use std::time::Duration;

use super::js::{Js, TeardownHook, Value};
use super::scheduler::HostDispatcher;
use crate::core::registry::Pipeline;
use crate::core::storage::FlushOutcome;
use crate::log;

/// Whether the constructor's receiver can become a pipeline. Called without `new`, the receiver is
/// the global object (which would become the pipeline, alive forever) or whatever `call` was given;
/// an object that already wraps a native value (of any addon) cannot wrap the pipeline.
pub fn is_fresh_receiver(js: Js<'_>, this: Value<'_>) -> bool {
    let Some(global) = js.global() else { return false };
    !js.strict_equals(this, global) && js.wraps_nothing(this)
}

/// The pipeline's registration as a teardown hook of its JS environment (a script that never
/// calls `stop()`, a worker terminated with events queued); removed when the pipeline is dropped.
pub struct Teardown {
    hook: TeardownHook<Hook>,
}

/// What the teardown hook needs.
struct Hook {
    dispatcher: rc::Weak<RefCell<HostDispatcher>>,
    pipeline: Weak<Pipeline>,
    timeout: Duration,
    has_mapper: Cell<bool>,
}

impl Teardown {
    pub fn register(
        js: Js<'_>,
        dispatcher: rc::Weak<RefCell<HostDispatcher>>,
        pipeline: Weak<Pipeline>,
        timeout: Duration,
    ) -> napi_ohos::Result<Self> {
        let hook = Hook { dispatcher, pipeline, timeout, has_mapper: Cell::new(false) };
        let hook = TeardownHook::register(js, hook, on_env_teardown).map_err(|()| {
            napi_ohos::Error::new(
                napi_ohos::Status::GenericFailure,
                "RumPipeline: cannot register the environment teardown hook",
            )
        })?;
        Ok(Self { hook })
    }

    /// Whether an event mapper is installed (the drains here run without it, and say so).
    pub fn set_has_mapper(&self, has: bool) {
        self.hook.state().has_mapper.set(has);
    }

    /// The pipeline is being collected (a GC finalizer: no JS may be called). Events still queued
    /// are processed now, so none is lost.
    pub fn collected(&self, dispatcher: &RefCell<HostDispatcher>) {
        let has_mapper = self.hook.state().has_mapper.get();
        // A panic may not unwind into the engine (this runs in an `extern "C"` finalizer).
        let _ =
            catch_unwind(AssertUnwindSafe(|| drain_without_js(dispatcher, has_mapper, "a RumPipeline was collected")));
    }
}

/// The environment is being torn down (Node: main thread exit or `worker.terminate()`; ArkTS: a
/// worker or the ability ending). No JS can run any more: this thread's queue is processed
/// without timers and without the event mapper, and the writer is flushed. Whether the pipeline's
/// finalizer runs after this (it does on Node, during the same teardown) or never, nothing queued
/// is lost and nothing touches the environment later.
fn on_env_teardown(hook: &Hook) {
    if let Some(d) = hook.dispatcher.upgrade() {
        drain_without_js(&d, hook.has_mapper.get(), "the JS environment ended");
    }
    if let Some(pipeline) = hook.pipeline.upgrade() {
        if !matches!(pipeline.storage.flush(hook.timeout), FlushOutcome::Done) {
            log::warn("the writer did not finish before the JS environment ended");
        }
    }
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
