//! The file-system seam: every file operation the storage makes goes through [`Fs`], so tests can
//! inject a full disk, a removed directory or a denied permission at any step, and watch every
//! write (the quota property test checks the directory after each one).

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

/// Batch and buffer files are readable by the app only.
pub const FILE_MODE: u32 = 0o600;
/// Directories the storage creates are owner-only too.
pub const DIR_MODE: u32 = 0o700;

/// One directory entry: its file name and whether it is a regular file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub is_file: bool,
}

/// A file opened for appending.
pub trait AppendFile: Send {
    /// Appends all of `buf` (one `write` call may take part of it; the implementation loops).
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;
    /// fsync: the data survives a power cut, not only a killed process.
    fn sync(&mut self) -> io::Result<()>;
    /// Cuts the file back to `len` bytes (after a failed write, so no partial line stays).
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

/// The file operations of the storage. Paths are absolute or relative to the process directory.
pub trait Fs: Send + Sync {
    /// Creates the directory and its parents, owner-only.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Creates a new file (failing if it exists), owner-only, opened for appending.
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>>;
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The entries of a directory, in no particular order. Names that are not UTF-8 are skipped
    /// (the storage never creates one).
    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>>;
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Cuts a closed file back to `len` bytes (recovery of a torn last line).
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()>;
    /// Whether the path exists (a file whose directory was removed under the writer does not).
    fn exists(&self, path: &Path) -> bool;
    /// fsync of a directory, so renames and new names in it survive a power cut.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
}

/// The real file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct RealFs;

struct RealFile(File);

impl AppendFile for RealFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
}

impl Fs for RealFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        DirBuilder::new().recursive(true).mode(DIR_MODE).create(path)
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let file = OpenOptions::new().append(true).create_new(true).mode(FILE_MODE).open(path)?;
        Ok(Box::new(RealFile(file)))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(path)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else { continue };
            let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
            out.push(DirEntry { name, is_file });
        }
        Ok(out)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        OpenOptions::new().write(true).open(path)?.set_len(len)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }
}

/// Removes a file; one that is already gone counts as removed.
pub(crate) fn remove_if_exists(fs: &dyn Fs, path: &Path) -> io::Result<()> {
    match fs.remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}
