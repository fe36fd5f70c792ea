//! RUM documents as typed values. They are built on the JS thread (cheap: owned fields and shared
//! `Arc`s) and serialized to the RUM event format on the writer thread.
//!
//! Format: Datadog's public rum-events-format, as the seed SDK writes it. Every document carries
//! `type`, `date`, `_dd`, `application`, `session`, `source`, `service`, `version`, `usr` (when set)
//! and `context` (global attributes merged with the call's; the call's win).

use std::sync::Arc;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

use super::attrs::{Attrs, Merged};
use super::config::Config;
use super::context::{AppContext, Connectivity, DisplayField};
use super::event::{
    ActionType, Attributes, ErrorDetails, ErrorHandling, ErrorSource, HttpMethod, ResourceDetails, ResourceKind,
    ResourceTiming, TraceIds, UserInfo,
};
use super::ids::Uuid;
use super::text::Text;

/// `_dd.format_version` of the RUM event format.
pub const FORMAT_VERSION: u8 = 2;

/// The SDK's version in `ddtags` (`sdk_version:`), as the mobile SDKs report theirs.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What every document of one pipeline shares; one `Arc`, so building a document does not copy it.
#[derive(Debug, PartialEq)]
pub struct Identity {
    pub application_id: String,
    pub service: String,
    pub version: String,
    pub source: String,
    /// `ddtags`: `env`, `service`, `version` and `sdk_version` as the intake reads its tags (the
    /// format has no top-level `env`; dd-sdk-android writes them here too).
    pub ddtags: String,
    pub context: AppContext,
    /// `_dd.configuration.session_sample_rate`.
    pub session_sample_rate: f64,
}

impl Identity {
    pub fn new(application_id: &str, service: &str, version: &str, env: Option<&str>, source: &str) -> Self {
        Self {
            application_id: application_id.to_owned(),
            service: service.to_owned(),
            version: version.to_owned(),
            source: source.to_owned(),
            ddtags: ddtags(service, version, env),
            context: AppContext::default(),
            session_sample_rate: 100.0,
        }
    }

    /// The identity of `config`'s pipeline.
    pub fn of(config: &Config) -> Self {
        Self {
            context: config.context.clone(),
            session_sample_rate: config.session_sample_rate,
            ..Self::new(&config.application_id, &config.service, &config.version, config.env.as_deref(), &config.source)
        }
    }
}

/// `service:…,version:…,sdk_version:…,env:…` (empty values left out). A comma would split a tag, so
/// commas in values become `_`.
fn ddtags(service: &str, version: &str, env: Option<&str>) -> String {
    let tags = [("service", service), ("version", version), ("sdk_version", SDK_VERSION), ("env", env.unwrap_or(""))];
    tags.iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}:{}", v.replace(',', "_")))
        .collect::<Vec<_>>()
        .join(",")
}

/// The parts every document has.
#[derive(Clone, Debug, PartialEq)]
pub struct Common {
    /// Call-time wall clock, ms.
    pub date: i64,
    pub identity: Arc<Identity>,
    pub session_id: Arc<str>,
    pub usr: Option<Arc<UserInfo>>,
    /// The connectivity in force at the call.
    pub connectivity: Option<Arc<Connectivity>>,
    /// Global attributes in force at the call (shared, copy-on-write in the scopes).
    pub global: Arc<Attributes>,
    /// The call's own attributes, as captured (spliced into `context` as they are).
    pub attrs: Attrs,
}

/// The view a document belongs to, as `view { id, name, url }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ViewRef {
    pub id: Arc<str>,
    pub name: Arc<str>,
    pub url: Arc<str>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ViewDocument {
    pub common: Common,
    pub view: ViewRef,
    /// Increases with every document of this view; the intake keeps the highest.
    pub document_version: u64,
    pub time_spent_ns: u64,
    pub is_active: bool,
    pub action_count: u64,
    pub error_count: u64,
    /// Crashes on the view (`view.crash.count`).
    pub crash_count: u64,
    pub resource_count: u64,
    /// `view.long_task.count` (frozen frames included, as the mobile SDKs count them).
    pub long_task_count: u64,
    /// `view.frozen_frame.count`: long tasks of at least [`FROZEN_FRAME_NS`].
    pub frozen_frame_count: u64,
    /// `addTiming(name)`: ns from the view's start to the call, by name (the last call wins).
    /// Shared with the view's scope, copied only when it changes after a document took it.
    pub custom_timings: Arc<CustomTimings>,
}

/// A view's custom timings, by name.
pub type CustomTimings = std::collections::BTreeMap<String, u64>;

