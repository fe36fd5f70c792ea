//! Batch files against a real directory: order, rotation, the upload side, views, limits.
//! (Longer than most files: one file per storage rule would scatter the shared fixtures.)

mod storage_support;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use rum_native::core::config::{TrackingConsent, WRITER_HOLD_MAX_BYTES};
use rum_native::core::seam::{DocumentSink, SinkError};
use rum_native::core::storage::{FlushOutcome, Storage, StorageError, StorageOptions};
use storage_support::*;

#[test]
fn lines_are_written_in_send_order_one_document_a_line() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    let sink = storage.sink();
    for i in 0..500 {
        sink.write(action(i, (i as usize % 7) * 150)).unwrap();
    }
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), (0..500).collect::<Vec<_>>());
    let c = storage.counters();
    assert_eq!(c.documents_received.get(), 500);
    assert_eq!(c.documents_written.get(), 500);
    assert_eq!(c.events_on_disk.get(), 500);
}

#[test]
fn the_active_batch_rolls_before_it_would_pass_the_batch_size() {
    let (dir, clock) = setup();
    // Plain, so the sealed files keep the size they rolled at.
    let config = plain(small_config(dir.path()));
    let storage = open(&config, &clock);
    let len = line_len(&action(10, 350)) as u64;
    write_actions(&storage.sink(), 10..40, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let files = batch_files(storage.directory());
    let per_batch = config.batch_max_bytes / len;
    assert_eq!(files.len() as u64, 30u64.div_ceil(per_batch), "{len}-byte lines, {per_batch} a batch");
    for (i, (_, _, path)) in files.iter().enumerate() {
        let size = std::fs::metadata(path).unwrap().len();
        assert!(size <= config.batch_max_bytes, "batch {i} is {size} bytes");
        if i + 1 < files.len() {
            assert!(size + len > config.batch_max_bytes, "batch {i} rolled early at {size} bytes");
        }
    }
}

#[test]
fn the_active_batch_rolls_when_its_window_passes() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    let storage = open(&config, &clock);
    write_actions(&storage.sink(), 0..2, 10);
    wait_until("two lines written", || storage.counters().events_on_disk.get() == 2);
    clock.advance(config.batch_window_ms as i64);
    storage.sink().write(action(2, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let files = batch_files(storage.directory());
    let per_file: Vec<Vec<u64>> = files.iter().map(|(_, _, p)| seqs_in(&file_lines(p))).collect();
    assert_eq!(per_file, vec![vec![0, 1], vec![2]]);
}

#[test]
fn the_uploader_is_not_starved_by_an_active_batch_past_its_window() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    let storage = open(&config, &clock);
    storage.sink().write(action(0, 10)).unwrap();
    wait_until("the line on disk", || bytes_on_disk(storage.directory()) > 0);
    assert_eq!(storage.next_batch().unwrap(), None, "the active batch is still in its window");
    clock.advance(config.batch_window_ms as i64);
    let batch = storage.next_batch().unwrap().expect("the active batch, sealed for the uploader");
    assert_eq!(seqs_in(&body_lines(&batch)), vec![0]);
    storage.complete_batch(&batch.id, true).unwrap();
    storage.sink().write(action(1, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(uploaded_seqs(&storage), vec![1]);
}

#[test]
fn files_and_directories_are_owner_only() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    storage.sink().write(action(0, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(storage.directory()), 0o700);
    let (_, _, file) = &batch_files(storage.directory())[0];
    assert_eq!(mode(file), 0o600);

    // The pre-consent buffer too: its directory and its chunk files.
    let (dir, clock) = setup();
    let config = with_consent(small_config(dir.path()), rum_native::core::config::TrackingConsent::Pending);
    let storage = open(&config, &clock);
    storage.sink().write(action(0, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let pending = storage.directory().join(rum_native::core::storage::PENDING_DIR);
    assert_eq!(mode(&pending), 0o700);
    let chunks: Vec<_> = std::fs::read_dir(&pending).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(!chunks.is_empty(), "a buffer chunk was written");
    for chunk in chunks {
        assert_eq!(mode(&chunk), 0o600, "{}", chunk.display());
    }
}

#[test]
fn a_late_answer_for_a_stale_claim_does_not_touch_the_batch_claimed_again() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    let storage = open(&config, &clock);
    storage.sink().write(action(0, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let slow = storage.next_batch().unwrap().unwrap();
    // The first uploader takes longer than the claim timeout: the claim is released and the
    // batch handed to the next uploader, under an id of its own.
    clock.advance(config.claim_timeout_ms as i64 + 1);
    let retry = storage.next_batch().unwrap().unwrap();
    assert_eq!(body_lines(&retry), body_lines(&slow), "the same batch");
    assert_ne!(retry.id, slow.id, "a new claim, a new id");
    for delivered in [false, true] {
        let e = storage.complete_batch(&slow.id, delivered).unwrap_err();
        assert!(matches!(e, StorageError::UnknownBatch(_)), "{e}");
    }
    assert_eq!(seqs_on_disk(storage.directory()), vec![0], "still there, still claimed by the second uploader");
    assert!(storage.next_batch().unwrap().is_none(), "not handed out a third time");
    storage.complete_batch(&retry.id, true).unwrap();
    assert_eq!(seqs_on_disk(storage.directory()), Vec::<u64>::new());
    assert_eq!(storage.counters().batches_delivered.get(), 1);
}

#[test]
fn next_batch_claims_the_oldest_and_complete_deletes_or_releases_it() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    for i in 0..3 {
        storage.sink().write(action(i, 10)).unwrap();
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done); // one batch each
    }
    let first = storage.next_batch().unwrap().unwrap();
    assert_eq!(seq_of(&parse_lines(&body_lines(&first))[0]), 0);
    assert!(first.id.starts_with("batch-") && first.id.ends_with(".uploading"), "the claim's name: {}", first.id);
    let claimed: Vec<bool> = batch_files(storage.directory()).iter().map(|f| f.1).collect();
    assert_eq!(claimed, vec![true, false, false], "the claim is a rename");

    let second = storage.next_batch().unwrap().unwrap();
    assert_eq!(seq_of(&parse_lines(&body_lines(&second))[0]), 1, "a claimed batch is not returned twice");
    storage.complete_batch(&second.id, false).unwrap();
    let again = storage.next_batch().unwrap().unwrap();
    assert_eq!(body_lines(&again), body_lines(&second), "a released batch is the next one claimed");
    assert_ne!(again.id, second.id, "in the same millisecond, still a claim with an id of its own");
    assert!(storage.complete_batch(&second.id, true).is_err(), "the released claim's id no longer acts");

    storage.complete_batch(&first.id, true).unwrap();
    storage.complete_batch(&again.id, true).unwrap();
    assert_eq!(seqs_on_disk(storage.directory()), vec![2]);
    let c = storage.counters();
    assert_eq!((c.batches_claimed.get(), c.batches_delivered.get(), c.batches_released.get()), (3, 2, 1));
    assert_eq!(c.events_delivered.get(), 2);
}

#[test]
fn an_unknown_batch_id_is_refused_by_name_and_changes_nothing() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..2, 10);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let before = batch_files(storage.directory());
    for id in ["nope", "batch-1-999.ndjson", "../batch-1-0.ndjson"] {
        match storage.complete_batch(id, true) {
            Err(e @ StorageError::UnknownBatch(_)) => assert!(e.to_string().contains(id), "{e}"),
            other => panic!("{id}: {other:?}"),
        }
    }
    // A sealed batch that is not claimed is not completable either.
    let (seq, _, path) = &before[0];
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(matches!(storage.complete_batch(name, true), Err(StorageError::UnknownBatch(_))), "seq {seq}");
    let batch = storage.next_batch().unwrap().unwrap();
    storage.complete_batch(&batch.id, true).unwrap();
    assert!(matches!(storage.complete_batch(&batch.id, true), Err(StorageError::UnknownBatch(_))));
    assert_eq!(storage.next_batch().unwrap(), None);
    assert_eq!(storage.counters().events_delivered.get(), 2);
}

/// Ids one edit away from a claim's id: its encoding dropped or added, its claim time moved, its
/// batch moved, its name decorated. None is an id `next_batch` returned.
fn near_misses(id: &str) -> Vec<String> {
    let mut out = Vec::new();
    if id.contains(".ndjson.gz.") {
        out.push(id.replacen(".ndjson.gz.", ".ndjson.", 1));
        out.push(id.replacen(".ndjson.gz.", ".ndjson.gz.gz.", 1));
    } else {
        out.push(id.replacen(".ndjson.", ".ndjson.gz.", 1));
    }
    let (head, claimed) = id.strip_suffix(".uploading").and_then(|s| s.rsplit_once('.')).expect("a claim's id");
    let claimed: i64 = claimed.parse().expect("a claim time");
    out.push(format!("{head}.{}.uploading", claimed + 1));
    out.push(format!("{head}.{}.uploading", claimed - 1));
    out.push(format!("{head}.0{claimed}.uploading"));
    out.push(id.replacen("-0.", "-1.", 1));
    out.push(format!("{id} "));
    out.push(format!("./{id}"));
    out.push(id.to_uppercase());
    out.push(id.strip_suffix(".uploading").unwrap_or(id).to_owned());
    out
}

/// Every near miss of the claim's id is refused, naming the id as given, and neither deletes nor
/// releases the claim; the real id still completes it.
fn near_misses_change_nothing(storage: &Storage, batch: &rum_native::core::storage::Batch) {
    let before = batch_files(storage.directory());
    assert_eq!(before.iter().filter(|f| f.1).count(), 1, "the claim is on disk");
    for near in near_misses(&batch.id) {
        for delivered in [true, false] {
            match storage.complete_batch(&near, delivered) {
                Err(e @ StorageError::UnknownBatch(_)) => {
                    assert!(e.to_string().contains(&format!("{near:?}")), "{near} ({delivered}): {e}")
                }
                other => panic!("{near} ({delivered}): {other:?}"),
            }
            assert_eq!(batch_files(storage.directory()), before, "{near} ({delivered}) changed the directory");
        }
    }
    let c = storage.counters();
    assert_eq!((c.batches_delivered.get(), c.batches_released.get()), (0, 0));
    storage.complete_batch(&batch.id, true).unwrap();
    assert_eq!(storage.counters().batches_delivered.get(), 1);
}

#[test]
fn a_compressed_claims_id_without_gz_or_another_near_miss_is_refused_and_changes_nothing() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..2, 10);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let batch = storage.next_batch().unwrap().unwrap();
    assert!(batch.id.contains(".ndjson.gz."), "{}", batch.id);
    near_misses_change_nothing(&storage, &batch);
}

