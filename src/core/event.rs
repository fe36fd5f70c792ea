//! Events as captured at call time.
//!
//! Everything an event needs is copied when the host calls: its sequence number, the wall-clock and
//! monotonic time of the call, and an owned copy of its attributes. Later mutation by the host
//! cannot change a queued event, and processing it later gives the same documents as processing it
//! at once.

use serde::Serialize;
use serde_json::{Map, Value};

use super::attrs::Attrs;
use super::context::{Connectivity, ConnectivityStatus, DeviceType, NetworkInterface};
use super::js_enum::{js_enum, ts_union};
use super::text::Text;

/// Attributes held as values: the global ones, a user's `extra`. A call's own attributes are
/// captured as JSON text ([`Attrs`]).
pub type Attributes = Map<String, Value>;

/// One captured call.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Per pipeline, strictly increasing in call order.
    pub seq: u64,
    /// Wall-clock time of the call, ms since the Unix epoch: the documents' `date`.
    pub wall_ms: i64,
    /// Monotonic time of the call, ns: durations (`time_spent`, resource `duration`).
    pub mono_ns: u64,
    pub kind: EventKind,
    /// The call's own attributes (merged over the global ones in `context`), as captured.
    pub attrs: Attrs,
}

/// What the call was.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    StartView {
        key: String,
        name: String,
    },
    StopView {
        key: String,
    },
    Action {
        action_type: ActionType,
        name: Text,
    },
    /// `is_crash`: `markCrash`, a crash of this process (counted on its view, which it closes, and
    /// synced). `details`: what `addError`/`markCrash` were given beyond that, if anything.
    Error {
        message: String,
        source: ErrorSource,
        stack: Option<String>,
        is_crash: bool,
        details: Option<Box<ErrorDetails>>,
    },
    StartResource {
        key: String,
        method: HttpMethod,
        url: String,
    },
    StopResource {
        key: String,
        status_code: u16,
        kind: ResourceKind,
        size: Option<u64>,
        details: Option<Box<ResourceDetails>>,
    },
    /// The resource `key` failed without a response (a transport error): an error of source
    /// `network` naming the resource, instead of a resource document.
    StopResourceWithError {
        key: String,
        message: String,
        error_type: Option<String>,
    },
    /// The JS thread was busy for `duration_ns` (a main-thread turn over the reporter's
    /// threshold). `start_wall_ms` when the reporter knows when it began (a system event
    /// delivered later); otherwise it began `duration_ns` before the call.
    LongTask {
        duration_ns: u64,
        start_wall_ms: Option<i64>,
    },
    /// A cold start's time to initial display: from the process start (`start_wall_ms`) to the
    /// first frame of the first page.
    AppLaunch {
        duration_ns: u64,
        start_wall_ms: i64,
    },
    AddTiming {
        name: String,
    },
    AddAttribute {
        key: String,
        value: Value,
    },
    RemoveAttribute {
        key: String,
    },
    SetUser(Option<UserInfo>),
    SetConsent(TrackingConsent),
    SetConnectivity(Connectivity),
    StopSession,
    KeepAlive,
}

impl EventKind {
    /// Calls that must see every earlier call processed first (docs/design.md, "Synchronous drains"):
    /// a crash or error sees the whole history, and queued events keep the user and consent of
    /// their call.
    pub fn drains_queue(&self) -> bool {
        matches!(
            self,
            Self::Error { .. }
                | Self::StopResourceWithError { .. }
                | Self::SetUser(_)
                | Self::SetConsent(_)
                | Self::StopSession
                | Self::KeepAlive
        )
    }

