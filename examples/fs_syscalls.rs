//! File-system system calls per written document: writes `N` actions (default 1000) one at a
//! time, each appended before the next is sent, then one flush, into a fresh temporary directory.
//! Run: `cargo build --no-default-features --example fs_syscalls` and
//! `strace -f -c -e trace=%file,write,fsync target/debug/examples/fs_syscalls [N]`; compare with
//! N = 0 (open and close only). Asserts nothing.

use std::sync::Arc;
use std::time::Duration;

use rum_native::core::attrs::Attrs;
use rum_native::core::config::Config;
use rum_native::core::document::{ActionDocument, Common, Document, Identity, ViewRef};
use rum_native::core::event::{ActionType, Attributes};
use rum_native::core::ids::IdGen;
use rum_native::core::seam::DocumentSink;
use rum_native::core::storage::{Storage, StorageOptions};
use serde_json::Value;

fn action(i: u64, identity: &Arc<Identity>) -> Document {
    let mut attrs = Attributes::new();
    attrs.insert("seq".into(), Value::from(i));
    Document::Action(ActionDocument {
        common: Common {
            date: 1_700_000_000_000 + i as i64,
            identity: identity.clone(),
            session_id: Arc::from("session-1"),
            usr: None,
            connectivity: None,
            global: Arc::new(Attributes::new()),
            attrs: Attrs::from_map(&attrs),
        },
        view: ViewRef { id: Arc::from("view-1"), name: Arc::from("Home"), url: Arc::from("pages/Home") },
        id: IdGen::with_seed(i).uuid(),
        action_type: ActionType::Custom,
        target_name: "button".into(),
    })
}

fn main() {
    std::env::set_var("RUM_NATIVE_QUIET", "1");
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = Config {
        storage_dir: dir.path().into(),
        application_id: "app".into(),
        batch_max_bytes: 4 << 20,
        ..Config::default()
    };
    let storage = Storage::open(&config, StorageOptions::default()).expect("open");
    let identity = Arc::new(Identity::new("app", "svc", "1.0", None, "harmonyos"));
    let sink = storage.sink();
    let counters = storage.counters();
    for i in 0..n {
        sink.write(action(i, &identity)).expect("write");
        // Each document written out on its own (appended, not sealed): the writer's per-write path.
        while counters.documents_written.get() <= i {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    storage.flush(Duration::from_secs(5));
    drop(storage);
}
