//! [`read_dir`]: a directory's entries as a stream ([`ReadDir`]), read in batches on crew's
//! blocking pool.
//!
//! Invariants:
//! - At most one job reads the directory at a time, and it holds std's iterator: entries come
//!   out in std's order, none twice, none skipped.
//! - A job reads up to [`BATCH`] entries, so a directory of N entries costs about N / 32 round
//!   trips to the blocking pool, not N; an error ends a batch and is given in its place.
//! - A `ReadDir` dropped with a job in flight lets the job end on its own (std's iterator is
//!   dropped there).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::fs::{FileType, Metadata};
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use futures_lite::future::poll_fn;
use futures_lite::Stream;

use super::background::Background;
use super::ops::asyncify;

/// The most entries one job reads (tokio's batch too).
const BATCH: usize = 32;

/// The entries of the directory `path`, as a [`ReadDir`]: a stream of
/// `io::Result<`[`DirEntry`]`>`, or [`next_entry`](ReadDir::next_entry) in a loop, as tokio's.
/// `.` and `..` are not among them.
///
/// # Errors
///
/// std's [`fs::read_dir`](std::fs::read_dir)'s: `NotFound`, not a directory, ...
///
/// # Examples
///
/// ```
/// crew::block_on(async {
///     let mut entries = crew::fs::read_dir("src").await?;
///     let mut names = Vec::new();
///     while let Some(entry) = entries.next_entry().await? {
///         names.push(entry.file_name());
///     }
///     assert!(names.iter().any(|name| name == "lib.rs"));
///     std::io::Result::Ok(())
/// })
/// .unwrap();
/// ```
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = path.as_ref().to_owned();
    let std = asyncify(move || std::fs::read_dir(path)).await?;
    Ok(ReadDir { state: State::Idle(Some(std)), ready: VecDeque::new() })
}

/// A directory's entries (see [`read_dir`]): a [`Stream`] of `io::Result<DirEntry>`.
///
/// # Examples
///
/// ```
/// use futures_lite::StreamExt;
///
/// let count = crew::block_on(async {
///     let entries = crew::fs::read_dir("src").await.unwrap();
///     entries.filter_map(Result::ok).count().await
/// });
/// assert!(count > 10);
/// ```
pub struct ReadDir {
    state: State,
    /// Entries read and not given yet.
    ready: VecDeque<io::Result<DirEntry>>,
}

/// What a [`ReadDir`] is doing.
enum State {
    /// No job: std's iterator, or `None` once it ended.
    Idle(Option<std::fs::ReadDir>),
    /// A job reads a batch (a dropped one ends on its own).
    Busy(Background<Read>),
}

/// A job's batch: the iterator back (`None` once it ended) and the entries it read.
type Read = (Option<std::fs::ReadDir>, VecDeque<io::Result<DirEntry>>);

impl ReadDir {
    /// The next entry, or `None` after the last.
    ///
    /// # Errors
    ///
    /// std's, for the entry that could not be read; the entries after it can still be read.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let mut entries = crew::fs::read_dir("src").await.unwrap();
    ///     assert!(entries.next_entry().await.unwrap().is_some());
    /// });
    /// ```
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// Polls for the next entry: [`next_entry`](ReadDir::next_entry) as a poll function.
    ///
    /// # Errors
    ///
    /// As [`next_entry`](ReadDir::next_entry).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let mut entries = crew::fs::read_dir("src").await.unwrap();
    ///     let first = futures_lite::future::poll_fn(|cx| entries.poll_next_entry(cx)).await;
    ///     assert!(first.unwrap().is_some());
    /// });
    /// ```
    pub fn poll_next_entry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        loop {
            if let Some(entry) = self.ready.pop_front() {
                return Poll::Ready(entry.map(Some));
            }
            match &mut self.state {
                State::Idle(None) => return Poll::Ready(Ok(None)),
                State::Idle(std) => {
                    let mut std = std.take();
                    let batch = Background::spawn(move || {
                        let mut read = VecDeque::with_capacity(BATCH);
                        while let Some(entry) = std.as_mut().and_then(Iterator::next) {
                            let failed = entry.is_err();
                            read.push_back(entry.map(|entry| DirEntry(Arc::new(entry))));
                            if failed || read.len() == BATCH {
                                return (std, read);
                            }
                        }
                        (None, read)
                    });
                    self.state = State::Busy(batch);
                }
                State::Busy(batch) => {
                    let (std, read) = ready!(Pin::new(batch).poll(cx));
                    self.state = State::Idle(std);
                    self.ready = read;
                }
            }
        }
    }
}

