//! The storage facade's own tests (`mod.rs`): its handles are shareable across JS threads, and when
//! the writer wakes and writes (rung, at the batch window, at a promised turn's end, once per
//! linger for a stream, at a flush). The files' rules are tested in `tests/storage_*.rs`.

use super::*;
use std::time::Instant;

/// The binding shares these across JS threads.
#[test]
fn the_public_handles_are_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<Storage>();
    shared::<StorageSink>();
    shared::<StorageOptions>();
    shared::<Batch>();
    shared::<StorageError>();
}

use std::sync::atomic::{AtomicU64, Ordering};

use crate::core::attrs::Attrs;
use crate::core::document::{ActionDocument, Common, Identity, ViewRef};
use crate::core::event::ActionType;
use crate::core::ids::IdGen;
use fs::{AppendFile, DirEntry};

/// The real file system, counting the appends made to files and the lookups of a name.
struct CountingFs {
    real: RealFs,
    appends: Arc<AtomicU64>,
    lookups: Arc<AtomicU64>,
}

struct CountingFile(Box<dyn AppendFile>, Arc<AtomicU64>);

impl AppendFile for CountingFile {
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.1.fetch_add(1, Ordering::SeqCst);
        self.0.write_all(buf)
    }
    fn sync(&mut self) -> std::io::Result<()> {
        self.0.sync()
    }
    fn set_len(&mut self, len: u64) -> std::io::Result<()> {
        self.0.set_len(len)
    }
    fn unlinked(&self) -> bool {
        self.0.unlinked()
    }
}

impl Fs for CountingFs {
    fn create_dir_all(&self, path: &Path) -> std::io::Result<()> {
        self.real.create_dir_all(path)
    }
    fn create_new(&self, path: &Path) -> std::io::Result<Box<dyn AppendFile>> {
        Ok(Box::new(CountingFile(self.real.create_new(path)?, self.appends.clone())))
    }
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.real.read(path)
    }
    fn read_dir(&self, path: &Path) -> std::io::Result<Vec<DirEntry>> {
        self.real.read_dir(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.real.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        self.real.remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> std::io::Result<()> {
        self.real.truncate(path, len)
    }
    fn exists(&self, path: &Path) -> bool {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        self.real.exists(path)
    }
    fn sync_dir(&self, path: &Path) -> std::io::Result<()> {
        self.real.sync_dir(path)
    }
}

fn action(seq: u64) -> Document {
    let common = Common {
        date: 1_700_000_000_000,
        identity: Arc::new(Identity::new("app", "svc", "1.0", None, "harmonyos")),
        session_id: Arc::from("session-1"),
        usr: None,
        connectivity: None,
        global: Arc::default(),
        attrs: Attrs::default(),
    };
    Document::Action(ActionDocument {
        common,
        view: ViewRef { id: Arc::from("view-1"), name: Arc::from("Home"), url: Arc::from("pages/Home") },
        id: IdGen::with_seed(seq).uuid(),
        action_type: ActionType::Custom,
        target_name: "button".into(),
    })
}

/// A storage on the real file system counting its appends; a 50 ms batch window, so an idle
/// writer with an active batch would wake up often.
fn counted(dir: &Path) -> (Storage, Arc<AtomicU64>) {
    counted_with(dir, StorageOptions::default().writer_linger, 50)
}

/// [`counted`] with the writer's linger and the batch window set (a seal writes the
/// compressed batch: an append of its own).
fn counted_with(dir: &Path, writer_linger: Duration, batch_window_ms: u64) -> (Storage, Arc<AtomicU64>) {
    let (storage, appends, _) = counting(dir, writer_linger, batch_window_ms);
    (storage, appends)
}

/// [`counted_with`], and the count of the names looked up.
fn counting(dir: &Path, writer_linger: Duration, batch_window_ms: u64) -> (Storage, Arc<AtomicU64>, Arc<AtomicU64>) {
    let appends = Arc::new(AtomicU64::new(0));
    let lookups = Arc::new(AtomicU64::new(0));
    let fs = Arc::new(CountingFs { real: RealFs::new(), appends: appends.clone(), lookups: lookups.clone() });
    let config = Config {
        storage_dir: dir.into(),
        application_id: "app".into(),
        batch_window_ms,
        tracking_consent: TrackingConsent::Granted,
        ..Config::default()
    };
    let storage = Storage::open(&config, StorageOptions { fs, writer_linger, ..StorageOptions::default() }).unwrap();
    assert_eq!(storage.flush(Duration::from_secs(10)), FlushOutcome::Done);
    (storage, appends, lookups)
}

fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn sleeps(storage: &Storage) -> u64 {
    storage.gate.bell.parks.load(Ordering::SeqCst)
}

#[test]
fn an_idle_writer_without_an_active_batch_sleeps_until_rung() {
    let dir = tempfile::tempdir().unwrap();
    let (storage, _) = counted(dir.path());
    let before = sleeps(&storage);
    std::thread::sleep(Duration::from_millis(300)); // six batch windows
    assert!(sleeps(&storage) <= before + 1, "no wake-up while idle: {} → {}", before, sleeps(&storage));
}

#[test]
fn an_active_batch_is_sealed_at_its_window_without_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let (storage, _) = counted(dir.path());
    storage.sink().write(action(0)).unwrap();
    let c = storage.counters();
    wait_for("the batch sealed by its window", || c.batches_sealed.get() == 1);
    let after_seal = sleeps(&storage);
    std::thread::sleep(Duration::from_millis(200)); // four windows, no batch left
    assert!(sleeps(&storage) <= after_seal + 1);
}