    /// The JS method name, for logs and errors.
    pub fn method(&self) -> &'static str {
        match self {
            Self::StartView { .. } => "startView",
            Self::StopView { .. } => "stopView",
            Self::Action { .. } => "addAction",
            Self::Error { is_crash: true, .. } => "markCrash",
            Self::Error { .. } => "addError",
            Self::StartResource { .. } => "startResource",
            Self::StopResource { .. } => "stopResource",
            Self::StopResourceWithError { .. } => "stopResourceWithError",
            Self::LongTask { .. } => "addLongTask",
            Self::AppLaunch { .. } => "addAppLaunch",
            Self::AddTiming { .. } => "addTiming",
            Self::AddAttribute { .. } => "addAttribute",
            Self::RemoveAttribute { .. } => "removeAttribute",
            Self::SetUser(_) => "setUser",
            Self::SetConsent(_) => "setTrackingConsent",
            Self::SetConnectivity(_) => "setConnectivity",
            Self::StopSession => "stopSession",
            Self::KeepAlive => "keepAlive",
        }
    }
}

/// What an error may carry beyond message, source and stack (the `details` argument of
/// `addError` and `markCrash`): how the crash reporters describe a crash or a freeze.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorDetails {
    /// `error.type`: the error's name or kind ("TypeError", "SIGSEGV").
    pub error_type: Option<String>,
    /// `error.category`.
    pub category: Option<ErrorCategory>,
    /// `error.handling`; without it, "unhandled" for a crash, "handled" otherwise.
    pub handling: Option<ErrorHandling>,
    /// `is_crash: true` on an `addError`: a crash of an earlier process, reported after the fact
    /// (it neither closes the current view nor counts on it).
    pub is_crash: bool,
    /// `date`: when the error happened, ms since the Unix epoch; without it, the call's time.
    pub date_ms: Option<i64>,
}

/// What `stopResource` may add to a resource beyond its status, kind and size.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceDetails {
    pub timing: ResourceTiming,
    /// The trace the request carried (`traceparent`), so the intake links the resource to it.
    pub trace: Option<TraceIds>,
}

/// A W3C trace context's ids: written `_dd.trace_id` (128-bit hex) and `_dd.span_id` (decimal),
/// as the format's trace fields take them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceIds {
    pub trace_id: u128,
    pub span_id: u64,
}

impl TraceIds {
    /// Hex digits of a `traceparent` header's trace id and span id.
    pub const TRACE_ID_DIGITS: usize = 32;
    pub const SPAN_ID_DIGITS: usize = 16;

    /// From the hex of a `traceparent` header, each id checked by [`Self::hex_id`].
    pub fn from_hex(trace_id: &str, span_id: &str) -> Result<Self, String> {
        let id = |s: &str, digits: usize, what: &str| {
            Self::hex_id(s, digits).ok_or_else(|| format!("{what} {}", Self::rule(digits, s)))
        };
        Ok(Self {
            trace_id: id(trace_id, Self::TRACE_ID_DIGITS, "traceId")?,
            span_id: id(span_id, Self::SPAN_ID_DIGITS, "spanId")? as u64,
        })
    }

    /// Exactly `digits` hex digits, not all zeros (W3C calls those invalid).
    pub fn hex_id(s: &str, digits: usize) -> Option<u128> {
        let valid = s.len() == digits && s.bytes().all(|b| b.is_ascii_hexdigit());
        let n = if valid { u128::from_str_radix(s, 16).ok() } else { None };
        n.filter(|n| *n != 0)
    }

    /// Why `s` is not an id of `digits` hex digits.
    pub fn rule(digits: usize, s: &str) -> String {
        format!("must be {digits} hex digits, not all zeros, got {s:?}")
    }
}

/// A resource's timing breakdown as the RUM event format records it (`resource.redirect`, `dns`,
/// `connect`, `ssl`, `first_byte`, `download`): each phase that happened, ns since the resource
/// started.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceTiming {
    pub redirect: Option<Phase>,
    pub dns: Option<Phase>,
    pub connect: Option<Phase>,
    pub ssl: Option<Phase>,
    pub first_byte: Option<Phase>,
    pub download: Option<Phase>,
}

/// One phase of a resource: when it started (ns after the resource started) and how long it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Phase {
    pub start: u64,
    pub duration: u64,
}

/// The phases of [`ResourceTiming`] in the order the interface and the handover list them,
/// with their JS names.
pub const TIMING_PHASES: [&str; 6] = ["redirect", "dns", "connect", "ssl", "firstByte", "download"];

