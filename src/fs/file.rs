//! [`File`]: an open file whose reads, writes and seeks run on crew's blocking pool, reading
//! ahead and writing behind (`pipeline.rs`).
//!
//! Invariants:
//! - The file's jobs, buffers and cursor are its [`Pipeline`]'s (`pipeline.rs` states them):
//!   this file adds the public calls, each of which goes through it.
//! - `into_std` and `try_into_std` give the std file back only with no job in flight and its
//!   cursor moved back to the reader's position.

use std::fmt;
use std::fs::{Metadata, Permissions};
use std::io::{self, SeekFrom};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use futures_lite::future::poll_fn;
use futures_lite::io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite};

use super::buf::{seek_back_by, MAX_BUF};
use super::ops::asyncify;
use super::pipeline::Pipeline;

/// The largest chunk a file's reads ask the kernel for ahead of the reader, unless
/// [`File::set_read_ahead`] says otherwise: measured in `benches/fs.rs` (BENCHMARKS.md, "Files").
pub const DEFAULT_READ_AHEAD: usize = 256 * 1024;

/// An open file on crew's blocking pool, with futures-io's [`AsyncRead`], [`AsyncWrite`],
/// [`AsyncSeek`] and [`AsyncBufRead`] (tokio's `File`, reading ahead).
///
/// Its reads, writes and seeks run on the blocking pool, one job at a time per file, and take
/// effect in the order they were called:
/// - **Reads ahead.** The first read starts a job that reads chunks ahead of the reader (16 KiB,
///   then twice the last, up to [`DEFAULT_READ_AHEAD`] or
///   [`set_read_ahead`](File::set_read_ahead)), at most four chunks ahead, while the reader takes
///   them: a loop of 8 KiB reads waits for the pool only when it catches up with the job, not at
///   each read (tokio's `File` makes a round trip per read). A write, a seek or `set_len` stops
///   the job, drops the bytes read ahead and moves the file's cursor back to the reader's
///   position. As an [`AsyncBufRead`], the file lends those bytes without a copy: `lines()`
///   needs no `BufReader`.
/// - **Writes behind.** A write returns once its bytes are copied into the file's buffer (at most
///   2 MiB waiting), and a job writes them, taking every byte written meanwhile in its next
///   system call. Its error comes back from the next operation: call
///   [`flush`](futures_lite::AsyncWriteExt::flush) or [`sync_all`](File::sync_all) to know that
///   the writes reached the file. A file dropped with writes waiting finishes them in the
///   background and drops their error, as `std::io::BufWriter` does: flush before dropping to see
///   it.
///
/// Methods that change the file's state take `&mut self` (tokio's take `&self` behind an async
/// lock): `set_len`, `sync_all`, `sync_data`. [`metadata`](File::metadata),
/// [`set_permissions`](File::set_permissions) and [`try_clone`](File::try_clone) take `&self`.
///
/// # Examples
///
/// ```
/// use crew::fs::File;
/// use crew::io::{AsyncReadExt, AsyncWriteExt};
///
/// let path = std::env::temp_dir().join(format!("crew-file-doc-{}", std::process::id()));
/// crew::block_on(async {
///     let mut file = File::create(&path).await?;
///     file.write_all(b"hello, file").await?;
///     file.sync_all().await?; // the write behind reached the disk
///
///     let mut text = String::new();
///     File::open(&path).await?.read_to_string(&mut text).await?;
///     assert_eq!(text, "hello, file");
///     crew::fs::remove_file(&path).await
/// })
/// .unwrap();
/// ```
pub struct File {
    pipeline: Pipeline,
}

