//! Every limit of the pipeline: its default, why it has that value, and where the value comes from.
//! This is the one place a limit is stated; the README's limits table, the options' `@default`s
//! (in `index.d.ts`) and `docs/design.md` repeat the values for readers, and
//! `tests/limits.rs` holds them to these constants. Measurements behind a choice are in
//! `docs/benchmarks.md`, not here: they change from run to run, the reasons do not.
//!
//! The values a host may change arrive in [`Config`]; [`Config::validate`] rejects the ones that
//! would break an invariant (a zero budget would queue everything forever, a quota smaller than one
//! event could never hold anything) before anything is created.

use std::fmt;
use std::path::PathBuf;

/// The zlib level sealed batches are compressed at (`batchEncoding: 'gzip'`). Cost is what
/// matters first: the seal holds the store (the upload side waits for it) and its CPU is the SDK's,
/// in a burst and in the steady state alike. With the zlib-rs backend (Cargo.toml) level 2 costs
/// what level 1 does, within a few percent, and keeps almost the best ratio (level 1 there is a
/// cruder algorithm that leaves two fifths more bytes; the levels above 2 compress these documents
/// no better, at up to 3.5 times the cost). More documents under the same quota is what the
/// ratio buys: the largest bursts are kept whole.
/// Ratios and times per level, and what the quota keeps: `docs/benchmarks.md`, "Sealed batches"
/// (`examples/gzip_levels.rs`, `examples/gzip_quota.rs`).
pub const GZIP_LEVEL: u32 = 2;

/// How many times more documents the writer's backlog may hold with gzip batches than with plain
/// ones: a sealed batch keeps its documents in a small fraction of their bytes, so the reason for
/// bounding the backlog by what the disk could keep scales with it; 8 is well below the measured
/// ratio (`docs/benchmarks.md`, "Sealed batches"), a margin for documents that compress worse than
/// the reference burst's.
pub const GZIP_BACKLOG_FACTOR: u64 = 8;

/// The writer's backlog is never above this, whatever the quota: documents waiting in memory
/// compete with the app's own memory, and 64 MiB holds the largest burst the benchmarks send
/// (100,000 actions at about 600 bytes each in flight at once, worst case).
pub const WRITER_BACKLOG_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The longest the writer leaves documents in its channel while the JS thread is in a busy turn
/// (one that processed events and has not ended): one 60 Hz frame. A writer that runs while the
/// UI thread is in a burst competes with it for a core whenever the others are taken (measured:
/// `docs/benchmarks.md`, "The writer hold"); a turn longer than a frame has already cost its
/// frame, so past this the writer works as before. What a kill may lose grows from what the
/// writer has not taken yet to the documents of the current turn, whose queued events it loses
/// anyway.
pub const WRITER_HOLD_MAX_MS: u64 = 16;

/// ... and while less than this waits for it (the writer's backlog estimate, [`WRITER_BACKLOG_MAX_BYTES`]'s
/// measure). Set above what a frame-long turn of capacity slices leaves waiting in the largest
/// benchmark bursts (`docs/benchmarks.md`, "The writer hold"), so the bound acts only where the
/// writer already lags the JS thread; memory then grows no faster than without the hold.
pub const WRITER_HOLD_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// While documents keep coming outside busy turns (a steady stream of light turns: a few events
/// per tick), the writer writes them at most this often instead of once per event: after a write
/// that follows another within this time, it sleeps this long without being woken by each
/// document, then writes everything that came in one `write`. Each wake-up it saves is worth
/// many documents' serialization (`docs/benchmarks.md`, steady state: about 200 µs of the
/// writer's CPU on the development VM, measured across linger lengths), so a stream of 300
/// actions per second costs 4 wake-ups a second instead of a few hundred. A lone event (none in the previous linger) is
/// still written at once. The price: a process killed without a flush (crashes, `flush()`,
/// `stop()` and the facade's flush when the app goes to the background write at once) loses up to
/// this much of the latest stream (plus the capture buffer's [`CAPTURE_LINGER_MS`] where a host
/// turns that on). A quarter of a second: 100 ms cost the VM a third more writer CPU at 300
/// actions/s, 1 s a third less, for four times the exposure.
pub const WRITER_LINGER_MS: u64 = 250;

