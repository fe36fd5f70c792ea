//! Durations the automatic capture reports: a resource's timing breakdown (`stopResource`'s
//! `timing`), a long task's and a launch's duration. All in ms, fractions allowed.

use napi_derive_ohos::napi;

use super::args::{ArgResult, Args, Sub};
use super::js::Value;
use crate::core::event::{ResourceTiming, MAX_DURATION_MS, TIMING_PHASES};

/// One phase of a request: when it started, ms after the resource started, and how long it took.
// Declared for index.d.ts; `read_timing` goes field by field so an error names its field.
#[allow(dead_code)]
#[napi(object, js_name = "TimingPhase")]
pub struct BindingTimingPhase {
    pub start: f64,
    pub duration: f64,
}

/// A resource's timing breakdown (the RUM event format's `resource.dns`, `connect`, ...): the
/// phases that happened, each `{ start, duration }` in ms since the resource started.
#[allow(dead_code)]
#[napi(object, js_name = "ResourceTiming")]
pub struct BindingResourceTiming {
    pub redirect: Option<BindingTimingPhase>,
    pub dns: Option<BindingTimingPhase>,
    pub connect: Option<BindingTimingPhase>,
    pub ssl: Option<BindingTimingPhase>,
    pub first_byte: Option<BindingTimingPhase>,
    pub download: Option<BindingTimingPhase>,
}

/// A duration in ms from 0 to a day ([`MAX_DURATION_MS`]).
pub fn duration_ms(r: &Args<'_>, v: Value<'_>, arg: impl std::fmt::Display + Copy) -> ArgResult<f64> {
    let ms = r.number(v, arg)?;
    if !(0.0..=MAX_DURATION_MS).contains(&ms) {
        return Err(r.range_err(arg, format_args!("must be from 0 to {MAX_DURATION_MS} ms, got {ms}")));
    }
    Ok(ms)
}

/// A duration given in ms ([`duration_ms`]), in whole ns.
pub fn duration_ns(r: &Args<'_>, v: Value<'_>, arg: impl std::fmt::Display + Copy) -> ArgResult<u64> {
    Ok((duration_ms(r, v, arg)? * 1e6) as u64)
}

/// Reads `timing` (undefined or null: none).
pub fn read_timing(r: &Args<'_>, v: Value<'_>) -> ArgResult<Option<Box<ResourceTiming>>> {
    if r.is_nullish(v) {
        return Ok(None);
    }
    let at = "timing";
    if !r.is_object(v) {
        return Err(r.type_err(at, "must be an object { redirect?, dns?, connect?, ssl?, firstByte?, download? }"));
    }
    let mut phases = [None; 6];
    for (slot, name) in phases.iter_mut().zip(TIMING_PHASES) {
        let phase = r.field(v, name, at)?;
        let path = Sub::key(&at, name);
        *slot = r.optional(phase, |p| {
            if !r.is_object(p) {
                return Err(r.type_err(path, "must be an object { start, duration }"));
            }
            let start = duration_ms(r, r.field(p, "start", path)?, Sub::key(&path, "start"))?;
            let duration = duration_ms(r, r.field(p, "duration", path)?, Sub::key(&path, "duration"))?;
            Ok((start, duration))
        })?;
    }
    // Every value is in range, so building cannot fail; a refusal would name its phase anyway.
    ResourceTiming::from_ms(phases).map(|t| Some(Box::new(t))).map_err(|why| r.range_err(at, why))
}
