//! [`Stream`]: a stream socket on crew's driver, the shape of [`TcpStream`](super::TcpStream)
//! and [`UnixStream`](super::UnixStream).
//!
//! Invariants:
//! - The socket is non-blocking and registered with the driver from the moment the `Stream`
//!   exists, deregistered before it is closed (`driver/source.rs`).
//! - Every `Pending` comes from the driver's readiness after it stored the task's waker; a
//!   `WouldBlock` clears only the readiness it saw (its tick), so no edge is lost.
//! - A read that came back short (`0 < n < buf.len()`) emptied the receive buffer: it clears
//!   the readiness it was made on (tick-checked, as a `WouldBlock` would), so the next read waits
//!   for the next edge instead of failing once first (tokio's rule). An edge that came during
//!   the read has a newer tick and stays.
//! - Reads and writes go through `&Stream` too, so one task may read while another writes; two
//!   tasks polling reads at once share one waker slot (the last poll's wins, as in tokio).

use std::fmt;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::{AsyncRead, AsyncWrite};

use crate::driver::{Direction, IoSource};

/// The syscalls of a connected stream socket that [`Stream`] runs on crew's driver: std's
/// `TcpStream` and `UnixStream` implement it. Each call must be non-blocking (`Stream` sets the
/// fd non-blocking before it registers it) and return `WouldBlock` when it would block. A type
/// of your own that wraps one of std's (one that counts its reads, say) may implement it too.
pub trait StreamSocket: AsRawFd + AsFd + Send + Sync + 'static {
    /// `shutdown(2)`.
    fn shutdown_socket(&self, how: Shutdown) -> io::Result<()>;
    /// A read that leaves the data there (`MSG_PEEK`).
    fn peek_socket(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// `read(2)`.
    fn read_socket(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// `readv(2)`.
    fn read_socket_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize>;
    /// `write(2)`.
    fn write_socket(&self, buf: &[u8]) -> io::Result<usize>;
    /// `writev(2)`.
    fn write_socket_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// The pending error (`SO_ERROR`), taken: how a non-blocking connect ended.
    fn take_error_socket(&self) -> io::Result<Option<io::Error>>;
    /// True once connected (its peer's address is there), false while a connect is under way.
    fn is_connected(&self) -> io::Result<bool>;
}

macro_rules! stream_socket {
    ($ty:ty, $peek:expr) => {
        impl StreamSocket for $ty {
            fn shutdown_socket(&self, how: Shutdown) -> io::Result<()> {
                self.shutdown(how)
            }
            fn peek_socket(&self, buf: &mut [u8]) -> io::Result<usize> {
                $peek(self, buf)
            }
            fn read_socket(&self, buf: &mut [u8]) -> io::Result<usize> {
                Read::read(&mut &*self, buf)
            }
            fn read_socket_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
                Read::read_vectored(&mut &*self, bufs)
            }
            fn write_socket(&self, buf: &[u8]) -> io::Result<usize> {
                Write::write(&mut &*self, buf)
            }
            fn write_socket_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
                Write::write_vectored(&mut &*self, bufs)
            }
            fn take_error_socket(&self) -> io::Result<Option<io::Error>> {
                self.take_error()
            }
            fn is_connected(&self) -> io::Result<bool> {
                match self.peer_addr() {
                    Ok(_) => Ok(true),
                    Err(error) if error.kind() == io::ErrorKind::NotConnected => Ok(false),
                    Err(error) => Err(error),
                }
            }
        }
    };
}

stream_socket!(std::net::TcpStream, std::net::TcpStream::peek);
#[cfg(unix)]
stream_socket!(std::os::unix::net::UnixStream, unix_peek);

/// `MSG_PEEK` on a Unix stream, which std gives only on nightly: through rustix.
#[cfg(unix)]
fn unix_peek(socket: &std::os::unix::net::UnixStream, buf: &mut [u8]) -> io::Result<usize> {
    rustix::net::recv(socket, buf, rustix::net::RecvFlags::PEEK).map(|(n, _)| n).map_err(io::Error::from)
}

