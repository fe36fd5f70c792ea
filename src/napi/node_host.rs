//! Loading on the host (Node.js), not on HarmonyOS.
//!
//! napi-derive-ohos registers the module from a constructor with `napi_module_register(&local)`,
//! where `local` is a stack value: ArkTS copies it, but Node.js keeps the pointer and reads it after
//! the constructor returned, then jumps to garbage (a crash at `process.dlopen`). On the host we
//! define `napi_module_register` ourselves as a no-op — `build.rs` links the cdylib with
//! `-Bsymbolic-functions`, so the constructor's call binds here — and Node.js then finds the module
//! through its exported `napi_register_module_v1` symbol, the standard path.

/// Bound locally by `-Bsymbolic-functions`; leaves Node.js to use `napi_register_module_v1`.
///
/// # Safety
/// Never dereferences its argument.
#[no_mangle]
pub unsafe extern "C" fn napi_module_register(_module: *mut napi_ohos::sys::napi_module) {}
