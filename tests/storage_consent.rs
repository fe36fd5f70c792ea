//! Tracking consent: the pre-consent buffer, its migration into batches, and its wipe.

mod storage_support;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rum_native::core::config::{Config, TrackingConsent};
use rum_native::core::seam::DocumentSink;
use rum_native::core::storage::{FlushOutcome, Storage, PENDING_DIR};
use storage_support::*;

fn buffer_files(root: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(root.join(PENDING_DIR)) else { return Vec::new() };
    let mut v: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

fn pending_config(dir: &Path, pre_consent_max_bytes: u64) -> Config {
    Config { pre_consent_max_bytes, ..with_consent(small_config(dir), TrackingConsent::Pending) }
}

/// A pending storage on a file system that logs every operation, with 60 actions in its buffer
/// (flushed); returns the file system and the configuration too, to reopen it.
fn sixty_buffered(dir: &Path, clock: &FakeClock) -> (FaultFs, Config, Storage) {
    let fs = FaultFs::new();
    let config = pending_config(dir, 64 * 1024);
    let storage = Storage::open(&config, fault_options(clock, &fs)).unwrap();
    write_actions(&storage.sink(), 0..60, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    (fs, config, storage)
}

#[test]
fn pending_then_granted_moves_the_buffer_into_batches_before_later_documents() {
    let (dir, clock) = setup();
    let storage = open(&pending_config(dir.path(), 64 * 1024), &clock);
    let sink = storage.sink();
    write_actions(&sink, 0..30, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let root = storage.directory().to_path_buf();
    assert!(batch_files(&root).is_empty(), "nothing reaches a batch while consent is pending");
    assert!(buffer_files(&root).len() > 1, "the buffer is kept in chunks");
    assert_eq!(storage.counters().pre_consent_events.get(), 30);
    assert_eq!(storage.next_batch().unwrap(), None);

    sink.consent_changed(TrackingConsent::Granted).unwrap();
    write_actions(&sink, 30..40, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), (0..40).collect::<Vec<_>>());
    assert!(buffer_files(&root).is_empty());
    let c = storage.counters();
    assert_eq!(c.pre_consent_migrated.get(), 30);
    assert_eq!((c.pre_consent_events.get(), c.pre_consent_bytes.get()), (0, 0));
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn consent_changes_keep_the_order_of_calls() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    let sink = storage.sink();
    for (range, then) in [
        (0..5, TrackingConsent::Pending),
        (5..10, TrackingConsent::Granted),
        (10..15, TrackingConsent::Pending),
        (15..20, TrackingConsent::Granted),
    ] {
        write_actions(&sink, range, 100);
        sink.consent_changed(then).unwrap();
    }
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), (0..20).collect::<Vec<_>>());
}

