//! One storage per directory per process: two writers would break the quota and the order of
//! lines ([`StorageError::AlreadyOpen`]). This table is the one answer to "is this directory open
//! in this process"; the registry shares an open pipeline and asks here for a new one.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::error::StorageError;

/// Directories open in this process.
static OPEN_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Notified whenever a lease is released.
static RELEASED: Condvar = Condvar::new();

/// The right to write one directory, released when dropped (the writer thread holds it until
/// it has finished, so a collected pipeline's writer still finishing keeps its directory).
pub(crate) struct DirLease(PathBuf);

impl DirLease {
    /// Takes the lease of `root`, waiting at most `wait` for a holder to release it (a pipeline's
    /// writer finishing in the background); past it, [`StorageError::AlreadyOpen`].
    pub fn acquire(root: &Path, wait: Duration) -> Result<Self, StorageError> {
        let key = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let deadline = Instant::now().checked_add(wait);
        let mut open = OPEN_DIRS.lock().unwrap_or_else(PoisonError::into_inner);
        while open.contains(&key) {
            let left = deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Err(StorageError::AlreadyOpen(root.to_path_buf()));
            }
            open = RELEASED.wait_timeout(open, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        open.push(key.clone());
        Ok(Self(key))
    }
}

impl Drop for DirLease {
    fn drop(&mut self) {
        let mut open = OPEN_DIRS.lock().unwrap_or_else(PoisonError::into_inner);
        open.retain(|p| p != &self.0);
        RELEASED.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_directory_is_refused_at_once_or_taken_when_its_holder_lets_go_within_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let held = DirLease::acquire(dir.path(), Duration::ZERO).unwrap();
        assert!(matches!(DirLease::acquire(dir.path(), Duration::ZERO), Err(StorageError::AlreadyOpen(_))));
        assert!(matches!(DirLease::acquire(dir.path(), Duration::from_millis(30)), Err(StorageError::AlreadyOpen(_))));
        let holder = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(held);
        });
        let started = Instant::now();
        let taken = DirLease::acquire(dir.path(), Duration::from_secs(10));
        assert!(taken.is_ok(), "taken once released");
        assert!(started.elapsed() < Duration::from_secs(10), "woken by the release, not by the deadline");
        holder.join().unwrap();
    }
}
