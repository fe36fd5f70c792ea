//! Recovery at open, from directories as a dead process leaves them.

mod storage_support;

use std::path::Path;

use rum_native::core::config::{BatchEncoding, Config};
use rum_native::core::seam::DocumentSink;
use rum_native::core::storage::{json, FlushOutcome, Storage, RUM_DIR};
use storage_support::*;

/// Serialized lines of `seqs`, as the writer writes them.
fn lines(seqs: std::ops::Range<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    for i in seqs {
        json::to_writer(&mut out, &action(i, 50)).unwrap();
        out.push(b'\n');
    }
    out
}

fn rum(dir: &Path) -> std::path::PathBuf {
    let root = dir.join(RUM_DIR);
    std::fs::create_dir_all(&root).unwrap();
    root
}

#[test]
fn an_unsealed_batch_is_sealed_with_its_torn_last_line_dropped() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let mut data = lines(0..3);
    let whole = data.len() as u64;
    data.extend_from_slice(&lines(3..4)[..40]); // the writer died inside this line
    std::fs::write(root.join(format!("batch-{T0}-5.ndjson")), &data).unwrap();

    let storage = open(&plain(small_config(dir.path())), &clock);
    let c = storage.counters();
    assert_eq!(c.torn_lines_dropped.get(), 1);
    assert_eq!(c.batches_recovered.get(), 1);
    assert_eq!(c.events_on_disk.get(), 3);
    assert_eq!(bytes_on_disk(&root), whole, "the torn tail is cut from the file");
    assert_eq!(uploaded_seqs(&storage), vec![0, 1, 2]);
}

/// With compressed batches, the writer's check compresses the recovered batch: the plain file
/// goes, the compressed one holds the whole lines, and it is uploaded as gzip.
#[test]
fn a_recovered_plain_batch_is_compressed_by_the_writer() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let mut data = lines(0..3);
    data.extend_from_slice(&lines(3..4)[..40]);
    std::fs::write(root.join(format!("batch-{T0}-5.ndjson")), &data).unwrap();
    let storage = open(&small_config(dir.path()), &clock);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let names: Vec<String> =
        batch_files(&root).iter().map(|f| f.2.file_name().unwrap().to_string_lossy().into()).collect();
    assert_eq!(names, vec![format!("batch-{T0}-5.ndjson.gz")]);
    let c = storage.counters();
    assert_eq!((c.torn_lines_dropped.get(), c.events_on_disk.get()), (1, 3));
    assert_eq!(bytes_on_disk(&root), c.bytes_on_disk.get());
    let batch = next_batch_waiting(&storage).expect("the batch");
    assert_eq!(batch.encoding, BatchEncoding::Gzip);
    assert_eq!(seqs_in(&body_lines(&batch)), vec![0, 1, 2]);
}

#[test]
fn a_batch_with_no_whole_line_is_removed() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    std::fs::write(root.join(format!("batch-{T0}-1.ndjson")), &lines(0..1)[..10]).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-2.ndjson")), b"").unwrap();
    let storage = open(&small_config(dir.path()), &clock);
    assert!(batch_files(&root).is_empty());
    assert_eq!(storage.next_batch().unwrap(), None);
}

#[test]
fn stale_claims_are_released_and_fresh_ones_kept() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let config = small_config(dir.path());
    let stale = clock.now() - config.claim_timeout_ms as i64 - 1;
    let fresh = clock.now() - MINUTE;
    std::fs::write(root.join(format!("batch-{T0}-1.ndjson.{stale}.uploading")), lines(0..2)).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-2.ndjson.{fresh}.uploading")), lines(2..3)).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-3.ndjson")), lines(3..4)).unwrap();

    let storage = open(&config, &clock);
    assert_eq!(storage.counters().stale_claims_released.get(), 1);
    assert!(root.join(format!("batch-{T0}-1.ndjson")).exists(), "released: its batch name is back");
    assert_eq!(uploaded_seqs(&storage), vec![0, 1, 3], "the fresh claim still belongs to its uploader");
    // Its id is the claimed file's name: what the uploader of the earlier process was given.
    assert!(storage.complete_batch(&format!("batch-{T0}-2.ndjson"), true).is_err(), "a batch name is not a claim");
    storage.complete_batch(&format!("batch-{T0}-2.ndjson.{fresh}.uploading"), true).unwrap();
    assert!(batch_files(&root).is_empty());
    assert_eq!(storage.counters().events_delivered.get(), 4);
}

