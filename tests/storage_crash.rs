//! A writer killed with SIGKILL in the middle of a burst. The child is this test binary run again
//! (`crash_child`, selected by name with `--exact --nocapture`, told its directory by an
//! environment variable): it writes without pause, flushes every `FLUSH_EVERY` documents and
//! prints `FLUSHED <seq>` after each flush that returned, and `MIDWRITE` while a write is half
//! done. The parent kills it at a different moment each round — every other round right after a
//! `MIDWRITE`, so some kill surely cuts a line however fast or loaded the machine is — reopens
//! the directory, and checks: every line parses (the torn tail is gone), the lines are the
//! documents in send order with no gap, and everything flushed before the kill is there.
//!
//! A second child (`seal_child`) seals in a loop: a flush after every few documents, actions and
//! new versions of views, so most kills land inside a seal (reading back, compressing, writing the
//! temporary file — also in two halves — renaming, removing the plain file). After the reopen
//! every flushed action is there exactly once, no view version is there twice, and each view's
//! latest flushed version is there.

mod storage_support;

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use rum_native::core::config::Config;
use rum_native::core::seam::DocumentSink;
use rum_native::core::storage::{FlushOutcome, Storage, StorageOptions};
use storage_support::*;

const CHILD_DIR: &str = "RUM_STORAGE_CRASH_CHILD_DIR";
const CHILD_START: &str = "RUM_STORAGE_CRASH_CHILD_START";
const FLUSH_EVERY: u64 = 100;
/// At least this many kills, and more (up to `MAX_ROUNDS`) until one of them tore a line.
const ROUNDS: u64 = 8;
const MAX_ROUNDS: u64 = 60;

fn config(dir: &Path) -> Config {
    Config {
        storage_dir: dir.to_path_buf(),
        application_id: "app".into(),
        batch_max_bytes: 64 * 1024,
        disk_quota_bytes: 1 << 30,
        max_batch_files: 100_000,
        ..Config::default()
    }
}

/// This test binary run as the child `test` (which writes under `dir`, its sequence from
/// `start`), and a reader of what it prints.
fn spawn_child(test: &str, dir_var: &str, dir: &Path, start: u64) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture"])
        .env(dir_var, dir)
        .env(CHILD_START, start.to_string())
        .env("RUM_NATIVE_QUIET", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let reader = BufReader::new(child.stdout.take().unwrap());
    (child, reader)
}

/// A child's storage whose every write is made in two halves with `pause` between, saying
/// `MIDWRITE` in the middle, so the parent can kill inside a write.
fn open_splitting(dir: &Path, pause: Duration) -> Storage {
    let mut fs = FaultFs::new();
    fs.split_writes(pause);
    fs.mid_write = Some(std::sync::Arc::new(|| {
        say("MIDWRITE");
    }));
    let options = StorageOptions { fs: std::sync::Arc::new(fs), ..StorageOptions::default() };
    Storage::open(&config(dir), options).unwrap()
}

/// Runs only as the child; as a plain test it returns at once.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else { return };
    let start: u64 = std::env::var(CHILD_START).unwrap().parse().unwrap();
    // Every write is made in two halves with a pause between, as a write the kernel cuts short:
    // a kill then often lands inside a line, and the reopen must cut it.
    let storage = open_splitting(Path::new(&dir), Duration::from_millis(5));
    let sink = storage.sink();
    let deadline = Instant::now() + Duration::from_secs(30); // never outlive a failed parent
    for seq in start.. {
        sink.write(action(seq, 100 + (seq as usize % 13) * 300)).unwrap();
        if (seq - start) % FLUSH_EVERY == FLUSH_EVERY - 1 {
            assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
            if !say(&format!("FLUSHED {seq}")) || Instant::now() > deadline {
                return;
            }
        }
    }
}

/// One line to the parent, at once (from the writer thread too). False once the parent is gone.
fn say(line: &str) -> bool {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|_| out.flush()).is_ok()
}

fn flushed_seq(line: &str) -> Option<u64> {
    line.trim().strip_prefix("FLUSHED ")?.parse().ok()
}