#[test]
fn documents_of_a_promised_turn_go_out_in_one_write_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let (storage, appends) = counted(dir.path());
    let sink = storage.sink();
    let c = storage.counters();
    // Counted once the writer has gone to sleep after the open's flush (its sleeps stay put
    // for a while): a later sleep is a wake-up.
    let settled = std::cell::Cell::new(sleeps(&storage));
    wait_for("the writer asleep", || {
        std::thread::sleep(Duration::from_millis(20));
        let now = sleeps(&storage);
        settled.replace(now) == now && now >= 1
    });
    let (writes, wakes) = (appends.load(Ordering::SeqCst), sleeps(&storage));
    sink.turn_will_end();
    sink.write(action(0)).unwrap(); // the first processing, then the busy report
    sink.turn_busy(true);
    for seq in 1..10 {
        sink.write(action(seq)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(c.documents_received.get(), 0, "nothing taken before the turn's end");
    assert_eq!(sleeps(&storage), wakes, "and the writer was not woken");
    sink.turn_busy(false);
    wait_for("the turn's documents", || c.events_on_disk.get() == 10);
    assert_eq!(appends.load(Ordering::SeqCst), writes + 1, "one write for the whole turn");
}

#[test]
fn a_lone_document_outside_a_turn_costs_one_write() {
    let dir = tempfile::tempdir().unwrap();
    let (storage, appends) = counted(dir.path());
    let c = storage.counters();
    let writes = appends.load(Ordering::SeqCst);
    storage.sink().write(action(0)).unwrap();
    wait_for("the document", || c.events_on_disk.get() == 1);
    assert_eq!(appends.load(Ordering::SeqCst), writes + 1);
}

#[test]
fn a_write_looks_up_no_name() {
    // Whether the active batch is still there is asked of its open file, not by name.
    let dir = tempfile::tempdir().unwrap();
    let (storage, appends, lookups) = counting(dir.path(), Duration::ZERO, 60_000);
    let (writes, looked) = (appends.load(Ordering::SeqCst), lookups.load(Ordering::SeqCst));
    for seq in 0..10 {
        storage.sink().write(action(seq)).unwrap();
        assert_eq!(storage.flush(Duration::from_secs(10)), FlushOutcome::Done);
    }
    assert!(appends.load(Ordering::SeqCst) - writes >= 10, "a write per document at least");
    assert_eq!(lookups.load(Ordering::SeqCst) - looked, 0, "and no name looked up");
}

/// Sends `n` documents outside any turn, one every `every`.
fn stream(storage: &Storage, from: u64, n: u64, every: Duration) {
    let sink = storage.sink();
    for seq in from..from + n {
        sink.write(action(seq)).unwrap();
        std::thread::sleep(every);
    }
}

#[test]
fn a_stream_of_lone_documents_is_written_once_per_linger_not_once_per_document() {
    let dir = tempfile::tempdir().unwrap();
    let (storage, appends) = counted_with(dir.path(), Duration::from_millis(200), 60_000);
    let c = storage.counters();
    let (writes, wakes) = (appends.load(Ordering::SeqCst), sleeps(&storage));
    // 40 documents over about 200 ms (a sleep may last longer on a loaded machine: the
    // bounds below count lingers by the time the stream took). A long batch window: no seal
    // (whose compressed file would be an append of its own).
    let started = Instant::now();
    stream(&storage, 0, 40, Duration::from_millis(5));
    let lingers = u64::try_from(started.elapsed().as_millis() / 200).unwrap_or(u64::MAX);
    // Without a flush: the last linger's end writes what came.
    wait_for("the stream on disk", || c.events_on_disk.get() == 40);
    // The first two documents are written as they come (the second starts the linger), then
    // one write per linger.
    let (w, k) = (appends.load(Ordering::SeqCst) - writes, sleeps(&storage) - wakes);
    assert!(w <= 3 + lingers, "{w} writes for 40 documents in {lingers} lingers");
    assert!(k <= 4 + lingers, "{k} wake-ups for 40 documents in {lingers} lingers");
}

#[test]
fn a_lone_document_is_written_at_once_even_with_a_long_linger() {
    let dir = tempfile::tempdir().unwrap();
    let (storage, _) = counted_with(dir.path(), Duration::from_secs(600), 60_000);
    let c = storage.counters();
    // Two drains without documents (flushes) make no stream.
    for _ in 0..2 {
        assert_eq!(storage.flush(Duration::from_secs(10)), FlushOutcome::Done);
    }
    storage.sink().write(action(0)).unwrap();
    // wait_for gives up after 10 s, far below the linger.
    wait_for("the lone document", || c.events_on_disk.get() == 1);
}

#[test]
fn a_flush_ends_a_linger_and_a_turn_end_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let (storage, _) = counted_with(dir.path(), Duration::from_secs(600), 60_000);
    let c = storage.counters();
    let sink = storage.sink();
    // Two lone documents: the second one's write is the second of a stream (whether or not
    // it came in time to be written with the first), so the writer lingers after it.
    sink.write(action(0)).unwrap();
    wait_for("the first", || c.events_on_disk.get() == 1);
    sink.write(action(1)).unwrap();
    wait_for("the second", || c.events_on_disk.get() == 2);
    stream(&storage, 2, 2, Duration::ZERO);
    // A busy turn that ends: its end does not wake a lingering writer.
    sink.turn_will_end();
    sink.write(action(4)).unwrap();
    sink.turn_busy(true);
    sink.turn_busy(false);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(c.events_on_disk.get(), 2, "the stream waits for the linger's end");
    // A flush does (it would time out otherwise).
    assert_eq!(storage.flush(Duration::from_secs(10)), FlushOutcome::Done);
    assert_eq!(c.events_on_disk.get(), 5);
}