/// How long the HAR's capture buffer (`ets/src/main/ets/capture/CallBuffer.ets`, which states the
/// same number; `tests/limits.rs` holds them equal) gathers a stream's calls (turns less than
/// 50 ms after its last handover) before one timer hands them over in one crossing; 0, the
/// default: every turn's calls cross at its end. Off by default because, measured on the
/// development VM (`docs/benchmarks.md`, "The capture linger"), a 100 ms linger paid at 30 to 300
/// actions/s only beside the writer's full [`WRITER_LINGER_MS`]: on, it would raise what a kill
/// without a flush may lose of a stream past 250 ms, and a writer linger shortened to 150 ms to
/// make room cost the UI thread more (the writer woken more often) than the capture linger saved.
/// `RumMonitor`'s `pipeline.captureLingerMs` turns it on, for a device to measure (the demo HAP's
/// steady-state card does).
pub const CAPTURE_LINGER_MS: u64 = 0;

/// Time the SDK may spend on the caller's turn before it queues.
///
/// Trade-off (as tokio's coop budget documents its own): a larger budget keeps more calls on the
/// cheaper inline path but lets a burst hold the UI thread longer; 4 ms is a quarter of a 60 Hz
/// frame, so a frame that also renders still fits. Source: the reference change
/// (`docs/design.md`).
pub const TURN_BUDGET_MS: u32 = 4;

/// A turn's end is awaited (a [`Timer::TurnEnd`](crate::core::seam::Timer::TurnEnd), one
/// `setTimeout` on the JS thread) only once the calls since the dispatcher's last timer fired
/// (a turn end, or the [`Timer::ViewsDue`](crate::core::seam::Timer::ViewsDue) a light turn's
/// view gets anyway, at most once per view interval) have spent this share of the turn budget
/// (half: 2 ms of the default 4 ms). A timer costs the UI thread an event-loop iteration, many
/// times a lone event's own processing (docs/benchmarks.md, steady state), so the fewer the
/// better: at a steady 300 actions per second the view's timer alone ends the count on a phone.
/// The price is on bursts: up to this much of a turn's budget may have been spent on earlier
/// turns, so a burst's first turn may queue after half its budget, never later than after all
/// of it; its later slices have their whole budget.
pub const LIGHT_TURN_SHARE: u64 = 2;

/// An active view's document is written at most once per this interval (and once per turn); a
/// stopped view, and every forced point (drains, `keepAlive`, `flush`, `stop`, `markCrash`, user and
/// consent changes, session end), write it at once. The browser RUM SDK throttles view updates to
/// one per 3 s. We chose 1 s because past it the view documents' share of the bytes written is
/// already negligible, while a longer interval multiplies how stale a live view may be on the
/// intake and what a `kill -9` may cost (the view updates of one interval, never an action, error
/// or resource); figures: `docs/benchmarks.md`, "View updates" (`cargo bench --bench views`).
/// 0 writes after every inline event, as before (no throttling).
pub const VIEW_UPDATE_INTERVAL_MS: u32 = 1_000;

/// The largest `viewUpdateIntervalMs`: a minute of view updates is what a killed process may lose,
/// and past that a live view would look abandoned on the intake.
pub const MAX_VIEW_UPDATE_INTERVAL_MS: u64 = 60_000;

/// Events held while they wait for a slice. At the bound a slice runs synchronously before the
/// event is queued, so memory stays bounded and nothing is dropped. 5,000 covers the reference
/// burst (3,700 actions) without ever hitting the bound. Source: the reference change
/// (`docs/design.md`).
pub const QUEUE_CAPACITY: usize = 5_000;

/// Slices' handover texts one dispatcher's parse thread may hold at once: at the next, the JS
/// thread waits for them, so the texts in parse stay bounded (a slice's handover carries at most the
/// capture buffer's 4,096 calls) even if that thread falls behind. A burst keeps one or two in
/// parse: each slice takes in what the one before handed over.
pub const MAX_RUNS_IN_PARSE: usize = 4;

/// Capacity of the emptied handover-text buffer a dispatcher keeps for its next handover (bytes).
/// A text copied into a fresh buffer pays a page fault for every 4 KiB it fills (on the JS
/// thread, as it is read out of the engine), and a burst's slices carry about 100–300 KB each: the
/// buffer of one, kept, takes the next without a fault (`docs/benchmarks.md`, "The handover's
/// text"). A buffer is reserved at three bytes per UTF-16 unit, so 8 MiB takes any slice of up to
/// about 2.7 MB of text (4,096 calls of 650 bytes); what is resident is the pages the texts
/// touched, and a buffer larger than this is freed, so a burst of huge attributes does not pin
/// its memory.
pub const MAX_SPARE_TEXT_BYTES: usize = 8 << 20;

