//! The benchmarks' floor: a native function that only copies the same arguments `addAction`
//! copies (two strings and an attribute map), in the same forms, and drops them. Capture cost is
//! reported against it.

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::*;

use super::args::Args;
use super::js::Js;
use super::throw;

/// Copies `type`, `name` and `attributes` as `addAction` does, and does nothing else.
// Called only from JS: napi-derive registers no caller in `cfg(test)` builds.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind, ts_args_type = "type: string, name: string, attributes?: Record<string, unknown>")]
pub fn copy_args_floor(env: Env, action_type: Unknown, name: Unknown, attributes: Unknown) -> Result<()> {
    let js = Js::of(&env);
    let r = Args::new(js, "copyArgsFloor");
    let copied = (|| {
        // Short strings inline, as an action's name is held (the type is a string here, an enum
        // read from the same copy in addAction).
        let t = r.bounded_text(js.unknown(&action_type), "type", usize::MAX)?;
        let n = r.bounded_text(js.unknown(&name), "name", usize::MAX)?;
        let a = r.attributes(js.unknown(&attributes), "attributes", usize::MAX)?;
        Ok((t, n, a))
    })();
    match copied {
        Ok(values) => {
            std::hint::black_box(values);
            Ok(())
        }
        Err(e) => Err(throw(js, e)),
    }
}
