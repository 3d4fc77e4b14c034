//! [`Datagram`]: a datagram socket on crew's driver, the shape of [`UdpSocket`](super::UdpSocket)
//! and [`UnixDatagram`](super::UnixDatagram).
//!
//! Invariants: as a stream's (`stream.rs`): non-blocking and registered while it exists; every
//! `Pending` comes from the driver's readiness after the waker was stored; a `WouldBlock`
//! clears only the readiness it saw. A datagram is sent or received whole by one syscall.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::Path;

use super::addr::{first_that_works, resolve, resolve_blocking};
use super::stream::set_nonblocking;
use super::ToSocketAddrs;
use crate::driver::{Direction, IoSource};

/// What a datagram socket type gives [`Datagram`]: std's `UdpSocket` and `UnixDatagram`.
pub trait DatagramSocket: AsRawFd + AsFd + Send + Sync + 'static + sealed::Sealed {
    #[doc(hidden)]
    fn send_socket(&self, buf: &[u8]) -> io::Result<usize>;
    #[doc(hidden)]
    fn recv_socket(&self, buf: &mut [u8]) -> io::Result<usize>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for std::net::UdpSocket {}
    #[cfg(unix)]
    impl Sealed for std::os::unix::net::UnixDatagram {}
}

impl DatagramSocket for std::net::UdpSocket {
    fn send_socket(&self, buf: &[u8]) -> io::Result<usize> {
        self.send(buf)
    }
    fn recv_socket(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.recv(buf)
    }
}

#[cfg(unix)]
impl DatagramSocket for std::os::unix::net::UnixDatagram {
    fn send_socket(&self, buf: &[u8]) -> io::Result<usize> {
        self.send(buf)
    }
    fn recv_socket(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.recv(buf)
    }
}

/// A datagram socket on crew's I/O driver: [`UdpSocket`](super::UdpSocket) and
/// [`UnixDatagram`](super::UnixDatagram) are this type.
///
/// # Examples
///
/// ```
/// use crew::net::UdpSocket;
///
/// let a = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
/// let b = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
/// crew::block_on(async {
///     a.send_to(b"ping", b.local_addr().unwrap()).await.unwrap();
///     let mut buf = [0; 4];
///     let (n, from) = b.recv_from(&mut buf).await.unwrap();
///     assert_eq!((&buf[..n], from), (&b"ping"[..], a.local_addr().unwrap()));
/// });
/// ```
pub struct Datagram<T: DatagramSocket> {
    source: IoSource<T>,
}

impl<T: DatagramSocket> Datagram<T> {
    /// Registers a std datagram socket with crew's driver, setting it non-blocking.
    ///
    /// # Errors
    ///
    /// If the socket cannot be set non-blocking, or the driver cannot register it.
    ///
    /// # Examples
    ///
    /// ```
    /// let std_socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    /// let socket = crew::net::UdpSocket::from_std(std_socket).unwrap();
    /// assert!(socket.local_addr().is_ok());
    /// ```
    pub fn from_std(socket: T) -> io::Result<Datagram<T>> {
        set_nonblocking(&socket)?;
        Ok(Datagram { source: IoSource::new(socket)? })
    }

    /// The std socket, deregistered from crew's driver (still non-blocking).
    ///
    /// # Examples
    ///
    /// ```
    /// let socket = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let std_socket: std::net::UdpSocket = socket.into_std();
    /// assert!(std_socket.local_addr().is_ok());
    /// ```
    pub fn into_std(self) -> T {
        self.source.into_inner()
    }

    /// The std socket, for its options.
    ///
    /// # Examples
    ///
    /// ```
    /// let socket = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// socket.get_ref().set_broadcast(true).unwrap();
    /// assert!(socket.get_ref().broadcast().unwrap());
    /// ```
    pub fn get_ref(&self) -> &T {
        self.source.get_ref()
    }

