//! The class JS sees as `RumPipeline`, made from the one list of its methods
//! (`for_each_pipeline_method!` in `src/interface.rs`): the constructor's callback, and for each
//! method a callback that checks its receiver and calls the `BindingPipeline` method of the same
//! name. `index.d.ts` is written from the same list, so every method declared is callable and
//! every callable method is declared.
//!
//! A method called on anything but a live pipeline of this library
//! (`RumPipeline.prototype.stats.call({})`, `this` undefined, another addon's object, a copied
//! wrapper on ArkTS) throws `TypeError: RumPipeline.stats: called on an object that is not a
//! RumPipeline`, named like every other error of the library ([`Js::unwrap`] says why that check
//! is sound on both engines).

use std::ffi::CStr;

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::*;

use super::args::ArgError;
use super::js::{callback, Js, Method, Thrown};
use super::pipeline::{construct, BindingPipeline};
use super::throw;

/// The error of a method called on something that is not a pipeline.
fn not_a_pipeline(js: Js<'_>, method: &str) -> Thrown {
    throw(js, ArgError::Type(format!("RumPipeline.{method}: called on an object that is not a RumPipeline")))
}

/// How many identifiers: the number of arguments a callback reads.
macro_rules! count {
    () => { 0 };
    ($head:ident $($tail:ident)*) => { 1 + count!($($tail)*) };
}

/// A method's name as the C string the engine is given.
macro_rules! c_name {
    ($js:literal) => {
        match CStr::from_bytes_with_nul(concat!($js, "\0").as_bytes()) {
            Ok(name) => name,
            Err(_) => panic!("a method name holds a NUL"),
        }
    };
}

macro_rules! pipeline_methods {
    ($($(#[doc = $doc:literal])* $fn:ident $js:literal ($($arg:ident),*) $ts:literal -> $ret:literal;)*) => {
        /// The checked callbacks of `RumPipeline`'s prototype methods, named as the Rust methods
        /// (so profiles name them: benches/napi-calls.mjs collects `on_prototype::add_action`).
        mod on_prototype {
            use super::*;
            $(
                callback! {
                    #[doc = concat!("`RumPipeline.prototype.", $js, "` with its receiver checked.")]
                    pub(super) fn $fn[count!($($arg)*)]($js) |call| {
                        let Some(pipeline) = call.js.unwrap::<BindingPipeline>(call.this) else {
                            return Err(not_a_pipeline(call.js, $js));
                        };
                        let [$($arg),*] = call.args;
                        let result = pipeline.$fn(call.js, $($arg),*)?;
                        call.js.to_js(result).map(Some)
                    }
                }
            )*
        }

        /// Every method of `RumPipeline.prototype`.
        const METHODS: &[Method] = &[$(Method { name: c_name!($js), callback: on_prototype::$fn }),*];
    };
}

crate::for_each_pipeline_method!(pipeline_methods);

callback! {
    /// `new RumPipeline(options)`.
    fn construct_pipeline[1]("RumPipeline") |call| {
        let [options] = call.args;
        construct(call.js, call.this, options)?;
        Ok(None)
    }
}

/// Runs once per JS environment when the module is loaded: defines `RumPipeline` on the exports.
// Called only by napi-ohos' module registration: napi-derive registers nothing in `cfg(test)`.
#[cfg_attr(test, allow(dead_code))]
#[napi(module_exports)]
pub fn define_pipeline_class(exports: Object, env: Env) -> Result<()> {
    let js = Js::of(&env);
    let fail = || Error::new(Status::GenericFailure, "RumPipeline: cannot define the class");
    let class = js.define_class(c"RumPipeline", construct_pipeline, METHODS).ok_or_else(fail)?;
    js.set_named(js.handle(&exports), c"RumPipeline", class).map_err(|()| fail())
}
