//! Sockets on async-io's reactor: thin wrappers over async-io's [`Async`] for stream sockets
//! and listeners, async-io's own type for UDP.
//!
//! [`TcpStream`] and [`UnixStream`] are [`Stream<T>`]: `Async<T>` plus one hint, so that a read
//! after a short read waits for readiness before trying the syscall (see [`Stream`]; it saves two
//! failing reads per request/response exchange). [`TcpListener`] and [`UnixListener`] are
//! [`Listener<L>`], whose `accept` yields them. Both dereference to the `Async` inside and convert
//! to and from it (`into_inner`, `From`), so everything written for async-io or smol works on
//! them. [`UdpSocket`] *is* `Async<std::net::UdpSocket>`. Read and write with the extension
//! traits in [`crate::io`] (futures-lite's `AsyncReadExt`, `AsyncWriteExt`, ...).
//!
//! Invariants:
//! - Readiness comes from async-io's reactor (epoll, kqueue, IOCP via `polling`), driven by a
//!   parked crew worker when one is free (see [`Builder::drive_reactor`]) and by async-io's
//!   fallback thread otherwise. An I/O wake schedules the task like any wake from outside the
//!   pool; no thread is ever blocked on a socket.
//! - Every socket is non-blocking from `bind`/`connect`/`Async::new` on; dropping it
//!   deregisters it from the reactor and closes it.
//! - A read returns `Pending` only after async-io's `poll_readable` has registered the task's
//!   waker (the hint never loses a wakeup; see `stream`).
//!
//! [`Builder::drive_reactor`]: crate::Builder::drive_reactor
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
mod listener;
mod stream;

pub use addr::ToSocketAddrs;
pub use async_io::Async;
pub use listener::Listener;
pub use stream::Stream;

/// A TCP listener: [`Listener`]`<std::net::TcpListener>`. Make one with `TcpListener::bind(addr)`;
/// `accept().await` yields `(TcpStream, SocketAddr)`; `incoming()` is a stream of streams.
///
/// # Examples
///
/// ```
/// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// assert!(listener.get_ref().local_addr().unwrap().port() > 0);
/// ```
pub type TcpListener = Listener<std::net::TcpListener>;

/// A TCP stream: [`Stream`]`<std::net::TcpStream>`. Make one with `TcpStream::connect(addr).await`
/// or from a listener's `accept`.
///
/// # Examples
///
/// ```
/// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// let addr = listener.get_ref().local_addr().unwrap();
/// let stream = crew::block_on(crew::net::TcpStream::connect(addr)).unwrap();
/// assert_eq!(stream.get_ref().peer_addr().unwrap(), addr);
/// ```
pub type TcpStream = Stream<std::net::TcpStream>;

/// A UDP socket: `Async<std::net::UdpSocket>`. Make one with `UdpSocket::bind(addr)`.
///
/// # Examples
///
/// ```
/// use crew::net::UdpSocket;
///
/// let a = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
/// let b = UdpSocket::bind(([127, 0, 0, 1], 0)).unwrap();
/// let to = b.get_ref().local_addr().unwrap();
/// crew::block_on(async {
///     a.send_to(b"ping", to).await.unwrap();
///     let mut buf = [0; 4];
///     let (n, from) = b.recv_from(&mut buf).await.unwrap();
///     assert_eq!((&buf[..n], from), (&b"ping"[..], a.get_ref().local_addr().unwrap()));
/// });
/// ```
pub type UdpSocket = Async<std::net::UdpSocket>;

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
