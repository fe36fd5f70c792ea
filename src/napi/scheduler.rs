//! The core's scheduler on a JS thread: timers through the thread's own `setTimeout(fn, delay)`,
//! taken from the global object, so the same code yields on ArkTS (where it is a libuv timer on the
//! thread's loop) and on Node.js.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use napi_ohos::bindgen_prelude::*;

use super::args::take_exception;
use super::clock::HostClock;
use super::js::{EnvHandle, Js, Strong};
use crate::core::dispatch::Dispatcher;
use crate::core::seam::{Scheduler, Timer};
use crate::log;

/// The dispatcher of one JS thread.
pub type HostDispatcher = Dispatcher<HostClock, HostScheduler>;

/// Where a fired timer is delivered: the pipeline sets it once its dispatcher exists.
pub type TimerTarget = Rc<RefCell<Option<Box<dyn Fn(Timer)>>>>;

/// Schedules the dispatcher's timers with the JS thread's `setTimeout(fn, delay)`.
pub struct HostScheduler {
    env: EnvHandle,
    set_timeout: Strong,
    turn_end: Strong,
    slice: Strong,
    views_due: Strong,
    /// Set by [`HostScheduler::detach`]: no more timers, no more JS.
    detached: Cell<bool>,
}

impl HostScheduler {
    pub fn new(js: Js<'_>, target: TimerTarget) -> Result<Self> {
        let missing = || Error::new(Status::FunctionExpected, "this JS engine has no global setTimeout");
        let set_timeout = js.global().and_then(|g| js.named(g, c"setTimeout")).ok_or_else(missing)?;
        if js.kind(set_timeout) != ValueType::Function {
            return Err(missing());
        }
        let env = js.env();
        let make = |name: &str, timer: Timer| -> Result<Strong> {
            let target = target.clone();
            let f = env.create_function_from_closure::<(), (), _>(name, move |_ctx| -> Result<()> {
                // A fired timer never throws into the event loop: a panic is caught and logged.
                let run = AssertUnwindSafe(|| {
                    if let Some(deliver) = target.borrow().as_ref() {
                        deliver(timer);
                    }
                });
                if catch_unwind(run).is_err() {
                    log::error("a scheduled slice panicked; the pipeline keeps running");
                }
                Ok(())
            })?;
            Strong::new(js, js.handle(&f))
        };
        Ok(Self {
            env: js.keep_env(),
            set_timeout: Strong::new(js, set_timeout)?,
            turn_end: make("rumTurnEnd", Timer::TurnEnd)?,
            slice: make("rumSlice", Timer::Slice)?,
            views_due: make("rumViewsDue", Timer::ViewsDue)?,
            detached: Cell::new(false),
        })
    }

    /// From now on `schedule` does nothing, so the dispatcher can be drained where no JS may run
    /// (a GC finalizer, the environment's teardown). Releases the JS functions it held.
    pub fn detach(&self) {
        self.detached.set(true);
        self.set_timeout.release();
        self.turn_end.release();
        self.slice.release();
        self.views_due.release();
    }
}

impl Scheduler for HostScheduler {
    fn schedule_in(&self, timer: Timer, delay_ms: u32) -> bool {
        if self.detached.get() {
            return false;
        }
        let js = self.env.js();
        let callback = match timer {
            Timer::TurnEnd => &self.turn_end,
            Timer::Slice => &self.slice,
            Timer::ViewsDue => &self.views_due,
        };
        let (Some(set_timeout), Some(callback)) = (self.set_timeout.get(js), callback.get(js)) else {
            log::error("cannot schedule a slice: the timer function is gone");
            return false;
        };
        let called = match (js.uint32(delay_ms), js.undefined()) {
            (Some(delay), Some(undefined)) => js.call(undefined, set_timeout, [callback, delay]).is_some(),
            _ => false,
        };
        if !called {
            let why = take_exception(js).unwrap_or_default();
            log::error(&format!("cannot schedule a slice with setTimeout: {why}"));
        }
        called
    }
}
