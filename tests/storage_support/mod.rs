//! Shared helpers of the storage tests: documents, a settable clock, a fault-injecting file
//! system, and readers of the directory as it is on disk.
#![allow(dead_code)]

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rum_native::core::attrs::Attrs;
use rum_native::core::config::{BatchEncoding, Config, TrackingConsent};
use rum_native::core::document::{ActionDocument, Common, Document, Identity, ViewDocument, ViewRef};
use rum_native::core::event::{ActionType, Attributes};
use rum_native::core::ids::IdGen;
use rum_native::core::seam::DocumentSink;
use rum_native::core::seam::{Clock, ManualClock, SharedClock};
use rum_native::core::storage::fs::{AppendFile, DirEntry, Fs, RealFs};
use rum_native::core::storage::{json, Batch, Storage, StorageError, StorageOptions};
use serde_json::Value;
use tempfile::TempDir;

pub const T0: i64 = 1_700_000_000_000;
pub const SECOND: i64 = 1_000;
pub const MINUTE: i64 = 60 * SECOND;
pub const HOUR: i64 = 60 * MINUTE;

pub fn quiet() {
    std::env::set_var("RUM_NATIVE_QUIET", "1");
}

/// What a storage test starts from: a quiet writer, a fresh directory and a clock at `T0`.
pub fn setup() -> (TempDir, FakeClock) {
    quiet();
    (tempfile::tempdir().unwrap(), FakeClock::new())
}

/// Limits small enough to see every rule with a few documents of ~700 bytes.
pub fn small_config(dir: &Path) -> Config {
    Config {
        storage_dir: dir.to_path_buf(),
        application_id: "app".into(),
        service: "svc".into(),
        version: "1.0".into(),
        event_max_bytes: 4096,
        batch_max_bytes: 4096,
        disk_quota_bytes: 1 << 20,
        max_batch_files: 1000,
        pre_consent_max_bytes: 1 << 20,
        flush_timeout_ms: 5_000,
        ..Config::default()
    }
}

pub const TIMEOUT: Duration = Duration::from_secs(5);

/// A clock the test moves, in wall milliseconds from `T0` (the core's [`ManualClock`]).
#[derive(Clone)]
pub struct FakeClock(pub ManualClock);

impl FakeClock {
    pub fn new() -> Self {
        Self(ManualClock::new(T0))
    }
    pub fn advance(&self, ms: i64) {
        self.0.advance_ms(u64::try_from(ms).expect("time moves forward"));
    }
    pub fn now(&self) -> i64 {
        self.0.wall_ms()
    }
    pub fn wall(&self) -> SharedClock {
        Arc::new(self.0.clone())
    }
}

pub fn options(clock: &FakeClock) -> StorageOptions {
    StorageOptions { clock: clock.wall(), ..StorageOptions::default() }
}

pub fn open(config: &Config, clock: &FakeClock) -> Storage {
    Storage::open(config, options(clock)).expect("open")
}

/// `c` with batches sealed plain (`batchEncoding: 'identity'`): for tests of file sizes.
pub fn plain(c: Config) -> Config {
    Config { batch_encoding: BatchEncoding::Identity, ..c }
}

pub fn with_consent(mut c: Config, consent: TrackingConsent) -> Config {
    c.tracking_consent = consent;
    c
}

fn identity() -> Arc<Identity> {
    Arc::new(Identity::new("app", "svc", "1.0", None, "harmonyos"))
}

fn common(seq: u64, pad: usize) -> Common {
    let mut attrs = Attributes::new();
    attrs.insert("seq".into(), Value::from(seq));
    if pad > 0 {
        attrs.insert("pad".into(), Value::from("x".repeat(pad)));
    }
    Common {
        date: T0 + seq as i64,
        identity: identity(),
        session_id: Arc::from("session-1"),
        usr: None,
        connectivity: None,
        global: Arc::new(Attributes::new()),
        attrs: Attrs::from_map(&attrs),
    }
}

fn view_ref(id: &str) -> ViewRef {
    ViewRef { id: Arc::from(id), name: Arc::from("Home"), url: Arc::from("pages/Home") }
}

