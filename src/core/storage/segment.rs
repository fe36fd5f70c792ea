//! A file being appended to: the active batch, or the active chunk of the pre-consent buffer.
//!
//! Lines are gathered in memory and written out in large writes (when [`WRITE_CHUNK`] bytes are
//! waiting, and whenever the writer's channel is empty), so a burst costs a few `write` calls
//! instead of one per document. The file is created on the first write-out, so an empty batch
//! file never exists. After a failed write the file is cut back to its last whole line and the
//! segment is closed: nothing is ever appended behind a partial line.

use std::io;
use std::path::{Path, PathBuf};

use super::fs::{AppendFile, Fs};
use super::io_context::{vanished, IoContext};
use super::names::FileId;

/// Write out once this many bytes are waiting; the floor the benchmark compares with writes in
/// chunks of the same size.
pub const WRITE_CHUNK: usize = 64 * 1024;

/// Bytes and lines: of a file, of lines waiting in memory, of what was lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub bytes: u64,
    pub events: u64,
}

pub(crate) struct Segment {
    path: PathBuf,
    file: Option<Box<dyn AppendFile>>,
    /// Bytes and lines known to be in the file.
    on_disk: u64,
    on_disk_events: u64,
    buf: Vec<u8>,
    buf_events: u64,
}

/// A write-out that failed. The lines that were waiting are lost; `residue` bytes of them may
/// remain in the file when it could not be cut back.
#[derive(Debug)]
pub(crate) struct WriteFailure {
    pub op: &'static str,
    pub error: io::Error,
    pub lost: Tally,
    pub residue: u64,
}

/// The outcome of a successful write-out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Written {
    /// The file's directory was gone and has been created again.
    pub recreated_dir: bool,
}

impl Segment {
    pub fn new(path: PathBuf) -> Self {
        Self { path, file: None, on_disk: 0, on_disk_events: 0, buf: Vec::new(), buf_events: 0 }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of the segment, written or waiting.
    pub fn bytes(&self) -> u64 {
        self.on_disk + self.buf.len() as u64
    }

    pub fn events(&self) -> u64 {
        self.on_disk_events + self.buf_events
    }

    /// What is known to be in the file.
    pub fn on_disk(&self) -> Tally {
        Tally { bytes: self.on_disk, events: self.on_disk_events }
    }

    pub fn waiting(&self) -> usize {
        self.buf.len()
    }

    /// Queues one whole line (`\n`-terminated).
    pub fn push(&mut self, line: &[u8]) {
        if self.buf.capacity() == 0 {
            self.buf.reserve(WRITE_CHUNK + line.len());
        }
        self.buf.extend_from_slice(line);
        self.buf_events += 1;
    }

    /// Writes the waiting lines. On failure they are dropped (counted by the caller) and the
    /// segment must be closed.
    pub fn write_out(&mut self, fs: &dyn Fs) -> Result<Written, WriteFailure> {
        if self.buf.is_empty() {
            return Ok(Written::default());
        }
        let mut written = Written::default();
        if self.file.is_none() {
            match create(fs, &self.path) {
                Ok((file, recreated_dir)) => {
                    self.file = Some(file);
                    written.recreated_dir = recreated_dir;
                }
                Err(error) => return Err(self.fail("create", error, false)),
            }
        }
        let Some(file) = self.file.as_mut() else {
            return Err(self.fail("create", io::Error::other("no file"), false));
        };
        match file.write_all(&self.buf) {
            Ok(()) => {
                self.on_disk += self.buf.len() as u64;
                self.on_disk_events += self.buf_events;
                self.buf.clear();
                self.buf_events = 0;
                Ok(written)
            }
            Err(error) => Err(self.fail("write", error, true)),
        }
    }

    /// fsync of what has been written.
    pub fn sync(&mut self) -> io::Result<()> {
        match self.file.as_mut() {
            Some(file) => file.sync(),
            None => Ok(()),
        }
    }

    /// Whether the open file still has its name (it may have been removed, with its directory or
    /// alone, while open: writes to it then succeed but land nowhere). Asked of the open file
    /// ([`AppendFile::unlinked`]): one fstat, no path lookup, before each write.
    pub fn file_linked(&self) -> bool {
        self.file.as_ref().is_none_or(|f| !f.unlinked())
    }

    /// Whether a file was created for this segment.
    pub fn has_file(&self) -> bool {
        self.file.is_some()
    }

    /// Moves the waiting lines to `other` (a fresh segment).
    fn move_waiting_to(&mut self, other: &mut Segment) {
        other.buf = std::mem::take(&mut self.buf);
        other.buf_events = std::mem::replace(&mut self.buf_events, 0);
    }

    fn fail(&mut self, op: &'static str, error: io::Error, wrote: bool) -> WriteFailure {
        let lost = Tally { bytes: self.buf.len() as u64, events: self.buf_events };
        self.buf.clear();
        self.buf_events = 0;
        // A failed write may have left part of the lines behind: cut back to the last whole line.
        let residue = match (wrote, self.file.as_mut()) {
            (true, Some(file)) => match file.set_len(self.on_disk) {
                Ok(()) => 0,
                Err(_) => lost.bytes,
            },
            _ => 0,
        };
        WriteFailure { op, error, lost, residue }
    }
}

/// A segment with its file id: the active batch, or the active chunk of the pre-consent buffer.
pub(crate) struct OpenFile {
    pub id: FileId,
    pub seg: Segment,
}

impl OpenFile {
    pub fn new(id: FileId, path: PathBuf) -> Self {
        Self { id, seg: Segment::new(path) }
    }