/// Longest duration taken (a resource phase or its start, a long task, a launch), ms: a day. None
/// lasts longer; a larger figure is a caller's unit mistake (ns, or an epoch time), refused.
pub const MAX_DURATION_MS: f64 = 86_400_000.0;

impl ResourceTiming {
    /// Builds a timing from each phase's `(start, duration)` in ms, in [`TIMING_PHASES`] order.
    /// A value that is not a finite number from 0 to [`MAX_DURATION_MS`] is refused with the
    /// phase's name and the reason.
    pub fn from_ms(phases: [Option<(f64, f64)>; 6]) -> Result<Self, String> {
        let mut out = [None; 6];
        for (i, phase) in phases.into_iter().enumerate() {
            let Some((start, duration)) = phase else { continue };
            for (what, v) in [("start", start), ("duration", duration)] {
                if !(v.is_finite() && (0.0..=MAX_DURATION_MS).contains(&v)) {
                    return Err(format!(
                        "{}.{what} must be a number of ms from 0 to {MAX_DURATION_MS} (got {v})",
                        TIMING_PHASES[i]
                    ));
                }
            }
            out[i] = Some(Phase { start: (start * 1e6) as u64, duration: (duration * 1e6) as u64 });
        }
        let [redirect, dns, connect, ssl, first_byte, download] = out;
        Ok(Self { redirect, dns, connect, ssl, first_byte, download })
    }

    /// Each phase with its RUM format name.
    pub fn phases(&self) -> [(&'static str, Option<Phase>); 6] {
        [
            ("redirect", self.redirect),
            ("dns", self.dns),
            ("connect", self.connect),
            ("ssl", self.ssl),
            ("first_byte", self.first_byte),
            ("download", self.download),
        ]
    }
}

/// The user in force; `extra` lands beside id/name/email in `usr`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UserInfo {
    pub id: Option<String>,
    pub name: Option<String>,
    pub email: Option<String>,
    pub extra: Attributes,
}

impl Serialize for UserInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for (k, v) in &self.extra {
            if !matches!(k.as_str(), "id" | "name" | "email") {
                m.serialize_entry(k, v)?;
            }
        }
        if let Some(id) = &self.id {
            m.serialize_entry("id", id)?;
        }
        if let Some(name) = &self.name {
            m.serialize_entry("name", name)?;
        }
        if let Some(email) = &self.email {
            m.serialize_entry("email", email)?;
        }
        m.end()
    }
}

js_enum!(
    /// RUM action types the interface accepts.
    ActionType { Tap = "tap", Scroll = "scroll", Swipe = "swipe", Click = "click", Back = "back", Custom = "custom" }
);

js_enum!(
    /// RUM error sources the interface accepts.
    ErrorSource { Source = "source", Network = "network", Webview = "webview", Console = "console", Custom = "custom" }
);

js_enum!(
    /// `error.category` of the RUM event format.
    ErrorCategory {
        Anr = "ANR", AppHang = "App Hang", Exception = "Exception", WatchdogTermination = "Watchdog Termination",
        MemoryWarning = "Memory Warning", Network = "Network",
    }
);

js_enum!(
    /// `error.handling` of the RUM event format.
    ErrorHandling { Handled = "handled", Unhandled = "unhandled" }
);

js_enum!(
    /// RUM resource types (rum-events-format `resource.type`).
    ResourceKind {
        Document = "document", Xhr = "xhr", Beacon = "beacon", Fetch = "fetch", Css = "css", Js = "js",
        Image = "image", Font = "font", Media = "media", Other = "other", Native = "native",
    }
);

js_enum!(
    /// HTTP methods of resources (rum-events-format `resource.method`). The binding accepts them in
    /// any case and writes them in upper case.
    HttpMethod {
        Post = "POST", Get = "GET", Head = "HEAD", Put = "PUT", Delete = "DELETE", Patch = "PATCH",
        Trace = "TRACE", Options = "OPTIONS", Connect = "CONNECT",
    }
);