#[test]
fn a_plain_claims_id_with_gz_added_or_another_near_miss_is_refused_and_changes_nothing() {
    let (dir, clock) = setup();
    let storage = open(&plain(small_config(dir.path())), &clock);
    write_actions(&storage.sink(), 0..2, 10);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let batch = storage.next_batch().unwrap().unwrap();
    assert!(!batch.id.contains(".gz"), "{}", batch.id);
    near_misses_change_nothing(&storage, &batch);
}

#[test]
fn views_are_reduced_to_their_highest_document_version_on_read() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    let docs = vec![
        view(0, "A", 1),
        action(1, 10),
        view(2, "A", 2),
        view(3, "B", 1),
        action(4, 10),
        view(5, "A", 3),
        view(6, "B", 2),
    ];
    for d in docs {
        storage.sink().write(d).unwrap();
    }
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let batch = storage.next_batch().unwrap().unwrap();
    let kept = seqs_in(&body_lines(&batch));
    assert_eq!(kept, vec![1, 4, 5, 6], "actions, then A v3 and B v2 where they stand");
    assert_eq!(batch.event_count, 4);
    // Sealed compressed, the file holds the reduced lines; the superseded views are accounted.
    assert_eq!(lines_on_disk(storage.directory()).len(), 4);
    let c = storage.counters();
    assert_eq!(c.views_superseded.get(), 3);
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn batches_of_an_earlier_process_are_uploaded() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    {
        let storage = open(&config, &clock);
        write_actions(&storage.sink(), 0..20, 350);
        // No flush: dropping the storage writes everything and stops the thread.
    }
    let storage = open(&config, &clock);
    assert_eq!(uploaded_seqs(&storage), (0..20).collect::<Vec<_>>());
}

