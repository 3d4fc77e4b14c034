//! Sockets on crew's own I/O driver (`src/driver/`): TCP, UDP and Unix domain sockets, with the
//! methods tokio's users reach for.
//!
//! [`TcpStream`] and [`UnixStream`] are [`Stream<T>`]; [`TcpListener`] and [`UnixListener`] are
//! [`Listener<L>`], whose `accept` yields them; [`UdpSocket`] and [`UnixDatagram`] are
//! [`Datagram<T>`]. Read and write streams with [`crate::io`]'s extension traits (futures-io's
//! `AsyncRead` and `AsyncWrite`, as futures-lite re-exports them), or with `try_read` and
//! `try_write` after `readable` and `writable`; split a stream into owned halves with
//! `into_split`. `from_std` registers a std socket, `into_std` gives it back.
//!
//! Invariants:
//! - Readiness comes from crew's driver (epoll on Linux, kqueue on the BSDs and macOS), turned by
//!   crew's own threads as they park: a parked worker, a thread in `block_on`, a busy worker at
//!   its tick, a pool's monitor (`driver/poller.rs`). No thread is started for I/O, and an I/O
//!   wake on a worker goes to that worker's own queues.
//! - Every socket is non-blocking and registered once (edge-triggered) from the moment crew's
//!   type holds it; dropping it deregisters it, then closes it.
//! - A call returns `Pending` only after the driver stored the task's waker and looked at the
//!   readiness again; a `WouldBlock` clears only the readiness it saw (`driver/scheduled_io.rs`).
//!
//! # Examples
//!
//! ```
//! use crew::io::{AsyncReadExt, AsyncWriteExt};
//! use crew::net::{TcpListener, TcpStream};
//!
//! let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
//! let addr = listener.get_ref().local_addr().unwrap();
//! let server = crew::spawn(async move {
//!     let (mut stream, _) = listener.accept().await.unwrap();
//!     let mut buf = [0; 5];
//!     stream.read_exact(&mut buf).await.unwrap();
//!     stream.write_all(&buf).await.unwrap();
//! });
//! let echoed = crew::block_on(crew::spawn(async move {
//!     let mut client = TcpStream::connect(addr).await.unwrap();
//!     client.write_all(b"hello").await.unwrap();
//!     let mut buf = [0; 5];
//!     client.read_exact(&mut buf).await.unwrap();
//!     buf
//! }));
//! assert_eq!(&echoed, b"hello");
//! crew::block_on(server);
//! ```

mod addr;
mod datagram;
mod listener;
mod split;
mod stream;
mod tcp;
#[cfg(unix)]
mod unix;

pub use addr::ToSocketAddrs;
pub use datagram::{Datagram, DatagramSocket};
pub use listener::{Incoming, Listener, ListenerSocket};
pub use split::{OwnedReadHalf, OwnedWriteHalf};
pub use stream::{Stream, StreamSocket};

/// A TCP listener: [`Listener`]`<std::net::TcpListener>`. Make one with `TcpListener::bind(addr)`;
/// `accept().await` yields `(TcpStream, SocketAddr)`; `incoming()` is a stream of streams.
///
/// # Examples
///
/// ```
/// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// assert!(listener.local_addr().unwrap().port() > 0);
/// ```
pub type TcpListener = Listener<std::net::TcpListener>;

/// A TCP stream: [`Stream`]`<std::net::TcpStream>`. Make one with `TcpStream::connect(addr).await`
/// or from a listener's `accept`.
///
/// # Examples
///
/// ```
/// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// let addr = listener.local_addr().unwrap();
/// let stream = crew::block_on(crew::net::TcpStream::connect(addr)).unwrap();
/// assert_eq!(stream.peer_addr().unwrap(), addr);
/// ```
pub type TcpStream = Stream<std::net::TcpStream>;

/// A UDP socket: [`Datagram`]`<std::net::UdpSocket>`. Make one with `UdpSocket::bind(addr)`.
///
/// # Examples
///
/// ```
/// use crew::net::UdpSocket;
///
/// let a = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
/// let b = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
/// let to = b.local_addr().unwrap();
/// crew::block_on(async {
///     a.send_to(b"ping", to).await.unwrap();
///     let mut buf = [0; 4];
///     let (n, from) = b.recv_from(&mut buf).await.unwrap();
///     assert_eq!((&buf[..n], from), (&b"ping"[..], a.local_addr().unwrap()));
/// });
/// ```
pub type UdpSocket = Datagram<std::net::UdpSocket>;

/// A Unix domain socket listener: [`Listener`]`<std::os::unix::net::UnixListener>`.
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir().join(format!("crew-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("sock");
/// let _ = std::fs::remove_file(&path);
/// let listener = crew::net::UnixListener::bind(&path).unwrap();
/// let client = crew::block_on(crew::net::UnixStream::connect(&path)).unwrap();
/// let (_server, _) = crew::block_on(listener.accept()).unwrap();
/// drop(client);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[cfg(unix)]
pub type UnixListener = Listener<std::os::unix::net::UnixListener>;

/// A Unix domain socket stream: [`Stream`]`<std::os::unix::net::UnixStream>`.
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
#[cfg(unix)]
pub type UnixStream = Stream<std::os::unix::net::UnixStream>;

/// A Unix domain datagram socket: [`Datagram`]`<std::os::unix::net::UnixDatagram>`.
///
/// # Examples
///
/// ```
/// let (a, b) = crew::net::UnixDatagram::pair().unwrap();
/// crew::block_on(async {
///     a.send(b"hi").await.unwrap();
///     let mut buf = [0; 2];
///     assert_eq!(b.recv(&mut buf).await.unwrap(), 2);
/// });
/// ```
#[cfg(unix)]
pub type UnixDatagram = Datagram<std::os::unix::net::UnixDatagram>;