    /// Sends `buf` to the connected peer as one datagram.
    ///
    /// # Errors
    ///
    /// The socket's (not connected, a datagram too large, `ConnectionRefused` after an ICMP
    /// error from the peer).
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, b) = crew::net::UnixDatagram::pair().unwrap();
    /// crew::block_on(async {
    ///     a.send(b"one").await.unwrap();
    ///     let mut buf = [0; 8];
    ///     assert_eq!(b.recv(&mut buf).await.unwrap(), 3);
    /// });
    /// ```
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io_with(Direction::Write, |socket| socket.send_socket(buf)).await
    }

    /// Receives one datagram from the connected peer into `buf` (the rest of a longer one is
    /// lost, as `recv(2)`'s).
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, b) = crew::net::UnixDatagram::pair().unwrap();
    /// crew::block_on(async {
    ///     a.send(b"hello").await.unwrap();
    ///     let mut buf = [0; 8];
    ///     let n = b.recv(&mut buf).await.unwrap();
    ///     assert_eq!(&buf[..n], b"hello");
    /// });
    /// ```
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io_with(Direction::Read, |socket| socket.recv_socket(buf)).await
    }

    /// Sends `buf` now if the socket takes it: `WouldBlock` if it does not.
    ///
    /// # Errors
    ///
    /// `WouldBlock`, or the socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixDatagram::pair().unwrap();
    /// assert_eq!(a.try_send(b"now").unwrap(), 3);
    /// ```
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.source.try_io(Direction::Write, |socket| socket.send_socket(buf))
    }

    /// Receives a datagram now if one is there: `WouldBlock` if none is.
    ///
    /// # Errors
    ///
    /// `WouldBlock`, or the socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let (_a, b) = crew::net::UnixDatagram::pair().unwrap();
    /// let mut buf = [0; 8];
    /// assert_eq!(b.try_recv(&mut buf).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
    /// ```
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.source.try_io(Direction::Read, |socket| socket.recv_socket(buf))
    }

    /// Waits until a datagram may be there (see [`Stream::readable`](super::Stream::readable)).
    ///
    /// # Errors
    ///
    /// If the socket was deregistered from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, b) = crew::net::UnixDatagram::pair().unwrap();
    /// a.try_send(b"x").unwrap();
    /// crew::block_on(b.readable()).unwrap();
    /// ```
    pub async fn readable(&self) -> io::Result<()> {
        self.source.ready(Direction::Read).await.map(drop)
    }

    /// Waits until a datagram may be sent.
    ///
    /// # Errors
    ///
    /// If the socket was deregistered from the driver.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixDatagram::pair().unwrap();
    /// crew::block_on(a.writable()).unwrap();
    /// ```
    pub async fn writable(&self) -> io::Result<()> {
        self.source.ready(Direction::Write).await.map(drop)
    }

    /// Runs `call` (a non-blocking syscall on the socket) once it may not block, waiting on the
    /// driver's readiness in `direction` while it says `WouldBlock`.
    async fn io_with<R>(&self, direction: Direction, mut call: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        poll_fn(|cx| self.source.poll_io(direction, cx, &mut call)).await
    }
}

impl Datagram<std::net::UdpSocket> {
    /// Binds a UDP socket to `addr` (port 0 picks a free port): anything [`ToSocketAddrs`]
    /// takes, each address tried in order (a name looked up in `block_in_place`).
    ///
    /// # Errors
    ///
    /// The last address's bind error, or the lookup's.
    ///
    /// # Examples
    ///
    /// ```
    /// let socket = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert_ne!(socket.local_addr().unwrap().port(), 0);
    /// ```
    pub fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<Self> {
        let addrs = resolve_blocking(addr.addrs())?;
        first_that_works(addrs, |addr| Datagram::from_std(std::net::UdpSocket::bind(addr)?))
    }

    /// Sets the peer that [`send`](Datagram::send) sends to and [`recv`](Datagram::recv)
    /// receives from (the first address of a name's lookup that works).
    ///
    /// # Errors
    ///
    /// The last address's error, or the lookup's.
    ///
    /// # Examples
    ///
    /// ```
    /// let a = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let b = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// crew::block_on(a.connect(b.local_addr().unwrap())).unwrap();
    /// assert_eq!(a.peer_addr().unwrap(), b.local_addr().unwrap());
    /// ```
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        let addrs = resolve(addr.addrs()).await?;
        first_that_works(addrs, |addr| self.get_ref().connect(addr))
    }

    /// Sends `buf` to `target` as one datagram.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let a = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let b = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert_eq!(crew::block_on(a.send_to(b"hi", b.local_addr().unwrap())).unwrap(), 2);
    /// ```
    pub async fn send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io_with(Direction::Write, |socket| socket.send_to(buf, target)).await
    }

    /// Receives one datagram into `buf`: its length and its sender.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let a = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let b = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// crew::block_on(async {
    ///     a.send_to(b"hi", b.local_addr().unwrap()).await.unwrap();
    ///     let mut buf = [0; 2];
    ///     assert_eq!(b.recv_from(&mut buf).await.unwrap(), (2, a.local_addr().unwrap()));
    /// });
    /// ```
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io_with(Direction::Read, |socket| socket.recv_from(buf)).await
    }

    /// As [`recv_from`](Datagram::recv_from), leaving the datagram to be received again.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let a = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let b = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// crew::block_on(async {
    ///     a.send_to(b"hi", b.local_addr().unwrap()).await.unwrap();
    ///     let mut buf = [0; 2];
    ///     let peeked = b.peek_from(&mut buf).await.unwrap();
    ///     assert_eq!(b.recv_from(&mut buf).await.unwrap(), peeked);
    /// });
    /// ```
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io_with(Direction::Read, |socket| socket.peek_from(buf)).await
    }

    /// The local address.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let socket = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert!(socket.local_addr().unwrap().ip().is_loopback());
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().local_addr()
    }

    /// The connected peer's address.
    ///
    /// # Errors
    ///
    /// `NotConnected` before [`connect`](Datagram::connect).
    ///
    /// # Examples
    ///
    /// ```
    /// let socket = crew::net::UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert_eq!(socket.peer_addr().unwrap_err().kind(), std::io::ErrorKind::NotConnected);
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().peer_addr()
    }
}

