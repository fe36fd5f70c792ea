//! What automatic capture reports beyond the plain calls: a resource's details (`stopResource`'s
//! `details`: its timing breakdown and trace ids), a long task's and a launch's duration.
//! Durations in ms, fractions allowed.

use napi_derive_ohos::napi;

use super::args::{ArgResult, Args, Sub};
use super::js::Value;
use crate::core::event::{ResourceDetails, ResourceTiming, TraceIds, MAX_DURATION_MS, TIMING_PHASES};

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

/// What `stopResource` may add to a resource: its timing breakdown, and the trace ids of the
/// `traceparent` header the request carried (both or neither), written `_dd.trace_id` and
/// `_dd.span_id`.
#[allow(dead_code)]
#[napi(object, js_name = "ResourceDetails")]
pub struct BindingResourceDetails {
    pub timing: Option<BindingResourceTiming>,
    /// 32 hex digits, not all zeros.
    pub trace_id: Option<String>,
    /// 16 hex digits, not all zeros.
    pub span_id: Option<String>,
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

/// Reads `details` (undefined or null: none).
pub fn read_resource_details(r: &Args<'_>, v: Value<'_>) -> ArgResult<Option<Box<ResourceDetails>>> {
    if r.is_nullish(v) {
        return Ok(None);
    }
    let at = "details";
    if !r.is_object(v) {
        return Err(r.type_err(at, "must be an object { timing?, traceId?, spanId? }"));
    }
    let timing = read_timing(r, r.field(v, "timing", at)?, Sub::key(&at, "timing"))?;
    let trace_id = r.opt_string(r.field(v, "traceId", at)?, Sub::key(&at, "traceId"))?;
    let span_id = r.opt_string(r.field(v, "spanId", at)?, Sub::key(&at, "spanId"))?;
    let id = |s: &str, digits: usize, name: &str| {
        TraceIds::hex_id(s, digits).ok_or_else(|| r.range_err(Sub::key(&at, name), TraceIds::rule(digits, s)))
    };
    let trace = match (trace_id, span_id) {
        (None, None) => None,
        (Some(t), Some(s)) => Some(TraceIds {
            trace_id: id(&t, TraceIds::TRACE_ID_DIGITS, "traceId")?,
            span_id: id(&s, TraceIds::SPAN_ID_DIGITS, "spanId")? as u64,
        }),
        _ => return Err(r.type_err(at, "must give traceId and spanId together")),
    };
    Ok(Some(Box::new(ResourceDetails { timing: timing.unwrap_or_default(), trace })))
}

fn read_timing(r: &Args<'_>, v: Value<'_>, at: Sub<'_>) -> ArgResult<Option<ResourceTiming>> {
    if r.is_nullish(v) {
        return Ok(None);
    }
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
    ResourceTiming::from_ms(phases).map(Some).map_err(|why| r.range_err(at, why))
}