#[test]
fn a_claim_that_outlives_the_timeout_in_this_process_is_released_too() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    let storage = open(&config, &clock);
    storage.sink().write(action(0, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let lost = storage.next_batch().unwrap().unwrap(); // an uploader that never answers
    assert_eq!(storage.next_batch().unwrap(), None);
    clock.advance(config.claim_timeout_ms as i64);
    let again = storage.next_batch().unwrap().unwrap();
    assert_ne!(again.id, lost.id, "a new claim, with an id of its own");
    assert_eq!(again.body, lost.body);
}

#[test]
fn unknown_files_are_left_alone() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let foreign = ["notes.txt", "batch-x-1.ndjson", "batch-1-2.json", "batch-1-2.ndjson.bak"];
    for name in foreign {
        std::fs::write(root.join(name), b"not ours\npartial").unwrap();
    }
    std::fs::create_dir(root.join("batch-1-3.ndjson")).unwrap(); // a directory with our name
    let storage = open(&small_config(dir.path()), &clock);
    storage.sink().write(action(0, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    assert_eq!(upload_all(&storage).len(), 1);
    for name in foreign {
        assert_eq!(std::fs::read(root.join(name)).unwrap(), b"not ours\npartial", "{name}");
    }
    assert!(root.join("batch-1-3.ndjson").is_dir());
    assert_eq!(storage.counters().torn_lines_dropped.get(), 0);
}

#[test]
fn new_batches_continue_after_the_highest_seq_on_disk() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    // A clock that stepped back: the name's time is later than now, but seq still orders.
    std::fs::write(root.join(format!("batch-{}-41.ndjson", T0 + HOUR)), lines(0..1)).unwrap();
    let storage = open(&small_config(dir.path()), &clock);
    storage.sink().write(action(1, 10)).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let seqs: Vec<u64> = batch_files(&root).iter().map(|f| f.0).collect();
    assert_eq!(seqs, vec![41, 42]);
    assert_eq!(uploaded_seqs(&storage), vec![0, 1], "uploaded by seq, oldest first");
}

#[test]
fn limits_apply_at_open_to_what_an_earlier_process_left() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let config = Config { disk_quota_bytes: 8 * 1024, max_batch_files: 4, ..small_config(dir.path()) };
    let old = clock.now() - 24 * HOUR;
    std::fs::write(root.join(format!("batch-{old}-1.ndjson")), lines(0..2)).unwrap();
    let big = lines(100..130); // larger than any batch this configuration writes
    assert!(big.len() as u64 > config.batch_max_bytes);
    std::fs::write(root.join(format!("batch-{T0}-2.ndjson")), &big).unwrap();
    for seq in 3..9 {
        std::fs::write(root.join(format!("batch-{T0}-{seq}.ndjson")), lines(seq * 10..seq * 10 + 2)).unwrap();
    }
    let storage = open(&config, &clock);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done, "the writer has checked (and compressed) them");
    let c = storage.counters();
    assert_eq!((c.evicted_batches_age.get(), c.evicted_events_age.get()), (1, 2));
    assert_eq!((c.evicted_batches_oversize.get(), c.evicted_events_oversize.get()), (1, 30));
    assert_eq!(c.evicted_batches_count.get(), 2, "6 left, cap 4");
    let seqs: Vec<u64> = batch_files(&root).iter().map(|f| f.0).collect();
    assert_eq!(seqs, vec![5, 6, 7, 8]);
    assert!(bytes_on_disk(&root) <= config.disk_quota_bytes);
}

#[test]
fn a_compressed_batch_that_expands_past_the_largest_batch_is_evicted_at_open() {
    use std::io::Write;
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let config = small_config(dir.path());
    // A few KiB of gzip that expand to far more than any batch this configuration writes (a
    // foreign or corrupt file, the shape of a gzip bomb), beside a good batch.
    let bomb_lines = "{}\n".repeat(usize::try_from(config.batch_max_bytes * 64).unwrap());
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bomb_lines.as_bytes()).unwrap();
    let bomb = enc.finish().unwrap();
    assert!((bomb.len() as u64) < config.batch_max_bytes, "it passes the size check at open");
    std::fs::write(root.join(format!("batch-{T0}-1.ndjson.gz")), &bomb).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-2.ndjson")), lines(0..2)).unwrap();
    let storage = open(&config, &clock);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done, "the writer has checked them");
    assert_eq!(storage.counters().evicted_batches_oversize.get(), 1);
    assert_eq!(batch_files(&root).iter().map(|f| f.0).collect::<Vec<_>>(), vec![2], "the bomb is gone");
    assert_eq!(uploaded_seqs(&storage), vec![0, 1]);
}

