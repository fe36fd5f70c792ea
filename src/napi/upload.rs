//! The upload side of `RumPipeline` (docs/design.md, "Upload"): `nextBatch` claims the oldest
//! sealed batch and hands it to JS, `completeBatch` deletes it or releases it for a retry. A fault
//! of the disk is logged and counted (`stats().uploadErrors`), never thrown: an uploader that does
//! not catch must not bring the app down.

use napi_ohos::bindgen_prelude::*;

use super::args::ArgError;
use super::js::{Js, Value};
use super::pipeline::{checked, BindingPipeline};
use super::throw;
use crate::core::storage::{Batch, StorageError};
use crate::log;

impl BindingPipeline {
    pub fn next_batch<'e>(&'e self, js: Js<'e>) -> Result<Option<Value<'e>>> {
        let batch = match self.pipeline.storage.next_batch() {
            Ok(Some(b)) => b,
            Ok(None) | Err(StorageError::Busy(_)) => return Ok(None),
            // A fault of the disk, not of the caller: an uploader that does not catch must not
            // bring the app down. Counted in stats().uploadErrors.
            Err(e) => {
                log::warn(&format!("nextBatch: {e}"));
                return Ok(None);
            }
        };
        let id = batch.id.clone();
        batch_object(js, batch).map(Some).inspect_err(|_| {
            // Nobody will complete this claim: release it so the next call returns it.
            let _ = self.pipeline.storage.complete_batch(&id, false);
        })
    }

    pub fn complete_batch<'e>(&'e self, js: Js<'e>, id: Value<'e>, delivered: Value<'e>) -> Result<()> {
        let r = self.args(js, "completeBatch");
        let (id, delivered) = checked(js, || Ok((r.string(id, "id")?, r.boolean(delivered, "delivered")?)))?;
        match self.pipeline.storage.complete_batch(&id, delivered) {
            Ok(()) => Ok(()),
            Err(e @ StorageError::UnknownBatch(_)) => Err(throw(js, ArgError::Range(format!("completeBatch: id {e}")))),
            // As in nextBatch: counted in stats().uploadErrors, logged, not thrown.
            Err(e) => {
                log::warn(&format!("completeBatch: {e}"));
                Ok(())
            }
        }
    }

    pub fn pending_batches(&self, _js: Js<'_>) -> Result<f64> {
        Ok(self.pipeline.storage.pending_batches() as f64)
    }
}

/// `{ id, encoding, body, eventCount, bytes }` for a claimed batch. The body's bytes move into
/// the ArrayBuffer without a copy where the engine allows external buffers (napi-ohos copies them
/// where it does not).
fn batch_object(js: Js<'_>, b: Batch) -> Result<Value<'_>> {
    let env = js.env();
    let mut out = Object::new(&env)?;
    out.set("id", b.id)?;
    out.set("encoding", b.encoding.as_str())?;
    out.set("eventCount", b.event_count as f64)?;
    out.set("bytes", b.bytes as f64)?;
    out.set("body", ArrayBuffer::from_data(&env, b.body)?)?;
    Ok(js.handle(&out))
}
