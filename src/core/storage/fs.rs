//! The file-system seam: every file operation the storage makes goes through [`Fs`], so tests can
//! inject a full disk, a removed directory or a denied permission at any step, and watch every
//! write (the quota property test checks the directory after each one).

mod at;

use std::ffi::{CStr, CString, OsStr};
use std::fs::{self, DirBuilder, File, Permissions};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

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
    /// Whether the open file has no name left (removed, alone or with its directory): writes to
    /// it would still succeed and land nowhere. Asked of the open file, not by name, so it costs
    /// no path lookup; a file renamed away keeps its name elsewhere and is not unlinked. False when
    /// it cannot be told (the next write reports what is wrong).
    fn unlinked(&self) -> bool;
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
    /// How many times a directory held open was found removed and opened again at its path
    /// (another directory put in its place, or one created again): what was in the old one is
    /// gone. Zero for a file system that holds nothing open.
    fn dirs_replaced(&self) -> u64 {
        0
    }
}

/// The real file system. It never goes through a symbolic link inside the storage, nor into a
/// directory of another user, and it looks no path up per operation: each directory it works in
/// (`rum/`, `rum/pending/`) is opened once (`O_DIRECTORY | O_NOFOLLOW`: a link is refused) and
/// checked on the open descriptor (fstat: a directory owned by the process's effective user, or
/// the one [`RealFs::owned_by`] names), then held; every file operation is made relative to it
/// (`openat`, `renameat`, `unlinkat`, `fstatat`, listing and fsync through the descriptor). A
/// file is created with `O_EXCL | O_NOFOLLOW`, and one read or truncated must be a regular file
/// (not a link, a FIFO or a directory: checked with fstat on what was opened).
///
/// A directory already held is opened again only when an operation in it fails and the
/// directory is found removed (`ENOENT` and no link to it left, or `ESTALE`): then it is opened
/// by path with the same checks (a directory in a held one, such as `pending/`, relative to that
/// one) and the operation is tried once more. So a directory removed under the storage is found
/// missing (and created again by the writer), while one replaced by a link or by another
/// directory without being removed (renamed away) keeps being used by descriptor: writes go on
/// into the directory that was checked, never through the link or into the one put in its place.
/// Clones share the held directories.
#[derive(Clone, Debug)]
pub struct RealFs {
    /// The uid every directory the storage uses must belong to.
    owner: u32,
    held: Arc<Held>,
}

/// The directories held open, by the path they were opened at. A directory let go (found
/// removed) keeps its entry, without a descriptor: a directory in it is still opened relative to
/// it (after it is opened again), never by a path through what took its place.
#[derive(Debug, Default)]
struct Held {
    dirs: Mutex<Vec<(PathBuf, Option<Arc<OwnedFd>>)>>,
    /// Directories opened (and checked) so far: see [`RealFs::directories_opened`].
    opened: AtomicU64,
    /// Of those, held ones found removed and opened again: see [`Fs::dirs_replaced`].
    replaced: AtomicU64,
}

/// More directories than the storage uses (two per storage); past it the oldest is let go.
const MAX_HELD: usize = 8;

impl RealFs {
    /// Directories must belong to the process's effective user.
    pub fn new() -> Self {
        Self::owned_by(effective_uid())
    }

    /// Directories must belong to `uid` (tests expect another owner than the directory's).
    pub fn owned_by(uid: u32) -> Self {
        Self { owner: uid, held: Arc::default() }
    }

    /// How many times a directory was opened by this file system (and its clones): once per
    /// directory used, and again only after one was found removed. Not per operation.
    pub fn directories_opened(&self) -> u64 {
        self.held.opened.load(Ordering::Relaxed)
    }

    fn dirs(&self) -> MutexGuard<'_, Vec<(PathBuf, Option<Arc<OwnedFd>>)>> {
        self.held.dirs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn cached(&self, dir: &Path) -> Option<Arc<OwnedFd>> {
        self.dirs().iter().find(|(p, _)| p == dir).and_then(|(_, fd)| fd.clone())
    }

    /// `dir` was held (it may have been let go since).
    fn known(&self, dir: &Path) -> bool {
        self.dirs().iter().any(|(p, _)| p == dir)
    }

    /// The descriptor of `dir`, and whether it was opened just now.
    fn held(&self, dir: &Path) -> io::Result<(Arc<OwnedFd>, bool)> {
        match self.cached(dir) {
            Some(fd) => Ok((fd, false)),
            None => Ok((self.reopen(dir)?, true)),
        }
    }

