//! The system calls of [`super::RealFs`]: each file operation relative to a directory held open
//! (`openat`, `renameat`, `unlinkat`, `fstatat`, `mkdirat`, `fdopendir`), so no path is looked up
//! again per operation. Thin wrappers: each returns the system call's own error (`errno`).

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What a directory is opened with: a directory itself (a symbolic link to one is refused), not
/// inherited by a child process.
const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

/// A name or path for a system call (one with a NUL byte cannot be one).
pub(super) fn c_str(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a file name with a NUL byte"))
}

/// The result of a call returning a descriptor: the descriptor, owned, or the error.
fn owned(fd: RawFd) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by a successful open/openat, so it is an open descriptor
    // nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The result of a call returning 0 or -1.
fn done(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Opens the directory at `path` (a symbolic link as its last component is refused).
pub(super) fn open_dir_path(path: &Path) -> io::Result<OwnedFd> {
    let path = c_str(path.as_os_str())?;
    // SAFETY: `path` is a NUL-terminated string that outlives the call; open has no other
    // precondition.
    owned(unsafe { libc::open(path.as_ptr(), DIR_FLAGS) })
}

/// Opens the directory `name` in `dir` (a symbolic link is refused).
pub(super) fn open_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: `dir` is an open descriptor for the call's length (borrowed) and `name` a
    // NUL-terminated string that outlives it.
    owned(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), DIR_FLAGS) })
}

/// Opens the file `name` in `dir` with `flags` (plus `O_NOFOLLOW | O_CLOEXEC`); `mode` is used
/// when `flags` create it.
pub(super) fn open_at(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `dir` is an open descriptor for the call's length and `name` a NUL-terminated
    // string that outlives it; the variadic mode is passed as the C `unsigned int` (mode_t
    // promoted), as openat reads it when O_CREAT is given.
    owned(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode as libc::c_uint) })
}

/// fstat of an open descriptor.
pub(super) fn fstat(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    let mut st = MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `fd` is open for the call's length and `st` points to writable memory the size of
    // a `stat`.
    done(unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) })?;
    // SAFETY: fstat succeeded, so it filled in the whole structure.
    Ok(unsafe { st.assume_init() })
}

/// fstatat of `name` in `dir`, not following a symbolic link (lstat relative to `dir`).
pub(super) fn stat_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<libc::stat> {
    let mut st = MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `dir` is open for the call's length, `name` is NUL-terminated and outlives it, and
    // `st` points to writable memory the size of a `stat`.
    done(unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), st.as_mut_ptr(), libc::AT_SYMLINK_NOFOLLOW) })?;
    // SAFETY: fstatat succeeded, so it filled in the whole structure.
    Ok(unsafe { st.assume_init() })
}

/// The file type bits of a `stat`.
pub(super) fn file_type(st: &libc::stat) -> libc::mode_t {
    st.st_mode & libc::S_IFMT
}

/// Creates the directory `name` in `dir` with `mode` (less the umask). False if something by
/// that name exists already.
pub(super) fn mkdir_at(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<bool> {
    // SAFETY: `dir` is open for the call's length and `name` is NUL-terminated and outlives it.
    match done(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) }) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Sets the permission bits of an open file or directory.
pub(super) fn fchmod(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    // SAFETY: `fd` is open for the call's length; fchmod has no other precondition.
    done(unsafe { libc::fchmod(fd.as_raw_fd(), mode as libc::mode_t) })
}

pub(super) fn rename_at(from_dir: BorrowedFd<'_>, from: &CStr, to_dir: BorrowedFd<'_>, to: &CStr) -> io::Result<()> {
    // SAFETY: both descriptors are open for the call's length and both names are NUL-terminated
    // strings that outlive it.
    done(unsafe { libc::renameat(from_dir.as_raw_fd(), from.as_ptr(), to_dir.as_raw_fd(), to.as_ptr()) })
}

/// Removes the file (not a directory) `name` from `dir`.
pub(super) fn unlink_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: `dir` is open for the call's length and `name` is NUL-terminated and outlives it.
    done(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) })
}

/// fsync of an open file or directory.
pub(super) fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: `fd` is open for the call's length; fsync has no other precondition.
    done(unsafe { libc::fsync(fd.as_raw_fd()) })
}

/// Sets this thread's `errno` to 0, so an error of `readdir` can be told from the end of the
/// listing.
fn clear_errno() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: __errno_location returns a valid pointer to this thread's errno (Linux libcs:
    // glibc, musl, OHOS' musl, bionic).
    unsafe {
        *libc::__errno_location() = 0;
    }
    #[cfg(any(target_vendor = "apple", target_os = "freebsd"))]
    // SAFETY: __error returns a valid pointer to this thread's errno.
    unsafe {
        *libc::__error() = 0;
    }
}

/// A directory stream, closed (with its descriptor) when dropped.
struct Stream(*mut libc::DIR);

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the pointer came from a successful fdopendir and is closed only here, once.
        unsafe { libc::closedir(self.0) };
    }
}

/// The names in `dir` (`.` and `..` left out), each with its `d_type`. The listing reads its own
/// descriptor of the directory (`openat(dir, ".")`: an open file description of its own, so two
/// listings at once do not share a position), never a path.
pub(super) fn list(dir: BorrowedFd<'_>) -> io::Result<Vec<(Vec<u8>, u8)>> {
    let fd = open_dir_at(dir, c".")?;
    // SAFETY: `fd` is an open directory descriptor; on success the stream owns it (released
    // from `fd` below), on failure it stays with `fd`, which closes it.
    let stream = unsafe { libc::fdopendir(fd.as_raw_fd()) };
    if stream.is_null() {
        return Err(io::Error::last_os_error());
    }
    let _ = fd.into_raw_fd();
    let stream = Stream(stream);
    let mut out = Vec::new();
    loop {
        clear_errno();
        // SAFETY: `stream.0` is an open stream used by this thread only.
        let entry = unsafe { libc::readdir(stream.0) };
        if entry.is_null() {
            return match io::Error::last_os_error() {
                e if e.raw_os_error().is_some_and(|n| n != 0) => Err(e),
                _ => Ok(out),
            };
        }
        // SAFETY: readdir returned a valid entry, unchanged until the next readdir or closedir
        // on this stream; `d_name` is NUL-terminated.
        let (name, kind) = unsafe { (CStr::from_ptr((*entry).d_name.as_ptr()).to_bytes(), (*entry).d_type) };
        if name != b"." && name != b".." {
            out.push((name.to_vec(), kind));
        }
    }
}
