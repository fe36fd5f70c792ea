//! `new RumPipeline(options)`: the JS options object, read field by field (a wrong type names its
//! option), then turned into the core's [`Config`] by `TryFrom`. Ranges are the core's business:
//! [`Config::validate`] is the only place they are checked.

use std::fmt::Display;
use std::path::PathBuf;

use super::args::{ArgResult, Args, Sub};
use super::js::Value;
use crate::core::config::{BatchEncoding, Config, ConfigError, TrackingConsent};
use crate::core::context::{
    AppContext, Connectivity, ConnectivityStatus, Device, DeviceType, NetworkInterface, Os, Viewport,
};
use napi_derive_ohos::napi;

/// Options of `new RumPipeline(options)`.
#[napi(object, js_name = "PipelineOptions")]
pub struct BindingPipelineOptions {
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
    /// Roll the active batch past this size, bytes; at most 16 MiB. @default 524288
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
    /// How sealed batches are stored and handed out by `nextBatch()` (its `encoding`): "gzip"
    /// compresses them on the writer thread (zlib level 2: the disk quota then holds many times
    /// more events);
    /// "identity" keeps plain NDJSON. @default "gzip"
    #[napi(ts_type = "BatchEncoding")]
    pub batch_encoding: Option<String>,
    /// An active view's document is written at most once per this interval (and once per turn);
    /// a stopped view, drains, `keepAlive`, `flush`, `stop`, `markCrash`, user and consent changes
    /// write it at once. 0 writes it after every call, as without throttling; at most 60000, ms.
    /// @default 1000
    pub view_update_interval_ms: Option<f64>,
    /// `source` of every document and `ddsource` of uploads. The RUM event format's enum has no
    /// HarmonyOS value: an intake that validates it needs one of the enum (e.g. "android"); the
    /// default is what Flashcat's HarmonyOS SDK sends. @default "harmony"
    pub source: Option<String>,
    /// Percentage of sessions tracked (0 to 100), drawn once per session; an untracked session
    /// writes nothing and its event calls return at once. @default 100
    pub session_sample_rate: Option<f64>,
    /// `build_version` of every document: the app's build (version code).
    pub build_version: Option<String>,
    /// `device` of every document.
    #[napi(ts_type = "DeviceInfo")]
    pub device: Option<BindingDeviceInfo>,
    /// `os` of every document.
    #[napi(ts_type = "OsInfo")]
    pub os: Option<BindingOsInfo>,
    /// `display.viewport` of every document, pixels.
    #[napi(ts_type = "ViewportSize")]
    pub viewport: Option<BindingViewportSize>,
    /// `application.current_locale` of every document: a language tag such as "zh-Hans-CN".
    pub locale: Option<String>,
    /// `connectivity` of documents until the first `setConnectivity()`.
    #[napi(ts_type = "ConnectivityInfo")]
    pub connectivity: Option<BindingConnectivityInfo>,
}

/// `device` of the RUM event format.
#[napi(object, js_name = "DeviceInfo")]
pub struct BindingDeviceInfo {
    #[napi(js_name = "type", ts_type = "DeviceType")]
    pub kind: Option<String>,
    pub brand: Option<String>,
    pub model: Option<String>,
    pub name: Option<String>,
    pub architecture: Option<String>,
}

/// `os` of the RUM event format: all three fields.
#[napi(object, js_name = "OsInfo")]
pub struct BindingOsInfo {
    pub name: String,
    pub version: String,
    pub version_major: String,
}

/// `display.viewport` of the RUM event format, pixels.
#[napi(object, js_name = "ViewportSize")]
pub struct BindingViewportSize {
    pub width: f64,
    pub height: f64,
}

/// `connectivity` of the RUM event format.
#[napi(object, js_name = "ConnectivityInfo")]
pub struct BindingConnectivityInfo {
    #[napi(ts_type = "ConnectivityStatus")]
    pub status: String,
    #[napi(ts_type = "NetworkInterface[]")]
    pub interfaces: Option<Vec<String>>,
}