#[test]
fn files_far_past_the_largest_batch_are_evicted_at_open_unread_claimed_or_not() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let config = small_config(dir.path());
    let largest = config.batch_max_bytes.max(config.event_max_bytes + 1);
    // Whole lines, so that a read would count them: more than four times the largest batch.
    let giant = lines(0..5 * largest / 20);
    assert!(giant.len() as u64 > 4 * largest);
    let fresh = clock.now() - MINUTE;
    std::fs::write(root.join(format!("batch-{T0}-1.ndjson")), &giant).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-2.ndjson.{fresh}.uploading")), &giant).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-3.ndjson.gz")), &giant).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-4.ndjson")), lines(0..2)).unwrap();
    let storage = open(&config, &clock);
    let c = storage.counters();
    assert_eq!(c.evicted_batches_oversize.get(), 3, "by their listed size, the claimed one too");
    assert_eq!(c.evicted_events_oversize.get(), 0, "unread, so their lines are not counted");
    // The writer compresses batch 4 after the open: both of its files exist for a moment.
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done, "the writer has checked it");
    assert_eq!(batch_files(&root).iter().map(|f| f.0).collect::<Vec<_>>(), vec![4]);
    assert_eq!(uploaded_seqs(&storage), vec![0, 1]);
}

#[test]
fn sealed_batches_are_recovered_by_seq_after_a_restart_mid_burst() {
    let (dir, clock) = setup();
    let config = small_config(dir.path());
    {
        let storage = open(&config, &clock);
        write_actions(&storage.sink(), 0..50, 350);
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
        let b = storage.next_batch().unwrap().unwrap(); // claimed when the process dies
        let _ = b;
    }
    clock.advance(config.claim_timeout_ms as i64);
    let storage = open(&config, &clock);
    assert_eq!(uploaded_seqs(&storage), (0..50).collect::<Vec<_>>());
}

/// Whatever an earlier process (or a bad disk) left in a batch file, an uploader receives strict
/// NDJSON: every line one JSON document. The rest is dropped and counted once.
#[test]
fn lines_that_are_not_documents_never_reach_an_uploader() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let mut data = lines(0..2);
    data.extend_from_slice(b"\n\0\0\0\0\0\0\n\xff\xfe binary \x01\x02\n[1,2,3]\n\"a string\"\n{\"unterminated\":\n");
    data.extend_from_slice(b"{\"bad\":\"\xc3\x28\"}\n");
    data.extend_from_slice(&lines(2..4));
    std::fs::write(root.join(format!("batch-{T0}-0.ndjson")), &data).unwrap();

    let storage = open(&small_config(dir.path()), &clock);
    let batch = storage.next_batch().unwrap().expect("the batch");
    assert_eq!(seqs_in(&body_lines(&batch)), vec![0, 1, 2, 3]);
    assert_eq!(batch.event_count, 4);
    for line in body_lines(&batch).split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let text = std::str::from_utf8(line).expect("UTF-8");
        assert!(serde_json::from_str::<serde_json::Value>(text).unwrap().is_object());
    }
    let c = storage.counters();
    assert_eq!(c.invalid_lines_dropped.get(), 7);
    storage.complete_batch(&batch.id, true).unwrap();
    assert_eq!(c.events_delivered.get(), 4);
    // Counted once: the writer's check and the claim do not both count it.
    assert_eq!(c.invalid_lines_dropped.get(), 7);
}

/// A clean batch found at open is handed out as it is, whichever of the writer and the claim
/// checks it first.
#[test]
fn a_clean_batch_found_at_open_is_handed_out_whole() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    std::fs::write(root.join(format!("batch-{T0}-0.ndjson")), lines(0..5)).unwrap();
    let storage = open(&small_config(dir.path()), &clock);
    assert_eq!(uploaded_seqs(&storage), (0..5).collect::<Vec<_>>());
    assert_eq!(storage.counters().invalid_lines_dropped.get(), 0);
}

