//! Write faults: injected errors (ENOSPC, ENOENT, EACCES), real ones, a removed directory, and a
//! writer that does not answer in time. The writer counts, logs, reports through `flush()`, and
//! recovers on the next write; nothing else reaches the caller.

mod storage_support;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use rum_native::core::config::Config;
use rum_native::core::storage::{FlushOutcome, Storage, StorageError, StorageOptions};
use storage_support::*;

#[test]
fn each_injected_error_is_counted_reported_by_flush_and_recovered_from() {
    for errno in [ENOSPC, ENOENT, EACCES] {
        for op in [Op::Create, Op::Write] {
            let (dir, clock) = setup();
            let fs = FaultFs::new();
            let storage = Storage::open(&small_config(dir.path()), fault_options(&clock, &fs)).unwrap();
            write_actions(&storage.sink(), 0..10, 350);
            assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);

            fs.inject(op, errno, 2); // twice: a create retried after re-creating the directory fails too
            write_actions(&storage.sink(), 10..20, 350);
            let reason = match storage.flush(TIMEOUT) {
                FlushOutcome::Failed(reason) => reason,
                other => panic!("errno {errno} on {op:?}: {other:?}"),
            };
            let expected = std::io::Error::from_raw_os_error(errno).to_string();
            assert!(reason.contains(&expected), "{reason} names {expected}");

            write_actions(&storage.sink(), 20..30, 350);
            assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done, "errno {errno} on {op:?}: recovered");
            let got = seqs_on_disk(storage.directory()); // every line parses: no partial line anywhere
            let c = storage.counters();
            assert!(c.write_errors.get() >= 1);
            let lost = c.dropped_write_error.get();
            assert!((1..=10).contains(&lost), "{lost}");
            assert_eq!(got.len() as u64, 30 - lost);
            assert!(got.windows(2).all(|w| w[0] < w[1]), "order kept: {got:?}");
            assert!(got.starts_with(&(0..10).collect::<Vec<_>>()) && got.ends_with(&(20..30).collect::<Vec<_>>()));
            assert_eq!(c.documents_received.get(), c.events_accounted());
        }
    }
}

#[test]
fn a_partial_write_is_cut_back_to_the_last_whole_line() {
    let FaultSetup { dir: _dir, clock, fs, config, storage } = with_faults();
    write_actions(&storage.sink(), 0..3, 350);
    wait_until("three lines written", || storage.counters().documents_written.get() == 3);
    fs.inject_on(Op::Write, "", ENOSPC, 1, true); // half the lines reach the file, then ENOSPC
    write_actions(&storage.sink(), 3..6, 350);
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    write_actions(&storage.sink(), 6..8, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let got = seqs_on_disk(storage.directory()); // panics on a partial line
    assert_eq!(got[..3], [0, 1, 2]);
    assert_eq!(got[got.len() - 2..], [6, 7]);
    drop(storage);
    let storage = Storage::open(&config, fault_options(&clock, &fs)).unwrap();
    assert_eq!(storage.counters().torn_lines_dropped.get(), 0, "no torn line was left behind");
}

#[test]
fn a_removed_directory_is_created_again_on_the_next_write() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..10, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let removed = batch_files(storage.directory()).len() as u64;
    std::fs::remove_dir_all(storage.directory()).unwrap();
    write_actions(&storage.sink(), 10..20, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done, "sealed batches vanished; no write failed");
    assert_eq!(seqs_on_disk(storage.directory()), (10..20).collect::<Vec<_>>());
    let c = storage.counters();
    assert_eq!((c.lost_batches_external.get(), c.lost_events_external.get()), (removed, 10));
    assert_eq!(c.events_on_disk.get(), 10);
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn a_directory_removed_under_the_active_batch_loses_only_what_was_in_it() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..3, 350);
    wait_until("three lines written", || storage.counters().documents_written.get() == 3);
    std::fs::remove_dir_all(storage.directory()).unwrap();
    write_actions(&storage.sink(), 3..6, 350);
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)), "the active file vanished");
    assert_eq!(seqs_on_disk(storage.directory()), vec![3, 4, 5]);
    let c = storage.counters();
    assert_eq!(c.lost_events_external.get(), 3);
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn an_active_batch_removed_alone_is_replaced_and_its_lines_counted_lost() {
    // Its directory stays: only the open file's link count says it is gone.
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..3, 350);
    wait_until("three lines written", || storage.counters().documents_written.get() == 3);
    let files = batch_files(storage.directory());
    assert_eq!(files.len(), 1, "one active batch: {files:?}");
    std::fs::remove_file(&files[0].2).unwrap();
    write_actions(&storage.sink(), 3..6, 350);
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)), "the active file vanished");
    assert_eq!(seqs_on_disk(storage.directory()), vec![3, 4, 5]);
    let c = storage.counters();
    assert_eq!((c.lost_batches_external.get(), c.lost_events_external.get()), (1, 3));
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn a_real_fault_a_file_where_the_directory_should_be() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..5, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let root = storage.directory().to_path_buf();
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::write(&root, b"in the way").unwrap();
    write_actions(&storage.sink(), 5..10, 350);
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    assert!(storage.counters().write_errors.get() >= 1);
    assert_eq!(storage.counters().dropped_write_error.get(), 5);
    std::fs::remove_file(&root).unwrap();
    write_actions(&storage.sink(), 10..15, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), (10..15).collect::<Vec<_>>());
}

