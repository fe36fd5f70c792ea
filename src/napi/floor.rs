//! The benchmarks' floor: a native function that only copies the same arguments `addAction`
//! copies (two strings and an attribute map), in the same forms, and drops them. Capture cost is
//! reported against it.

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::*;

use super::convert::Reader;
use super::throw;

/// Copies `type`, `name` and `attributes` as `addAction` does, and does nothing else.
// Called only from JS: napi-derive registers no caller in `cfg(test)` builds.
#[cfg_attr(test, allow(dead_code))]
#[napi(catch_unwind, ts_args_type = "type: string, name: string, attributes?: Record<string, unknown>")]
pub fn copy_args_floor(env: Env, action_type: Unknown, name: Unknown, attributes: Unknown) -> Result<()> {
    let r = Reader::new(env.raw(), "copyArgsFloor");
    let copied = (|| {
        // Short strings inline, as an action's name is held (the type is a string here, an enum
        // read from the same copy in addAction).
        let t = r.bounded_text(action_type.raw(), "type", usize::MAX)?;
        let n = r.bounded_text(name.raw(), "name", usize::MAX)?;
        let a = r.attributes(attributes.raw(), "attributes", usize::MAX)?;
        Ok((t, n, a))
    })();
    match copied {
        Ok(values) => {
            std::hint::black_box(values);
            Ok(())
        }
        Err(e) => Err(throw(&env, e)),
    }
}