/// Roll the active batch past this size. Matches the reference SDK's batch size, which its intake
/// accepts in one request.
pub const BATCH_MAX_BYTES: u64 = 512 * 1024;

/// Roll an active batch older than this, so the uploader is not starved while events trickle in.
pub const BATCH_WINDOW_MS: u64 = 10_000;

/// All batch files of the pipeline, claimed ones included, stay within this: storage an app
/// grants a monitoring SDK without noticing. Source: the reference SDK's 4 MB disk quota.
pub const DISK_QUOTA_BYTES: u64 = 4 * 1024 * 1024;

/// File-count cap, so a directory of tiny batches cannot grow without bound.
pub const MAX_BATCH_FILES: u32 = 200;

/// Older batches are deleted, not uploaded: intakes drop events older than 24 h, and 1 h of margin
/// covers clock skew and a slow upload.
pub const BATCH_MAX_AGE_MS: u64 = 23 * 60 * 60 * 1000;

/// A larger document is dropped and counted: the intake rejects it anyway, and it would take a
/// whole batch for itself.
pub const EVENT_MAX_BYTES: u64 = 512 * 1024;

/// Documents kept while consent is pending; when full, the oldest half is dropped. As much room as
/// the default disk quota: a user who has not answered yet costs the app no more disk than one
/// who has.
pub const PRE_CONSENT_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// A move of the pre-consent buffer into batches that a failed write cut short (disk full, an
/// unwritable directory) is tried again at the next flush, and otherwise at most this often as
/// documents come: each try reads a chunk file and, while the fault lasts, fails again.
pub const PRE_CONSENT_RETRY_MS: i64 = 1_000;

/// A claim older than this is released (at open, and by `nextBatch()` when it finds one): the
/// uploader that held it is gone, or has hung. Far longer than any upload of one batch takes, so a
/// slow upload is not handed out twice.
pub const CLAIM_TIMEOUT_MS: u64 = 10 * 60 * 1000;

/// `flush()` and `markCrash()` wait at most this long for the writer; past it they report a
/// timeout instead of hanging the UI thread.
pub const FLUSH_TIMEOUT_MS: u32 = 2_000;

/// Documents sent to the writer and not yet taken by it are bounded by this many disk quotas
/// (`diskQuotaBytes`), by an estimate of what they hold in memory, times [`GZIP_BACKLOG_FACTOR`]
/// with gzip batches (64 MiB with the defaults, [`WRITER_BACKLOG_MAX_BYTES`] at most). The
/// backlog grows while a burst outpaces the writer, and without limit while the disk blocks
/// instead of failing. The writer could never keep more than what fits the quota on disk anyway
/// (a longer backlog evicts its own oldest part once written), so nothing it could have kept is
/// dropped; the second quota leaves room for the estimate's error. Past it, new documents are
/// dropped and counted (`droppedBacklog`); the caller never waits.
pub const WRITER_BACKLOG_QUOTAS: u64 = 2;

/// The writer's backlog bound is never below this (twice the default quota), so a small
/// `diskQuotaBytes` does not turn an ordinary burst into drops at the door: eviction, not the
/// backlog, decides what a small quota keeps.
pub const WRITER_BACKLOG_MIN_BYTES: u64 = WRITER_BACKLOG_QUOTAS * DISK_QUOTA_BYTES;

/// `nextBatch()` and `completeBatch()` wait at most this long for the writer, which holds the
/// directory while it writes. They run on the UI thread: a healthy write (64 KiB) takes far less,
/// so past one 60 Hz frame the disk is stalled, and `nextBatch()` returns nothing for now (the
/// uploader asks again next cycle) while `completeBatch()` leaves its change to the writer.
pub const UPLOAD_LOCK_WAIT_MS: u64 = 16;

/// A session ends after this long without events. Source: the RUM session rules every RUM SDK
/// follows, the reference SDK's included.
pub const SESSION_INACTIVITY_MS: i64 = 15 * 60 * 1000;

/// A session ends after this long in total, so one session is not an app's whole day. Source: the
/// RUM session rules.
pub const SESSION_MAX_DURATION_MS: i64 = 4 * 60 * 60 * 1000;