/// A directory nobody may write into: mode 0500, or, for root (which 0500 does not stop), the
/// immutable attribute (`chattr +i`, refused to root too). Undone on drop, so a failing test
/// still leaves a removable temporary directory.
struct ReadOnly {
    dir: std::path::PathBuf,
    immutable: bool,
}

impl ReadOnly {
    /// None when neither works here (root on a file system without the immutable attribute).
    fn make(dir: &std::path::Path) -> Option<Self> {
        let probe = dir.join("probe");
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o500)).unwrap();
        if std::fs::write(&probe, b"").is_err() {
            return Some(Self { dir: dir.to_path_buf(), immutable: false });
        }
        std::fs::remove_file(&probe).unwrap();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let chattr = |flag: &str| std::process::Command::new("chattr").arg(flag).arg(dir).status();
        if !chattr("+i").is_ok_and(|s| s.success()) {
            return None;
        }
        let guard = Self { dir: dir.to_path_buf(), immutable: true };
        std::fs::write(&probe, b"").is_err().then_some(guard)
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if self.immutable {
            let _ = std::process::Command::new("chattr").arg("-i").arg(&self.dir).status();
        } else {
            let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700));
        }
    }
}

#[test]
fn a_real_fault_a_read_only_directory() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    let root = storage.directory().to_path_buf();
    let Some(read_only) = ReadOnly::make(&root) else {
        println!(
            "skipped: this process writes into a 0500 directory (root) and chattr +i is unavailable; \
             a_real_fault_a_file_where_the_directory_should_be covers a real fault"
        );
        return;
    };
    write_actions(&storage.sink(), 0..5, 350);
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    assert!(storage.counters().write_errors.get() >= 1);
    drop(read_only);
    write_actions(&storage.sink(), 5..10, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), (5..10).collect::<Vec<_>>());
}

#[test]
fn flush_reports_a_timeout_and_drop_waits_no_longer_than_the_flush_timeout() {
    let (dir, clock) = setup();
    let fs = FaultFs::new();
    let config = Config { flush_timeout_ms: 200, ..small_config(dir.path()) };
    let storage = Storage::open(&config, fault_options(&clock, &fs)).unwrap();
    fs.block_writes(true); // a disk that does not answer
    write_actions(&storage.sink(), 0..3, 350);
    let started = Instant::now();
    assert_eq!(storage.flush(Duration::from_millis(50)), FlushOutcome::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(storage.flush_crash(Duration::from_millis(50)), FlushOutcome::TimedOut);
    assert_eq!(storage.counters().flush_timeouts.get(), 2);

    let counters = storage.counters();
    let started = Instant::now();
    drop(storage);
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(150) && waited < Duration::from_secs(2), "drop waited {waited:?}");
    assert_eq!(counters.flush_timeouts.get(), 3);

    // The writer finishes in the background once the disk answers, and lets the directory go.
    fs.block_writes(false);
    let mut reopened = None;
    wait_until("the directory to be released", || {
        reopened = Storage::open(&config, options(&clock)).ok();
        reopened.is_some()
    });
    let storage = reopened.unwrap();
    assert_eq!(uploaded_seqs(&storage), vec![0, 1, 2]);
}