impl File {
    /// Opens the file at `path` for reading (std's [`File::open`](std::fs::File::open)).
    ///
    /// # Errors
    ///
    /// std's: `NotFound` for a path that does not exist, `PermissionDenied`, ...
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let missing = crew::fs::File::open("/no/such/file").await;
    ///     assert_eq!(missing.unwrap_err().kind(), std::io::ErrorKind::NotFound);
    ///     assert!(crew::fs::File::open("Cargo.toml").await.is_ok());
    /// });
    /// ```
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref().to_owned();
        asyncify(move || std::fs::File::open(path)).await.map(File::from_std)
    }

    /// Opens the file at `path` for writing, made if missing and truncated if not (std's
    /// [`File::create`](std::fs::File::create)).
    ///
    /// # Errors
    ///
    /// std's: `NotFound` for a missing parent directory, `PermissionDenied`, ...
    ///
    /// # Examples
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("crew-create-doc-{}", std::process::id()));
    /// crew::block_on(async {
    ///     let file = crew::fs::File::create(&path).await.unwrap();
    ///     assert_eq!(file.metadata().await.unwrap().len(), 0);
    ///     crew::fs::remove_file(&path).await.unwrap();
    /// });
    /// ```
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref().to_owned();
        asyncify(move || std::fs::File::create(path)).await.map(File::from_std)
    }

    /// Makes a new file at `path` for writing, failing if one exists (`O_EXCL`).
    ///
    /// # Errors
    ///
    /// `AlreadyExists` if `path` exists; std's others.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let exists = crew::fs::File::create_new("Cargo.toml").await;
    ///     assert_eq!(exists.unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
    /// });
    /// ```
    pub async fn create_new(path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref().to_owned();
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create_new(true);
        asyncify(move || options.open(path)).await.map(File::from_std)
    }

    /// Wraps an open std file: its cursor stays where it is.
    ///
    /// # Examples
    ///
    /// ```
    /// let std = std::fs::File::open("Cargo.toml").unwrap();
    /// let file = crew::fs::File::from_std(std);
    /// assert!(crew::block_on(file.metadata()).unwrap().is_file());
    /// ```
    pub fn from_std(std: std::fs::File) -> File {
        File { pipeline: Pipeline::new(std, DEFAULT_READ_AHEAD) }
    }

    /// Sets the largest chunk read ahead of the reader (see [`File`]); 0 reads nothing ahead:
    /// each read is one job of exactly its request, as tokio's `File` does.
    ///
    /// # Panics
    ///
    /// If `bytes` is more than 2 MiB (2,097,152), the most one job reads.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut file = crew::fs::File::from_std(std::fs::File::open("Cargo.toml").unwrap());
    /// file.set_read_ahead(1024 * 1024);
    /// assert_eq!(file.read_ahead(), 1024 * 1024);
    /// ```
    pub fn set_read_ahead(&mut self, bytes: usize) {
        assert!(
            bytes <= MAX_BUF,
            "crew::fs::File::set_read_ahead: {bytes} bytes is more than the largest chunk a read takes (0 to {MAX_BUF} accepted)"
        );
        self.pipeline.read_ahead = bytes;
    }

    /// The largest chunk read ahead of the reader: [`DEFAULT_READ_AHEAD`] unless
    /// [`set_read_ahead`](File::set_read_ahead) said otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// let file = crew::fs::File::from_std(std::fs::File::open("Cargo.toml").unwrap());
    /// assert_eq!(file.read_ahead(), crew::fs::DEFAULT_READ_AHEAD);
    /// ```
    pub fn read_ahead(&self) -> usize {
        self.pipeline.read_ahead
    }

    /// The file's metadata (std's [`File::metadata`](std::fs::File::metadata)), on the blocking
    /// pool. It does not wait for a write behind: flush first to see its length.
    ///
    /// # Errors
    ///
    /// std's.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let file = crew::fs::File::open("Cargo.toml").await.unwrap();
    ///     assert!(file.metadata().await.unwrap().len() > 0);
    /// });
    /// ```
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let std = self.pipeline.std.clone();
        asyncify(move || std.metadata()).await
    }

    /// Changes the file's permissions (std's
    /// [`File::set_permissions`](std::fs::File::set_permissions)), on the blocking pool.
    ///
    /// # Errors
    ///
    /// std's.
    ///
    /// # Examples
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("crew-perm-doc-{}", std::process::id()));
    /// crew::block_on(async {
    ///     let file = crew::fs::File::create(&path).await.unwrap();
    ///     let mut permissions = file.metadata().await.unwrap().permissions();
    ///     permissions.set_readonly(true);
    ///     file.set_permissions(permissions).await.unwrap();
    ///     assert!(file.metadata().await.unwrap().permissions().readonly());
    ///     crew::fs::remove_file(&path).await.unwrap();
    /// });
    /// ```
    pub async fn set_permissions(&self, permissions: Permissions) -> io::Result<()> {
        let std = self.pipeline.std.clone();
        asyncify(move || std.set_permissions(permissions)).await
    }

    /// A second `File` for the same open file (`dup`): it shares the kernel's cursor, which
    /// this file's reads move ahead of its reader by the bytes they read ahead.
    ///
    /// # Errors
    ///
    /// std's (`EMFILE` when the process has no descriptor left).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let file = crew::fs::File::open("Cargo.toml").await.unwrap();
    ///     let twin = file.try_clone().await.unwrap();
    ///     assert_eq!(twin.metadata().await.unwrap().len(), file.metadata().await.unwrap().len());
    /// });
    /// ```
    pub async fn try_clone(&self) -> io::Result<File> {
        let std = self.pipeline.std.clone();
        let twin = asyncify(move || std.try_clone()).await?;
        let mut twin = File::from_std(twin);
        twin.pipeline.read_ahead = self.pipeline.read_ahead;
        Ok(twin)
    }

    /// Truncates or extends the file to `size` bytes (std's
    /// [`File::set_len`](std::fs::File::set_len)), after the operation in flight; drops the
    /// bytes read ahead. The cursor stays where the reader was.
    ///
    /// # Errors
    ///
    /// A write behind's error, else std's.
    ///
    /// # Examples
    ///
    /// ```
    /// let path = std::env::temp_dir().join(format!("crew-set-len-doc-{}", std::process::id()));
    /// crew::block_on(async {
    ///     let mut file = crew::fs::File::create(&path).await.unwrap();
    ///     file.set_len(100).await.unwrap();
    ///     assert_eq!(file.metadata().await.unwrap().len(), 100);
    ///     crew::fs::remove_file(&path).await.unwrap();
    /// });
    /// ```
    pub async fn set_len(&mut self, size: u64) -> io::Result<()> {
        self.pipeline.run(true, move |file, unread| seek_back_by(file, unread).and_then(|()| file.set_len(size))).await
    }

    /// Flushes the write in flight, then has the kernel write the file's data and metadata to
    /// its device (std's [`File::sync_all`](std::fs::File::sync_all)).
    ///
    /// # Errors
    ///
    /// A write behind's error, else std's.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::io::AsyncWriteExt;
    ///
    /// let path = std::env::temp_dir().join(format!("crew-sync-doc-{}", std::process::id()));
    /// crew::block_on(async {
    ///     let mut file = crew::fs::File::create(&path).await.unwrap();
    ///     file.write_all(b"durable").await.unwrap();
    ///     file.sync_all().await.unwrap();
    ///     assert_eq!(std::fs::read(&path).unwrap(), b"durable");
    ///     crew::fs::remove_file(&path).await.unwrap();
    /// });
    /// ```
    pub async fn sync_all(&mut self) -> io::Result<()> {
        self.pipeline.run(false, |file, _| file.sync_all()).await
    }

    /// As [`sync_all`](File::sync_all), without the metadata that reading the data does not
    /// need (std's [`File::sync_data`](std::fs::File::sync_data)).
    ///
    /// # Errors
    ///
    /// A write behind's error, else std's.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::io::AsyncWriteExt;
    ///
    /// let path = std::env::temp_dir().join(format!("crew-sync-data-doc-{}", std::process::id()));
    /// crew::block_on(async {
    ///     let mut file = crew::fs::File::create(&path).await.unwrap();
    ///     file.write_all(b"data").await.unwrap();
    ///     file.sync_data().await.unwrap();
    ///     crew::fs::remove_file(&path).await.unwrap();
    /// });
    /// ```
    pub async fn sync_data(&mut self) -> io::Result<()> {
        self.pipeline.run(false, |file, _| file.sync_data()).await
    }

    /// The std file back, after the operation in flight (whose error is dropped: flush first to
    /// see it), with its cursor moved back to the reader's position.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Read;
    ///
    /// use crew::io::AsyncReadExt;
    ///
    /// crew::block_on(async {
    ///     let mut file = crew::fs::File::open("Cargo.toml").await.unwrap();
    ///     let mut first = [0; 9];
    ///     file.read_exact(&mut first).await.unwrap(); // reads ahead
    ///     let mut std = file.into_std().await;
    ///     let mut next = [0; 6];
    ///     std.read_exact(&mut next).unwrap(); // right after what the reader saw
    ///     assert_eq!(&first, b"[package]");
    ///     assert_eq!(&next, b"\nname ");
    /// });
    /// ```
    pub async fn into_std(mut self) -> std::fs::File {
        let _ = poll_fn(|cx| self.pipeline.poll_flush(cx)).await;
        loop {
            match self.try_into_std() {
                Ok(std) => return std,
                // A job of `metadata`, `set_permissions` or `try_clone` whose future was dropped
                // still holds the file for the length of its system call.
                Err(file) => {
                    self = file;
                    crate::yield_now().await;
                }
            }
        }
    }

    /// The std file back if no operation is in flight (else `Err` with this file), with its
    /// cursor moved back to the reader's position.
    ///
    /// # Errors
    ///
    /// This file, if an operation is in flight or another job holds it.
    ///
    /// # Examples
    ///
    /// ```
    /// let file = crew::fs::File::from_std(std::fs::File::open("Cargo.toml").unwrap());
    /// assert!(file.try_into_std().is_ok());
    /// ```
    #[allow(clippy::result_large_err)] // tokio's shape: the file itself comes back
    pub fn try_into_std(mut self) -> Result<std::fs::File, File> {
        if self.pipeline.busy() {
            return Err(self);
        }
        let unread = self.pipeline.unread();
        match Arc::try_unwrap(self.pipeline.std) {
            Ok(std) => {
                // The kernel's cursor is `unread` bytes ahead of the reader. A failed `lseek`
                // leaves it there: nothing better is left to do with a file handed back.
                let _ = seek_back_by(&std, unread);
                Ok(std)
            }
            Err(std) => {
                self.pipeline.std = std;
                Err(self)
            }
        }
    }
}