#[test]
fn not_granted_drops_the_buffer_and_new_documents() {
    let (dir, clock) = setup();
    let storage = open(&pending_config(dir.path(), 64 * 1024), &clock);
    let sink = storage.sink();
    write_actions(&sink, 0..10, 350);
    sink.consent_changed(TrackingConsent::NotGranted).unwrap();
    write_actions(&sink, 10..15, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let root = storage.directory().to_path_buf();
    assert!(buffer_files(&root).is_empty());
    assert!(batch_files(&root).is_empty());
    assert_eq!(storage.counters().dropped_consent.get(), 15);

    sink.consent_changed(TrackingConsent::Granted).unwrap();
    sink.write(action(15, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), vec![15]);
    let c = storage.counters();
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn a_full_buffer_drops_its_oldest_half() {
    let (dir, clock) = setup();
    let max = 16 * 1024;
    let storage = open(&pending_config(dir.path(), max), &clock);
    let len = line_len(&action(10, 350)) as u64;
    let fits = max / len;
    let n = fits + 1; // one more than fits: the first overflow
    write_actions(&storage.sink(), 0..n, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let c = storage.counters();
    let kept = c.pre_consent_events.get();
    assert!(c.pre_consent_bytes.get() <= max / 2 + len, "about half is left: {} bytes", c.pre_consent_bytes.get());
    assert!(kept >= fits / 2 - fits / 8 && kept <= fits / 2 + fits / 8 + 1, "kept {kept} of {n}");
    assert_eq!(c.dropped_pre_consent_full.get(), n - kept);

    write_actions(&storage.sink(), n..200, 350);
    storage.sink().consent_changed(TrackingConsent::Granted).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let got = seqs_on_disk(storage.directory());
    let first = got[0];
    assert_eq!(got, (first..200).collect::<Vec<_>>(), "the newest are kept, in order");
    let on_disk: u64 = buffer_files(storage.directory()).iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
    assert_eq!(on_disk, 0);
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

#[test]
fn the_buffer_survives_a_restart_and_moves_into_batches_when_opened_granted() {
    let (dir, clock) = setup();
    let config = pending_config(dir.path(), 64 * 1024);
    {
        let storage = open(&config, &clock);
        write_actions(&storage.sink(), 0..20, 350);
    }
    let storage = open(&with_consent(config.clone(), TrackingConsent::Pending), &clock);
    assert_eq!(storage.counters().pre_consent_events.get(), 20, "adopted at open");
    drop(storage);
    let storage = open(&with_consent(config, TrackingConsent::Granted), &clock);
    storage.sink().write(action(20, 350)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), (0..21).collect::<Vec<_>>());
    assert!(buffer_files(storage.directory()).is_empty());
}

#[test]
fn chunks_found_at_open_past_the_buffer_cap_are_removed_oldest_first_unread() {
    let (dir, clock) = setup();
    let max = 64 * 1024;
    let config = pending_config(dir.path(), max);
    {
        let storage = open(&config, &clock);
        write_actions(&storage.sink(), 0..20, 350);
    }
    // An earlier process (or something else) left more than the buffer holds: older chunks, each
    // as large as the whole buffer.
    let pending = rum_native::core::storage::PENDING_DIR;
    let root = dir.path().join("rum").join(pending);
    let line = b"{\"type\":\"action\"}\n";
    let big: Vec<u8> = line.iter().copied().cycle().take(line.len() * (max as usize / line.len())).collect();
    for created in [1, 2] {
        std::fs::write(root.join(format!("buffer-{created}-0.ndjson")), &big).unwrap();
    }
    let storage = open(&config, &clock);
    assert_eq!(storage.counters().pre_consent_events.get(), 20, "the newest chunks, the ones written here, are kept");
    assert!(storage.counters().pre_consent_bytes.get() <= max);
    let names: Vec<String> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(!names.iter().any(|n| n.starts_with("buffer-1-0") || n.starts_with("buffer-2-0")), "{names:?}");
}

#[test]
fn migration_writes_each_chunk_to_batches_before_deleting_it() {
    let (dir, clock) = setup();
    let (fs, _, storage) = sixty_buffered(dir.path(), &clock);
    let chunks = buffer_files(storage.directory()).len();
    assert!(chunks >= 3, "{chunks} chunks");
    let start = fs.log().len();
    storage.sink().consent_changed(TrackingConsent::Granted).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);

    // Between two removals of buffer chunks (and before the first) the batches were written and
    // fsynced: a crash at any removal finds the chunk's lines in batches.
    let log = fs.log().split_off(start);
    let is_batch = |p: &std::path::Path| p.file_name().unwrap().to_string_lossy().starts_with("batch-");
    let mut wrote = false;
    let mut synced = false;
    let mut removals = 0;
    for (op, path, _) in &log {
        match op {
            Op::Write if is_batch(path) => wrote = true,
            Op::Sync if is_batch(path) => synced = wrote,
            Op::Remove if path.to_string_lossy().contains(PENDING_DIR) => {
                assert!(wrote && synced, "chunk {removals} removed before its lines were written and synced: {log:#?}");
                removals += 1;
                wrote = false;
                synced = false;
            }
            _ => {}
        }
    }
    assert_eq!(removals, chunks);
    assert_eq!(seqs_on_disk(storage.directory()), (0..60).collect::<Vec<_>>());
}

#[test]
fn a_migration_cut_short_duplicates_and_never_loses() {
    let (dir, clock) = setup();
    let (fs, config, storage) = sixty_buffered(dir.path(), &clock);
    // The process "dies" after the batches are written, before the buffer is deleted.
    fs.inject_on(Op::Remove, PENDING_DIR, EACCES, u32::MAX, false);
    storage.sink().consent_changed(TrackingConsent::Granted).unwrap();
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    drop(storage);
    fs.clear_faults();
    let storage = Storage::open(&with_consent(config, TrackingConsent::Granted), fault_options(&clock, &fs)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let mut got = seqs_on_disk(storage.directory());
    assert!(got.len() > 60, "duplicated: {}", got.len());
    got.sort();
    got.dedup();
    assert_eq!(got, (0..60).collect::<Vec<_>>(), "nothing lost");
    assert!(buffer_files(storage.directory()).is_empty());
}

#[test]
fn an_initial_not_granted_consent_drops_everything() {
    let (dir, clock) = setup();
    let storage = open(&with_consent(small_config(dir.path()), TrackingConsent::NotGranted), &clock);
    write_actions(&storage.sink(), 0..5, 10);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert!(batch_files(storage.directory()).is_empty());
    assert_eq!(storage.counters().dropped_consent.get(), 5);
}

/// A file's path and contents.
type SavedFile = (std::path::PathBuf, Vec<u8>);

/// The directory is removed while a chunk is being migrated (after its read), and the chunks after
/// it come back (restored from a backup): the writer recreates the directory without an error.
/// The chunk being migrated must be the one removed from the buffer, not the next one (whose lines
/// would then be deleted without ever reaching a batch).
#[test]
fn a_directory_removed_during_a_migration_loses_only_what_went_with_it() {
    let (dir, clock) = setup();
    let mut fs = FaultFs::new();
    let config = pending_config(dir.path(), 64 * 1024);
    let root = dir.path().join(rum_native::core::storage::RUM_DIR);
    let state = fs.state.clone();
    let saved: Arc<Mutex<Vec<SavedFile>>> = Arc::default();
    let (saved_in_hook, root_in_hook) = (saved.clone(), root.clone());
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    fs.after_change = Some(Arc::new(move || {
        let reads = state
            .0
            .lock()
            .unwrap()
            .log
            .iter()
            .filter(|(op, p, _)| *op == Op::Read && p.to_string_lossy().contains(PENDING_DIR))
            .count();
        let saved = saved_in_hook.lock().unwrap();
        if reads == 2 && !saved.is_empty() && !done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::fs::remove_dir_all(&root_in_hook).unwrap();
            std::fs::create_dir_all(root_in_hook.join(PENDING_DIR)).unwrap();
            for (path, data) in saved.iter().skip(2) {
                std::fs::write(path, data).unwrap();
            }
        }
    }));
    let storage = Storage::open(&config, fault_options(&clock, &fs)).unwrap();
    write_actions(&storage.sink(), 0..60, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let chunks: Vec<_> = buffer_files(&root).into_iter().map(|p| (p.clone(), std::fs::read(p).unwrap())).collect();
    assert!(chunks.len() >= 4, "{} chunks", chunks.len());
    let first_kept: u64 = seqs_in(&chunks[1].1)[0];
    *saved.lock().unwrap() = chunks;

    storage.sink().consent_changed(TrackingConsent::Granted).unwrap();
    storage.flush(TIMEOUT);
    // The lost batch failed the migration: what is left moves at the next one.
    storage.sink().consent_changed(TrackingConsent::Granted).unwrap();
    storage.flush(TIMEOUT);
    let got = uploaded_seqs(&storage);
    assert_eq!(got, (first_kept..60).collect::<Vec<_>>(), "the chunks that came back are migrated, none skipped");
    let c = storage.counters();
    assert_eq!(c.documents_received.get(), c.events_accounted(), "every document counted once");
}

/// A pending storage whose file system fails the `n`th write to a batch file after `arm` is set,
/// and the `times - 1` writes to batch files after it, with 60 actions in its buffer (flushed).
fn sixty_buffered_failing_batch_write(
    dir: &Path,
    clock: &FakeClock,
    n: usize,
    times: u32,
) -> (Arc<std::sync::atomic::AtomicBool>, Storage) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut fs = FaultFs::new();
    let arm = Arc::new(AtomicBool::new(false));
    let (state, armed) = (fs.state.clone(), arm.clone());
    fs.after_change = Some(Arc::new(move || {
        if !armed.load(Ordering::SeqCst) {
            return;
        }
        let mut s = state.0.lock().unwrap();
        let is_batch = |p: &Path| p.file_name().is_some_and(|f| f.to_string_lossy().starts_with("batch-"));
        let writes = s.log.iter().filter(|(op, p, _)| *op == Op::Write && is_batch(p)).count();
        if writes + 1 == n {
            s.faults.push(Fault {
                op: Op::Write,
                path_contains: "batch-".into(),
                errno: ENOSPC,
                times,
                partial: false,
            });
            armed.store(false, Ordering::SeqCst);
        }
    }));
    let storage = Storage::open(&pending_config(dir, 64 * 1024), fault_options(clock, &fs)).unwrap();
    write_actions(&storage.sink(), 0..60, 350);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    (arm, storage)
}

/// A write that fails while the buffer moves into batches (a full disk) stops the move: the lines
/// it dropped are still in their chunk, so they are not counted lost, and the lines written before
/// it are no longer counted in the buffer; the next flush finishes the move, each document once.
#[test]
fn a_migration_a_failed_write_cuts_short_is_counted_once_and_finished_by_the_next_flush() {
    let (dir, clock) = setup();
    // The third write to a batch: inside the first chunk's lines (a batch holds about five of
    // them, a chunk about ten), so part of a chunk is in batches when the move stops; and the
    // write after it, the first of the flush's new try.
    let (arm, storage) = sixty_buffered_failing_batch_write(dir.path(), &clock, 3, 2);
    let root = storage.directory().to_path_buf();
    arm.store(true, std::sync::atomic::Ordering::SeqCst);
    storage.sink().consent_changed(TrackingConsent::Granted).unwrap();
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)), "the failed write is reported");
    let c = storage.counters();
    assert_eq!(c.dropped_write_error.get(), 0, "the lines whose write failed are still in the buffer");
    assert_eq!(c.documents_received.get(), c.events_accounted(), "every document counted once");
    let on_disk = seqs_on_disk(&root);
    assert!(!on_disk.is_empty() && on_disk.len() < 60, "the move stopped part way: {on_disk:?}");
    assert_eq!(c.pre_consent_migrated.get(), on_disk.len() as u64);
    assert_eq!(c.pre_consent_events.get(), 60 - on_disk.len() as u64);

    // The fault is over: the next flush moves the rest, starting after what is in batches.
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(&root), (0..60).collect::<Vec<_>>(), "each document once, in order");
    assert!(buffer_files(&root).is_empty());
    let c = storage.counters();
    assert_eq!(c.pre_consent_migrated.get(), 60);
    assert_eq!((c.pre_consent_events.get(), c.dropped_write_error.get()), (0, 0));
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