/// `markCrash` is followed by the process dying: the crash path fsyncs what it wrote (the batch
/// and the directory entry); an ordinary flush leaves that to the kernel.
#[test]
fn the_crash_path_fsyncs_the_batch_and_its_directory_and_a_plain_flush_does_not() {
    let (dir, clock) = setup();
    let fs = FaultFs::new();
    // Plain batches: a compressed seal always fsyncs its file and the directory (seal.rs).
    let storage = Storage::open(&plain(small_config(dir.path())), fault_options(&clock, &fs)).unwrap();
    let syncs_since = |from: usize| -> Vec<(Op, std::path::PathBuf)> {
        fs.log()[from..]
            .iter()
            .filter(|(op, _, _)| matches!(op, Op::Sync | Op::SyncDir))
            .map(|(op, p, _)| (*op, p.clone()))
            .collect()
    };
    let from = fs.log().len();
    write_actions(&storage.sink(), 0..5, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(syncs_since(from), vec![], "a plain flush does not fsync");

    let from = fs.log().len();
    write_actions(&storage.sink(), 5..10, 350);
    assert_eq!(storage.flush_crash(TIMEOUT), FlushOutcome::Done);
    let synced = syncs_since(from);
    let batch_synced = synced.iter().any(|(op, p)| *op == Op::Sync && p.to_string_lossy().ends_with(".ndjson"));
    assert!(batch_synced, "the batch written by the crash flush is fsynced: {synced:?}");
    assert!(synced.iter().any(|(op, p)| *op == Op::SyncDir && p == storage.directory()), "{synced:?}");
    assert_eq!(seqs_on_disk(storage.directory()), (0..10).collect::<Vec<_>>());
}

/// A delivered batch whose file cannot be deleted is never handed out again (the intake would
/// see it twice); the delete is retried when its claim would go stale, and counted once.
#[test]
fn a_delivered_batch_that_cannot_be_deleted_is_not_uploaded_again() {
    let FaultSetup { dir: _dir, clock, fs, config, storage } = with_faults();
    write_actions(&storage.sink(), 0..3, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let batch = storage.next_batch().unwrap().expect("a batch");
    fs.inject_on(Op::Remove, ".uploading", EACCES, 2, false);
    assert!(matches!(storage.complete_batch(&batch.id, true), Err(StorageError::Io { .. })));
    assert!(storage.complete_batch(&batch.id, false).is_err(), "not released by a later 'not delivered'");
    assert_eq!(storage.counters().upload_errors.get(), 2);

    clock.advance(config.claim_timeout_ms as i64);
    assert!(storage.next_batch().unwrap().is_none(), "not handed out again when its claim went stale");
    assert!(batch_files(storage.directory()).is_empty(), "the delete was retried and went through");
    let c = storage.counters();
    assert_eq!((c.batches_delivered.get(), c.events_delivered.get()), (1, 3), "counted once");
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

/// A claimed batch that cannot be read stays claimed, so the uploader goes on with the next one
/// instead of failing on it at every call; it is tried again once its claim goes stale.
#[test]
fn an_unreadable_batch_does_not_stall_the_ones_after_it() {
    let FaultSetup { dir: _dir, clock, fs, config, storage } = with_faults();
    for range in [0..3, 3..6] {
        write_actions(&storage.sink(), range, 350);
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    }
    fs.inject_on(Op::Read, ".uploading", EACCES, 1, false);
    assert!(matches!(storage.next_batch(), Err(StorageError::Io { .. })));
    let next = storage.next_batch().unwrap().expect("the next batch");
    assert_eq!(seqs_in(&body_lines(&next)), vec![3, 4, 5]);
    storage.complete_batch(&next.id, true).unwrap();
    assert!(storage.next_batch().unwrap().is_none(), "the unreadable one waits for its claim to go stale");

    clock.advance(config.claim_timeout_ms as i64);
    let retried = storage.next_batch().unwrap().expect("tried again");
    assert_eq!(seqs_in(&body_lines(&retried)), vec![0, 1, 2]);
}

/// The upload side runs on the UI thread: while the writer is stuck in a write (a disk that
/// does not answer), `next_batch` gives up with `Busy` instead of waiting, and `complete_batch`
/// leaves its change for the writer, which makes it once the write returns. Its id is still
/// checked: against the ids `next_batch` handed out and nothing ended yet.
#[test]
fn the_upload_side_does_not_wait_on_a_stalled_writer() {
    let (dir, clock) = setup();
    let fs = FaultFs::new();
    let storage = Storage::open(&small_config(dir.path()), fault_options(&clock, &fs)).unwrap();
    write_actions(&storage.sink(), 0..3, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    write_actions(&storage.sink(), 3..6, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let first = storage.next_batch().unwrap().expect("a sealed batch");
    assert_eq!(seqs_in(&body_lines(&first)), vec![0, 1, 2]);

    fs.block_writes(true);
    write_actions(&storage.sink(), 6..9, 350);
    wait_until("the writer to be stuck in a write", || fs.writes_waiting() > 0);

    // Run on another thread so that a regression (waiting on the writer) fails instead of hanging.
    let (done, answers) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            let next = storage.next_batch();
            // Of the right form, but not the claim's id (its `.gz` taken out).
            let near = storage.complete_batch(&first.id.replacen(".ndjson.gz.", ".ndjson.", 1), false);
            let completed = storage.complete_batch(&first.id, true);
            let again = storage.complete_batch(&first.id, true);
            let unknown = storage.complete_batch("batch-x.ndjson", true);
            let _ = done.send((next, near, completed, again, unknown));
        });
        let answered = answers.recv_timeout(Duration::from_secs(10));
        if answered.is_err() {
            fs.block_writes(false); // let the stuck thread end, so the failure is reported
        }
        let (next, near, completed, again, unknown) = answered.expect("the upload side waited for the writer");
        assert!(matches!(next, Err(StorageError::Busy(_))), "{next:?}");
        assert!(matches!(near, Err(StorageError::UnknownBatch(_))), "not an id handed out: {near:?}");
        assert!(completed.is_ok(), "{completed:?}");
        assert!(matches!(again, Err(StorageError::UnknownBatch(_))), "completed already: {again:?}");
        assert!(matches!(unknown, Err(StorageError::UnknownBatch(_))), "{unknown:?}");
        assert_eq!(storage.counters().upload_waits_given_up.get(), 2, "one for each call that gave up");
        assert!(
            batch_files(storage.directory()).iter().any(|(_, claimed, _)| *claimed),
            "the claim is still there while the writer is stuck"
        );
        fs.block_writes(false);
    });

    // The writer made the deferred completion before anything else: the first batch is gone.
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(storage.counters().batches_delivered.get(), 1);
    assert!(batch_files(storage.directory()).iter().all(|(_, claimed, _)| !*claimed));
    assert_eq!(uploaded_seqs(&storage), (3..9).collect::<Vec<_>>());
}

#[test]
fn open_reports_a_directory_it_cannot_create() {
    let (dir, clock) = setup();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    match Storage::open(&small_config(&file), options(&clock)) {
        Err(e @ StorageError::Io { .. }) => assert!(e.to_string().contains("a-file"), "{e}"),
        other => panic!("{other:?}"),
    }
    let bad = Config { disk_quota_bytes: 1, ..small_config(dir.path()) };
    match Storage::open(&bad, options(&clock)) {
        Err(e @ StorageError::Config(_)) => assert!(e.to_string().contains("diskQuotaBytes"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// A disk that blocks (not fails): what waits in memory for the writer stays under its bound, the
/// rest is dropped and counted at the door, and the caller never waits.
#[test]
fn a_stalled_disk_bounds_what_waits_in_memory() {
    let (dir, clock) = setup();
    let fs = FaultFs::new();
    let config = small_config(dir.path());
    let options = StorageOptions { backlog_max: Some(64 * 1024), ..fault_options(&clock, &fs) };
    let storage = Storage::open(&config, options).unwrap();
    fs.block_writes(true);
    let sink = storage.sink();
    write_actions(&sink, 0..1, 350);
    wait_until("the writer to block on the disk", || fs.writes_waiting() == 1);

    let sent = 5_000u64;
    write_actions(&sink, 1..sent, 350); // returns: no send waits for the disk
    let c = storage.counters();
    let dropped = c.dropped_backlog.get();
    // ~1 KiB a document in memory: about 64 of them fit under 64 KiB.
    assert!(dropped > sent - 200, "dropped {dropped} of {sent}");

    fs.block_writes(false);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(c.documents_received.get() + dropped, sent, "every document is either received or dropped at the door");
    assert_eq!(c.documents_received.get(), c.events_accounted());
    // Room again once the writer took what waited.
    let before = c.documents_received.get();
    write_actions(&sink, sent..sent + 10, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(c.documents_received.get(), before + 10);
}

/// An uploader whose claim went stale while it read (a thread paused past the claim timeout)
/// and whose read then found no file must not forget the batch under the uploader that claimed
/// it again: that one still completes it, and nothing is counted lost.
#[test]
fn a_stale_readers_late_answer_does_not_touch_the_batch_claimed_again() {
    let FaultSetup { dir: _dir, clock, fs, config, storage } = with_faults();
    write_actions(&storage.sink(), 0..3, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let first_claim = format!(".{}.uploading", clock.now());
    fs.gate(Op::Read, &first_claim);
    fs.inject_on(Op::Read, &first_claim, ENOENT, 1, false);
    std::thread::scope(|s| {
        let stale = s.spawn(|| storage.next_batch());
        wait_until("the first reader at the gate", || fs.writes_waiting() == 1);
        clock.advance(config.claim_timeout_ms as i64);
        let again = storage.next_batch().unwrap().expect("claimed again once the first claim is stale");
        assert_eq!(seqs_in(&body_lines(&again)), vec![0, 1, 2]);
        fs.open_gate();
        let late = stale.join().unwrap();
        assert!(matches!(late, Ok(None)), "{late:?}: the first reader finds nothing more");
        storage.complete_batch(&again.id, true).expect("the second claim still holds the batch");
    });
    let c = storage.counters();
    assert_eq!((c.lost_batches_external.get(), c.batches_delivered.get(), c.events_delivered.get()), (0, 1, 3));
    assert!(batch_files(storage.directory()).is_empty());
}
