//! The binding's class: defined here (constructor and prototype methods), its instances wrapped
//! and found again with a receiver check that holds on Node and on ArkTS alike.
//!
//! A method is a function made by `napi_create_function`, not a method of `napi_define_class`:
//! Node gives class methods a V8 signature, and the engine then throws its unnamed `TypeError:
//! Illegal invocation` before any native code runs; ours checks the receiver and names the method.
//!
//! Receiver identity: `napi_unwrap` alone does not prove that an object's native pointer is one of
//! ours. On Node another addon's wrapped object unwraps to its own pointer; on ArkTS the wrapper is
//! an ordinary property that a script can copy to any object, and `napi_wrap` re-wraps an object
//! that already wraps something (docs/arkts-napi.md). So every instance is registered here, per
//! JS thread and environment, from its wrap to its finalizer, and a pointer is read as a `T` only
//! when it is one of the live instances; where the wrapper can be copied (ArkTS), the object must
//! also be the very one that was wrapped. Nothing is added to the object a user holds (no type
//! tag): `JSON.stringify` of it, or of an object holding it, behaves as for any class instance.

use std::cell::{Cell, RefCell};
use std::ffi::{c_void, CStr};
use std::ptr;
use std::thread::LocalKey;

use napi_ohos::sys;

use super::{ok, Callback, Js, Value};

/// A Rust type wrapped into JS objects by [`Js::wrap`].
pub trait Wrapped: Sized + 'static {
    /// The live instances of the type on each JS thread.
    fn instances() -> &'static LocalKey<Instances<Self>>;
}

/// The live instances of `T` on one JS thread: what [`Js::unwrap`] accepts.
pub struct Instances<T> {
    live: RefCell<Vec<Live<T>>>,
    /// The environment and pointer of the last receiver accepted, checked first: the common case
    /// costs one comparison. Where a wrapper can be copied it only saves the registry search.
    last: Cell<(sys::napi_env, *const T)>,
}

struct Live<T> {
    env: sys::napi_env,
    ptr: *const T,
    /// A weak reference to the wrapped object, where the wrapper can be copied to another one.
    #[cfg(any(target_env = "ohos", feature = "arkts-semantics"))]
    object: sys::napi_ref,
}

impl<T> Instances<T> {
    pub const fn new() -> Self {
        Self { live: RefCell::new(Vec::new()), last: Cell::new((ptr::null_mut(), ptr::null())) }
    }

    fn find(&self, env: sys::napi_env, ptr: *const T) -> Option<usize> {
        self.live.borrow().iter().position(|l| l.env == env && l.ptr == ptr)
    }

    /// Forgets a finalized instance; returns its entry.
    fn remove(&self, env: sys::napi_env, ptr: *const T) -> Option<Live<T>> {
        if self.last.get() == (env, ptr) {
            self.last.set((ptr::null_mut(), ptr::null()));
        }
        let i = self.find(env, ptr)?;
        Some(self.live.borrow_mut().swap_remove(i))
    }
}

impl<T> Default for Instances<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A prototype method: its JS name and its callback.
pub struct Method {
    pub name: &'static CStr,
    pub callback: Callback,
}