#[cfg(unix)]
impl Datagram<std::os::unix::net::UnixDatagram> {
    /// Binds a Unix datagram socket to `path` (which must not exist yet).
    ///
    /// # Errors
    ///
    /// The bind's.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("crew-doc-dgram-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let socket = crew::net::UnixDatagram::bind(dir.join("sock")).unwrap();
    /// assert!(socket.local_addr().unwrap().as_pathname().is_some());
    /// drop(socket);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<Self> {
        Datagram::from_std(std::os::unix::net::UnixDatagram::bind(path)?)
    }

    /// A Unix datagram socket bound to no path.
    ///
    /// # Errors
    ///
    /// The kernel's.
    ///
    /// # Examples
    ///
    /// ```
    /// let socket = crew::net::UnixDatagram::unbound().unwrap();
    /// assert!(socket.local_addr().unwrap().is_unnamed());
    /// ```
    pub fn unbound() -> io::Result<Self> {
        Datagram::from_std(std::os::unix::net::UnixDatagram::unbound()?)
    }

    /// A pair of connected Unix datagram sockets.
    ///
    /// # Errors
    ///
    /// The kernel's.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, b) = crew::net::UnixDatagram::pair().unwrap();
    /// a.try_send(b"x").unwrap();
    /// let mut buf = [0; 1];
    /// assert_eq!(crew::block_on(b.recv(&mut buf)).unwrap(), 1);
    /// ```
    pub fn pair() -> io::Result<(Self, Self)> {
        let (a, b) = std::os::unix::net::UnixDatagram::pair()?;
        Ok((Datagram::from_std(a)?, Datagram::from_std(b)?))
    }

    /// Sets the peer at `path` that [`send`](Datagram::send) sends to.
    ///
    /// # Errors
    ///
    /// The connect's.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("crew-doc-dconnect-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let server = crew::net::UnixDatagram::bind(dir.join("sock")).unwrap();
    /// let client = crew::net::UnixDatagram::unbound().unwrap();
    /// client.connect(dir.join("sock")).unwrap();
    /// assert!(client.peer_addr().unwrap().as_pathname().is_some());
    /// drop(server);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn connect<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        self.get_ref().connect(path)
    }

    /// Sends `buf` to the socket at `path` as one datagram.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("crew-doc-dsend-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let server = crew::net::UnixDatagram::bind(dir.join("sock")).unwrap();
    /// let client = crew::net::UnixDatagram::unbound().unwrap();
    /// assert_eq!(crew::block_on(client.send_to(b"hi", dir.join("sock"))).unwrap(), 2);
    /// drop(server);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub async fn send_to<P: AsRef<Path>>(&self, buf: &[u8], path: P) -> io::Result<usize> {
        let path = path.as_ref();
        self.io_with(Direction::Write, |socket| socket.send_to(buf, path)).await
    }

    /// Receives one datagram into `buf`: its length and its sender's address.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, b) = crew::net::UnixDatagram::pair().unwrap();
    /// a.try_send(b"hi").unwrap();
    /// let mut buf = [0; 2];
    /// let (n, from) = crew::block_on(b.recv_from(&mut buf)).unwrap();
    /// assert_eq!((n, from.is_unnamed()), (2, true));
    /// ```
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, std::os::unix::net::SocketAddr)> {
        self.io_with(Direction::Read, |socket| socket.recv_from(buf)).await
    }

    /// The local address.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixDatagram::pair().unwrap();
    /// assert!(a.local_addr().unwrap().is_unnamed());
    /// ```
    pub fn local_addr(&self) -> io::Result<std::os::unix::net::SocketAddr> {
        self.get_ref().local_addr()
    }

    /// The connected peer's address.
    ///
    /// # Errors
    ///
    /// `NotConnected` before [`connect`](Datagram::connect).
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixDatagram::pair().unwrap();
    /// assert!(a.peer_addr().is_ok());
    /// ```
    pub fn peer_addr(&self) -> io::Result<std::os::unix::net::SocketAddr> {
        self.get_ref().peer_addr()
    }
}

impl<T: DatagramSocket> AsFd for Datagram<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.get_ref().as_fd()
    }
}

impl<T: DatagramSocket> AsRawFd for Datagram<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

impl<T: DatagramSocket + fmt::Debug> fmt::Debug for Datagram<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Datagram").field("socket", self.get_ref()).finish()
    }
}
