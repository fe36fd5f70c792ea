//! Actions kept under the default 4 MiB quota after bursts with no uploader, and the seal's cost,
//! per `batchEncoding`. Prints ratios measured in this run; asserts nothing.
//! Run: `cargo run --release --no-default-features --example gzip_quota`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rum_native::core::attrs::Attrs;
use rum_native::core::config::{BatchEncoding, Config};
use rum_native::core::document::{ActionDocument, Common, Document, Identity, ViewRef};
use rum_native::core::event::{ActionType, Attributes};
use rum_native::core::ids::IdGen;
use rum_native::core::seam::DocumentSink;
use rum_native::core::storage::{Storage, StorageOptions};
use serde_json::Value;

/// The reference burst's action: a 350-character attribute, unique ids.
fn action(i: usize, identity: &Arc<Identity>, text: &str) -> Document {
    let mut attrs = Attributes::new();
    attrs.insert("message".into(), Value::from(text));
    attrs.insert("seq".into(), Value::from(i));
    Document::Action(ActionDocument {
        common: Common {
            date: 1_700_000_000_000 + i as i64 * 3,
            identity: identity.clone(),
            session_id: Arc::from("5f3c1c7e-0000-4000-8000-000000000001"),
            usr: None,
            connectivity: None,
            global: Arc::new(Attributes::new()),
            attrs: Attrs::from_map(&attrs),
        },
        view: ViewRef { id: Arc::from("view-1"), name: Arc::from("Chat"), url: Arc::from("pages/Chat") },
        id: IdGen::with_seed(i as u64).uuid(),
        action_type: ActionType::Tap,
        target_name: "sync message".into(),
    })
}

fn main() {
    let identity = Arc::new(Identity::new("bench-app", "bench", "1.0.0", Some("prod"), "harmonyos"));
    let text: String = "lorem ipsum dolor sit amet, ".chars().cycle().take(350).collect();
    for encoding in [BatchEncoding::Identity, BatchEncoding::Gzip] {
        for n in [3_700usize, 37_000, 100_000] {
            let dir = tempfile::tempdir().unwrap();
            let config = Config {
                storage_dir: dir.path().into(),
                application_id: "bench-app".into(),
                batch_encoding: encoding,
                ..Config::default()
            };
            let storage = Storage::open(&config, StorageOptions::default()).unwrap();
            let sink = storage.sink();
            let started = Instant::now();
            for i in 0..n {
                sink.write(action(i, &identity, &text)).unwrap();
            }
            storage.flush(Duration::from_secs(60));
            let took = started.elapsed();
            let c = storage.counters();
            println!(
                "{:8} {n:>7} actions: kept {:>7} ({:5.1}%), {:>7} bytes on disk, {} batches sealed, writer {:.0} ms ({:.2} µs/doc)",
                encoding.as_str(),
                c.events_on_disk.get(),
                100.0 * c.events_on_disk.get() as f64 / n as f64,
                c.bytes_on_disk.get(),
                c.batches_sealed.get(),
                took.as_secs_f64() * 1e3,
                took.as_secs_f64() * 1e6 / n as f64,
            );
            let mut uploaded = 0;
            while let Ok(Some(b)) = storage.next_batch() {
                uploaded += b.event_count;
                storage.complete_batch(&b.id, true).unwrap();
            }
            assert_eq!(uploaded, c.events_delivered.get());
        }
    }
}
