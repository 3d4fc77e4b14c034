//! A child's standard streams on crew's driver: [`ChildStdin`], [`ChildStdout`] and
//! [`ChildStderr`], mio's pipe ends set non-blocking and registered, with futures-io's
//! `AsyncRead` and `AsyncWrite` (no thread per pipe).
//!
//! Invariants:
//! - A pipe end is non-blocking and registered with the driver from the moment its handle
//!   exists, deregistered before it is closed (`driver/source.rs`): dropping the handle closes
//!   it. Closing is how a child sees the end of its stdin: `poll_close` only flushes, as
//!   tokio's `shutdown` and async-process's `close` do (a pipe has nothing to flush).
//! - Every `Pending` comes from the driver's readiness after it stored the task's waker; a
//!   `WouldBlock` clears only the readiness it saw (its tick), so no edge is lost.
//! - A read gives end of stream (`Ok(0)`) once every write end is closed: the child's, and
//!   those of any process it passed its stdout to (a grandchild in the background keeps the
//!   pipe open, and a read to the end waits for it too). A child's exit alone does not end it.

use std::fmt;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll};

use futures_lite::{AsyncRead, AsyncWrite};
use mio::unix::pipe::{Receiver, Sender};

use crate::driver::{Direction, IoSource};

/// The writing end of a child's stdin ([`Child::stdin`](super::Child::stdin)), on crew's
/// driver. Drop it to close the child's stdin (the child then reads to its end).
///
/// # Examples
///
/// ```
/// use std::process::Stdio;
///
/// use crew::io::AsyncWriteExt;
///
/// crew::block_on(async {
///     let mut child = crew::process::Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
///     let mut stdin: crew::process::ChildStdin = child.stdin.take().unwrap();
///     stdin.write_all(b"hello").await.unwrap();
///     drop(stdin);
///     assert!(child.wait().await.unwrap().success());
/// });
/// ```
pub struct ChildStdin {
    source: IoSource<Sender>,
}

/// The reading end of a child's stdout ([`Child::stdout`](super::Child::stdout)), on crew's
/// driver.
///
/// # Examples
///
/// ```
/// use std::process::Stdio;
///
/// use crew::io::AsyncReadExt;
///
/// crew::block_on(async {
///     let mut child = crew::process::Command::new("echo").arg("hi").stdout(Stdio::piped()).spawn().unwrap();
///     let mut out = String::new();
///     child.stdout.take().unwrap().read_to_string(&mut out).await.unwrap();
///     assert_eq!(out, "hi\n");
///     child.wait().await.unwrap();
/// });
/// ```
pub struct ChildStdout {
    source: IoSource<Receiver>,
}

/// The reading end of a child's stderr ([`Child::stderr`](super::Child::stderr)), on crew's
/// driver.
///
/// # Examples
///
/// ```
/// use std::process::Stdio;
///
/// use crew::io::AsyncReadExt;
///
/// crew::block_on(async {
///     let mut child =
///         crew::process::Command::new("sh").args(["-c", "echo oops >&2"]).stderr(Stdio::piped()).spawn().unwrap();
///     let mut err = String::new();
///     child.stderr.take().unwrap().read_to_string(&mut err).await.unwrap();
///     assert_eq!(err, "oops\n");
///     child.wait().await.unwrap();
/// });
/// ```
pub struct ChildStderr {
    source: IoSource<Receiver>,
}

/// Sets a pipe end non-blocking and registers it.
fn register<T: AsFd>(end: T, set_nonblocking: impl FnOnce(&T) -> io::Result<()>) -> io::Result<IoSource<T>> {
    set_nonblocking(&end)?;
    IoSource::new(end)
}

impl ChildStdin {
    /// std's handle (of a child std spawned), set non-blocking and registered with crew's
    /// driver.
    ///
    /// # Errors
    ///
    /// If the fd cannot be set non-blocking or registered (`ENOMEM`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::process::Stdio;
    ///
    /// let mut child = std::process::Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    /// let stdin = crew::process::ChildStdin::from_std(child.stdin.take().unwrap()).unwrap();
    /// drop(stdin);
    /// assert!(child.wait().unwrap().success());
    /// ```
    pub fn from_std(stdin: std::process::ChildStdin) -> io::Result<ChildStdin> {
        Ok(ChildStdin { source: register(Sender::from(stdin), |end| end.set_nonblocking(true))? })
    }

