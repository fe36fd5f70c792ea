//! Node-only shims: loading on the host (Node.js), not on HarmonyOS. `build.rs` links the host
//! cdylib with `-Bsymbolic-functions`, so napi-derive-ohos' call below binds to this definition
//! instead of Node's.

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
