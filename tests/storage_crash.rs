//! A writer killed with SIGKILL in the middle of a burst. The child is this test binary run again
//! (`crash_child`, selected by name with `--exact --nocapture`, told its directory by an
//! environment variable): it writes without pause, flushes every `FLUSH_EVERY` documents and
//! prints `FLUSHED <seq>` after each flush that returned, and `MIDWRITE` while a write is half
//! done. The parent kills it at a different moment each round — every other round right after a
//! `MIDWRITE`, so some kill surely cuts a line however fast or loaded the machine is — reopens
//! the directory, and checks: every line parses (the torn tail is gone), the lines are the
//! documents in send order with no gap, and everything flushed before the kill is there.

mod storage_support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
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

/// Runs only as the child; as a plain test it returns at once.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else { return };
    let start: u64 = std::env::var(CHILD_START).unwrap().parse().unwrap();
    // Every write is made in two halves with a pause between, as a write the kernel cuts short:
    // a kill then often lands inside a line, and the reopen must cut it.
    let mut fs = FaultFs::new();
    fs.split_writes(Duration::from_millis(5));
    fs.mid_write = Some(std::sync::Arc::new(|| {
        say("MIDWRITE");
    }));
    let options = StorageOptions { fs: std::sync::Arc::new(fs), ..StorageOptions::default() };
    let storage = Storage::open(&config(Path::new(&dir)), options).unwrap();
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
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["crash_child", "--exact", "--nocapture"])
            .env(CHILD_DIR, dir.path())
            .env(CHILD_START, start.to_string())
            .env("RUM_NATIVE_QUIET", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
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