#[test]
fn a_killed_writer_loses_nothing_flushed_and_leaves_no_torn_line() {
    quiet();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let mut torn = 0;
    let mut rounds = 0;
    for round in 0..MAX_ROUNDS {
        if round >= ROUNDS && torn > 0 {
            break;
        }
        rounds += 1;
        let start = round * 1_000_000;
        let (mut child, mut reader) = spawn_child("crash_child", CHILD_DIR, dir.path(), start);
        let kill_after = 2 + (round * 7) % 17; // a different moment each round
        let (mut markers, mut last_flushed) = (0, None);
        let mut line = String::new();
        while markers < kill_after {
            line.clear();
            assert!(reader.read_line(&mut line).unwrap() > 0, "the child ended before the kill");
            if let Some(seq) = flushed_seq(&line) {
                markers += 1;
                last_flushed = Some(seq);
            }
        }
        if round % 2 == 1 {
            // Inside a write: its first half is in the file.
            loop {
                line.clear();
                assert!(reader.read_line(&mut line).unwrap() > 0, "the child ended before the kill");
                if let Some(seq) = flushed_seq(&line) {
                    last_flushed = Some(seq);
                } else if line.trim() == "MIDWRITE" {
                    break;
                }
            }
        } else {
            std::thread::sleep(Duration::from_micros((round * 337) % 1_500)); // anywhere in the burst
        }
        child.kill().unwrap(); // SIGKILL
        for line in reader.lines() {
            if let Some(seq) = line.ok().as_deref().and_then(flushed_seq) {
                last_flushed = Some(seq); // printed before the kill, still in the pipe
            }
        }
        child.wait().unwrap();
        let last_flushed = last_flushed.unwrap();

        let storage = Storage::open(&config, StorageOptions::default()).unwrap();
        // The writer seals (compresses) the batches it recovered first thing: read after it has.
        assert_eq!(storage.flush(Duration::from_secs(10)), FlushOutcome::Done);
        torn += storage.counters().torn_lines_dropped.get();
        let seqs = seqs_on_disk(storage.directory()); // all parse
        let end = start + seqs.len() as u64;
        assert_eq!(seqs, (start..end).collect::<Vec<_>>(), "round {round}: send order, no gap");
        assert!(end > last_flushed, "round {round}: flushed up to {last_flushed}, found up to {end}");
        let uploaded = upload_all(&storage);
        assert_eq!(uploaded.len(), seqs.len());
    }
    println!("{rounds} kills; torn last lines cut at reopen: {torn}");
    assert!(torn > 0, "no kill landed inside a line in {rounds} rounds: the torn-line path went untested");
}

const SEAL_EVERY: u64 = 6;

/// Runs only as the child of the seal test; as a plain test it returns at once.
#[test]
fn seal_child() {
    let Some(dir) = std::env::var_os("RUM_STORAGE_SEAL_CHILD_DIR") else { return };
    let start: u64 = std::env::var(CHILD_START).unwrap().parse().unwrap();
    let storage = open_splitting(Path::new(&dir), Duration::from_millis(2));
    let sink = storage.sink();
    let deadline = Instant::now() + Duration::from_secs(30);
    for seq in start.. {
        sink.write(seal_doc(seq)).unwrap();
        if (seq - start) % SEAL_EVERY == SEAL_EVERY - 1 {
            assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
            if !say(&format!("FLUSHED {seq}")) || Instant::now() > deadline {
                return;
            }
        }
    }
}

/// Even seqs are actions, odd ones the next version of view `v<seq / 8>` (4 versions a view, so
/// a view's versions span batches and some are superseded inside one).
fn seal_doc(seq: u64) -> rum_native::core::document::Document {
    if seq.is_multiple_of(2) {
        action(seq, 200 + (seq as usize % 7) * 100)
    } else {
        view(seq, &format!("v{}", seq / 8), seq % 8 / 2 + 1)
    }
}