    /// Opens `dir` (again) and checks it: relative to its parent when the parent is or was held
    /// (so a link in place of the parent is not followed either: the parent is opened again
    /// first, with its checks), by path otherwise. What was held for `dir` is let go first, also
    /// when this fails.
    fn reopen(&self, dir: &Path) -> io::Result<Arc<OwnedFd>> {
        let was_held = self.dirs().iter_mut().find(|(p, _)| p == dir).is_some_and(|(_, fd)| fd.take().is_some());
        let fd = match (dir.parent(), dir.file_name()) {
            (Some(parent), Some(name)) if self.known(parent) => {
                let name = at::c_str(name)?;
                self.in_dir(parent, |p| {
                    at::open_dir_at(p, &name)
                        .map_err(|e| opened_no_dir(e, dir, || at::stat_at(p, &name).map(|st| at::file_type(&st))))
                })?
            }
            _ => at::open_dir_path(dir).map_err(|e| {
                opened_no_dir(e, dir, || {
                    let t = fs::symlink_metadata(dir)?.file_type();
                    Ok(if t.is_symlink() {
                        libc::S_IFLNK
                    } else if t.is_dir() {
                        libc::S_IFDIR
                    } else {
                        libc::S_IFREG
                    })
                })
            })?,
        };
        self.held.opened.fetch_add(1, Ordering::Relaxed);
        let st = at::fstat(fd.as_fd())?;
        if at::file_type(&st) != libc::S_IFDIR {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a directory", dir.display())));
        }
        if st.st_uid != self.owner {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is owned by uid {}, not by this process's user (uid {}); the storage uses only its \
                     own directories",
                    dir.display(),
                    st.st_uid,
                    self.owner
                ),
            ));
        }
        if was_held {
            self.held.replaced.fetch_add(1, Ordering::Relaxed);
        }
        let fd = Arc::new(fd);
        let mut dirs = self.dirs();
        match dirs.iter_mut().find(|(p, _)| p == dir) {
            Some((_, held)) => *held = Some(fd.clone()),
            None => {
                if dirs.len() >= MAX_HELD {
                    dirs.remove(0);
                }
                dirs.push((dir.to_path_buf(), Some(fd.clone())));
            }
        }
        Ok(fd)
    }

    /// Runs `op` on the descriptor of `dir`. If it fails because the directory was removed (or
    /// its handle went stale), `dir` is opened again by path, checked, and `op` runs once more.
    fn in_dir<T>(&self, dir: &Path, op: impl Fn(BorrowedFd<'_>) -> io::Result<T>) -> io::Result<T> {
        let (fd, fresh) = self.held(dir)?;
        match op(fd.as_fd()) {
            Err(e) if !fresh && gone(&e, fd.as_fd()) => op(self.reopen(dir)?.as_fd()),
            other => other,
        }
    }
}

/// The operation failed because its directory is gone: `ESTALE`, or `ENOENT` with the directory
/// itself removed (no name left for it). A missing file in a live directory is not.
fn gone(e: &io::Error, dir: BorrowedFd<'_>) -> bool {
    match e.raw_os_error() {
        Some(libc::ESTALE) => true,
        Some(libc::ENOENT) => removed(dir),
        _ => false,
    }
}

/// The directory held by `dir` was removed (rmdir leaves it no link), or cannot be examined.
fn removed(dir: BorrowedFd<'_>) -> bool {
    at::fstat(dir).map_or(true, |st| st.st_nlink == 0)
}

/// An error for a directory that could not be opened as one: what is there instead, when it
/// is a symbolic link or not a directory (`file_type`, from lstat, says which); other errors as
/// they are.
fn opened_no_dir(e: io::Error, dir: &Path, file_type: impl FnOnce() -> io::Result<libc::mode_t>) -> io::Error {
    if !matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ELOOP)) {
        return e;
    }
    let what = match file_type() {
        Ok(libc::S_IFLNK) => "is a symbolic link; the storage does not follow links",
        Ok(t) if t != libc::S_IFDIR => "is not a directory",
        _ => return e,
    };
    io::Error::new(io::ErrorKind::InvalidInput, format!("{} {what}", dir.display()))
}

/// The directory of `path` (`.` for a bare name) and its file name.
fn split(path: &Path) -> io::Result<(&Path, CString)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{} names no file", path.display())))?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok((dir, at::c_str(name)?))
}