#[test]
fn a_reader_never_returns_a_partial_line() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    storage.sink().write(action(0, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let (_, _, path) = &batch_files(storage.directory())[0];
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    std::io::Write::write_all(&mut f, b"{\"type\":\"action\",\"da").unwrap();
    let batch = storage.next_batch().unwrap().unwrap();
    assert_eq!(parse_lines(&body_lines(&batch)).len(), 1);
}

#[test]
fn a_document_larger_than_event_max_bytes_is_dropped_and_counted() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    let storage = open(&config, &clock);
    storage.sink().write(action(0, 10)).unwrap();
    storage.sink().write(action(1, config.event_max_bytes as usize)).unwrap();
    // A pad that leaves room for the envelope (ids, _dd, ddtags, context): under the limit.
    storage.sink().write(action(2, config.event_max_bytes as usize - 600)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), vec![0, 2]);
    assert_eq!(storage.counters().dropped_oversize.get(), 1);
}

#[test]
fn batches_older_than_the_max_age_are_evicted_not_uploaded() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    storage.sink().write(action(0, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    clock.advance(22 * HOUR);
    storage.sink().write(action(1, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    clock.advance(HOUR);
    assert_eq!(uploaded_seqs(&storage), vec![1], "the 23-hour-old batch is gone, the 1-hour-old one is uploaded");
    let c = storage.counters();
    assert_eq!((c.evicted_batches_age.get(), c.evicted_events_age.get()), (1, 1));
}

#[test]
fn the_quota_evicts_the_oldest_unclaimed_sealed_batches_first() {
    let (dir, clock) = setup();
    let config = rum_native::core::config::Config { disk_quota_bytes: 16 * 1024, ..plain(small_config(dir.path())) };
    let storage = open(&config, &clock);
    write_actions(&storage.sink(), 0..100, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let root = storage.directory();
    assert!(bytes_on_disk(root) <= config.disk_quota_bytes);
    let seqs = seqs_on_disk(root);
    let first = seqs[0];
    assert!(first > 0);
    assert_eq!(seqs, (first..100).collect::<Vec<_>>(), "the newest are kept, in order");
    let c = storage.counters();
    assert!(c.evicted_batches_quota.get() > 0);
    assert_eq!(c.evicted_events_quota.get(), first);
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn the_file_cap_evicts_the_oldest_batches_first() {
    let (dir, clock) = setup();
    let config = rum_native::core::config::Config { max_batch_files: 3, ..small_config(dir.path()) };
    let storage = open(&config, &clock);
    for i in 0..6 {
        storage.sink().write(action(i, 10)).unwrap();
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    }
    assert_eq!(seqs_on_disk(storage.directory()), vec![3, 4, 5]);
    let c = storage.counters();
    assert_eq!((c.evicted_batches_count.get(), c.evicted_events_count.get()), (3, 3));
    assert_eq!(c.evicted_batches_quota.get(), 0);
}

/// A killed process loses at most what was still in the channel: a document that wakes an idle
/// writer is written at once, not held in memory until the next message or the window's seal.
#[test]
fn a_document_that_wakes_an_idle_writer_reaches_the_file_without_a_flush() {
    let (dir, clock) = setup();
    let config = rum_native::core::config::Config { batch_window_ms: 60_000, ..small_config(dir.path()) };
    let storage = open(&config, &clock);
    storage.sink().write(action(0, 100)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    std::thread::sleep(std::time::Duration::from_millis(200)); // the writer now waits on the channel
    storage.sink().write(action(1, 100)).unwrap();
    wait_until("the document in a batch file", || seqs_on_disk(storage.directory()) == [0, 1]);
}

#[test]
fn at_the_file_cap_with_every_batch_claimed_a_new_document_is_dropped_and_counted() {
    let (dir, clock) = setup();
    let config = rum_native::core::config::Config { max_batch_files: 2, ..small_config(dir.path()) };
    let storage = open(&config, &clock);
    for seq in 0..2 {
        storage.sink().write(action(seq, 100)).unwrap();
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done); // one sealed batch each
    }
    let a = storage.next_batch().unwrap().unwrap();
    let b = storage.next_batch().unwrap().unwrap();
    storage.sink().write(action(2, 100)).unwrap(); // a third file would break the cap; none may go
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let c = storage.counters();
    assert_eq!(c.dropped_file_cap.get(), 1);
    assert_eq!(c.evicted_batches_count.get(), 0, "claimed batches are never evicted");
    assert_eq!(batch_files(storage.directory()).len(), 2);

    room_after_a_claim_ends(&storage, [&a.id, &b.id], 3, 100);
}

/// Ending the first claim makes room: one more document is written; once the second claim ends,
/// it is the only one left to upload, and every document is accounted for.
fn room_after_a_claim_ends(storage: &Storage, [first, second]: [&str; 2], seq: u64, pad: usize) {
    storage.complete_batch(first, true).unwrap();
    storage.sink().write(action(seq, pad)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    storage.complete_batch(second, true).unwrap();
    assert_eq!(uploaded_seqs(storage), vec![seq]);
    let c = storage.counters();
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn claimed_batches_are_never_evicted_and_a_document_that_cannot_fit_is_dropped() {
    let (dir, clock) = setup();
    let len = line_len(&action(0, 900)) as u64;
    let config = rum_native::core::config::Config {
        batch_max_bytes: 4 * len,
        disk_quota_bytes: 8 * len + len / 2,
        ..plain(small_config(dir.path()))
    };
    let storage = open(&config, &clock);
    for i in 0..8 {
        storage.sink().write(action(i, 900)).unwrap();
        if i % 4 == 3 {
            assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
        }
    }
    let a = storage.next_batch().unwrap().unwrap();
    let b = storage.next_batch().unwrap().unwrap();
    storage.sink().write(action(8, 900)).unwrap(); // only claimed batches to evict: dropped
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let c = storage.counters();
    assert_eq!(c.dropped_quota.get(), 1);
    assert_eq!(c.evicted_batches_quota.get(), 0);
    assert_eq!(batch_files(storage.directory()).iter().filter(|f| f.1).count(), 2, "both claims intact");
    room_after_a_claim_ends(&storage, [&a.id, &b.id], 9, 900);
}

#[test]
fn a_second_storage_on_the_same_directory_is_refused_until_the_first_is_gone() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    let first = open(&config, &clock);
    match Storage::open(&config, options(&clock)) {
        Err(e @ StorageError::AlreadyOpen(_)) => assert!(e.to_string().contains("already open"), "{e}"),
        other => panic!("{other:?}"),
    }
    drop(first);
    let _second = open(&config, &clock);
}

#[test]
fn after_shutdown_the_sink_is_closed_and_the_upload_side_still_works() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    let sink = storage.sink();
    sink.write(action(0, 10)).unwrap();
    assert_eq!(storage.shutdown(TIMEOUT), FlushOutcome::Done);
    assert_eq!(storage.shutdown(TIMEOUT), FlushOutcome::Done, "a second call does nothing");
    assert_eq!(sink.write(action(1, 10)), Err(SinkError::Closed));
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    assert_eq!(uploaded_seqs(&storage), vec![0]);
}

#[test]
fn only_the_writer_thread_creates_and_writes_files() {
    let (dir, clock) = setup();
    let fs = FaultFs::new();
    let storage = Storage::open(&small_config(dir.path()), fault_options(&clock, &fs)).unwrap();
    write_actions(&storage.sink(), 0..200, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let writes: Vec<_> = fs.log().into_iter().filter(|(op, _, _)| matches!(op, Op::Create | Op::Write)).collect();
    assert!(writes.len() > 10);
    for (op, path, thread) in writes {
        assert_eq!(thread, "rum-writer", "{op:?} {} ran on the caller's thread", path.display());
    }
}

/// Lets a drain the writer began before the turn became busy finish (it checks the turn before
/// each drain of its channel, then takes everything).
fn settle() {
    std::thread::sleep(Duration::from_millis(10));
}

/// Opens a storage whose writer holds documents for a busy turn at most `hold`.
fn open_with_hold(config: &rum_native::core::config::Config, clock: &FakeClock, hold: Duration) -> Storage {
    Storage::open(config, StorageOptions { writer_hold: hold, ..options(clock) }).unwrap()
}

#[test]
fn documents_of_a_busy_turn_wait_for_its_end() {
    let (dir, clock) = setup();
    let storage = open_with_hold(&small_config(dir.path()), &clock, Duration::from_secs(600));
    let sink = storage.sink();
    let c = storage.counters();
    // The writer is idle: the first send of the busy turn wakes it to start its hold, no later one.
    wait_until("the writer started", || storage.flush(TIMEOUT) == FlushOutcome::Done);
    sink.turn_busy(true);
    settle();
    write_actions(&sink, 0..20, 10);
    std::thread::sleep(Duration::from_millis(50)); // well within the hold
    assert_eq!(c.documents_received.get(), 0, "taken while the turn was busy");
    sink.turn_busy(false);
    wait_until("the documents after the turn", || c.events_on_disk.get() == 20);
    assert_eq!(seqs_on_disk(storage.directory()), (0..20).collect::<Vec<_>>());
}

#[test]
fn a_flush_or_consent_change_in_a_busy_turn_is_not_held() {
    let (dir, clock) = setup();
    let storage = open_with_hold(&small_config(dir.path()), &clock, Duration::from_secs(600));
    let sink = storage.sink();
    sink.turn_busy(true);
    write_actions(&sink, 0..3, 10);
    // The flush timeout (TIMEOUT) is far below the hold: Done means the flush opened the gate.
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), vec![0, 1, 2]);
    sink.turn_busy(true);
    write_actions(&sink, 3..4, 10);
    sink.consent_changed(TrackingConsent::Granted).unwrap();
    wait_until("the document before the consent change", || storage.counters().events_on_disk.get() == 4);
}

#[test]
fn a_turn_that_stays_busy_holds_documents_no_longer_than_the_hold() {
    let (dir, clock) = setup();
    let storage = open_with_hold(&small_config(dir.path()), &clock, Duration::from_millis(20));
    let sink = storage.sink();
    sink.turn_busy(true); // and never ends
    write_actions(&sink, 0..5, 10);
    wait_until("the documents past the hold", || storage.counters().events_on_disk.get() == 5);
}

#[test]
fn a_busy_turn_holds_no_more_than_its_byte_bound() {
    let (dir, clock) = setup();
    // Room in the backlog for all of them (they are dropped as oversize once taken: counted).
    let options = StorageOptions {
        writer_hold: Duration::from_secs(600),
        backlog_max: Some(8 * WRITER_HOLD_MAX_BYTES),
        ..options(&clock)
    };
    let storage = Storage::open(&small_config(dir.path()), options).unwrap();
    let sink = storage.sink();
    let c = storage.counters();
    wait_until("the writer started", || storage.flush(TIMEOUT) == FlushOutcome::Done);
    sink.turn_busy(true);
    settle();
    let pad = (WRITER_HOLD_MAX_BYTES / 4) as usize;
    write_actions(&sink, 0..2, pad);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(c.documents_received.get(), 0, "half the bound is held");
    write_actions(&sink, 2..4, pad); // past the bound with the fourth
    wait_until("the documents past the byte bound", || c.documents_received.get() == 4);
}

#[test]
fn pending_batches_counts_the_unclaimed_batches_from_open_on_even_before_they_are_checked() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    {
        let storage = open(&config, &clock);
        write_actions(&storage.sink(), 0..300, 350);
    }
    let sealed = batch_files(&dir.path().join("rum")).len() as u64;
    assert!(sealed > 20, "{sealed} compressed batches");
    let storage = open(&config, &clock);
    // Known at open, before the writer has checked (decompressed) any of them.
    assert_eq!(storage.pending_batches(), sealed);
    assert_eq!(storage.counters().batches_pending.get(), sealed);

    let first = next_batch_waiting(&storage).expect("a batch");
    assert_eq!(storage.pending_batches(), sealed - 1, "a claimed batch is not pending");
    storage.complete_batch(&first.id, false).unwrap();
    assert_eq!(storage.pending_batches(), sealed, "a released one is again");
    let again = next_batch_waiting(&storage).expect("a batch");
    storage.complete_batch(&again.id, true).unwrap();
    assert_eq!(storage.pending_batches(), sealed - 1, "a delivered one is gone");

    let mut uploaded = 1;
    loop {
        match storage.next_batch() {
            Ok(Some(b)) => {
                storage.complete_batch(&b.id, true).unwrap();
                uploaded += 1;
            }
            // "Not ready yet" is told from "nothing to send" by what is pending.
            Ok(None) | Err(StorageError::Busy(_)) if storage.pending_batches() > 0 => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Ok(None) => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(uploaded, sealed);
    assert_eq!(storage.pending_batches(), 0);

    // Batches sealed by this process count as they are sealed.
    write_actions(&storage.sink(), 300..310, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(storage.pending_batches(), batch_files(storage.directory()).len() as u64);
}