    /// The pipe end as an owned fd, deregistered from crew's driver and set blocking again (to
    /// hand to another process, or to a blocking thread).
    ///
    /// # Errors
    ///
    /// If the fd cannot be set blocking (`fcntl`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::process::Stdio;
    ///
    /// crew::block_on(async {
    ///     let mut child = crew::process::Command::new("cat").stdin(Stdio::piped()).spawn().unwrap();
    ///     let fd: std::os::fd::OwnedFd = child.stdin.take().unwrap().into_owned_fd().unwrap();
    ///     drop(fd);
    ///     child.wait().await.unwrap();
    /// });
    /// ```
    pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
        let end = self.source.into_inner();
        end.set_nonblocking(false)?;
        Ok(OwnedFd::from(end))
    }
}

/// The reading ends' shared code.
macro_rules! reader {
    ($name:ident, $std:ty) => {
        impl $name {
            /// std's handle (of a child std spawned), set non-blocking and registered with
            /// crew's driver.
            ///
            /// # Errors
            ///
            /// If the fd cannot be set non-blocking or registered (`ENOMEM`).
            ///
            /// # Examples
            ///
            /// ```
            /// use std::process::Stdio;
            ///
            /// use crew::io::AsyncReadExt;
            ///
            /// let mut child = std::process::Command::new("echo").arg("x").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            /// let mut out = crew::process::ChildStdout::from_std(child.stdout.take().unwrap()).unwrap();
            /// let mut err = crew::process::ChildStderr::from_std(child.stderr.take().unwrap()).unwrap();
            /// let (mut text, mut nothing) = (String::new(), String::new());
            /// crew::block_on(out.read_to_string(&mut text)).unwrap();
            /// crew::block_on(err.read_to_string(&mut nothing)).unwrap();
            /// assert_eq!((text.as_str(), nothing.as_str()), ("x\n", ""));
            /// child.wait().unwrap();
            /// ```
            pub fn from_std(std: $std) -> io::Result<$name> {
                Ok($name { source: register(Receiver::from(std), |end| end.set_nonblocking(true))? })
            }

            /// The pipe end as an owned fd, deregistered from crew's driver and set blocking
            /// again (to hand to another process, or to a blocking thread).
            ///
            /// # Errors
            ///
            /// If the fd cannot be set blocking (`fcntl`).
            ///
            /// # Examples
            ///
            /// ```
            /// use std::process::Stdio;
            ///
            /// crew::block_on(async {
            ///     let mut child = crew::process::Command::new("true").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
            ///     let out: std::os::fd::OwnedFd = child.stdout.take().unwrap().into_owned_fd().unwrap();
            ///     let err: std::os::fd::OwnedFd = child.stderr.take().unwrap().into_owned_fd().unwrap();
            ///     drop((out, err));
            ///     child.wait().await.unwrap();
            /// });
            /// ```
            pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
                let end = self.source.into_inner();
                end.set_nonblocking(false)?;
                Ok(OwnedFd::from(end))
            }
        }

        impl AsyncRead for $name {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                self.source.poll_io(Direction::Read, cx, |end| (&*end).read(buf))
            }

            fn poll_read_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &mut [IoSliceMut<'_>],
            ) -> Poll<io::Result<usize>> {
                self.source.poll_io(Direction::Read, cx, |end| (&*end).read_vectored(bufs))
            }
        }

        impl TryFrom<$name> for Stdio {
            type Error = io::Error;

            /// The pipe end as another child's stdin (a shell's `a | b`), set blocking again.
            fn try_from(end: $name) -> io::Result<Stdio> {
                end.into_owned_fd().map(Stdio::from)
            }
        }

        impl AsFd for $name {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.source.get_ref().as_fd()
            }
        }

        impl AsRawFd for $name {
            fn as_raw_fd(&self) -> RawFd {
                self.source.get_ref().as_raw_fd()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("fd", &self.as_raw_fd()).finish()
            }
        }
    };
}

reader!(ChildStdout, std::process::ChildStdout);
reader!(ChildStderr, std::process::ChildStderr);

impl AsyncWrite for ChildStdin {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.source.poll_io(Direction::Write, cx, |end| (&*end).write(buf))
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
        self.source.poll_io(Direction::Write, cx, |end| (&*end).write_vectored(bufs))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Flushes (nothing to do): drop the handle to close the pipe (see the module docs).
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl TryFrom<ChildStdin> for Stdio {
    type Error = io::Error;

    /// The pipe end as another child's stdout, set blocking again.
    fn try_from(end: ChildStdin) -> io::Result<Stdio> {
        end.into_owned_fd().map(Stdio::from)
    }
}

impl AsFd for ChildStdin {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.source.get_ref().as_fd()
    }
}

impl AsRawFd for ChildStdin {
    fn as_raw_fd(&self) -> RawFd {
        self.source.get_ref().as_raw_fd()
    }
}

impl fmt::Debug for ChildStdin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildStdin").field("fd", &self.as_raw_fd()).finish()
    }
}