impl HttpMethod {
    /// `get` and `Get` are `GET`.
    pub fn parse_any_case(s: &str) -> Option<Self> {
        if s.len() > 7 {
            return None;
        }
        Self::parse(&s.to_ascii_uppercase())
    }
}

js_enum!(
    /// Tracking consent, as the host sets it.
    TrackingConsent { Granted = "granted", NotGranted = "not_granted", Pending = "pending" }
);

js_enum!(
    /// How sealed batches are stored and handed to the uploader (`nextBatch().encoding`, the
    /// HTTP `Content-Encoding` of the body).
    BatchEncoding { Gzip = "gzip", Identity = "identity" }
);

/// The TypeScript unions of every closed set of JS strings, one `export type` line each with its
/// doc: what `scripts/gen-dts.sh` writes at the top of `index.d.ts`, so the JS side never copies
/// a list.
pub fn ts_unions() -> String {
    [
        ts_union::<ActionType>("RUM action types."),
        ts_union::<ErrorSource>("RUM error sources."),
        ts_union::<ErrorCategory>("`error.category` of the RUM event format."),
        ts_union::<ErrorHandling>("`error.handling` of the RUM event format."),
        ts_union::<ResourceKind>("RUM resource types."),
        ts_union::<HttpMethod>("HTTP methods of resources (accepted in any case, written in upper case)."),
        ts_union::<TrackingConsent>("Tracking consent."),
        ts_union::<DeviceType>("`device.type` of the RUM event format."),
        ts_union::<ConnectivityStatus>("`connectivity.status` of the RUM event format."),
        ts_union::<NetworkInterface>("`connectivity.interfaces` of the RUM event format."),
        ts_union::<BatchEncoding>("How sealed batches are stored and handed out (`NextBatch.encoding`)."),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ts_unions_list_every_value() {
        let u = ts_unions();
        assert!(u.contains("export type ActionType = 'tap' | 'scroll' | 'swipe' | 'click' | 'back' | 'custom'\n"));
        assert!(u.contains("export type TrackingConsent = 'granted' | 'not_granted' | 'pending'\n"));
        assert!(u.contains("export type BatchEncoding = 'gzip' | 'identity'\n"));
        assert!(u.contains("export type ErrorCategory = 'ANR' | 'App Hang' | 'Exception' |"));
        assert_eq!(u.matches("export type").count(), 11);
    }

    #[test]
    fn enums_round_trip_their_js_names() {
        for name in ActionType::ALL {
            assert_eq!(ActionType::parse(name).map(ActionType::as_str), Some(*name));
        }
        assert_eq!(ErrorSource::parse("network"), Some(ErrorSource::Network));
        assert_eq!(ResourceKind::parse("fetch"), Some(ResourceKind::Fetch));
        assert_eq!(ActionType::parse("Tap"), None);
    }

    #[test]
    fn drain_points_are_the_documented_calls() {
        assert!(EventKind::KeepAlive.drains_queue());
        assert!(EventKind::SetUser(None).drains_queue());
        assert!(EventKind::SetConsent(TrackingConsent::Pending).drains_queue());
        assert!(EventKind::StopSession.drains_queue());
        let action = EventKind::Action { action_type: ActionType::Tap, name: "a".into() };
        assert!(!action.drains_queue());
        let error = EventKind::Error {
            message: "m".into(),
            source: ErrorSource::Custom,
            stack: None,
            is_crash: false,
            details: None,
        };
        assert!(error.drains_queue());
    }

    #[test]
    fn user_fields_win_over_extra_keys_of_the_same_name() {
        let mut extra = Attributes::new();
        extra.insert("id".into(), Value::from("spoofed"));
        extra.insert("plan".into(), Value::from("pro"));
        let u = UserInfo { id: Some("u1".into()), name: None, email: None, extra };
        let v = serde_json::to_value(&u).expect("serialize");
        assert_eq!(v, serde_json::json!({ "plan": "pro", "id": "u1" }));
    }
}
