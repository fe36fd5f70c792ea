//! Links the Node-API library on HarmonyOS (napi-build-ohos adds the NDK paths and `ace_napi.z`
//! when `OHOS_NDK_HOME` is set); on the host the symbols come from the loading process.

fn main() {
    if std::env::var_os("CARGO_FEATURE_NAPI").is_some() {
        napi_build_ohos::setup();
    }
}