impl Stream for ReadDir {
    type Item = io::Result<DirEntry>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<io::Result<DirEntry>>> {
        self.get_mut().poll_next_entry(cx).map(Result::transpose)
    }
}

impl fmt::Debug for ReadDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ended = matches!(self.state, State::Idle(None));
        f.debug_struct("ReadDir").field("ready", &self.ready.len()).field("ended", &ended).finish()
    }
}

/// One entry of a [`ReadDir`]: std's [`DirEntry`](std::fs::DirEntry), whose calls that may
/// touch the disk run on the blocking pool.
///
/// # Examples
///
/// ```
/// crew::block_on(async {
///     let mut entries = crew::fs::read_dir("src").await.unwrap();
///     let entry = entries.next_entry().await.unwrap().unwrap();
///     assert!(entry.path().starts_with("src"));
///     let is_file = entry.file_type().await.unwrap().is_file();
///     assert_eq!(is_file, entry.metadata().await.unwrap().is_file());
/// });
/// ```
#[derive(Clone)]
pub struct DirEntry(Arc<std::fs::DirEntry>);

impl DirEntry {
    /// The entry's path: the directory's path joined with its name.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let entry = crew::fs::read_dir("src").await.unwrap().next_entry().await.unwrap().unwrap();
    ///     assert_eq!(entry.path().parent(), Some(std::path::Path::new("src")));
    /// });
    /// ```
    pub fn path(&self) -> PathBuf {
        self.0.path()
    }

    /// The entry's name, without its directory.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let entry = crew::fs::read_dir("src").await.unwrap().next_entry().await.unwrap().unwrap();
    ///     assert_eq!(Some(entry.file_name().as_os_str()), entry.path().file_name());
    /// });
    /// ```
    pub fn file_name(&self) -> OsString {
        self.0.file_name()
    }

    /// The entry's inode number, as the directory lists it (Unix).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let entry = crew::fs::read_dir("src").await.unwrap().next_entry().await.unwrap().unwrap();
    ///     assert!(entry.ino() > 0);
    /// });
    /// ```
    #[cfg(unix)]
    pub fn ino(&self) -> u64 {
        std::os::unix::fs::DirEntryExt::ino(&*self.0)
    }

    /// The entry's metadata, not following a symbolic link (std's
    /// [`DirEntry::metadata`](std::fs::DirEntry::metadata)).
    ///
    /// # Errors
    ///
    /// std's (the entry may be gone).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let entry = crew::fs::read_dir("src").await.unwrap().next_entry().await.unwrap().unwrap();
    ///     assert!(entry.metadata().await.is_ok());
    /// });
    /// ```
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let entry = self.0.clone();
        asyncify(move || entry.metadata()).await
    }

    /// The entry's type, not following a symbolic link (std's
    /// [`DirEntry::file_type`](std::fs::DirEntry::file_type): most file systems say it in the
    /// listing; others need a `stat`, hence the blocking pool).
    ///
    /// # Errors
    ///
    /// std's.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let mut entries = crew::fs::read_dir(".").await.unwrap();
    ///     while let Some(entry) = entries.next_entry().await.unwrap() {
    ///         if entry.file_name() == "src" {
    ///             assert!(entry.file_type().await.unwrap().is_dir());
    ///         }
    ///     }
    /// });
    /// ```
    pub async fn file_type(&self) -> io::Result<FileType> {
        let entry = self.0.clone();
        asyncify(move || entry.file_type()).await
    }
}

impl fmt::Debug for DirEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DirEntry").field(&self.0.path()).finish()
    }
}
