//! `new RumPipeline(options)`: the JS options object, read field by field (a wrong type names its
//! option), then turned into the core's [`Config`] by `TryFrom`. Ranges are the core's business:
//! [`Config::validate`] is the only place they are checked.

use std::path::PathBuf;

use napi_derive_ohos::napi;
use napi_ohos::sys;

use super::convert::{ArgResult, Reader};
use crate::core::config::{Config, ConfigError, TrackingConsent};

/// Options of `new RumPipeline(options)`.
#[napi(object)]
pub struct PipelineOptions {
    /// Directory the pipeline owns; batches go to `<storageDir>/rum/`. On HarmonyOS, a folder under
    /// the application's `filesDir`. Pipelines with the same directory share one writer.
    pub storage_dir: String,
    /// RUM application id (`application.id` of every document).
    pub application_id: String,
    /// `service` of every document. @default ""
    pub service: Option<String>,
    /// `version` of every document. @default ""
    pub version: Option<String>,
    /// `env` of every document, when set.
    pub env: Option<String>,
    /// Initial tracking consent. @default "granted"
    #[napi(ts_type = "TrackingConsent")]
    pub tracking_consent: Option<String>,
    /// Time the SDK may spend on the caller's turn before it queues, ms. @default 4
    pub turn_budget_ms: Option<f64>,
    /// Queued events at most; at the bound a slice runs before the next event is queued. @default 5000
    pub queue_capacity: Option<f64>,
    /// Roll the active batch past this size, bytes. @default 524288
    pub batch_max_bytes: Option<f64>,
    /// Roll an active batch older than this, ms. @default 10000
    pub batch_window_ms: Option<f64>,
    /// All batch files together stay within this, bytes. @default 4194304
    pub disk_quota_bytes: Option<f64>,
    /// Batch files at most. @default 200
    pub max_batch_files: Option<f64>,
    /// Older batches are deleted, not uploaded, ms. @default 82800000 (23 h)
    pub batch_max_age_ms: Option<f64>,
    /// A larger document is dropped and counted; a larger argument is refused, bytes; at most
    /// 67108864 (64 MiB). @default 524288
    pub event_max_bytes: Option<f64>,
    /// `flush()` and `markCrash()` wait at most this long for the writer, ms. @default 2000
    pub flush_timeout_ms: Option<f64>,
}

impl PipelineOptions {
    /// Reads the options object field by field, so a wrong type names its option. Values are
    /// only type-checked here; `Config::try_from` checks them.
    pub fn read(r: &Reader, obj: sys::napi_value) -> ArgResult<Self> {
        if !r.is_object(obj) {
            return Err(r.type_err("options", "must be an object with storageDir and applicationId"));
        }
        let field = |name: &'static str| r.field(obj, name, "options");
        let path = |name: &'static str| OptionPath(name);
        let s = |name: &'static str| r.string(field(name)?, path(name));
        let os = |name: &'static str| r.opt_string(field(name)?, path(name));
        let on = |name: &'static str| r.opt_any_number(field(name)?, path(name));
        Ok(Self {
            storage_dir: s("storageDir")?,
            application_id: s("applicationId")?,
            service: os("service")?,
            version: os("version")?,
            env: os("env")?,
            tracking_consent: os("trackingConsent")?,
            turn_budget_ms: on("turnBudgetMs")?,
            queue_capacity: on("queueCapacity")?,
            batch_max_bytes: on("batchMaxBytes")?,
            batch_window_ms: on("batchWindowMs")?,
            disk_quota_bytes: on("diskQuotaBytes")?,
            max_batch_files: on("maxBatchFiles")?,
            batch_max_age_ms: on("batchMaxAgeMs")?,
            event_max_bytes: on("eventMaxBytes")?,
            flush_timeout_ms: on("flushTimeoutMs")?,
        })
    }
}

/// `options.<name>` in error messages.
#[derive(Clone, Copy)]
struct OptionPath(&'static str);

impl std::fmt::Display for OptionPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "options.{}", self.0)
    }
}

/// The largest integer a JS number holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// A JS number as the whole count every numeric option is. Whether the count is in range is
/// `Config::validate`'s question; a value too large for its field saturates, and fails there.
fn whole(field: &'static str, v: Option<f64>) -> Result<Option<u64>, ConfigError> {
    match v {
        None => Ok(None),
        Some(n) if n.is_finite() && n.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER).contains(&n) => Ok(Some(n as u64)),
        Some(n) => Err(ConfigError { field, reason: format!("must be a whole number of at least 0, got {n}") }),
    }
}

fn saturate<T: TryFrom<u64> + Copy>(n: u64, max: T) -> T {
    T::try_from(n).unwrap_or(max)
}

impl TryFrom<PipelineOptions> for Config {
    type Error = ConfigError;

    /// The core config for these options, every value checked by [`Config::validate`].
    fn try_from(o: PipelineOptions) -> Result<Self, ConfigError> {
        let d = Config::default();
        let tracking_consent = match o.tracking_consent.as_deref() {
            None => d.tracking_consent,
            Some(s) => TrackingConsent::parse(s).ok_or_else(|| ConfigError {
                field: "trackingConsent",
                reason: format!("must be granted, not_granted or pending, got {s:?}"),
            })?,
        };
        let turn_budget_ms = whole("turnBudgetMs", o.turn_budget_ms)?;
        let queue_capacity = whole("queueCapacity", o.queue_capacity)?;
        let max_batch_files = whole("maxBatchFiles", o.max_batch_files)?;
        let flush_timeout_ms = whole("flushTimeoutMs", o.flush_timeout_ms)?;
        let config = Config {
            storage_dir: PathBuf::from(o.storage_dir),
            application_id: o.application_id,
            service: o.service.unwrap_or_default(),
            version: o.version.unwrap_or_default(),
            env: o.env,
            tracking_consent,
            turn_budget_ms: turn_budget_ms.map_or(d.turn_budget_ms, |n| saturate(n, u32::MAX)),
            queue_capacity: queue_capacity.map_or(d.queue_capacity, |n| saturate(n, usize::MAX)),
            batch_max_bytes: whole("batchMaxBytes", o.batch_max_bytes)?.unwrap_or(d.batch_max_bytes),
            batch_window_ms: whole("batchWindowMs", o.batch_window_ms)?.unwrap_or(d.batch_window_ms),
            disk_quota_bytes: whole("diskQuotaBytes", o.disk_quota_bytes)?.unwrap_or(d.disk_quota_bytes),
            max_batch_files: max_batch_files.map_or(d.max_batch_files, |n| saturate(n, u32::MAX)),
            batch_max_age_ms: whole("batchMaxAgeMs", o.batch_max_age_ms)?.unwrap_or(d.batch_max_age_ms),
            event_max_bytes: whole("eventMaxBytes", o.event_max_bytes)?.unwrap_or(d.event_max_bytes),
            flush_timeout_ms: flush_timeout_ms.map_or(d.flush_timeout_ms, |n| saturate(n, u32::MAX)),
            ..d
        };
        config.validate()?;
        Ok(config)
    }
}