/// Opens the file `name` in `dir` with `flags`, and checks that it is a regular file (a link is
/// not opened, a FIFO is not waited on: `O_NONBLOCK`, which changes nothing for a regular file).
fn open_regular(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int, path: &Path) -> io::Result<(File, u64)> {
    let not_regular =
        || io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display()));
    let fd = match at::open_at(dir, name, flags | libc::O_NONBLOCK, 0) {
        // A link (O_NOFOLLOW), a FIFO with no reader, a directory opened for writing.
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENXIO | libc::EISDIR)) => {
            return Err(not_regular())
        }
        other => other?,
    };
    let st = at::fstat(fd.as_fd())?;
    if at::file_type(&st) != libc::S_IFREG {
        return Err(not_regular());
    }
    Ok((File::from(fd), u64::try_from(st.st_size).unwrap_or(0)))
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

    fn unlinked(&self) -> bool {
        at::fstat(self.0.as_fd()).is_ok_and(|st| st.st_nlink == 0)
    }
}

impl Fs for RealFs {
    /// In a held directory, the new one is made with `mkdirat` (made again first if it was
    /// removed); otherwise by path ([`create_private_dir_all`]). Either way it is then opened,
    /// checked and held.
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let made = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) if self.known(parent) => {
                let name = at::c_str(name)?;
                let mkdir = |p: BorrowedFd<'_>| at::mkdir_at(p, &name, DIR_MODE);
                match self.in_dir(parent, mkdir) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        self.create_dir_all(parent)?;
                        self.in_dir(parent, mkdir)?
                    }
                    other => other?,
                }
            }
            _ => {
                create_private_dir_all(path)?;
                false
            }
        };
        let fd = self.reopen(path)?;
        if made {
            // Owner-only whatever the umask, as create_private_dir_all makes them.
            at::fchmod(fd.as_fd(), DIR_MODE)?;
        }
        Ok(())
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn AppendFile>> {
        let (dir, name) = split(path)?;
        let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_EXCL;
        let fd = self.in_dir(dir, |d| at::open_at(d, &name, flags, FILE_MODE))?;
        Ok(Box::new(RealFile(File::from(fd))))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let (dir, name) = split(path)?;
        let (mut file, len) = self.in_dir(dir, |d| open_regular(d, &name, libc::O_RDONLY, path))?;
        let mut data = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.read_to_end(&mut data)?;
        Ok(data)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.in_dir(path, |d| {
            // A removed directory lists as empty: say it is gone, as a lookup by path would.
            if removed(d) {
                return Err(io::Error::from_raw_os_error(libc::ENOENT));
            }
            let mut out = Vec::new();
            for (name, kind) in at::list(d)? {
                let Ok(name) = String::from_utf8(name) else { continue };
                let st = at::c_str(OsStr::new(&name)).and_then(|c| at::stat_at(d, &c));
                let is_file = match &st {
                    Ok(st) => at::file_type(st) == libc::S_IFREG,
                    Err(_) => kind == libc::DT_REG,
                };
                let len = st.map_or(0, |st| u64::try_from(st.st_size).unwrap_or(0));
                out.push(DirEntry { name, is_file, len });
            }
            Ok(out)
        })
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let (from_dir, from_name) = split(from)?;
        let (to_dir, to_name) = split(to)?;
        let (a, a_fresh) = self.held(from_dir)?;
        let (b, b_fresh) = self.held(to_dir)?;
        let attempt = |a: &OwnedFd, b: &OwnedFd| at::rename_at(a.as_fd(), &from_name, b.as_fd(), &to_name);
        match attempt(&a, &b) {
            Err(e) => {
                let a_gone = !a_fresh && gone(&e, a.as_fd());
                let b_gone = !b_fresh && gone(&e, b.as_fd());
                if !a_gone && !b_gone {
                    return Err(e);
                }
                let a = if a_gone { self.reopen(from_dir)? } else { a };
                let b = match (b_gone, from_dir == to_dir) {
                    (_, true) => a.clone(),
                    (true, false) => self.reopen(to_dir)?,
                    (false, false) => b,
                };
                attempt(&a, &b)
            }
            Ok(()) => Ok(()),
        }
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let (dir, name) = split(path)?;
        self.in_dir(dir, |d| at::unlink_at(d, &name))
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let (dir, name) = split(path)?;
        let (file, _) = self.in_dir(dir, |d| open_regular(d, &name, libc::O_WRONLY, path))?;
        file.set_len(len)
    }

    fn exists(&self, path: &Path) -> bool {
        split(path).is_ok_and(|(dir, name)| self.in_dir(dir, |d| at::stat_at(d, &name)).is_ok())
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.in_dir(path, |d| {
            // fsync of a removed directory succeeds and saves nothing: say it is gone.
            if removed(d) {
                return Err(io::Error::from_raw_os_error(libc::ENOENT));
            }
            at::fsync(d)
        })
    }

    fn dirs_replaced(&self) -> u64 {
        self.held.replaced.load(Ordering::Relaxed)
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
