//! Links the Node-API library on HarmonyOS (napi-build-ohos adds the NDK paths and `ace_napi.z`
//! when `OHOS_NDK_HOME` is set). On the host the symbols come from the loading Node.js process,
//! and the cdylib binds its own functions locally (`src/napi/js/node.rs`; docs/ohos-build.md).

fn main() {
    if std::env::var_os("CARGO_FEATURE_NAPI").is_none() {
        return;
    }
    napi_build_ohos::setup();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_env != "ohos" && target_os == "linux" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    }
}
