//! The `details` argument of `addError` and `markCrash`: what the crash reporters add to an error
//! (its kind, category and handling, a crash of an earlier process, the time it happened).

use napi_derive_ohos::napi;

use super::args::{ArgResult, Args, Sub};
use super::js::Value;
use crate::core::event::{ErrorCategory, ErrorDetails, ErrorHandling};

/// The latest `date` accepted, ms since the Unix epoch: the largest time a JS `Date` holds.
pub const MAX_DATE_MS: f64 = 8.64e15;

/// What an error carries beyond message, source and stack (fields of the RUM event format's
/// `error`); every field is optional.
// Declared for index.d.ts; the reader below goes field by field so an error names its field.
#[allow(dead_code)]
#[napi(object, js_name = "ErrorDetails")]
pub struct BindingErrorDetails {
    /// `error.type`: the error's name or kind, e.g. "TypeError", "SIGSEGV".
    #[napi(js_name = "type")]
    pub error_type: Option<String>,
    /// `error.category`, e.g. "App Hang" for a freeze.
    #[napi(ts_type = "ErrorCategory")]
    pub category: Option<String>,
    /// `error.handling`. @default "unhandled" for a crash, "handled" otherwise
    #[napi(ts_type = "ErrorHandling")]
    pub handling: Option<String>,
    /// `addError` only: `is_crash: true` for a crash of an earlier process reported after the
    /// fact (it is neither counted on the current view nor closes it; `markCrash` is this
    /// process's crash). `markCrash` accepts only true here. @default false
    pub is_crash: Option<bool>,
    /// `date`: when the error happened, ms since the Unix epoch. @default the call's time
    pub date: Option<f64>,
}

/// Reads `details` (undefined or null: none). `crash` is true for `markCrash`, which is a crash
/// by definition: `isCrash: false` there is a RangeError rather than silently ignored.
pub fn read_error_details(
    r: &Args<'_>,
    v: Value<'_>,
    max_bytes: usize,
    crash: bool,
) -> ArgResult<Option<Box<ErrorDetails>>> {
    if r.is_nullish(v) {
        return Ok(None);
    }
    let at = "details";
    if !r.is_object(v) {
        return Err(r.type_err(at, "must be an object { type?, category?, handling?, isCrash?, date? }"));
    }
    let field = |name: &'static str| r.field(v, name, at);
    let error_type = r.optional(field("type")?, |t| r.bounded_string(t, Sub::key(&at, "type"), max_bytes))?;
    let category = r.optional(field("category")?, |c| {
        r.enumerated(c, Sub::key(&at, "category"), ErrorCategory::parse, ErrorCategory::ALL)
    })?;
    let handling = r.optional(field("handling")?, |h| {
        r.enumerated(h, Sub::key(&at, "handling"), ErrorHandling::parse, ErrorHandling::ALL)
    })?;
    let is_crash = r.optional(field("isCrash")?, |c| r.boolean(c, Sub::key(&at, "isCrash")))?;
    if crash && is_crash == Some(false) {
        return Err(r.range_err(Sub::key(&at, "isCrash"), "must be true or absent: markCrash records a crash"));
    }
    let date_ms = r.opt_integer(field("date")?, Sub::key(&at, "date"), 0.0, MAX_DATE_MS)?.map(|d| d as i64);
    // A markCrash is this process's crash: `is_crash` here marks only an earlier process's.
    let is_crash = !crash && is_crash == Some(true);
    Ok(Some(Box::new(ErrorDetails { error_type, category, handling, is_crash, date_ms })))
}