#[derive(Clone, Debug, PartialEq)]
pub struct ActionDocument {
    pub common: Common,
    pub view: ViewRef,
    pub id: Uuid,
    pub action_type: ActionType,
    pub target_name: Text,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ErrorDocument {
    pub common: Common,
    pub view: ViewRef,
    pub id: Uuid,
    pub message: String,
    pub source: ErrorSource,
    pub stack: Option<String>,
    pub is_crash: bool,
    /// `type`, `category`, `handling` when the caller gave them (the date is in `common`).
    pub details: Option<Box<ErrorDetails>>,
    /// `error.resource`: the request a network error failed (`stopResourceWithError`).
    pub resource: Option<Box<ErrorResource>>,
}

/// The failed request of a network error; `status_code` 0: no response came.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorResource {
    pub method: HttpMethod,
    pub status_code: u16,
    pub url: String,
}

/// A long task is a frozen frame from 700 ms on: the mobile SDKs' threshold, which the intake's
/// frozen-frame figures assume.
pub const FROZEN_FRAME_NS: u64 = 700_000_000;

#[derive(Clone, Debug, PartialEq)]
pub struct LongTaskDocument {
    pub common: Common,
    pub view: ViewRef,
    pub id: Uuid,
    pub duration_ns: u64,
}

/// The `app_launch` vital: time to initial display of a cold start (`date` is the process start).
#[derive(Clone, Debug, PartialEq)]
pub struct AppLaunchDocument {
    pub common: Common,
    pub view: ViewRef,
    pub id: Uuid,
    pub duration_ns: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ResourceDocument {
    pub common: Common,
    pub view: ViewRef,
    pub id: Uuid,
    pub kind: ResourceKind,
    pub url: String,
    pub method: HttpMethod,
    pub status_code: u16,
    pub size: Option<u64>,
    pub duration_ns: u64,
    /// Its timing breakdown and trace, when `stopResource` gave them.
    pub details: Option<Box<ResourceDetails>>,
}

/// The `type` of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DocumentKind {
    View,
    Action,
    Error,
    Resource,
    LongTask,
    Vital,
}

impl DocumentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::View => "view",
            Self::Action => "action",
            Self::Error => "error",
            Self::Resource => "resource",
            Self::LongTask => "long_task",
            Self::Vital => "vital",
        }
    }
}

/// One document on its way to storage.
#[derive(Clone, Debug, PartialEq)]
pub enum Document {
    View(ViewDocument),
    Action(ActionDocument),
    Error(ErrorDocument),
    Resource(ResourceDocument),
    LongTask(LongTaskDocument),
    AppLaunch(AppLaunchDocument),
    /// A document an event mapper replaced; written exactly as the mapper returned it.
    Mapped {
        kind: DocumentKind,
        value: Value,
    },
}

impl Document {
    pub fn kind(&self) -> DocumentKind {
        match self {
            Self::View(_) => DocumentKind::View,
            Self::Action(_) => DocumentKind::Action,
            Self::Error(_) => DocumentKind::Error,
            Self::Resource(_) => DocumentKind::Resource,
            Self::LongTask(_) => DocumentKind::LongTask,
            Self::AppLaunch(_) => DocumentKind::Vital,
            Self::Mapped { kind, .. } => *kind,
        }
    }

    /// The common fields of a built document (None for a mapped one: it is JSON now).
    pub fn common(&self) -> Option<&Common> {
        match self {
            Self::View(d) => Some(&d.common),
            Self::Action(d) => Some(&d.common),
            Self::Error(d) => Some(&d.common),
            Self::Resource(d) => Some(&d.common),
            Self::LongTask(d) => Some(&d.common),
            Self::AppLaunch(d) => Some(&d.common),
            Self::Mapped { .. } => None,
        }
    }

    /// The call-time date, ms (None for a mapped document that removed it).
    pub fn date(&self) -> Option<i64> {
        match self {
            Self::Mapped { value, .. } => value.get("date").and_then(Value::as_i64),
            d => d.common().map(|c| c.date),
        }
    }
}

struct SessionField<'a>(&'a str);

impl Serialize for SessionField<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("id", self.0)?;
        m.serialize_entry("type", "user")?;
        m.end()
    }
}

/// `_dd`: format version, session plan, the sample rate in force and, for views, the document
/// version.
struct Dd<'a> {
    identity: &'a Identity,
    extra: DdExtra<'a>,
}

/// What a document's `_dd` carries beyond what every one does.
#[derive(Clone, Copy)]
enum DdExtra<'a> {
    None,
    /// A view's `document_version`.
    Version(u64),
    /// A resource's trace (`trace_id`, `span_id`).
    Trace(&'a TraceIds),
}

