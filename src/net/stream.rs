//! [`Stream`]: async-io's `Async<T>` for a stream socket, plus a read hint that skips the read
//! syscall bound to fail.
//!
//! Invariants:
//! - Every `Poll::Pending` a read returns comes straight from `Async::poll_readable`, which has
//!   registered the caller's waker with the reactor (and armed the socket's interest) before
//!   returning it. The hint only decides whether the read syscall or `poll_readable` comes first,
//!   so a wrong hint costs a syscall, never a wakeup.
//! - The hint is per stream, shared by `Stream` and `&Stream` readers; it is a relaxed atomic
//!   because nothing else is ordered by it.
//!
//! Why: async-io's `Async::poll_read` tries the read first and asks the reactor only after
//! `WouldBlock`. A stream socket whose read came back short had its receive buffer emptied by
//! that read, so for a request/response protocol the next read fails with `WouldBlock`, and then
//! `poll_readable` reports the reactor event that had woken the task (async-io reports each event
//! once, to the first caller after it), so the read is tried and fails a second time before the
//! interest is re-armed: three syscalls where one (`epoll_ctl`) will do. tokio's `TcpStream`
//! makes the same inference from a short read (it clears the readiness it caches).

use std::fmt;
use std::io::{self, IoSlice, Read, Write};
use std::ops::Deref;
use std::pin::Pin;
use std::task::{Context, Poll};

use async_io::Async;
use futures_lite::{ready, AsyncRead, AsyncWrite};

use crate::sync::{AtomicU8, Ordering};

/// What the last read said about the socket's receive buffer.
mod hint {
    /// Read first: the last read filled its buffer, or the task is polled again after waiting
    /// (most likely woken by the reactor; reading first also catches an event that async-io's
    /// tick check would count as older than the wait, and re-arm for).
    pub(super) const READ_FIRST: u8 = 0;
    /// The last read came back short, so it emptied the receive buffer: wait for readiness
    /// before reading again.
    pub(super) const DRAINED: u8 = 1;
}

/// A stream socket on async-io's reactor: [`Async<T>`] plus a hint that makes a read after a short
/// read wait for readiness before trying the syscall. [`TcpStream`](super::TcpStream) and
/// [`UnixStream`](super::UnixStream) are this type.
///
/// It dereferences to [`Async<T>`], so every method of async-io's type works on it
/// (`get_ref`, `readable`, `writable`, `read_with`, ...); [`Stream::into_inner`] and
/// `From<Async<T>>` convert both ways, for code written against async-io or smol. Reads and
/// writes go through [`crate::io`]'s extension traits, on `Stream<T>` and on `&Stream<T>` (so
/// one task can read while another writes).
///
/// A request/response exchange costs one read, one write and one `epoll_ctl` re-arm on it,
/// against two more failing reads on a bare `Async<T>` (see `docs/performance-notes.md`, HTTP).
///
/// # Examples
///
/// ```
/// use crew::io::{AsyncReadExt, AsyncWriteExt};
/// use crew::net::{Async, TcpListener, TcpStream};
///
/// let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// let addr = listener.get_ref().local_addr().unwrap();
/// crew::block_on(async {
///     let mut client = TcpStream::connect(addr).await.unwrap();
///     let (server, _) = listener.accept().await.unwrap();
///     client.write_all(b"ping").await.unwrap();
///     // To async-io's type (for code written against it) and back.
///     let bare: Async<std::net::TcpStream> = server.into_inner();
///     let mut server = TcpStream::from(bare);
///     let mut buf = [0; 4];
///     server.read_exact(&mut buf).await.unwrap();
///     assert_eq!(&buf, b"ping");
/// });
/// ```
pub struct Stream<T> {
    io: Async<T>,
    /// One of [`hint`]'s constants.
    hint: AtomicU8,
}

impl<T> Stream<T> {
    /// async-io's [`Async<T>`] inside, for code written against async-io or smol.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// let a: crew::net::Async<std::os::unix::net::UnixStream> = a.into_inner();
    /// assert!(a.get_ref().peer_addr().is_ok());
    /// ```
    pub fn into_inner(self) -> Async<T> {
        self.io
    }

    /// The socket as async-io's [`Async<T>`] (what `Deref` gives too).
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// let io: &crew::net::Async<std::os::unix::net::UnixStream> = a.as_async();
    /// assert!(io.get_ref().local_addr().is_ok());
    /// ```
    pub fn as_async(&self) -> &Async<T> {
        &self.io
    }
}