/// Resources started and not yet stopped, per view; past it the oldest is dropped and counted, so
/// a host that never stops its resources cannot grow a view without bound.
pub const MAX_PENDING_RESOURCES_PER_VIEW: usize = 100;

/// Stopped views kept because resources they started are still pending (a slow image may finish
/// after its screen is gone). Past this many, the oldest such view gives up its pending resources
/// (dropped and counted), so a host that never stops its resources cannot grow the tree.
pub const MAX_STOPPED_VIEWS_WITH_PENDING: usize = 10;

/// Actions one `addActions` call may carry. They are all captured before the call returns, so the
/// count bounds the memory one call can take (100,000 actions with 350-character attributes hold
/// about 100 MB); a longer list is refused with a RangeError before anything is read.
pub const MAX_ACTIONS_PER_CALL: u32 = 100_000;

/// `source` of documents (and `ddsource` of uploads) when the host names none: "harmony", what
/// Flashcat's HarmonyOS RUM SDK (fc-sdk-harmony) sends, so the intakes that already take HarmonyOS
/// RUM data file ours the same way. The RUM event format's `source` enum has no HarmonyOS value
/// (android, ios, browser, flutter, ...): a host whose intake validates the enum strictly sets an
/// enum value instead (`source: 'android'` is the closest: a mobile app with the same documents).
pub const DEFAULT_SOURCE: &str = "harmony";

/// Percentage of sessions tracked when the host sets none: every session, as every RUM SDK's
/// default.
pub const SESSION_SAMPLE_RATE: f64 = 100.0;

/// The largest `turnBudgetMs`: past a second the "budget" no longer keeps any frame smooth.
pub const MAX_TURN_BUDGET_MS: u64 = 1_000;

/// The largest `queueCapacity`: a million captured events already hold hundreds of MB.
pub const MAX_QUEUE_CAPACITY: u64 = 1_000_000;

/// The largest `eventMaxBytes`: the budget is all that bounds what one argument may make the
/// binding read and allocate (a sparse array's length, an iterator's entries), so it must stay far
/// below what a device can allocate.
pub const MAX_EVENT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Global attributes go into every document: they may take at most this share of `eventMaxBytes`
/// (one half), so that every event keeps room for its own fields and attributes. Past it
/// `addAttribute` throws instead of letting every later document be dropped as oversize.
pub const GLOBAL_ATTRIBUTES_SHARE: u64 = 2;

/// Bytes a global attribute adds to every document: `"key":value,`. What the budget of
/// [`GLOBAL_ATTRIBUTES_SHARE`] counts, at the call and where the attribute is applied.
pub fn global_attribute_bytes(key: &str, value: &serde_json::Value) -> u64 {
    // A string and a JSON value always serialize.
    let key = serde_json::to_string(key).map_or(0, |k| k.len());
    let value = serde_json::to_vec(value).map_or(0, |v| v.len());
    (key + value + 2) as u64
}

/// The largest `batchMaxBytes`: the writer holds a batch in memory while it seals it (read back,
/// views reduced, compressed) and an uploader holds its body, so the batch size sets how much both
/// allocate. 16 MiB is four times the mobile SDKs' largest batch (4 MB).
pub const MAX_BATCH_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The largest `maxBatchFiles`: the writer keeps one small record per file in memory.
pub const MAX_MAX_BATCH_FILES: u64 = 1_000_000;

/// The largest `flushTimeoutMs`: a UI thread blocked for a minute is already an ANR.
pub const MAX_FLUSH_TIMEOUT_MS: u64 = 60_000;

pub use super::event::{BatchEncoding, TrackingConsent};

use super::context::{AppContext, Connectivity};