impl Serialize for Dd<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("format_version", &FORMAT_VERSION)?;
        m.serialize_entry("session", &Plan)?;
        m.serialize_entry("configuration", &SampleRate(self.identity.session_sample_rate))?;
        match self.extra {
            DdExtra::None => {}
            DdExtra::Version(v) => m.serialize_entry("document_version", &v)?,
            DdExtra::Trace(t) => {
                m.serialize_entry("trace_id", &format!("{:032x}", t.trace_id))?;
                m.serialize_entry("span_id", &t.span_id.to_string())?;
            }
        }
        m.end()
    }
}

struct SampleRate(f64);

impl Serialize for SampleRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        // A whole rate is written as an integer (`100`), as the SDKs' own documents show it.
        if self.0.fract() == 0.0 {
            m.serialize_entry("session_sample_rate", &(self.0 as u64))?;
        } else {
            m.serialize_entry("session_sample_rate", &self.0)?;
        }
        m.end()
    }
}

/// `application`: its id and, when known, the user's locale.
struct Application<'a>(&'a Identity);

impl Serialize for Application<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &self.0.application_id)?;
        if let Some(locale) = &self.0.context.locale {
            m.serialize_entry("current_locale", locale)?;
        }
        m.end()
    }
}

struct Plan;

impl Serialize for Plan {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("plan", &1)?;
        m.end()
    }
}

fn common_entries<M: SerializeMap>(
    m: &mut M,
    kind: DocumentKind,
    c: &Common,
    extra: DdExtra<'_>,
) -> Result<(), M::Error> {
    let id = &*c.identity;
    m.serialize_entry("type", kind.as_str())?;
    m.serialize_entry("date", &c.date)?;
    m.serialize_entry("_dd", &Dd { identity: id, extra })?;
    m.serialize_entry("application", &Application(id))?;
    m.serialize_entry("session", &SessionField(&c.session_id))?;
    m.serialize_entry("source", &id.source)?;
    m.serialize_entry("service", &id.service)?;
    m.serialize_entry("version", &id.version)?;
    if let Some(build) = &id.context.build_version {
        m.serialize_entry("build_version", build)?;
    }
    m.serialize_entry("ddtags", &id.ddtags)?;
    if let Some(device) = &id.context.device {
        m.serialize_entry("device", device)?;
    }
    if let Some(os) = &id.context.os {
        m.serialize_entry("os", os)?;
    }
    if let Some(viewport) = &id.context.viewport {
        m.serialize_entry("display", &DisplayField { viewport })?;
    }
    if let Some(connectivity) = &c.connectivity {
        m.serialize_entry("connectivity", connectivity.as_ref())?;
    }
    if let Some(usr) = &c.usr {
        m.serialize_entry("usr", usr.as_ref())?;
    }
    m.serialize_entry("context", &Merged { global: &c.global, call: &c.attrs })
}

impl Serialize for ViewDocument {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        common_entries(&mut m, DocumentKind::View, &self.common, DdExtra::Version(self.document_version))?;
        m.serialize_entry("view", &ViewBody(self))?;
        m.end()
    }
}

struct Count(u64);

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("count", &self.0)?;
        m.end()
    }
}

struct ViewBody<'a>(&'a ViewDocument);

impl Serialize for ViewBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &*d.view.id)?;
        m.serialize_entry("name", &*d.view.name)?;
        m.serialize_entry("url", &*d.view.url)?;
        m.serialize_entry("time_spent", &d.time_spent_ns)?;
        m.serialize_entry("is_active", &d.is_active)?;
        m.serialize_entry("action", &Count(d.action_count))?;
        m.serialize_entry("error", &Count(d.error_count))?;
        m.serialize_entry("crash", &Count(d.crash_count))?;
        m.serialize_entry("resource", &Count(d.resource_count))?;
        // Absent until the first one, as the other optional counters of the format.
        if d.long_task_count > 0 {
            m.serialize_entry("long_task", &Count(d.long_task_count))?;
        }
        if d.frozen_frame_count > 0 {
            m.serialize_entry("frozen_frame", &Count(d.frozen_frame_count))?;
        }
        if !d.custom_timings.is_empty() {
            m.serialize_entry("custom_timings", &*d.custom_timings)?;
        }
        m.end()
    }
}

/// An event document other than a view: the common entries, the view it happened in, and its own
/// body under `key`.
fn event_document<S: Serializer, B: Serialize>(
    s: S,
    kind: DocumentKind,
    common: &Common,
    extra: DdExtra<'_>,
    view: &ViewRef,
    key: &'static str,
    body: B,
) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(None)?;
    common_entries(&mut m, kind, common, extra)?;
    m.serialize_entry("view", view)?;
    m.serialize_entry(key, &body)?;
    m.end()
}

