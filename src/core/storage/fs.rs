//! The file-system seam: every file operation the storage makes goes through [`Fs`], so tests can
//! inject a full disk, a removed directory or a denied permission at any step, and watch every
//! write (the quota property test checks the directory after each one).

use std::fs::{self, DirBuilder, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Batch and buffer files are readable by the app only.
pub const FILE_MODE: u32 = 0o600;
/// Directories the storage creates are owner-only too.
pub const DIR_MODE: u32 = 0o700;

/// One directory entry: its file name and whether it is a regular file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub is_file: bool,
    /// Its size when listed (0 when that could not be read): what recovery decides on before it
    /// reads a file.
    pub len: u64,
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
    /// Creates the directory and its parents, owner-only. The directory itself must be a real
    /// directory, not a symbolic link to one, and belong to the process's user.
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

/// The real file system. It never goes through a symbolic link inside the storage, nor into a
/// directory of another user: before every operation the directory of the path (`rum/` or
/// `rum/pending/`) is checked to be a real directory (lstat) owned by the process's effective
/// user (or the one [`RealFs::owned_by`] names), and a file read or truncated must be a regular file, not a link or
/// a FIFO. The checks are made by path, before each use (the storage does not open the directory
/// and work relative to it with `openat`): a link put in place between the check and the use is
/// not caught, which needs the app's own user (the directory is 0700).
#[derive(Clone, Copy, Debug)]
pub struct RealFs {
    /// The uid every directory the storage uses must belong to.
    owner: u32,
}

impl RealFs {
    /// Directories must belong to the process's effective user.
    pub fn new() -> Self {
        Self::owned_by(effective_uid())
    }

    /// Directories must belong to `uid` (tests expect another owner than the directory's).
    pub fn owned_by(uid: u32) -> Self {
        Self { owner: uid }
    }

    /// `path` is a directory itself, not a symbolic link to one (nor anything else), and belongs
    /// to `self.owner`: a directory of another user could be read or changed by that user.
    fn real_dir(&self, path: &Path) -> io::Result<()> {
        let meta = fs::symlink_metadata(path)?;
        if meta.file_type().is_symlink() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is a symbolic link; the storage does not follow links", path.display()),
            ));
        }
        if !meta.is_dir() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a directory", path.display())));
        }
        if meta.uid() != self.owner {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is owned by uid {}, not by this process's user (uid {}); the storage uses only its \
                     own directories",
                    path.display(),
                    meta.uid(),
                    self.owner
                ),
            ));
        }
        Ok(())
    }

    /// The directory of `path` is a real directory of `self.owner`.
    fn real_parent(&self, path: &Path) -> io::Result<()> {
        match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => self.real_dir(dir),
            _ => Ok(()),
        }
    }

    /// `path` is a regular file (not a link, a FIFO or a directory) in a real directory.
    fn regular_file(&self, path: &Path) -> io::Result<()> {
        self.real_parent(path)?;
        if !fs::symlink_metadata(path)?.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a regular file", path.display()),
            ));
        }
        Ok(())
    }
}

impl Default for RealFs {
    /// [`RealFs::new`]: the process's effective user.
    fn default() -> Self {
        Self::new()
    }
}

/// The process's effective uid: the owner of the files and directories it creates.
fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and always succeeds (POSIX).
    unsafe { libc::geteuid() }
}

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
        create_private_dir_all(path)?;
        self.real_dir(path)
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        self.real_parent(path)?;
        let file = OpenOptions::new().append(true).create_new(true).mode(FILE_MODE).open(path)?;
        Ok(Box::new(RealFile(file)))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.regular_file(path)?;
        fs::read(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.real_dir(path)?;
        let mut out = Vec::new();
        for entry in fs::read_dir(path)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else { continue };
            let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
            let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
            out.push(DirEntry { name, is_file, len });
        }
        Ok(out)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.real_parent(from)?;
        self.real_parent(to)?;
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.real_parent(path)?;
        fs::remove_file(path)
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.regular_file(path)?;
        OpenOptions::new().write(true).open(path)?.set_len(len)
    }

    fn exists(&self, path: &Path) -> bool {
        self.real_parent(path).is_ok() && fs::symlink_metadata(path).is_ok()
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.real_dir(path)?;
        File::open(path)?.sync_all()
    }
}

/// `path` with `.` dropped and each `..` taking away the component before it, without asking the
/// file system: `base/x/../s` is `base/s`, so creating it does not create `base/x` on the way.
/// (A `..` after a symbolic link means the link's parent here, not its target's.) Leading `..`
/// of a relative path stay; `/..` is `/`.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Creates `path` and each missing parent with mode [`DIR_MODE`] whatever the umask (each new
/// directory is chmod-ed after it is made); existing directories are left as they are. A
/// component that exists but is not a directory, or is a symbolic link to nothing, is an error
/// that says so (instead of the bare "File exists" of `mkdir`).
pub fn create_private_dir_all(path: &Path) -> io::Result<()> {
    let mut prefix = PathBuf::new();
    for c in path.components() {
        prefix.push(c);
        if matches!(c, Component::RootDir | Component::Prefix(_) | Component::CurDir | Component::ParentDir) {
            continue;
        }
        match fs::metadata(&prefix) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => return Err(not_a_dir(&prefix)),
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            Err(_) => {}
        }
        if let Ok(target) = fs::read_link(&prefix) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is a symbolic link to {}, which does not exist", prefix.display(), target.display()),
            ));
        }
        match DirBuilder::new().mode(DIR_MODE).create(&prefix) {
            Ok(()) => fs::set_permissions(&prefix, Permissions::from_mode(DIR_MODE))?,
            // Made by someone else meanwhile: fine if it is a directory.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if !fs::metadata(&prefix).is_ok_and(|m| m.is_dir()) {
                    return Err(not_a_dir(&prefix));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn not_a_dir(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::AlreadyExists, format!("{} exists and is not a directory", path.display()))
}

/// Removes a file; one that is already gone counts as removed.
pub(crate) fn remove_if_exists(fs: &dyn Fs, path: &Path) -> io::Result<()> {
    match fs.remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_without_asking_the_file_system() {
        for (given, want) in [
            ("/base/x/../s", "/base/s"),
            ("/base/./s/", "/base/s"),
            ("/../a", "/a"),
            ("a/../../b", "../b"),
            ("a/..", "."),
            ("../a/b/..", "../a"),
        ] {
            assert_eq!(normalize_lexically(Path::new(given)), PathBuf::from(want), "{given}");
        }
    }
}
