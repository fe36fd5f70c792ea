//! What documents say about the device and the app beside the event itself (the RUM event format's
//! `device`, `os`, `display`, `connectivity`, `application.current_locale`, `build_version`): what
//! RUM UIs show and the mobile SDKs send. The host provides them (on HarmonyOS the HAR's
//! `RumMonitor` reads deviceInfo, display, the network connection and i18n); the pipeline only
//! carries them. Every value a schema enumerates is one of its enums here, so a document cannot
//! carry a value the intake refuses.

use serde::Serialize;

use super::js_enum::js_enum;

js_enum!(
    /// `device.type` of the RUM event format.
    DeviceType {
        Mobile = "mobile", Desktop = "desktop", Tablet = "tablet", Tv = "tv", GamingConsole = "gaming_console",
        Bot = "bot", Other = "other",
    }
);

js_enum!(
    /// `connectivity.status` of the RUM event format.
    ConnectivityStatus { Connected = "connected", NotConnected = "not_connected", Maybe = "maybe" }
);

js_enum!(
    /// `connectivity.interfaces[]` of the RUM event format.
    NetworkInterface {
        Bluetooth = "bluetooth", Cellular = "cellular", Ethernet = "ethernet", Wifi = "wifi", Wimax = "wimax",
        Mixed = "mixed", Other = "other", Unknown = "unknown", None = "none",
    }
);

/// `device`: every field optional, as in the format; absent ones are left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Device {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<DeviceType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brand: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub architecture: Option<String>,
}

/// `os`: the format requires all three fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Os {
    pub name: String,
    pub version: String,
    pub version_major: String,
}

/// `display.viewport`, in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Viewport {
    pub width: f64,
    pub height: f64,
}

/// `display`: the viewport is all the format's `display` holds that the pipeline knows.
#[derive(Serialize)]
pub struct DisplayField<'a> {
    pub viewport: &'a Viewport,
}

/// `connectivity`: it changes while the app runs (`setConnectivity`), so each document carries
/// the connectivity in force at its call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Connectivity {
    pub status: ConnectivityStatus,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<NetworkInterface>,
}

/// The device and app facts fixed for a pipeline's life.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppContext {
    pub device: Option<Device>,
    pub os: Option<Os>,
    pub viewport: Option<Viewport>,
    /// `application.current_locale`: a language tag, e.g. `zh-Hans-CN`.
    pub locale: Option<String>,
    /// `build_version`: the app's build (version code), beside `version` (its name).
    pub build_version: Option<String>,
}