#[test]
fn a_writer_killed_while_sealing_loses_nothing_flushed_and_duplicates_nothing() {
    quiet();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let mut flushed_actions = Vec::new();
    let mut flushed_views: BTreeMap<String, u64> = BTreeMap::new();
    let (mut temps, mut twins) = (0, 0);
    for round in 0..10u64 {
        let start = round * 1_000_000;
        let (mut child, mut reader) = spawn_child("seal_child", "RUM_STORAGE_SEAL_CHILD_DIR", dir.path(), start);
        let kill_after = 3 + (round * 5) % 11;
        let (mut markers, mut last_flushed, mut mid) = (0, None, 0);
        let mut line = String::new();
        // Every round but the first few: right after the n-th half-done write past the marker,
        // which is inside a seal's temporary file as often as inside the active batch.
        let mids = round % 4;
        while markers < kill_after || mid < mids {
            line.clear();
            assert!(reader.read_line(&mut line).unwrap() > 0, "the child ended before the kill");
            if let Some(seq) = flushed_seq(&line) {
                markers += 1;
                last_flushed = Some(seq);
            } else if line.trim() == "MIDWRITE" && markers >= kill_after {
                mid += 1;
            }
        }
        child.kill().unwrap();
        for line in reader.lines() {
            if let Some(seq) = line.ok().as_deref().and_then(flushed_seq) {
                last_flushed = Some(seq);
            }
        }
        child.wait().unwrap();
        for seq in start..=last_flushed.unwrap() {
            match seal_doc(seq) {
                rum_native::core::document::Document::View(v) => {
                    let best = flushed_views.entry(v.view.id.to_string()).or_default();
                    *best = (*best).max(v.document_version);
                }
                _ => flushed_actions.push(seq),
            }
        }

        // What the kill left: a seal cut before its rename (a temporary file), or after it (a
        // batch there both plain and compressed).
        let left: Vec<String> = std::fs::read_dir(dir.path().join("rum"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        temps += left.iter().filter(|n| n.ends_with(".gz.tmp")).count();
        twins += left.iter().filter(|n| n.ends_with(".ndjson") && left.contains(&format!("{n}.gz"))).count();
        let storage = Storage::open(&config, StorageOptions::default()).unwrap();
        assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done, "the writer has checked what it found");
        let root = storage.directory();
        let names: Vec<String> =
            batch_files(root).iter().map(|f| f.2.file_name().unwrap().to_string_lossy().into()).collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "round {round}: a temporary file is left: {names:?}");
        let mut seen_actions = HashSet::new();
        let mut seen_views = HashSet::new();
        let mut latest: BTreeMap<String, u64> = BTreeMap::new();
        for doc in lines_on_disk(root) {
            if doc["type"] == "view" {
                let (id, version) =
                    (doc["view"]["id"].as_str().unwrap().to_string(), doc["_dd"]["document_version"].as_u64().unwrap());
                assert!(seen_views.insert((id.clone(), version)), "round {round}: view {id} v{version} twice");
                let best = latest.entry(id).or_default();
                *best = (*best).max(version);
            } else {
                let seq = seq_of(&doc);
                assert!(seen_actions.insert(seq), "round {round}: action {seq} twice");
            }
        }
        for seq in &flushed_actions {
            assert!(seen_actions.contains(seq), "round {round}: flushed action {seq} lost");
        }
        for (id, version) in &flushed_views {
            assert!(latest.get(id).is_some_and(|v| v >= version), "round {round}: view {id} v{version} lost");
        }
        let c = storage.counters();
        assert_eq!(bytes_on_disk(root), c.bytes_on_disk.get(), "round {round}: bytes on disk as counted");
        drop(storage);
    }
    println!("10 kills while sealing; left a temporary file: {temps}, a plain and compressed twin: {twins}");
    // Everything reaches the uploader once, whole.
    let storage = Storage::open(&config, StorageOptions::default()).unwrap();
    assert_eq!(storage.flush(TIMEOUT), FlushOutcome::Done);
    let uploaded = upload_all(&storage);
    let actions: Vec<u64> = uploaded.iter().filter(|d| d["type"] == "action").map(seq_of).collect();
    assert_eq!(actions.len(), actions.iter().collect::<HashSet<_>>().len(), "no action uploaded twice");
    for seq in &flushed_actions {
        assert!(actions.contains(seq), "flushed action {seq} not uploaded");
    }
}