/// A stream socket on crew's I/O driver: [`TcpStream`](super::TcpStream) and
/// [`UnixStream`](super::UnixStream) are this type. Read and write it with [`crate::io`]'s
/// extension traits (futures-io's `AsyncRead` and `AsyncWrite`, on `Stream` and on `&Stream`),
/// or with [`try_read`](Stream::try_read) and [`try_write`](Stream::try_write) after
/// [`readable`](Stream::readable) and [`writable`](Stream::writable).
///
/// # Examples
///
/// ```
/// use crew::io::{AsyncReadExt, AsyncWriteExt};
/// use crew::net::{TcpListener, TcpStream};
///
/// let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// let addr = listener.local_addr().unwrap();
/// crew::block_on(async {
///     let mut client = TcpStream::connect(addr).await.unwrap();
///     let (mut server, _) = listener.accept().await.unwrap();
///     client.write_all(b"ping").await.unwrap();
///     let mut buf = [0; 4];
///     server.read_exact(&mut buf).await.unwrap();
///     assert_eq!(&buf, b"ping");
/// });
/// ```
pub struct Stream<T: StreamSocket> {
    source: IoSource<T>,
}

impl<T: StreamSocket> Stream<T> {
    /// Registers a connected std socket with crew's driver, setting it non-blocking.
    ///
    /// # Errors
    ///
    /// If the socket cannot be set non-blocking, or the driver cannot register it (`EMFILE`,
    /// `ENOMEM`).
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    /// let a = crew::net::UnixStream::from_std(a).unwrap();
    /// assert!(a.peer_addr().is_ok());
    /// ```
    pub fn from_std(socket: T) -> io::Result<Stream<T>> {
        set_nonblocking(&socket)?;
        Ok(Stream { source: IoSource::new(socket)? })
    }

    /// A socket whose non-blocking connect is under way: registers it, and waits until the
    /// connect ended (writable), then for its outcome (`SO_ERROR`). Its readiness starts set:
    /// a first look before the end finds no error and no peer, and waits again.
    pub(super) async fn connected(socket: T) -> io::Result<Stream<T>> {
        let source = IoSource::new(socket)?;
        loop {
            let event = source.ready(Direction::Write).await?;
            if let Some(error) = source.get_ref().take_error_socket()? {
                return Err(error);
            }
            if source.get_ref().is_connected()? {
                return Ok(Stream { source });
            }
            source.clear(event);
        }
    }

    /// The std socket, deregistered from crew's driver (still non-blocking).
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// let std_socket: std::os::unix::net::UnixStream = a.into_std();
    /// assert!(std_socket.peer_addr().is_ok());
    /// ```
    pub fn into_std(self) -> T {
        self.source.into_inner()
    }

    /// The std socket, for its options and addresses.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// assert!(a.get_ref().peer_addr().is_ok());
    /// ```
    pub fn get_ref(&self) -> &T {
        self.source.get_ref()
    }