impl<'e> Js<'e> {
    /// Defines class `name`: `constructor` runs for `new name(...)` and each method becomes a
    /// writable, enumerable, configurable function of its prototype (the attributes napi-derive
    /// gives methods), named as the method, without a V8 signature.
    pub fn define_class(self, name: &CStr, constructor: Callback, methods: &[Method]) -> Option<Value<'e>> {
        let mut class = ptr::null_mut();
        // SAFETY: name is name.count_bytes() bytes of UTF-8; no properties are given here.
        let status = unsafe {
            sys::napi_define_class(
                self.env,
                name.as_ptr(),
                name.count_bytes() as isize,
                Some(constructor),
                ptr::null_mut(),
                0,
                ptr::null(),
                &mut class,
            )
        };
        ok(status).ok()?;
        let class = self.value(class);
        let prototype = self.named(class, c"prototype")?;
        let mut properties = Vec::with_capacity(methods.len());
        for m in methods {
            let function = self.function(m.name, m.callback)?;
            properties.push(super::objects::data_property(m.name.as_ptr(), ptr::null_mut(), function.raw()));
        }
        // SAFETY: prototype and the functions are live handles; the names are static C strings.
        ok(unsafe { sys::napi_define_properties(self.env, prototype.raw(), properties.len(), properties.as_ptr()) })
            .ok()?;
        Some(class)
    }

    /// Whether `this` wraps nothing yet (false when it wraps a native value of any addon).
    pub fn wraps_nothing(self, this: Value<'_>) -> bool {
        raw_unwrap(self.env, this.raw()).is_none()
    }

    /// Wraps `value` into `this` and registers it as a live instance until the object's finalizer
    /// frees it. Gives `value` back when the engine refuses (an object that wraps something).
    pub fn wrap<T: Wrapped>(self, this: Value<'_>, value: T) -> Result<(), T> {
        if !self.wraps_nothing(this) {
            return Err(value);
        }
        let ptr = Box::into_raw(Box::new(value));
        if raw_wrap(self.env, this.raw(), ptr.cast(), finalize::<T>).is_err() {
            // SAFETY: not wrapped: still ours alone.
            return Err(*unsafe { Box::from_raw(ptr) });
        }
        let live = Live {
            env: self.env,
            ptr: ptr.cast_const(),
            #[cfg(any(target_env = "ohos", feature = "arkts-semantics"))]
            object: {
                let mut weak = ptr::null_mut();
                // SAFETY: this is a live handle; a count-0 reference keeps nothing alive.
                let _ = unsafe { sys::napi_create_reference(self.env, this.raw(), 0, &mut weak) };
                weak
            },
        };
        let _ = T::instances().try_with(|i| i.live.borrow_mut().push(live));
        Ok(())
    }

    /// The live `T` that `this` wraps, or None when it wraps nothing, something else, another
    /// environment's instance, or (where a wrapper can be copied) is not the object wrapped.
    ///
    /// Soundness: the pointer is read as a `T` only while it is registered, that is between its
    /// wrap and the finalizer that frees it, and on this thread, where that finalizer runs. The
    /// object wrapping it is alive for this call (it is the call's receiver), so its finalizer
    /// cannot run before `'e` ends; where a copied wrapper could point at another object's `T`,
    /// the object itself is compared.
    pub fn unwrap<T: Wrapped>(self, this: Value<'_>) -> Option<&'e T> {
        let ptr = raw_unwrap(self.env, this.raw())?.cast_const().cast::<T>();
        let accepted = T::instances()
            .try_with(|i| {
                let copyable = cfg!(any(target_env = "ohos", feature = "arkts-semantics"));
                if !copyable && i.last.get() == (self.env, ptr) {
                    return true;
                }
                let live = i.live.borrow();
                let Some(entry) = live.iter().find(|l| l.env == self.env && l.ptr == ptr) else { return false };
                #[cfg(any(target_env = "ohos", feature = "arkts-semantics"))]
                if !self.is_referenced(entry.object, this) {
                    return false;
                }
                let _ = entry;
                i.last.set((self.env, ptr));
                true
            })
            .unwrap_or(false);
        // SAFETY: a registered, live T of this thread, used for this call (see above).
        accepted.then(|| unsafe { &*ptr })
    }

    /// Whether `object` is the value `reference` refers to.
    #[cfg(any(target_env = "ohos", feature = "arkts-semantics"))]
    fn is_referenced(self, reference: sys::napi_ref, object: Value<'_>) -> bool {
        if reference.is_null() {
            // The reference could not be made at the wrap: no object can be proven to be it.
            return false;
        }
        let mut target = ptr::null_mut();
        // SAFETY: reference belongs to this env (an instance of this env's registry).
        let status = unsafe { sys::napi_get_reference_value(self.env, reference, &mut target) };
        status == sys::Status::napi_ok && !target.is_null() && self.strict_equals(self.value(target), object)
    }
}

/// The native pointer an object wraps.
fn raw_unwrap(env: sys::napi_env, object: sys::napi_value) -> Option<*mut c_void> {
    #[cfg(feature = "arkts-semantics")]
    return super::arkts::unwrap(env, object);
    #[cfg(not(feature = "arkts-semantics"))]
    {
        let mut native = ptr::null_mut();
        // SAFETY: object is a live handle of env; napi_unwrap fails without throwing on a
        // primitive or an object that wraps nothing.
        let status = unsafe { sys::napi_unwrap(env, object, &mut native) };
        (status == sys::Status::napi_ok && !native.is_null()).then_some(native)
    }
}

type Finalizer = unsafe extern "C" fn(sys::napi_env, *mut c_void, *mut c_void);

/// Wraps `native` into `object`, with `finalize` run when the object is collected.
fn raw_wrap(env: sys::napi_env, object: sys::napi_value, native: *mut c_void, finalize: Finalizer) -> Result<(), ()> {
    #[cfg(feature = "arkts-semantics")]
    return super::arkts::wrap(env, object, native, finalize);
    #[cfg(not(feature = "arkts-semantics"))]
    // SAFETY: object is a live handle of env; native stays valid until finalize runs. No
    // reference is asked for: the registry does not keep the object alive.
    ok(unsafe { sys::napi_wrap(env, object, native, Some(finalize), ptr::null_mut(), ptr::null_mut()) })
}

/// The finalizer of a wrapped `T`: the instance is forgotten, then dropped (no JS may run here).
unsafe extern "C" fn finalize<T: Wrapped>(env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    let ptr = data.cast::<T>();
    let _ = T::instances().try_with(|i| {
        #[allow(unused_variables)]
        if let Some(live) = i.remove(env, ptr.cast_const()) {
            #[cfg(any(target_env = "ohos", feature = "arkts-semantics"))]
            // SAFETY: the instance's own reference, deleted once.
            let _ = unsafe { sys::napi_delete_reference(env, live.object) };
        }
    });
    // A panic may not unwind into the engine.
    // SAFETY: allocated by `wrap` and handed to this finalizer only; dropped once.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(unsafe { Box::from_raw(ptr) })));
}
