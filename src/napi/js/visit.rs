//! A Map-like's `forEach` called with a native visitor: one engine call for the whole map and none
//! per entry (a JS `Map`, or an ArkTS `collections.Map`, which is how Sendable events carry their
//! attributes).
//!
//! The visitor function carries no state: it finds the visit in progress through a per-thread
//! slot, which holds it only during [`Visitor::for_each`] and is emptied while an entry is
//! handled. So a Map-like that keeps the function and calls it later finds nothing, one that calls
//! it from within another map's `forEach` writes to that map (as that map's own visitor would), and
//! a getter that calls it while an entry is being read does nothing.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

use super::{callback, Js, Value, WeakFunction};

/// What a visit hands each entry to: `(value, key)`, in the entry's own handle scope; `false`
/// ends the iteration.
type Visit<'a> = dyn for<'c> FnMut(Js<'c>, Value<'c>, Value<'c>) -> bool + 'a;

thread_local! {
    /// The visit in progress on this thread: a `*mut &mut Visit`, or null.
    static VISITING: Cell<*mut c_void> = const { Cell::new(ptr::null_mut()) };
}

/// The visitor function of one owner (a pipeline) on its JS thread, made at its first use and
/// again whenever the engine collected it.
#[derive(Default)]
pub struct Visitor {
    kept: WeakFunction,
}

/// How a `forEach` call ended.
pub enum Visited<E> {
    /// Every entry was visited.
    All,
    /// `forEach` threw before it gave any entry (a platform that refuses a native callback there,
    /// or a Map-like's own `forEach` failing); the exception is cleared, nothing was visited.
    Refused,
    /// `visit` ended the iteration with this error (the exception it threw is cleared).
    Stopped(E),
    /// `forEach` threw after some entries, or the visitor could not be made: the exception, if
    /// any, is pending for the caller to report.
    Failed,
}

impl Visitor {
    /// `this.forEach(visitor)`, handing each `(value, key)` to `visit`; an `Err` from it ends the
    /// iteration. `visitor` is [`Visitor::function`]'s (a caller reading many maps in one call
    /// keeps it for the call).
    pub fn for_each<'e, E>(
        js: Js<'e>,
        this: Value<'_>,
        for_each: Value<'_>,
        visitor: Value<'_>,
        mut visit: impl for<'c> FnMut(Js<'c>, Value<'c>, Value<'c>) -> Result<(), E>,
    ) -> Visited<E> {
        let (mut visited, mut error) = (false, None);
        let mut each = |js: Js<'_>, value: Value<'_>, key: Value<'_>| -> bool {
            if error.is_some() {
                return false;
            }
            visited = true;
            match visit(js, value, key) {
                Ok(()) => true,
                Err(e) => {
                    error = Some(e);
                    false
                }
            }
        };
        let mut each: &mut Visit<'_> = &mut each;
        let outer = VISITING.with(|v| v.replace((&mut each as *mut &mut Visit<'_>).cast()));
        let result = js.call(this, for_each, [visitor]);
        VISITING.with(|v| v.set(outer));
        if let Some(e) = error {
            js.take_exception();
            return Visited::Stopped(e);
        }
        match result {
            Some(_) => Visited::All,
            None if !visited => {
                js.take_exception();
                Visited::Refused
            }
            None => Visited::Failed,
        }
    }

    /// The visitor function: kept, or made now and kept (None when the engine refuses to make
    /// one).
    pub fn function<'e>(&self, js: Js<'e>) -> Option<Value<'e>> {
        if let Some(f) = self.kept.get(js) {
            return Some(f);
        }
        let f = Self::make(js)?;
        self.kept.set(js, f);
        Some(f)
    }

    /// A visitor function for one call, kept nowhere (a caller without a pipeline).
    pub fn make<'e>(js: Js<'e>) -> Option<Value<'e>> {
        js.function(c"visit", visit_entry)
    }
}

callback! {
    /// The visitor function's callback: hands `(value, key)` to the visit in progress, or does
    /// nothing when there is none. Ends the iteration by throwing when the visit says so.
    fn visit_entry[2]("visit") |call| {
        // Taken while this entry is handled: a getter that calls the visitor again finds nothing.
        let state = VISITING.with(|v| v.replace(ptr::null_mut()));
        if !state.is_null() {
            // SAFETY: `state` is the `&mut Visit` of the `for_each` call in progress on this
            // thread, alive until it returns, and not otherwise used while VISITING is empty.
            let each = unsafe { &mut *state.cast::<&mut Visit<'_>>() };
            let [value, key] = call.args;
            if !each(call.js, value, key) {
                call.js.throw_error(c"rum-native: attribute error");
            }
        }
        VISITING.with(|v| v.set(state));
        Ok(None)
    }
}
