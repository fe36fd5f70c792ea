//! Loading on the host (Node.js), not on HarmonyOS. Two places where napi-ohos follows ArkTS'
//! Node-API behaviour, which Node.js does not share, are bridged here. `build.rs` links the host
//! cdylib with `-Bsymbolic-functions`, so calls from napi-ohos to the two functions below bind to
//! these definitions instead of Node's.

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

use napi_ohos::sys;

/// napi-derive-ohos registers the module from a constructor with `napi_module_register(&local)`,
/// where `local` is a stack value: ArkTS copies it, but Node.js keeps the pointer and reads it
/// after the constructor returned, then jumps to garbage (a crash at `process.dlopen`). As a no-op
/// here, Node.js finds the module through its exported `napi_register_module_v1` symbol, the
/// standard path.
///
/// # Safety
/// Never dereferences its argument.
#[no_mangle]
pub unsafe extern "C" fn napi_module_register(_module: *mut sys::napi_module) {}

type UnrefFn = unsafe extern "C" fn(sys::napi_env, sys::napi_ref, *mut u32) -> sys::napi_status;

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// `RTLD_DEFAULT`: search the global scope, where Node's own Node-API functions are.
const RTLD_DEFAULT: *mut c_void = std::ptr::null_mut();

fn node_unref() -> Option<UnrefFn> {
    static REAL: OnceLock<usize> = OnceLock::new();
    let name: &CStr = c"napi_reference_unref";
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name; this .so is loaded without
    // RTLD_GLOBAL, so the global scope's definition is Node's, never this one.
    let addr = *REAL.get_or_init(|| unsafe { dlsym(RTLD_DEFAULT, name.as_ptr()) } as usize);
    // SAFETY: a non-null address of `napi_reference_unref` has exactly this signature.
    (addr != 0).then(|| unsafe { std::mem::transmute::<usize, UnrefFn>(addr) })
}

/// After `napi_wrap`, napi-ohos unrefs the wrapper's reference because ArkTS creates it with a
/// count of 1. Node.js creates it weak (count 0) and answers the unref with a failure, which
/// napi-ohos reports as "Failed to ref class". Here an unref of a count-0 reference is a no-op
/// that succeeds, as it is on ArkTS once the count is 0; every other unref is Node's own.
///
/// # Safety
/// Same contract as Node-API's `napi_reference_unref`.
#[no_mangle]
pub unsafe extern "C" fn napi_reference_unref(
    env: sys::napi_env,
    r: sys::napi_ref,
    result: *mut u32,
) -> sys::napi_status {
    let Some(real) = node_unref() else {
        return sys::Status::napi_generic_failure;
    };
    // SAFETY: forwarded unchanged to Node's implementation.
    let status = unsafe { real(env, r, result) };
    if status == sys::Status::napi_generic_failure {
        if !result.is_null() {
            // SAFETY: the caller passed a valid out-pointer or null.
            unsafe { *result = 0 };
        }
        return sys::Status::napi_ok;
    }
    status
}
