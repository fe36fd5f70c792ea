//! The storage layer's error type (one enum per layer). Only `open` and the upload side
//! return it; write failures never do: they are counted, logged and reported by `flush()`.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::core::config::ConfigError;

#[derive(Debug)]
pub enum StorageError {
    /// A setting breaks an invariant (checked by `Config::validate` at open).
    Config(ConfigError),
    /// A file operation failed: what was done, on which path, and why.
    Io { op: &'static str, path: PathBuf, source: io::Error },
    /// Another `Storage` of this process has this directory open: two writers would break the
    /// quota and the order of lines. Share the first one instead (one pipeline per directory).
    AlreadyOpen(PathBuf),
    /// `complete_batch` was given an id that is not a batch claimed by `next_batch`.
    UnknownBatch(String),
    /// The writer thread could not be started.
    Spawn(io::Error),
    /// The writer held the directory for longer than the upload side waits (a stalled disk);
    /// nothing changed: ask again later.
    Busy(std::time::Duration),
}

impl StorageError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io { op, path: path.into(), source }
    }
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config(e) => write!(f, "invalid storage setting {e}"),
            Self::Io { op, path, source } => write!(f, "could not {op} {}: {source}", path.display()),
            Self::AlreadyOpen(path) => {
                write!(f, "storage directory {} is already open in this process", path.display())
            }
            Self::UnknownBatch(id) => write!(f, "unknown batch id {id:?}: no claimed batch has this id"),
            Self::Spawn(e) => write!(f, "could not start the rum-writer thread: {e}"),
            Self::Busy(waited) => {
                write!(f, "the storage writer held the directory for over {} ms (a stalled disk?)", waited.as_millis())
            }
        }
    }
}

impl std::error::Error for StorageError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Config(e) => Some(e),
            Self::Io { source, .. } | Self::Spawn(source) => Some(source),
            Self::AlreadyOpen(_) | Self::UnknownBatch(_) | Self::Busy(_) => None,
        }
    }
}

impl From<ConfigError> for StorageError {
    fn from(e: ConfigError) -> Self {
        Self::Config(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_failed() {
        let e = StorageError::UnknownBatch("batch-1-2.ndjson".into());
        assert_eq!(e.to_string(), "unknown batch id \"batch-1-2.ndjson\": no claimed batch has this id");
        let e = StorageError::io("claim", "/d/rum/x", io::Error::from(io::ErrorKind::PermissionDenied));
        assert!(e.to_string().starts_with("could not claim /d/rum/x: "), "{e}");
    }
}
