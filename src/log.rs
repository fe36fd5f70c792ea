//! Logging: hilog on HarmonyOS, stderr on the host. Messages are plain text; on hilog they are
//! passed as a printf format, so `%` is escaped, and as a C string, so a NUL is written `\0`.

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

/// The message as hilog must get it: `%` escaped (hilog reads the text as a printf format), and
/// NUL written as `\0`. Messages carry JS text (a mapper's error message, an attribute key), and
/// ohos-hilog-binding builds its C string with `CString::new(..).unwrap()`, which panics on a NUL:
/// a log line would then throw out of `addAction` or stop a slice halfway.
pub fn hilog_text(msg: &str) -> std::borrow::Cow<'_, str> {
    if msg.contains(['%', '\0']) {
        std::borrow::Cow::Owned(msg.replace('%', "%%").replace('\0', "\\0"))
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
    let msg = hilog_text(msg);
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
    fn hilog_text_escapes_percent_and_has_no_nul() {
        assert_eq!(super::hilog_text("100% done"), "100%% done");
        assert_eq!(super::hilog_text("plain"), "plain");
        let text = super::hilog_text("mapper threw: a\0b %s");
        assert_eq!(text, "mapper threw: a\\0b %%s");
        assert!(std::ffi::CString::new(text.as_ref()).is_ok(), "hilog's CString::new must not fail");
    }
}