impl BindingPipelineOptions {
    /// Reads the options object field by field, so a wrong type names its option. Values are
    /// only type-checked here; `Config::try_from` checks them.
    pub fn read(r: &Args<'_>, obj: Value<'_>) -> ArgResult<Self> {
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
            batch_encoding: os("batchEncoding")?,
            view_update_interval_ms: on("viewUpdateIntervalMs")?,
            source: os("source")?,
            session_sample_rate: on("sessionSampleRate")?,
            build_version: os("buildVersion")?,
            device: optional(r, field("device")?, path("device"), read_device)?,
            os: optional(r, field("os")?, path("os"), read_os)?,
            viewport: optional(r, field("viewport")?, path("viewport"), read_viewport)?,
            locale: os("locale")?,
            connectivity: optional(r, field("connectivity")?, path("connectivity"), read_connectivity_info)?,
        })
    }
}

/// An optional object option: `undefined`/`null` are None, anything else must be an object.
fn optional<T, P: Display + Copy>(
    r: &Args<'_>,
    v: Value<'_>,
    at: P,
    read: impl FnOnce(&Args<'_>, Value<'_>, P) -> ArgResult<T>,
) -> ArgResult<Option<T>> {
    if r.is_nullish(v) {
        return Ok(None);
    }
    if !r.is_object(v) {
        return Err(r.type_err(at, "must be an object"));
    }
    read(r, v, at).map(Some)
}

fn read_device<P: Display + Copy>(r: &Args<'_>, obj: Value<'_>, at: P) -> ArgResult<BindingDeviceInfo> {
    let s = |name: &'static str| r.opt_string(r.field(obj, name, at)?, Sub::key(&at, name));
    Ok(BindingDeviceInfo {
        kind: s("type")?,
        brand: s("brand")?,
        model: s("model")?,
        name: s("name")?,
        architecture: s("architecture")?,
    })
}

fn read_os<P: Display + Copy>(r: &Args<'_>, obj: Value<'_>, at: P) -> ArgResult<BindingOsInfo> {
    let s = |name: &'static str| r.string(r.field(obj, name, at)?, Sub::key(&at, name));
    Ok(BindingOsInfo { name: s("name")?, version: s("version")?, version_major: s("versionMajor")? })
}

fn read_viewport<P: Display + Copy>(r: &Args<'_>, obj: Value<'_>, at: P) -> ArgResult<BindingViewportSize> {
    let n = |name: &'static str| r.number(r.field(obj, name, at)?, Sub::key(&at, name));
    Ok(BindingViewportSize { width: n("width")?, height: n("height")? })
}

fn read_connectivity_info<P: Display + Copy>(
    r: &Args<'_>,
    obj: Value<'_>,
    at: P,
) -> ArgResult<BindingConnectivityInfo> {
    let status = r.string(r.field(obj, "status", at)?, Sub::key(&at, "status"))?;
    let list = r.field(obj, "interfaces", at)?;
    let interfaces = if r.is_nullish(list) {
        None
    } else {
        let arg = Sub::key(&at, "interfaces");
        let len = r.length(list, arg)?;
        // Each interface at most once: a longer list is not a list of interfaces.
        if len as usize > NetworkInterface::ALL.len() {
            return Err(r.range_err(
                arg,
                format_args!("has {len} entries, more than the {} interfaces", NetworkInterface::ALL.len()),
            ));
        }
        let mut out = Vec::with_capacity(len as usize);
        for i in 0..len {
            out.push(r.string(r.element(list, i, arg)?, Sub::index(&arg, i))?);
        }
        Some(out)
    };
    Ok(BindingConnectivityInfo { status, interfaces })
}

/// The connectivity a `setConnectivity(value)` call or the `connectivity` option gives, its values
/// checked against the format's enums (a RangeError naming the field).
pub fn read_connectivity<P: Display + Copy>(r: &Args<'_>, v: Value<'_>, at: P) -> ArgResult<Connectivity> {
    if !r.is_object(v) {
        return Err(r.type_err(at, "must be an object { status, interfaces? }"));
    }
    connectivity_of(read_connectivity_info(r, v, at)?).map_err(|e| r.range_err(Sub::key(&at, e.field), e.reason))
}

