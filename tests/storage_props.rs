//! Property tests with a tiny quota, random document sizes and random interleavings of flushes,
//! claims, completions, consent changes and clock jumps:
//!
//! - the quota invariant: after every file operation (checked by the file system seam itself),
//!   the batch files, claimed ones included, are within `diskQuotaBytes`;
//! - conservation: every received document is on disk, delivered, evicted or dropped, and the
//!   counters by reason add up to what the directory holds.

mod storage_support;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use rum_native::core::config::{Config, TrackingConsent};
use rum_native::core::seam::DocumentSink;
use rum_native::core::storage::{FlushOutcome, Storage, PENDING_DIR};
use storage_support::*;

#[derive(Clone, Debug)]
enum Step {
    Write(usize),
    Flush,
    Claim,
    Complete { which: usize, delivered: bool },
    Consent(TrackingConsent),
    Advance(i64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => (0usize..1_300).prop_map(Step::Write),
        2 => Just(Step::Flush),
        2 => Just(Step::Claim),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(which, delivered)| Step::Complete { which, delivered }),
        1 => prop_oneof![
            Just(TrackingConsent::Granted),
            Just(TrackingConsent::Pending),
            Just(TrackingConsent::NotGranted)
        ]
        .prop_map(Step::Consent),
        1 => prop_oneof![Just(SECOND), Just(11 * SECOND), Just(23 * HOUR)].prop_map(Step::Advance),
    ]
}

fn batch_bytes(root: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(root) else { return 0 };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("batch-"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn count_lines(dir: &Path, prefix: &str) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| parse_lines(&file_lines(&e.path())).len() as u64)
        .sum()
}

struct Run {
    max_seen: Arc<AtomicU64>,
    checks: Arc<AtomicU64>,
}

fn run(quota: u64, max_files: u32, steps: &[Step]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().join("rum");
    let config = Config {
        event_max_bytes: 1024,
        batch_max_bytes: 1024,
        disk_quota_bytes: quota,
        max_batch_files: max_files,
        pre_consent_max_bytes: 2048,
        ..small_config(dir.path())
    };
    let probe = Run { max_seen: Arc::new(AtomicU64::new(0)), checks: Arc::new(AtomicU64::new(0)) };
    let mut fs = FaultFs::new();
    let (max_seen, checks, watched) = (probe.max_seen.clone(), probe.checks.clone(), root.clone());
    fs.after_change = Some(Arc::new(move || {
        max_seen.fetch_max(batch_bytes(&watched), Ordering::SeqCst);
        checks.fetch_add(1, Ordering::SeqCst);
    }));
    let clock = FakeClock::new();
    let storage = Storage::open(&config, fault_options(&clock, &fs)).unwrap();
    // Claims held by this test and when they were made: a claim older than the claim timeout
    // may be released (and claimed again, or evicted by age), so completing it may be refused.
    let mut claimed: Vec<(String, i64)> = Vec::new();
    let mut sent = 0u64;
    for step in steps {
        match step {
            Step::Write(pad) => {
                storage.sink().write(action(sent, *pad)).unwrap();
                sent += 1;
            }
            Step::Flush => prop_assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done),
            Step::Claim => {
                if let Some(batch) = next_batch_waiting(&storage) {
                    claimed.retain(|(id, _)| *id != batch.id);
                    claimed.push((batch.id, clock.now()));
                }
            }
            Step::Complete { which, delivered } => {
                if !claimed.is_empty() {
                    let (id, at) = claimed.remove(which % claimed.len());
                    match storage.complete_batch(&id, *delivered) {
                        Ok(()) => {}
                        Err(e) => prop_assert!(
                            clock.now() - at >= config.claim_timeout_ms as i64,
                            "{} for a claim of {} ms",
                            e,
                            clock.now() - at
                        ),
                    }
                }
            }
            Step::Consent(c) => storage.sink().consent_changed(*c).unwrap(),
            Step::Advance(ms) => clock.advance(*ms),
        }
    }
    prop_assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);

    let max_seen = probe.max_seen.load(Ordering::SeqCst);
    prop_assert!(max_seen <= quota, "{} bytes of batches on disk at one moment, quota {}", max_seen, quota);
    prop_assert!(probe.checks.load(Ordering::SeqCst) > 0 || sent == 0);

    let c = storage.counters();
    prop_assert_eq!(c.documents_received.get(), sent);
    prop_assert_eq!(c.events_on_disk.get(), count_lines(&root, "batch-"), "events_on_disk is what the files hold");
    prop_assert_eq!(c.pre_consent_events.get(), count_lines(&root.join(PENDING_DIR), "buffer-"));
    prop_assert_eq!(c.bytes_on_disk.get(), batch_bytes(&root));
    prop_assert_eq!(
        sent,
        c.events_on_disk.get()
            + c.pre_consent_events.get()
            + c.events_delivered.get()
            + c.evicted_events_quota.get()
            + c.evicted_events_count.get()
            + c.evicted_events_age.get()
            + c.dropped_oversize.get()
            + c.dropped_consent.get()
            + c.dropped_pre_consent_full.get()
            + c.dropped_quota.get()
            + c.dropped_file_cap.get(),
        "written == on disk + delivered + evicted + dropped, by reason"
    );
    // Nothing in this run has another reason to lose events.
    prop_assert_eq!(c.evicted_events_oversize.get() + c.dropped_write_error.get() + c.lost_events_external.get(), 0);
    prop_assert_eq!(c.dropped_serialize.get(), 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn the_quota_holds_after_every_write_and_every_document_is_accounted_for(
        quota in prop_oneof![Just(1024u64), Just(2048), Just(3000), Just(4096)],
        max_files in 2u32..6,
        steps in prop::collection::vec(step(), 1..120),
    ) {
        quiet();
        run(quota, max_files, &steps)?;
    }
}

#[test]
fn a_burst_into_a_tiny_quota_keeps_the_newest_and_counts_the_rest() {
    quiet();
    let steps: Vec<Step> = (0..300).map(|i| Step::Write(200 + (i * 37) % 700)).collect();
    run(2048, 3, &steps).unwrap();
}
