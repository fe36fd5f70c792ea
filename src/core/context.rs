//! What documents say about the device and the app beside the event itself (the RUM event format's
//! `device`, `os`, `display`, `connectivity`, `application.current_locale`, `build_version`): what
//! RUM UIs show and the mobile SDKs send. The host provides them (on HarmonyOS the HAR's
//! `RumMonitor` reads deviceInfo, display, the network connection and i18n); the pipeline only
//! carries them. Every value a schema enumerates is one of its enums here, so a document cannot
//! carry a value the intake refuses.

use serde::ser::{SerializeMap, Serializer};
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

/// `device`: every field optional, as in the format.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Device {
    pub kind: Option<DeviceType>,
    pub brand: Option<String>,
    pub model: Option<String>,
    pub name: Option<String>,
    pub architecture: Option<String>,
}

impl Serialize for Device {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(kind) = self.kind {
            m.serialize_entry("type", &kind)?;
        }
        for (key, value) in
            [("name", &self.name), ("model", &self.model), ("brand", &self.brand), ("architecture", &self.architecture)]
        {
            if let Some(v) = value {
                m.serialize_entry(key, v)?;
            }
        }
        m.end()
    }
}

/// `os`: the format requires all three fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Os {
    pub name: String,
    pub version: String,
    pub version_major: String,
}

/// `display.viewport`, in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub width: f64,
    pub height: f64,
}

impl Serialize for Viewport {
    /// `{ "viewport": { "width", "height" } }`: the whole `display` object.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Size<'a>(&'a Viewport);
        impl Serialize for Size<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("width", &self.0.width)?;
                m.serialize_entry("height", &self.0.height)?;
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("viewport", &Size(self))?;
        m.end()
    }
}

/// `connectivity`: it changes while the app runs (`setConnectivity`), so each document carries
/// the connectivity in force at its call.
#[derive(Clone, Debug, PartialEq)]
pub struct Connectivity {
    pub status: ConnectivityStatus,
    pub interfaces: Vec<NetworkInterface>,
}

impl Serialize for Connectivity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("status", &self.status)?;
        if !self.interfaces.is_empty() {
            m.serialize_entry("interfaces", &self.interfaces)?;
        }
        m.end()
    }
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
