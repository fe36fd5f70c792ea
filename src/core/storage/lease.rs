//! One storage per directory per process: two writers would break the quota and the order of
//! lines ([`StorageError::AlreadyOpen`]).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use super::error::StorageError;

/// Directories open in this process.
static OPEN_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The right to write one directory, released when dropped.
pub(crate) struct DirLease(PathBuf);

impl DirLease {
    pub fn acquire(root: &Path) -> Result<Self, StorageError> {
        let key = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let mut open = OPEN_DIRS.lock().unwrap_or_else(PoisonError::into_inner);
        if open.contains(&key) {
            return Err(StorageError::AlreadyOpen(root.to_path_buf()));
        }
        open.push(key.clone());
        Ok(Self(key))
    }
}

impl Drop for DirLease {
    fn drop(&mut self) {
        let mut open = OPEN_DIRS.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|p| p != &self.0);
    }
}