/// Without a flush, the move is tried again by a document that comes once the retry interval has
/// passed, before that document: the buffer's documents keep their place before it.
#[test]
fn a_migration_cut_short_is_tried_again_before_a_later_document() {
    let (dir, clock) = setup();
    let (arm, storage) = sixty_buffered_failing_batch_write(dir.path(), &clock, 1, 1);
    arm.store(true, std::sync::atomic::Ordering::SeqCst);
    let sink = storage.sink();
    sink.consent_changed(TrackingConsent::Granted).unwrap();
    // The writer moves the buffer as consent changes, and meets the fault.
    wait_until("the failed move", || storage.counters().write_errors.get() > 0);
    clock.advance(rum_native::core::config::PRE_CONSENT_RETRY_MS);
    write_actions(&sink, 60..61, 350);
    // This flush reports the failure of the first try; the next finds nothing wrong.
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), (0..61).collect::<Vec<_>>(), "the buffer's documents first");
    let c = storage.counters();
    assert_eq!((c.pre_consent_migrated.get(), c.dropped_write_error.get()), (60, 0));
    assert_eq!(c.documents_received.get(), c.events_accounted());
}

/// A moved chunk whose file could not be deleted is deleted at the next try (here the flush), so a
/// restart does not move its lines a second time.
#[test]
fn a_moved_chunk_that_could_not_be_deleted_is_deleted_later_not_moved_again() {
    let (dir, clock) = setup();
    let (fs, config, storage) = sixty_buffered(dir.path(), &clock);
    fs.inject_on(Op::Remove, PENDING_DIR, EACCES, 1, false);
    storage.sink().consent_changed(TrackingConsent::Granted).unwrap();
    // Reports the failed removal, and tries it again.
    assert!(matches!(storage.flush(TIMEOUT), FlushOutcome::Failed(_)));
    assert!(buffer_files(storage.directory()).is_empty(), "{:?}", buffer_files(storage.directory()));
    drop(storage);
    let storage = Storage::open(&with_consent(config, TrackingConsent::Granted), fault_options(&clock, &fs)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(seqs_on_disk(storage.directory()), (0..60).collect::<Vec<_>>(), "each document once");
}
