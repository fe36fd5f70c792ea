//! Process-wide pipelines keyed by their canonical storage directory (docs/design.md, "Threads").
//!
//! A host handle (the binding's `RumPipeline`) built on another JS thread (a TaskPool worker or a Worker on ArkTS,
//! worker_threads on Node) for the same `storageDir` attaches to the same scopes and writer, with
//! a dispatcher of its own for that thread's event loop. The entry lives while any handle
//! holds it; the last one to go shuts the writer down.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use once_cell::sync::Lazy;

use crate::log;

use super::config::Config;
use super::ids::is_uuid;
use super::seam::DocumentSink;
use super::sequencer::Sequencer;
use super::stats::DispatchCounters;
use super::storage::fs::{create_private_dir_all, normalize_lexically};
use super::storage::{Storage, StorageOptions};

/// The pipeline of one storage directory in this process: what every thread's handle of that
/// directory shares (its dispatchers are per thread).
pub struct Pipeline {
    pub config: Config,
    pub sequencer: Arc<Sequencer>,
    pub storage: Arc<Storage>,
}

static OPEN: Lazy<Mutex<HashMap<PathBuf, Weak<Pipeline>>>> = Lazy::new(|| Mutex::new(HashMap::new()));

/// Why a pipeline could not be opened.
#[derive(Debug)]
pub enum AttachError {
    /// The directory cannot be created or resolved.
    Dir(String),
    /// The directory is open with another application id.
    Conflict(String),
    /// Storage failed to open.
    Storage(String),
}

/// Opens the pipeline of `config.storage_dir`, or attaches to the one already open.
///
/// A pipeline whose last handle was collected may still be finishing its writes on its
/// writer thread (past `flushTimeoutMs`, the drop stops waiting and the writer goes on in the
/// background, holding the directory's lease). Opening the directory again meanwhile waits for
/// that lease, up to the new pipeline's `flushTimeoutMs`, instead of failing at once: the caller
/// only dropped a pipeline and made a new one. Other threads' attaches wait meanwhile (the map's
/// lock is held, so no two threads open the same directory).
pub fn attach(mut config: Config) -> Result<Arc<Pipeline>, AttachError> {
    // Lexically first: `base/x/../s` must not create `base/x` on the way.
    let dir = normalize_lexically(&config.storage_dir);
    create_private_dir_all(&dir).map_err(|e| AttachError::Dir(format!("cannot create {}: {e}", dir.display())))?;
    config.storage_dir = dir;
    let canonical = canonical(&config.storage_dir)?;
    config.storage_dir = canonical.clone();
    // A poisoned lock only means another thread panicked while holding it; the map is still valid.
    let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    open.retain(|_, w| w.strong_count() > 0);
    if let Some(existing) = open.get(&canonical).and_then(Weak::upgrade) {
        if existing.config.application_id != config.application_id {
            return Err(AttachError::Conflict(format!(
                "{} is already open for applicationId {:?}",
                canonical.display(),
                existing.config.application_id
            )));
        }
        if let Some(option) = existing.config.differing_option(&config) {
            return Err(AttachError::Conflict(format!(
                "{} is already open with another {option}: a pipeline on the same directory shares its \
                 scopes and writer, so give it the same options",
                canonical.display()
            )));
        }
        return Ok(existing);
    }
    let lease_wait = Duration::from_millis(config.flush_timeout_ms.into());
    let storage = Storage::open(&config, StorageOptions { lease_wait, ..StorageOptions::default() })
        .map_err(|e| AttachError::Storage(e.to_string()))?;
    if !is_uuid(&config.application_id) {
        // Accepted (intakes differ), but the RUM event format wants a UUID: say so once.
        log::warn(&format!(
            "applicationId {:?} is not a UUID: intakes that validate the RUM event format refuse its documents",
            config.application_id
        ));
    }
    let sink: Arc<dyn DocumentSink> = Arc::new(storage.sink());
    let sequencer = Sequencer::new(&config, sink, Arc::new(DispatchCounters::default()));
    let storage = Arc::new(storage);
    let pipeline = Arc::new(Pipeline { config, sequencer, storage });
    open.insert(canonical, Arc::downgrade(&pipeline));
    Ok(pipeline)
}

fn canonical(dir: &Path) -> Result<PathBuf, AttachError> {
    dir.canonicalize().map_err(|e| AttachError::Dir(format!("cannot resolve {}: {e}", dir.display())))
}