impl<T> From<Async<T>> for Stream<T> {
    /// Wraps a registered socket; the first read goes straight to the syscall.
    fn from(io: Async<T>) -> Stream<T> {
        Stream { io, hint: AtomicU8::new(hint::READ_FIRST) }
    }
}

impl<T> Deref for Stream<T> {
    type Target = Async<T>;

    fn deref(&self) -> &Async<T> {
        &self.io
    }
}

impl<T: fmt::Debug> fmt::Debug for Stream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream").field("io", &self.io).finish_non_exhaustive()
    }
}

impl Stream<std::net::TcpStream> {
    /// Connects to `addr` (non-blocking connect, then waits until the socket is writable):
    /// anything [`ToSocketAddrs`](super::ToSocketAddrs) takes. A name is looked up on the
    /// blocking pool, and each address it gives is tried in order until one connects (the last
    /// error otherwise), as std and async-net do.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.get_ref().local_addr().unwrap();
    /// let stream = crew::block_on(crew::net::TcpStream::connect(addr)).unwrap();
    /// assert_eq!(stream.get_ref().peer_addr().unwrap(), addr);
    /// ```
    pub async fn connect<A: super::ToSocketAddrs>(addr: A) -> io::Result<Self> {
        let addrs = super::addr::resolve(addr.addrs()).await?;
        let mut last = None;
        for addr in addrs {
            match Async::<std::net::TcpStream>::connect(addr).await {
                Ok(stream) => return Ok(Stream::from(stream)),
                Err(err) => last = Some(err),
            }
        }
        Err(last.expect("resolve gives at least one address"))
    }
}

#[cfg(unix)]
impl Stream<std::os::unix::net::UnixStream> {
    /// Connects to the Unix socket at `path`.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("crew-doc-connect-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("sock");
    /// let listener = crew::net::UnixListener::bind(&path).unwrap();
    /// let client = crew::block_on(crew::net::UnixStream::connect(&path)).unwrap();
    /// assert!(client.get_ref().peer_addr().is_ok());
    /// drop(listener);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub async fn connect<P: AsRef<std::path::Path>>(path: P) -> io::Result<Self> {
        Async::<std::os::unix::net::UnixStream>::connect(path).await.map(Stream::from)
    }

    /// A pair of connected Unix streams.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let (mut a, mut b) = crew::net::UnixStream::pair().unwrap();
    /// crew::block_on(async {
    ///     a.write_all(b"hi").await.unwrap();
    ///     let mut buf = [0; 2];
    ///     b.read_exact(&mut buf).await.unwrap();
    ///     assert_eq!(&buf, b"hi");
    /// });
    /// ```
    pub fn pair() -> io::Result<(Self, Self)> {
        let (a, b) = Async::<std::os::unix::net::UnixStream>::pair()?;
        Ok((Stream::from(a), Stream::from(b)))
    }
}

impl<T> Stream<T>
where
    for<'a> &'a T: Read,
{
    /// The read behind both `AsyncRead` impls.
    fn poll_read_hinted(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // Relaxed: the hint orders nothing; any value it holds leads to a correct read.
        if self.hint.load(Ordering::Relaxed) == hint::DRAINED {
            self.hint.store(hint::READ_FIRST, Ordering::Relaxed);
            // A first `Ready` after a short read is the event that woke the task before that
            // read (async-io reports an event once, to the next caller): spend it, and arm the
            // interest with a second call. `Ready` twice means a new event: read.
            let fresh = self.io.poll_readable(cx)?.is_ready() && self.io.poll_readable(cx)?.is_ready();
            if !fresh {
                return Poll::Pending;
            }
        }
        loop {
            match Read::read(&mut self.io.get_ref(), buf) {
                Ok(n) => {
                    if n != 0 && n < buf.len() {
                        self.hint.store(hint::DRAINED, Ordering::Relaxed);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
            ready!(self.io.poll_readable(cx))?;
        }
    }
}

impl<T> AsyncRead for Stream<T>
where
    for<'a> &'a T: Read,
{
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.poll_read_hinted(cx, buf)
    }
}

impl<T> AsyncRead for &Stream<T>
where
    for<'a> &'a T: Read,
{
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.poll_read_hinted(cx, buf)
    }
}

/// Writes are async-io's, unchanged: a write is tried first, and it rarely blocks. The owned
/// stream writes through the shared-reference impl below.
impl<T> AsyncWrite for Stream<T>
where
    for<'a> &'a T: Write,
{
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &*self).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &*self).poll_close(cx)
    }
}

impl<T> AsyncWrite for &Stream<T>
where
    for<'a> &'a T: Write,
{
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut &self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &self.io).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &self.io).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &self.io).poll_close(cx)
    }
}