/// `BindingConnectivityInfo` as the core's value; `field` of the error is relative to the object.
fn connectivity_of(c: BindingConnectivityInfo) -> Result<Connectivity, ConfigError> {
    let status = ConnectivityStatus::parse(&c.status).ok_or_else(|| ConfigError {
        field: "status",
        reason: format!("must be one of {}, got {:?}", ConnectivityStatus::ALL.join(", "), c.status),
    })?;
    let interfaces = c
        .interfaces
        .unwrap_or_default()
        .iter()
        .map(|i| {
            NetworkInterface::parse(i).ok_or_else(|| ConfigError {
                field: "interfaces",
                reason: format!("must hold only {}, got {i:?}", NetworkInterface::ALL.join(", ")),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Connectivity { status, interfaces })
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

impl TryFrom<BindingPipelineOptions> for Config {
    type Error = ConfigError;

    /// The core config for these options, every value checked by [`Config::validate`].
    fn try_from(o: BindingPipelineOptions) -> Result<Self, ConfigError> {
        let d = Config::default();
        let tracking_consent = match o.tracking_consent.as_deref() {
            None => d.tracking_consent,
            Some(s) => TrackingConsent::parse(s).ok_or_else(|| ConfigError {
                field: "trackingConsent",
                reason: format!("must be granted, not_granted or pending, got {s:?}"),
            })?,
        };
        let batch_encoding = match o.batch_encoding.as_deref() {
            None => d.batch_encoding,
            Some(s) => BatchEncoding::parse(s).ok_or_else(|| ConfigError {
                field: "batchEncoding",
                reason: format!("must be one of {}, got {s:?}", BatchEncoding::ALL.join(", ")),
            })?,
        };
        let turn_budget_ms = whole("turnBudgetMs", o.turn_budget_ms)?;
        let queue_capacity = whole("queueCapacity", o.queue_capacity)?;
        let max_batch_files = whole("maxBatchFiles", o.max_batch_files)?;
        let flush_timeout_ms = whole("flushTimeoutMs", o.flush_timeout_ms)?;
        let view_update_interval_ms = whole("viewUpdateIntervalMs", o.view_update_interval_ms)?;
        let device = match o.device {
            None => None,
            Some(d) => Some(Device {
                kind: match d.kind.as_deref() {
                    None => None,
                    Some(k) => Some(DeviceType::parse(k).ok_or_else(|| ConfigError {
                        field: "device.type",
                        reason: format!("must be one of {}, got {k:?}", DeviceType::ALL.join(", ")),
                    })?),
                },
                brand: d.brand,
                model: d.model,
                name: d.name,
                architecture: d.architecture,
            }),
        };
        let connectivity = match o.connectivity {
            None => None,
            Some(c) => Some(connectivity_of(c).map_err(|e| ConfigError {
                field: if e.field == "status" { "connectivity.status" } else { "connectivity.interfaces" },
                reason: e.reason,
            })?),
        };
        let context = AppContext {
            device,
            os: o.os.map(|os| Os { name: os.name, version: os.version, version_major: os.version_major }),
            viewport: o.viewport.map(|v| Viewport { width: v.width, height: v.height }),
            locale: o.locale,
            build_version: o.build_version,
        };
        let config = Config {
            storage_dir: PathBuf::from(o.storage_dir),
            application_id: o.application_id,
            service: o.service.unwrap_or_default(),
            version: o.version.unwrap_or_default(),
            env: o.env,
            tracking_consent,
            batch_encoding,
            turn_budget_ms: turn_budget_ms.map_or(d.turn_budget_ms, |n| saturate(n, u32::MAX)),
            queue_capacity: queue_capacity.map_or(d.queue_capacity, |n| saturate(n, usize::MAX)),
            batch_max_bytes: whole("batchMaxBytes", o.batch_max_bytes)?.unwrap_or(d.batch_max_bytes),
            batch_window_ms: whole("batchWindowMs", o.batch_window_ms)?.unwrap_or(d.batch_window_ms),
            disk_quota_bytes: whole("diskQuotaBytes", o.disk_quota_bytes)?.unwrap_or(d.disk_quota_bytes),
            max_batch_files: max_batch_files.map_or(d.max_batch_files, |n| saturate(n, u32::MAX)),
            batch_max_age_ms: whole("batchMaxAgeMs", o.batch_max_age_ms)?.unwrap_or(d.batch_max_age_ms),
            event_max_bytes: whole("eventMaxBytes", o.event_max_bytes)?.unwrap_or(d.event_max_bytes),
            flush_timeout_ms: flush_timeout_ms.map_or(d.flush_timeout_ms, |n| saturate(n, u32::MAX)),
            view_update_interval_ms: view_update_interval_ms
                .map_or(d.view_update_interval_ms, |n| saturate(n, u32::MAX)),
            source: o.source.unwrap_or_else(|| d.source.clone()),
            session_sample_rate: o.session_sample_rate.unwrap_or(d.session_sample_rate),
            context,
            connectivity,
            ..d
        };
        config.validate()?;
        Ok(config)
    }
}