    /// Writes the waiting lines; a success ends a failure streak and notes a recreated directory
    /// in `io`. On failure the file must be closed.
    pub fn write_out(&mut self, io: &mut IoContext) -> Result<Written, WriteFailure> {
        let written = self.seg.write_out(io.fs())?;
        io.wrote_ok();
        if written.recreated_dir {
            io.note_dir_loss();
        }
        Ok(written)
    }

    /// fsync of what has been written; a failure is recorded.
    pub fn sync(&mut self, io: &mut IoContext) {
        if let Err(e) = self.seg.sync() {
            io.record_failure("fsync", self.seg.path(), &e);
        }
    }

    /// When the file was created but is gone (removed with its directory while open): records
    /// the failure and moves the waiting lines to a new file beside it, named by `name_of` for a
    /// new id. Returns what was lost with the old file.
    pub fn replace_if_vanished(&mut self, io: &mut IoContext, name_of: fn(FileId) -> String) -> Option<Tally> {
        if !self.seg.has_file() || self.seg.file_linked() {
            return None;
        }
        let lost = self.seg.on_disk();
        io.record_failure("write", self.seg.path(), &vanished());
        let id = io.new_id(io.now());
        let mut fresh = OpenFile::new(id, self.seg.path().with_file_name(name_of(id)));
        self.seg.move_waiting_to(&mut fresh.seg);
        *self = fresh;
        Some(lost)
    }
}

/// Creates the file; if its directory was removed, creates the directory again and retries once.
fn create(fs: &dyn Fs, path: &Path) -> io::Result<(Box<dyn AppendFile>, bool)> {
    match fs.create_new(path) {
        Ok(file) => Ok((file, false)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let dir = path.parent().ok_or(e)?;
            fs.create_dir_all(dir)?;
            Ok((fs.create_new(path)?, true))
        }
        Err(e) => Err(e),
    }
}

/// The bytes up to and including the last `\n`: a reader never sees a partial line.
pub(crate) fn whole_lines(data: &[u8]) -> &[u8] {
    match memchr::memrchr(b'\n', data) {
        Some(i) => &data[..=i],
        None => &[],
    }
}

/// Lines in whole-line data.
pub(crate) fn count_lines(data: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', data).count() as u64
}

/// The lines of `data`, each with its `\n` (the last one without, if `data` does not end in one):
/// `split_inclusive` on `\n`, with the search done a word at a time (a sealed batch is scanned
/// whole, and a byte loop over 512 KiB cost more than compressing it).
pub(crate) fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(b'\n', data);
    std::iter::from_fn(move || {
        let end = match ends.next() {
            Some(i) => i + 1,
            None if start < data.len() => data.len(),
            None => return None,
        };
        let line = &data[start..end];
        start = end;
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// `lines`, `count_lines` and `whole_lines` say what the byte-at-a-time definitions say,
        /// on bodies heavy in newlines (empty lines, no trailing newline, none at all).
        #[test]
        fn the_word_at_a_time_scans_match_the_byte_loops(data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'{'), any::<u8>()], 0..300)) {
            let expected: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
            prop_assert_eq!(lines(&data).collect::<Vec<_>>(), expected);
            prop_assert_eq!(count_lines(&data), data.iter().filter(|&&b| b == b'\n').count() as u64);
            let whole = data.iter().rposition(|&b| b == b'\n').map_or(&data[..0], |i| &data[..=i]);
            prop_assert_eq!(whole_lines(&data), whole);
        }
    }
}