/// A seal killed before its rename leaves a temporary file (deleted); one killed after it leaves
/// the batch both plain and compressed (the compressed one, whole, is kept): nothing is lost,
/// nothing is there twice.
#[test]
fn a_seal_cut_by_a_kill_leaves_one_copy_of_each_batch() {
    use std::io::Write;
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let gz = |data: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    std::fs::write(root.join(format!("batch-{T0}-1.ndjson")), lines(0..2)).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-1.ndjson.gz.tmp")), &gz(&lines(0..2))[..10]).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-2.ndjson")), lines(2..4)).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-2.ndjson.gz")), gz(&lines(2..4))).unwrap();
    let storage = open(&small_config(dir.path()), &clock);
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let names: Vec<String> =
        batch_files(&root).iter().map(|f| f.2.file_name().unwrap().to_string_lossy().into()).collect();
    assert_eq!(names, vec![format!("batch-{T0}-1.ndjson.gz"), format!("batch-{T0}-2.ndjson.gz")]);
    assert_eq!(storage.counters().events_on_disk.get(), 4);
    assert_eq!(uploaded_seqs(&storage), vec![0, 1, 2, 3]);
}

/// A batch that must not be uploaded (far past the largest batch, or a gzip bomb) whose file
/// cannot be removed is never read, checked or handed out; its bytes stay counted against the
/// quota while it is on disk, and its removal is tried again until it goes.
#[test]
fn an_oversize_batch_whose_removal_fails_is_never_read_and_removed_later() {
    use std::io::Write;
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let config = small_config(dir.path());
    let largest = config.batch_max_bytes.max(config.event_max_bytes + 1);
    let giant = lines(0..5 * largest / 20);
    assert!(giant.len() as u64 > 4 * largest);
    let bomb_lines = "{}\n".repeat(usize::try_from(config.batch_max_bytes * 64).unwrap());
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bomb_lines.as_bytes()).unwrap();
    let bomb = enc.finish().unwrap();
    std::fs::write(root.join(format!("batch-{T0}-1.ndjson")), &giant).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-2.ndjson.gz")), &bomb).unwrap();
    std::fs::write(root.join(format!("batch-{T0}-3.ndjson")), lines(0..2)).unwrap();
    let fs = FaultFs::new();
    fs.inject_on(Op::Remove, &format!("batch-{T0}-1."), EACCES, u32::MAX, false);
    fs.inject_on(Op::Remove, &format!("batch-{T0}-2."), EACCES, u32::MAX, false);
    let storage = Storage::open(&config, fault_options(&clock, &fs)).unwrap();
    let checked = storage.flush(TIMEOUT);
    assert!(matches!(&checked, FlushOutcome::Failed(m) if m.starts_with("remove ")), "{checked:?}: reported");
    let reads = |seq: u32| {
        fs.log()
            .iter()
            .filter(|(op, p, _)| *op == Op::Read && p.to_string_lossy().contains(&format!("-{seq}.")))
            .count()
    };
    let bomb_reads = reads(2);
    assert_eq!(uploaded_seqs(&storage), vec![0, 1], "only the good batch is handed out");
    assert!(storage.next_batch().unwrap().is_none());
    assert_eq!(reads(1), 0, "the giant is never read");
    assert_eq!(reads(2), bomb_reads, "the bomb is not read again once found oversize");
    let c = storage.counters();
    assert_eq!(c.evicted_batches_oversize.get(), 2, "counted once each");
    assert_eq!(c.bytes_on_disk.get(), bytes_on_disk(&root), "what stays on disk stays counted");
    assert_eq!(batch_files(&root).len(), 2);

    fs.clear_faults();
    assert!(storage.next_batch().unwrap().is_none());
    assert!(batch_files(&root).is_empty(), "removed at the next claim");
    assert_eq!((c.bytes_on_disk.get(), c.evicted_batches_oversize.get()), (0, 2));
    assert_eq!(c.lost_batches_external.get(), 0);
}

/// A claim found at open counts as the last claim made: the batch released and claimed again in
/// the same millisecond gets a new id, so the earlier claim's id no longer acts on it.
#[test]
fn a_claim_found_at_open_is_not_reused_by_the_next_claim() {
    let (dir, clock) = setup();
    let root = rum(dir.path());
    let config = small_config(dir.path());
    let found = format!("batch-{T0}-1.ndjson.{}.uploading", clock.now());
    std::fs::write(root.join(&found), lines(0..2)).unwrap();
    let storage = open(&config, &clock);
    storage.complete_batch(&found, false).expect("the earlier process's claim, released");
    let again = storage.next_batch().unwrap().expect("claimed again");
    assert_ne!(again.id, found);
    assert!(storage.complete_batch(&found, true).is_err(), "the earlier id names no claim now");
    storage.complete_batch(&again.id, true).unwrap();
    assert_eq!(storage.counters().events_delivered.get(), 2);
}