/// An action document carrying `seq` in its attributes and `pad` characters of padding.
pub fn action(seq: u64, pad: usize) -> Document {
    Document::Action(ActionDocument {
        common: common(seq, pad),
        view: view_ref("view-1"),
        id: IdGen::with_seed(seq).uuid(),
        action_type: ActionType::Custom,
        target_name: "button".into(),
    })
}

/// Writes `action(seq, pad)` for each seq of `seqs`, in order, through a storage or its sink.
pub fn write_actions(sink: &impl DocumentSink, seqs: Range<u64>, pad: usize) {
    for seq in seqs {
        sink.write(action(seq, pad)).unwrap();
    }
}

pub fn view(seq: u64, view_id: &str, version: u64) -> Document {
    Document::View(ViewDocument {
        common: common(seq, 0),
        view: view_ref(view_id),
        document_version: version,
        time_spent_ns: 1_000,
        is_active: true,
        action_count: version,
        error_count: 0,
        crash_count: 0,
        resource_count: 0,
        long_task_count: 0,
        frozen_frame_count: 0,
        custom_timings: Default::default(),
    })
}

/// Serialized length of a document with its newline.
pub fn line_len(doc: &Document) -> usize {
    let mut v = Vec::new();
    json::to_writer(&mut v, doc).unwrap();
    v.len() + 1
}

pub fn seq_of(v: &Value) -> u64 {
    v["context"]["seq"].as_u64().expect("seq attribute")
}

/// `(seq, claimed, path)` of each batch file in `<dir>/rum`, in seq order.
pub fn batch_files(root: &Path) -> Vec<(u64, bool, PathBuf)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else { return out };
    for e in entries {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let Some(rest) = name.strip_prefix("batch-") else { continue };
        let claimed = name.ends_with(".uploading");
        let id = rest.split(".ndjson").next().unwrap();
        let seq: u64 = id.rsplit('-').next().unwrap().parse().unwrap();
        out.push((seq, claimed, e.path()));
    }
    out.sort();
    out
}

/// Total bytes of the batch files (claimed included).
pub fn bytes_on_disk(root: &Path) -> u64 {
    batch_files(root).iter().map(|(_, _, p)| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)).sum()
}

/// Every line of a file, parsed (panics on a line that does not parse or a missing newline).
pub fn parse_lines(data: &[u8]) -> Vec<Value> {
    if !data.is_empty() {
        assert_eq!(data.last(), Some(&b'\n'), "a file or body ends in a partial line");
    }
    data.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice(l).unwrap_or_else(|e| panic!("unparsable line {e}: {}", String::from_utf8_lossy(l)))
        })
        .collect()
}

/// The `seq` of every line of a file or body.
pub fn seqs_in(data: &[u8]) -> Vec<u64> {
    parse_lines(data).iter().map(seq_of).collect()
}

/// The NDJSON of a batch file, decompressed if it is a compressed one (`.ndjson.gz`, claimed or
/// not); a temporary file of a seal in progress holds nothing yet.
pub fn file_lines(path: &Path) -> Vec<u8> {
    let name = path.file_name().unwrap().to_str().unwrap();
    if name.ends_with(".tmp") {
        return Vec::new();
    }
    let data = std::fs::read(path).unwrap();
    if name.contains(".ndjson.gz") {
        gunzip(&data)
    } else {
        data
    }
}

/// A whole gzip stream, decompressed (panics on a damaged one).
pub fn gunzip(data: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data).read_to_end(&mut out).expect("a whole gzip stream");
    out
}

/// A batch's body as NDJSON, whatever its encoding.
pub fn body_lines(batch: &Batch) -> Vec<u8> {
    match batch.encoding {
        BatchEncoding::Gzip => gunzip(&batch.body),
        BatchEncoding::Identity => batch.body.clone(),
    }
}

/// Every line of every batch file, in seq order.
pub fn lines_on_disk(root: &Path) -> Vec<Value> {
    batch_files(root).iter().flat_map(|(_, _, p)| parse_lines(&file_lines(p))).collect()
}

/// The `seq` of every line of every batch file, in seq order.
pub fn seqs_on_disk(root: &Path) -> Vec<u64> {
    lines_on_disk(root).iter().map(seq_of).collect()
}