/// The pipeline's settings. `Default` gives the documented defaults except the identity fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub storage_dir: PathBuf,
    pub application_id: String,
    pub service: String,
    pub version: String,
    pub env: Option<String>,
    /// `source` of every document and `ddsource` of uploads.
    pub source: String,
    /// The device and app facts every document carries.
    pub context: AppContext,
    /// The connectivity until the first `setConnectivity`.
    pub connectivity: Option<Connectivity>,
    /// Percentage of sessions tracked; the others write nothing.
    pub session_sample_rate: f64,
    pub tracking_consent: TrackingConsent,
    pub turn_budget_ms: u32,
    pub queue_capacity: usize,
    pub batch_max_bytes: u64,
    pub batch_window_ms: u64,
    pub disk_quota_bytes: u64,
    pub max_batch_files: u32,
    pub batch_max_age_ms: u64,
    pub event_max_bytes: u64,
    pub pre_consent_max_bytes: u64,
    pub claim_timeout_ms: u64,
    pub flush_timeout_ms: u32,
    /// How sealed batches are stored: gzip (the default) or plain NDJSON.
    pub batch_encoding: BatchEncoding,
    pub view_update_interval_ms: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            storage_dir: PathBuf::new(),
            application_id: String::new(),
            service: String::new(),
            version: String::new(),
            env: None,
            source: DEFAULT_SOURCE.to_owned(),
            context: AppContext::default(),
            connectivity: None,
            session_sample_rate: SESSION_SAMPLE_RATE,
            tracking_consent: TrackingConsent::Granted,
            turn_budget_ms: TURN_BUDGET_MS,
            queue_capacity: QUEUE_CAPACITY,
            batch_max_bytes: BATCH_MAX_BYTES,
            batch_window_ms: BATCH_WINDOW_MS,
            disk_quota_bytes: DISK_QUOTA_BYTES,
            max_batch_files: MAX_BATCH_FILES,
            batch_max_age_ms: BATCH_MAX_AGE_MS,
            event_max_bytes: EVENT_MAX_BYTES,
            pre_consent_max_bytes: PRE_CONSENT_MAX_BYTES,
            claim_timeout_ms: CLAIM_TIMEOUT_MS,
            flush_timeout_ms: FLUSH_TIMEOUT_MS,
            batch_encoding: BatchEncoding::Gzip,
            view_update_interval_ms: VIEW_UPDATE_INTERVAL_MS,
        }
    }
}