impl Serialize for ActionDocument {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        event_document(s, DocumentKind::Action, &self.common, DdExtra::None, &self.view, "action", ActionBody(self))
    }
}

struct ActionBody<'a>(&'a ActionDocument);

impl Serialize for ActionBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("id", &self.0.id)?;
        m.serialize_entry("type", &self.0.action_type)?;
        m.serialize_entry("target", &Name(&self.0.target_name))?;
        m.end()
    }
}

struct Name<'a>(&'a str);

impl Serialize for Name<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("name", self.0)?;
        m.end()
    }
}

impl Serialize for ErrorDocument {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        event_document(s, DocumentKind::Error, &self.common, DdExtra::None, &self.view, "error", ErrorBody(self))
    }
}

struct ErrorBody<'a>(&'a ErrorDocument);

impl Serialize for ErrorBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &d.id)?;
        m.serialize_entry("message", &d.message)?;
        m.serialize_entry("source", &d.source)?;
        // Absent values are omitted: the format types `stack` as a string, never null.
        if let Some(stack) = &d.stack {
            m.serialize_entry("stack", stack)?;
        }
        m.serialize_entry("is_crash", &d.is_crash)?;
        let details = d.details.as_deref();
        if let Some(error_type) = details.and_then(|x| x.error_type.as_ref()) {
            m.serialize_entry("type", error_type)?;
        }
        if let Some(category) = details.and_then(|x| x.category) {
            m.serialize_entry("category", &category)?;
        }
        let handling = details.and_then(|x| x.handling).unwrap_or(if d.is_crash {
            ErrorHandling::Unhandled
        } else {
            ErrorHandling::Handled
        });
        m.serialize_entry("handling", &handling)?;
        if let Some(resource) = &d.resource {
            m.serialize_entry("resource", resource)?;
        }
        m.end()
    }
}

impl Serialize for ResourceDocument {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let trace = self.details.as_ref().and_then(|d| d.trace.as_ref());
        event_document(
            s,
            DocumentKind::Resource,
            &self.common,
            trace.map_or(DdExtra::None, DdExtra::Trace),
            &self.view,
            "resource",
            ResourceBody(self),
        )
    }
}

struct ResourceBody<'a>(&'a ResourceDocument);

impl Serialize for ResourceBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &d.id)?;
        m.serialize_entry("type", &d.kind)?;
        m.serialize_entry("url", &d.url)?;
        m.serialize_entry("method", &d.method)?;
        m.serialize_entry("status_code", &d.status_code)?;
        // The format types `size` as an integer, never null: an unknown size is omitted.
        if let Some(size) = d.size {
            m.serialize_entry("size", &size)?;
        }
        m.serialize_entry("duration", &d.duration_ns)?;
        for (name, phase) in d.details.as_deref().map(|x| ResourceTiming::phases(&x.timing)).into_iter().flatten() {
            if let Some(phase) = phase {
                m.serialize_entry(name, &phase)?;
            }
        }
        m.end()
    }
}

impl Serialize for LongTaskDocument {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        event_document(
            s,
            DocumentKind::LongTask,
            &self.common,
            DdExtra::None,
            &self.view,
            "long_task",
            LongTaskBody(self),
        )
    }
}

struct LongTaskBody<'a>(&'a LongTaskDocument);

impl Serialize for LongTaskBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("id", &self.0.id)?;
        m.serialize_entry("duration", &self.0.duration_ns)?;
        m.serialize_entry("is_frozen_frame", &(self.0.duration_ns >= FROZEN_FRAME_NS))?;
        m.end()
    }
}

impl Serialize for AppLaunchDocument {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        event_document(s, DocumentKind::Vital, &self.common, DdExtra::None, &self.view, "vital", AppLaunchBody(self))
    }
}

struct AppLaunchBody<'a>(&'a AppLaunchDocument);

/// What the mobile SDKs write for a cold start's first frame (`time_to_initial_display`).
impl Serialize for AppLaunchBody<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("id", &self.0.id)?;
        m.serialize_entry("type", "app_launch")?;
        m.serialize_entry("name", "time_to_initial_display")?;
        m.serialize_entry("app_launch_metric", "ttid")?;
        m.serialize_entry("duration", &self.0.duration_ns)?;
        m.serialize_entry("startup_type", "cold_start")?;
        m.end()
    }
}

impl Serialize for Document {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::View(d) => d.serialize(s),
            Self::Action(d) => d.serialize(s),
            Self::Error(d) => d.serialize(s),
            Self::Resource(d) => d.serialize(s),
            Self::LongTask(d) => d.serialize(s),
            Self::AppLaunch(d) => d.serialize(s),
            Self::Mapped { value, .. } => value.serialize(s),
        }
    }
}