/// Claims and delivers every batch; returns their lines in the order received.
pub fn upload_all(storage: &Storage) -> Vec<Value> {
    let mut out = Vec::new();
    while let Some(batch) = next_batch_waiting(storage) {
        let lines = parse_lines(&body_lines(&batch));
        assert_eq!(lines.len() as u64, batch.event_count);
        assert_eq!(batch.body.len() as u64, batch.bytes);
        out.extend(lines);
        storage.complete_batch(&batch.id, true).unwrap();
    }
    out
}

/// `next_batch`, asked again while the writer is busy (a seal, or the check of the batches found
/// at open, holds the directory): `Busy` is the uploader's "ask again later".
pub fn next_batch_waiting(storage: &Storage) -> Option<Batch> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match storage.next_batch() {
            Err(StorageError::Busy(_)) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            other => return other.unwrap(),
        }
    }
}

/// [`upload_all`], as the `seq` of each line.
pub fn uploaded_seqs(storage: &Storage) -> Vec<u64> {
    upload_all(storage).iter().map(seq_of).collect()
}

/// Polls `cond` until it holds (the writer is asynchronous); panics after 10 s.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// File operations, as the fault file system names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    CreateDir,
    Create,
    Read,
    ReadDir,
    Rename,
    Remove,
    Truncate,
    Write,
    Sync,
    SetLen,
    SyncDir,
}

#[derive(Clone, Debug)]
pub struct Fault {
    pub op: Op,
    /// Only paths containing this.
    pub path_contains: String,
    pub errno: i32,
    pub times: u32,
    /// For writes: write half of the buffer before failing.
    pub partial: bool,
}

pub const ENOSPC: i32 = 28;
pub const ENOENT: i32 = 2;
pub const EACCES: i32 = 13;

#[derive(Default)]
pub struct FaultState {
    pub faults: Vec<Fault>,
    /// Every operation: what, on which path, on which thread.
    pub log: Vec<(Op, PathBuf, String)>,
    /// While true, writes wait.
    pub blocked: bool,
    /// While set, operations of this kind on paths containing this wait (see `FaultFs::gate`).
    pub gate: Option<(Op, String)>,
    /// Writes waiting at the gate now.
    pub waiting: u32,
    /// Each write is made as two, with this pause between (a write the kernel cut short).
    pub split_writes: Option<Duration>,
}

type Hook = Arc<dyn Fn() + Send + Sync>;

/// The real file system with injectable errors, an operation log, a gate that holds writes, and
/// a hook run after every operation that can change the directory.
#[derive(Clone, Default)]
pub struct FaultFs {
    /// The real one underneath (its clones share the directories it holds open).
    pub real: RealFs,
    pub state: Arc<(Mutex<FaultState>, Condvar)>,
    pub after_change: Option<Hook>,
    /// Run in the pause of a split write, after its first half reached the file.
    pub mid_write: Option<Hook>,
}

impl FaultFs {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn inject(&self, op: Op, errno: i32, times: u32) {
        self.inject_on(op, "", errno, times, false);
    }

    pub fn inject_on(&self, op: Op, path_contains: &str, errno: i32, times: u32, partial: bool) {
        let mut s = self.state.0.lock().unwrap();
        s.faults.push(Fault { op, path_contains: path_contains.into(), errno, times, partial });
    }

    pub fn clear_faults(&self) {
        self.state.0.lock().unwrap().faults.clear();
    }

    pub fn split_writes(&self, pause: Duration) {
        self.state.0.lock().unwrap().split_writes = Some(pause);
    }

    /// Holds operations `op` on paths containing `path_contains` until [`FaultFs::open_gate`];
    /// an injected fault for them is returned once they pass.
    pub fn gate(&self, op: Op, path_contains: &str) {
        self.state.0.lock().unwrap().gate = Some((op, path_contains.into()));
    }

    pub fn open_gate(&self) {
        self.state.0.lock().unwrap().gate = None;
        self.state.1.notify_all();
    }

    /// Operations waiting at a gate (of [`FaultFs::block_writes`] or [`FaultFs::gate`]) now.
    pub fn writes_waiting(&self) -> u32 {
        self.state.0.lock().unwrap().waiting
    }

    pub fn block_writes(&self, blocked: bool) {
        self.state.0.lock().unwrap().blocked = blocked;
        self.state.1.notify_all();
    }