/// A setting that breaks an invariant. `field` is the option's JS name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub field: &'static str,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// The first option in which `other` differs from this configuration, by its JS name, among
    /// those a pipeline fixes when it opens a directory: a second `RumPipeline` on the same
    /// directory shares the first one's scopes and writer, so a different value would be silently
    /// ignored. `storageDir` (compared canonical by the registry), the device context, `version`
    /// (the HAR reads it from bundle info on each thread, which can fail on one), the starting
    /// connectivity and the starting `trackingConsent` (they change through their own calls, so a
    /// later handle may pass the current value) are not compared.
    pub fn differing_option(&self, other: &Config) -> Option<&'static str> {
        let checks = [
            ("applicationId", self.application_id == other.application_id),
            ("service", self.service == other.service),
            ("env", self.env == other.env),
            ("source", self.source == other.source),
            ("sessionSampleRate", self.session_sample_rate == other.session_sample_rate),
            ("turnBudgetMs", self.turn_budget_ms == other.turn_budget_ms),
            ("queueCapacity", self.queue_capacity == other.queue_capacity),
            ("batchMaxBytes", self.batch_max_bytes == other.batch_max_bytes),
            ("batchWindowMs", self.batch_window_ms == other.batch_window_ms),
            ("diskQuotaBytes", self.disk_quota_bytes == other.disk_quota_bytes),
            ("maxBatchFiles", self.max_batch_files == other.max_batch_files),
            ("batchMaxAgeMs", self.batch_max_age_ms == other.batch_max_age_ms),
            ("eventMaxBytes", self.event_max_bytes == other.event_max_bytes),
            ("preConsentMaxBytes", self.pre_consent_max_bytes == other.pre_consent_max_bytes),
            ("claimTimeoutMs", self.claim_timeout_ms == other.claim_timeout_ms),
            ("flushTimeoutMs", self.flush_timeout_ms == other.flush_timeout_ms),
            ("batchEncoding", self.batch_encoding == other.batch_encoding),
            ("viewUpdateIntervalMs", self.view_update_interval_ms == other.view_update_interval_ms),
        ];
        checks.iter().find(|(_, same)| !same).map(|(name, _)| *name)
    }

    /// Checks every setting; the first bad one is reported with its option name. This is the only
    /// place ranges are checked: the binding only turns JS values into these fields.
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn bad(field: &'static str, reason: impl Into<String>) -> Result<(), ConfigError> {
            Err(ConfigError { field, reason: reason.into() })
        }
        fn within(field: &'static str, n: u64, min: u64, max: u64) -> Result<(), ConfigError> {
            if n < min || n > max {
                return bad(field, format!("must be an integer from {min} to {max}, got {n}"));
            }
            Ok(())
        }
        if self.storage_dir.as_os_str().is_empty() {
            return bad("storageDir", "must not be empty");
        }
        if self.application_id.is_empty() {
            return bad("applicationId", "must not be empty");
        }
        within("turnBudgetMs", self.turn_budget_ms.into(), 1, MAX_TURN_BUDGET_MS)?;
        within("queueCapacity", self.queue_capacity as u64, 1, MAX_QUEUE_CAPACITY)?;
        within("eventMaxBytes", self.event_max_bytes, 1024, MAX_EVENT_MAX_BYTES)?;
        if self.batch_max_bytes < self.event_max_bytes.min(64 * 1024) {
            return bad("batchMaxBytes", "must be at least min(eventMaxBytes, 64 KiB)");
        }
        within("batchMaxBytes", self.batch_max_bytes, 1, MAX_BATCH_MAX_BYTES)?;
        if self.disk_quota_bytes < self.batch_max_bytes {
            return bad("diskQuotaBytes", "must be at least batchMaxBytes");
        }
        within("maxBatchFiles", self.max_batch_files.into(), 2, MAX_MAX_BATCH_FILES)?;
        within("batchWindowMs", self.batch_window_ms, 1, u64::MAX)?;
        within("batchMaxAgeMs", self.batch_max_age_ms, 1, u64::MAX)?;
        within("flushTimeoutMs", self.flush_timeout_ms.into(), 1, MAX_FLUSH_TIMEOUT_MS)?;
        within("viewUpdateIntervalMs", self.view_update_interval_ms.into(), 0, MAX_VIEW_UPDATE_INTERVAL_MS)?;
        if !(0.0..=100.0).contains(&self.session_sample_rate) {
            return bad("sessionSampleRate", format!("must be from 0 to 100, got {}", self.session_sample_rate));
        }
        if self.source.is_empty() {
            return bad("source", "must not be empty");
        }
        if let Some(v) = self.context.viewport {
            if !(v.width.is_finite() && v.height.is_finite() && v.width >= 0.0 && v.height >= 0.0) {
                return bad(
                    "viewport",
                    format!("must have finite, non-negative sizes, got {} x {}", v.width, v.height),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> Config {
        Config { storage_dir: "/tmp/x".into(), application_id: "app".into(), ..Config::default() }
    }

    #[test]
    fn defaults_are_valid_and_documented_values() {
        let c = valid();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(c.turn_budget_ms, 4);
        assert_eq!(c.queue_capacity, 5_000);
        assert_eq!(c.disk_quota_bytes, 4 * 1024 * 1024);
        assert_eq!(c.view_update_interval_ms, 1_000);
        assert_eq!(Config { view_update_interval_ms: 0, ..valid() }.validate(), Ok(()), "0: no throttling");
    }

    #[test]
    fn each_bad_setting_names_its_option() {
        let cases: Vec<(Config, &str)> = vec![
            (Config { storage_dir: PathBuf::new(), ..valid() }, "storageDir"),
            (Config { application_id: String::new(), ..valid() }, "applicationId"),
            (Config { turn_budget_ms: 0, ..valid() }, "turnBudgetMs"),
            (Config { queue_capacity: 0, ..valid() }, "queueCapacity"),
            (Config { disk_quota_bytes: 1, ..valid() }, "diskQuotaBytes"),
            (Config { max_batch_files: 1, ..valid() }, "maxBatchFiles"),
            (Config { flush_timeout_ms: 0, ..valid() }, "flushTimeoutMs"),
            (Config { flush_timeout_ms: 60_001, ..valid() }, "flushTimeoutMs"),
            (Config { turn_budget_ms: 1_001, ..valid() }, "turnBudgetMs"),
            (Config { max_batch_files: u32::MAX, ..valid() }, "maxBatchFiles"),
            (Config { event_max_bytes: MAX_EVENT_MAX_BYTES + 1, ..valid() }, "eventMaxBytes"),
            (Config { batch_max_bytes: MAX_BATCH_MAX_BYTES + 1, ..valid() }, "batchMaxBytes"),
            (Config { batch_window_ms: 0, ..valid() }, "batchWindowMs"),
            (Config { view_update_interval_ms: 60_001, ..valid() }, "viewUpdateIntervalMs"),
        ];
        for (c, field) in cases {
            assert_eq!(c.validate().unwrap_err().field, field);
        }
    }
}