impl AsyncRead for File {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, dst: &mut [u8]) -> Poll<io::Result<usize>> {
        if dst.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let buf = ready!(self.get_mut().pipeline.poll_fill(cx, dst.len()))?;
        Poll::Ready(Ok(buf.copy_to(dst)))
    }
}

/// The bytes read ahead, without a copy: `lines()` and `read_until` need no `BufReader`.
impl AsyncBufRead for File {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        // At least std's `BufReader`'s 8 KiB a job, read ahead or not.
        let buf = ready!(self.get_mut().pipeline.poll_fill(cx, 8 * 1024))?;
        Poll::Ready(Ok(buf.bytes()))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.get_mut().pipeline.consume(amt);
    }
}

impl AsyncWrite for File {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.get_mut().pipeline.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().pipeline.poll_flush(cx)
    }

    /// Flushes: a file has no write half to shut.
    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().pipeline.poll_flush(cx)
    }
}

impl AsyncSeek for File {
    fn poll_seek(self: Pin<&mut Self>, cx: &mut Context<'_>, pos: SeekFrom) -> Poll<io::Result<u64>> {
        self.get_mut().pipeline.poll_seek(cx, pos)
    }
}

impl From<std::fs::File> for File {
    fn from(std: std::fs::File) -> File {
        File::from_std(std)
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("File")
            .field("std", &self.pipeline.std)
            .field("busy", &self.pipeline.busy())
            .field("unread", &self.pipeline.unread())
            .finish()
    }
}