    pub fn log(&self) -> Vec<(Op, PathBuf, String)> {
        self.state.0.lock().unwrap().log.clone()
    }

    /// Logs the operation and returns the injected fault, if any.
    fn check(&self, op: Op, path: &Path) -> Option<Fault> {
        let thread = std::thread::current().name().unwrap_or("?").to_owned();
        let mut s = self.state.0.lock().unwrap();
        s.log.push((op, path.to_path_buf(), thread));
        let gated = |s: &FaultState| {
            (op == Op::Write && s.blocked)
                || s.gate.as_ref().is_some_and(|(g, p)| *g == op && path.to_string_lossy().contains(p.as_str()))
        };
        while gated(&s) {
            s.waiting += 1;
            s = self.state.1.wait(s).unwrap();
            s.waiting -= 1;
        }
        let hit = s
            .faults
            .iter_mut()
            .find(|f| f.op == op && f.times > 0 && path.to_string_lossy().contains(&f.path_contains))?;
        hit.times -= 1;
        Some(hit.clone())
    }

    fn run<T>(&self, op: Op, path: &Path, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        if let Some(fault) = self.check(op, path) {
            return Err(io::Error::from_raw_os_error(fault.errno));
        }
        let r = f();
        if let Some(hook) = &self.after_change {
            hook();
        }
        r
    }
}

struct FaultFile {
    fs: FaultFs,
    path: PathBuf,
    inner: Box<dyn AppendFile>,
}

impl AppendFile for FaultFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if let Some(fault) = self.fs.check(Op::Write, &self.path) {
            if fault.partial {
                self.inner.write_all(&buf[..buf.len() / 2])?;
            }
            return Err(io::Error::from_raw_os_error(fault.errno));
        }
        let split = self.fs.state.0.lock().unwrap().split_writes;
        let r = match split {
            Some(pause) if buf.len() > 1 => self.inner.write_all(&buf[..buf.len() / 2]).and_then(|_| {
                if let Some(hook) = &self.fs.mid_write {
                    hook();
                }
                std::thread::sleep(pause);
                self.inner.write_all(&buf[buf.len() / 2..])
            }),
            _ => self.inner.write_all(buf),
        };
        if let Some(hook) = &self.fs.after_change {
            hook();
        }
        r
    }

    fn sync(&mut self) -> io::Result<()> {
        let path = self.path.clone();
        let inner = &mut self.inner;
        self.fs.run(Op::Sync, &path, || inner.sync())
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let path = self.path.clone();
        let inner = &mut self.inner;
        self.fs.run(Op::SetLen, &path, || inner.set_len(len))
    }

    fn unlinked(&self) -> bool {
        self.inner.unlinked()
    }
}

impl Fs for FaultFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.run(Op::CreateDir, path, || self.real.create_dir_all(path))
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let inner = self.run(Op::Create, path, || self.real.create_new(path))?;
        Ok(Box::new(FaultFile { fs: self.clone(), path: path.to_path_buf(), inner }))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.run(Op::Read, path, || self.real.read(path))
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.run(Op::ReadDir, path, || self.real.read_dir(path))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.run(Op::Rename, from, || self.real.rename(from, to))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.run(Op::Remove, path, || self.real.remove_file(path))
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.run(Op::Truncate, path, || self.real.truncate(path, len))
    }

    fn exists(&self, path: &Path) -> bool {
        self.real.exists(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.run(Op::SyncDir, path, || self.real.sync_dir(path))
    }
}

pub fn fault_options(clock: &FakeClock, fs: &FaultFs) -> StorageOptions {
    StorageOptions { clock: clock.wall(), fs: Arc::new(fs.clone()), ..StorageOptions::default() }
}

/// A storage with [`small_config`] on a fresh directory, over the fault file system.
pub struct FaultSetup {
    /// Removed when dropped: keep it (bind it to a named variable) for the test's length.
    pub dir: TempDir,
    pub clock: FakeClock,
    pub fs: FaultFs,
    pub config: Config,
    pub storage: Storage,
}

pub fn with_faults() -> FaultSetup {
    let (dir, clock) = setup();
    let fs = FaultFs::new();
    let config = small_config(dir.path());
    let storage = Storage::open(&config, fault_options(&clock, &fs)).unwrap();
    FaultSetup { dir, clock, fs, config, storage }
}