    /// Waits until the socket may be readable: a read after it may still find nothing (then
    /// [`try_read`](Stream::try_read) says `WouldBlock`, and a later `readable` waits again).
    /// Any number of tasks may wait at once.
    ///
    /// # Errors
    ///
    /// If the socket was deregistered from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::io::AsyncWriteExt;
    ///
    /// let (mut a, b) = crew::net::UnixStream::pair().unwrap();
    /// crew::block_on(async {
    ///     a.write_all(b"x").await.unwrap();
    ///     b.readable().await.unwrap();
    ///     let mut buf = [0; 1];
    ///     assert_eq!(b.try_read(&mut buf).unwrap(), 1);
    /// });
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.source.ready(Direction::Read).await.map(drop)
    }

    /// Waits until the socket may be writable (see [`readable`](Stream::readable)).
    ///
    /// # Errors
    ///
    /// If the socket was deregistered from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// crew::block_on(async {
    ///     a.writable().await.unwrap();
    ///     assert_eq!(a.try_write(b"hi").unwrap(), 2);
    /// });
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.source.ready(Direction::Write).await.map(drop)
    }

    /// Reads what the socket has now, without waiting: `WouldBlock` if nothing (the readiness
    /// it saw is then cleared, so [`readable`](Stream::readable) waits for the next).
    ///
    /// # Errors
    ///
    /// `WouldBlock` if nothing is there; the socket's error otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// let mut buf = [0; 8];
    /// assert_eq!(a.try_read(&mut buf).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.source.try_io(Direction::Read, |socket| socket.read_socket(buf))
    }

    /// Writes what the socket takes now, without waiting (see [`try_read`](Stream::try_read)).
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the socket's send buffer is full; the socket's error otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// assert_eq!(a.try_write(b"hello").unwrap(), 5);
    /// ```
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.source.try_io(Direction::Write, |socket| socket.write_socket(buf))
    }

    /// Waits for data and copies it into `buf` without taking it off the socket: the next read
    /// gets the same bytes. 0 at the end of the stream.
    ///
    /// # Errors
    ///
    /// The socket's error.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let (mut a, mut b) = crew::net::UnixStream::pair().unwrap();
    /// crew::block_on(async {
    ///     a.write_all(b"peek").await.unwrap();
    ///     let mut buf = [0; 4];
    ///     assert_eq!(b.peek(&mut buf).await.unwrap(), 4);
    ///     b.read_exact(&mut buf).await.unwrap();
    ///     assert_eq!(&buf, b"peek");
    /// });
    /// ```
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        std::future::poll_fn(|cx| self.source.poll_io(Direction::Read, cx, |socket| socket.peek_socket(buf))).await
    }

    /// Shuts down the read half, the write half, or both (`shutdown(2)`): a peer reading after
    /// the write half's shutdown reads the end of the stream.
    ///
    /// # Errors
    ///
    /// The socket's error (`NotConnected` once the peer is gone).
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::io::AsyncReadExt;
    ///
    /// let (a, mut b) = crew::net::UnixStream::pair().unwrap();
    /// a.shutdown(std::net::Shutdown::Write).unwrap();
    /// let mut rest = Vec::new();
    /// crew::block_on(b.read_to_end(&mut rest)).unwrap();
    /// assert!(rest.is_empty());
    /// ```
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.get_ref().shutdown_socket(how)
    }

    /// The read behind both `AsyncRead` impls (see the module docs for the short read's clear).
    fn poll_read_socket(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        loop {
            let event = match self.source.poll_ready(Direction::Read, cx) {
                Poll::Ready(Ok(event)) => event,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            };
            match self.get_ref().read_socket(buf) {
                Ok(n) => {
                    if n > 0 && n < buf.len() {
                        self.source.clear(event);
                    }
                    return Poll::Ready(Ok(n));
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => self.source.clear(event),
                Err(error) => return Poll::Ready(Err(error)),
            }
        }
    }

    fn poll_read_vectored_socket(&self, cx: &mut Context<'_>, bufs: &mut [IoSliceMut<'_>]) -> Poll<io::Result<usize>> {
        self.source.poll_io(Direction::Read, cx, |socket| socket.read_socket_vectored(bufs))
    }

    fn poll_write_socket(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.source.poll_io(Direction::Write, cx, |socket| socket.write_socket(buf))
    }

    fn poll_write_vectored_socket(&self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
        self.source.poll_io(Direction::Write, cx, |socket| socket.write_socket_vectored(bufs))
    }

    /// futures-io's close: shuts the write half down (the peer reads the end of the stream).
    fn close_socket(&self) -> Poll<io::Result<()>> {
        match self.shutdown(Shutdown::Write) {
            // A peer that is gone: nothing is left to close.
            Err(error) if error.kind() == io::ErrorKind::NotConnected => Poll::Ready(Ok(())),
            result => Poll::Ready(result),
        }
    }
}

/// Sets `socket` non-blocking, whichever std type it is.
pub(crate) fn set_nonblocking(socket: &impl AsFd) -> io::Result<()> {
    rustix::io::ioctl_fionbio(socket, true).map_err(io::Error::from)
}

impl<T: StreamSocket> AsyncRead for Stream<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.poll_read_socket(cx, buf)
    }

    fn poll_read_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &mut [IoSliceMut<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_read_vectored_socket(cx, bufs)
    }
}

impl<T: StreamSocket> AsyncRead for &Stream<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.poll_read_socket(cx, buf)
    }

    fn poll_read_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &mut [IoSliceMut<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_read_vectored_socket(cx, bufs)
    }
}

impl<T: StreamSocket> AsyncWrite for Stream<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_socket(cx, buf)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
        self.poll_write_vectored_socket(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.close_socket()
    }
}

impl<T: StreamSocket> AsyncWrite for &Stream<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_socket(cx, buf)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
        self.poll_write_vectored_socket(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.close_socket()
    }
}

impl<T: StreamSocket> AsFd for Stream<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.get_ref().as_fd()
    }
}

impl<T: StreamSocket> AsRawFd for Stream<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

impl<T: StreamSocket + fmt::Debug> fmt::Debug for Stream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream").field("socket", self.get_ref()).finish()
    }
}
