//! Logging: hilog on HarmonyOS, stderr on the host. Messages are plain text; on hilog they are
//! passed as a printf format, so `%` is escaped.

/// Severity of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

/// hilog domain and tag of this module.
#[cfg(target_env = "ohos")]
const HILOG_DOMAIN: u32 = 0x3D00;
const TAG: &str = "rum-native";

/// Escapes `%` so hilog prints the message verbatim instead of reading it as a format.
pub fn escape_percent(msg: &str) -> std::borrow::Cow<'_, str> {
    if msg.contains('%') {
        std::borrow::Cow::Owned(msg.replace('%', "%%"))
    } else {
        std::borrow::Cow::Borrowed(msg)
    }
}

#[cfg(target_env = "ohos")]
pub fn log(level: Level, msg: &str) {
    use ohos_hilog_binding::{hilog_debug, hilog_error, hilog_info, hilog_warn};
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        ohos_hilog_binding::set_global_options(ohos_hilog_binding::LogOptions { domain: HILOG_DOMAIN, tag: TAG });
    });
    let msg = escape_percent(msg);
    match level {
        Level::Debug => hilog_debug!(msg),
        Level::Info => hilog_info!(msg),
        Level::Warn => hilog_warn!(msg),
        Level::Error => hilog_error!(msg),
    }
}

#[cfg(not(target_env = "ohos"))]
pub fn log(level: Level, msg: &str) {
    // Tests and benchmarks can silence expected warnings.
    use std::io::Write;
    if std::env::var_os("RUM_NATIVE_QUIET").is_some() && level != Level::Error {
        return;
    }
    // Not `eprintln!`: it panics when stderr cannot be written (a closed pipe), and a log line
    // runs in GC finalizers, teardown hooks and the writer thread, where a panic aborts the
    // process or kills the writer. A line that cannot be written is dropped.
    let _ = writeln!(std::io::stderr().lock(), "[{TAG}] {level:?}: {msg}");
}

pub fn warn(msg: &str) {
    log(Level::Warn, msg);
}

pub fn error(msg: &str) {
    log(Level::Error, msg);
}

pub fn info(msg: &str) {
    log(Level::Info, msg);
}

#[cfg(test)]
mod tests {
    #[test]
    fn percent_is_escaped_for_hilog() {
        assert_eq!(super::escape_percent("100% done"), "100%% done");
        assert_eq!(super::escape_percent("plain"), "plain");
    }
}
