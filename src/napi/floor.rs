//! The benchmarks' floor: a native function that only copies the same arguments `addAction`
//! copies (two strings and an attribute map) and drops them. Capture cost is reported against it.

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
        let t = r.string(action_type.raw(), "type")?;
        let n = r.string(name.raw(), "name")?;
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
