//! [`Listener`]: a listening socket on crew's driver, the shape of
//! [`TcpListener`](super::TcpListener) and [`UnixListener`](super::UnixListener).
//!
//! Invariants:
//! - The listener is non-blocking and registered with the driver from the moment it exists;
//!   every accepted socket is set non-blocking and registered before it is handed out, so a
//!   stream the caller gets is always ready for crew's `Stream` reads and writes.
//! - `accept` waits on the driver's read readiness; a `WouldBlock` clears only the readiness it
//!   saw (`driver/source.rs`), so a connection that arrived meanwhile is accepted at once.
//! - A registration that fails after the accept (`EMFILE`, `ENOMEM`) is the accept's error; the
//!   accepted socket is closed (its peer sees a reset), as a failed `accept(2)` would leave it
//!   in the backlog.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::Stream as AsyncStream;

use super::stream::{set_nonblocking, Stream, StreamSocket};
use crate::driver::{Direction, IoSource};

/// What a listening socket type gives [`Listener`]: std's `TcpListener` and `UnixListener`.
pub trait ListenerSocket: AsRawFd + AsFd + Send + Sync + 'static + sealed::Sealed {
    /// The stream socket it accepts.
    type Accepted: StreamSocket;
    /// The peer's address type.
    type Addr;
    #[doc(hidden)]
    fn accept_socket(&self) -> io::Result<(Self::Accepted, Self::Addr)>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for std::net::TcpListener {}
    #[cfg(unix)]
    impl Sealed for std::os::unix::net::UnixListener {}
}

impl ListenerSocket for std::net::TcpListener {
    type Accepted = std::net::TcpStream;
    type Addr = std::net::SocketAddr;

    fn accept_socket(&self) -> io::Result<(std::net::TcpStream, std::net::SocketAddr)> {
        self.accept()
    }
}

#[cfg(unix)]
impl ListenerSocket for std::os::unix::net::UnixListener {
    type Accepted = std::os::unix::net::UnixStream;
    type Addr = std::os::unix::net::SocketAddr;

    fn accept_socket(&self) -> io::Result<(std::os::unix::net::UnixStream, std::os::unix::net::SocketAddr)> {
        self.accept()
    }
}

/// A listening socket on crew's I/O driver whose `accept` yields crew [`Stream`]s:
/// [`TcpListener`](super::TcpListener) and [`UnixListener`](super::UnixListener) are this type.
///
/// # Examples
///
/// ```
/// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// assert!(listener.local_addr().unwrap().port() > 0);
/// ```
pub struct Listener<L: ListenerSocket> {
    source: IoSource<L>,
}

impl<L: ListenerSocket> Listener<L> {
    /// Registers a bound, listening std socket with crew's driver, setting it non-blocking.
    ///
    /// # Errors
    ///
    /// If the socket cannot be set non-blocking, or the driver cannot register it.
    ///
    /// # Examples
    ///
    /// ```
    /// let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// let listener = crew::net::TcpListener::from_std(std_listener).unwrap();
    /// assert!(listener.local_addr().is_ok());
    /// ```
    pub fn from_std(socket: L) -> io::Result<Listener<L>> {
        set_nonblocking(&socket)?;
        Ok(Listener { source: IoSource::new(socket)? })
    }

    /// The std socket, deregistered from crew's driver (still non-blocking).
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let std_listener: std::net::TcpListener = listener.into_std();
    /// assert!(std_listener.local_addr().is_ok());
    /// ```
    pub fn into_std(self) -> L {
        self.source.into_inner()
    }

    /// The std socket, for its options.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert!(listener.get_ref().ttl().is_ok());
    /// ```
    pub fn get_ref(&self) -> &L {
        self.source.get_ref()
    }

    /// Accepts a connection if one is waiting; else `Pending`, with `cx`'s waker stored (the
    /// last poll's waker is woken when one arrives).
    ///
    /// # Errors
    ///
    /// The accept's error (`EMFILE` when out of descriptors, a connection reset before it was
    /// accepted), or the driver's registration of the accepted socket.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    ///
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// crew::block_on(async {
    ///     let _client = crew::net::TcpStream::connect(addr).await.unwrap();
    ///     let (_server, peer) = poll_fn(|cx| listener.poll_accept(cx)).await.unwrap();
    ///     assert!(peer.ip().is_loopback());
    /// });
    /// ```
    #[allow(clippy::type_complexity)] // the stream and its peer's address, as `accept`'s
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(Stream<L::Accepted>, L::Addr)>> {
        match self.source.poll_io(Direction::Read, cx, ListenerSocket::accept_socket) {
            Poll::Ready(Ok((socket, addr))) => Poll::Ready(Stream::from_std(socket).map(|stream| (stream, addr))),
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Waits for a connection: the stream and the peer's address.
    ///
    /// # Errors
    ///
    /// As [`poll_accept`](Listener::poll_accept).
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::net::{TcpListener, TcpStream};
    ///
    /// let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// crew::block_on(async {
    ///     let client = TcpStream::connect(addr).await.unwrap();
    ///     let (_server, peer) = listener.accept().await.unwrap();
    ///     assert_eq!(peer, client.local_addr().unwrap());
    /// });
    /// ```
    pub async fn accept(&self) -> io::Result<(Stream<L::Accepted>, L::Addr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// The accepted connections, as a stream that never ends (each item an accept's result).
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::net::{TcpListener, TcpStream};
    /// use futures_lite::StreamExt;
    ///
    /// let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// crew::block_on(async {
    ///     let _client = TcpStream::connect(addr).await.unwrap();
    ///     let mut incoming = listener.incoming();
    ///     let server = incoming.next().await.unwrap().unwrap();
    ///     assert_eq!(server.local_addr().unwrap(), addr);
    /// });
    /// ```
    pub fn incoming(&self) -> Incoming<'_, L> {
        Incoming { listener: self }
    }

    /// Waits until a connection may be waiting (see [`Stream::readable`]).
    ///
    /// # Errors
    ///
    /// If the listener was deregistered from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// crew::block_on(async {
    ///     let _client = crew::net::TcpStream::connect(addr).await.unwrap();
    ///     listener.readable().await.unwrap();
    /// });
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.source.ready(Direction::Read).await.map(drop)
    }
}

/// The connections a [`Listener`] accepts, as a stream that never ends: what
/// [`Listener::incoming`] returns.
///
/// # Examples
///
/// ```
/// use futures_lite::StreamExt;
///
/// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// let addr = listener.local_addr().unwrap();
/// crew::block_on(async {
///     let _client = crew::net::TcpStream::connect(addr).await.unwrap();
///     let incoming: crew::net::Incoming<'_, std::net::TcpListener> = listener.incoming();
///     assert!(incoming.take(1).next().await.unwrap().is_ok());
/// });
/// ```
#[must_use = "streams do nothing unless polled"]
pub struct Incoming<'a, L: ListenerSocket> {
    listener: &'a Listener<L>,
}

impl<L: ListenerSocket> AsyncStream for Incoming<'_, L> {
    type Item = io::Result<Stream<L::Accepted>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.listener.poll_accept(cx).map(|accepted| Some(accepted.map(|(stream, _)| stream)))
    }
}

impl<L: ListenerSocket> fmt::Debug for Incoming<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Incoming")
    }
}

impl<L: ListenerSocket> AsFd for Listener<L> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.get_ref().as_fd()
    }
}

impl<L: ListenerSocket> AsRawFd for Listener<L> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

impl<L: ListenerSocket + fmt::Debug> fmt::Debug for Listener<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener").field("socket", self.get_ref()).finish()
    }
}
