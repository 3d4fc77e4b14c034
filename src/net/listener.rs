//! [`Listener`]: async-io's `Async<L>` for a listening socket, accepting crew [`Stream`]s.
//!
//! Invariants:
//! - Accepting is async-io's, unchanged (`Async::accept`, `Async::incoming`); the accepted
//!   socket is only wrapped in a [`Stream`], which adds nothing but its read hint.

use std::fmt;
use std::io;
use std::ops::Deref;

use async_io::Async;
use futures_lite::{Stream as AsyncStream, StreamExt};

use super::Stream;

/// A listening socket on async-io's reactor whose `accept` yields crew [`Stream`]s.
/// [`TcpListener`](super::TcpListener) and [`UnixListener`](super::UnixListener) are this type.
///
/// It dereferences to [`Async<L>`], so every method of async-io's type works on it
/// (`get_ref`, `readable`, ...); [`Listener::into_inner`] and `From<Async<L>>` convert both ways.
///
/// # Examples
///
/// ```
/// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
/// assert!(listener.get_ref().local_addr().unwrap().port() > 0);
/// ```
pub struct Listener<L> {
    io: Async<L>,
}

impl<L> Listener<L> {
    /// async-io's [`Async<L>`] inside, for code written against async-io or smol.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let io: crew::net::Async<std::net::TcpListener> = listener.into_inner();
    /// assert!(io.get_ref().local_addr().is_ok());
    /// ```
    pub fn into_inner(self) -> Async<L> {
        self.io
    }

    /// The socket as async-io's [`Async<L>`] (what `Deref` gives too).
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert!(listener.as_async().get_ref().local_addr().is_ok());
    /// ```
    pub fn as_async(&self) -> &Async<L> {
        &self.io
    }
}

impl<L> From<Async<L>> for Listener<L> {
    fn from(io: Async<L>) -> Listener<L> {
        Listener { io }
    }
}

impl<L> Deref for Listener<L> {
    type Target = Async<L>;

    fn deref(&self) -> &Async<L> {
        &self.io
    }
}

impl<L: fmt::Debug> fmt::Debug for Listener<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener").field("io", &self.io).finish()
    }
}

impl Listener<std::net::TcpListener> {
    /// Binds a listener to `addr` (port 0 picks a free port): anything
    /// [`ToSocketAddrs`](super::ToSocketAddrs) takes. A name is looked up in
    /// [`block_in_place`](fn@crate::block_in_place), and each address it gives is tried in order
    /// until one binds (the last error otherwise).
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert!(listener.get_ref().local_addr().unwrap().ip().is_loopback());
    /// let by_name = crew::net::TcpListener::bind("localhost:0").unwrap();
    /// assert!(by_name.get_ref().local_addr().unwrap().ip().is_loopback());
    /// ```
    pub fn bind<A: super::ToSocketAddrs>(addr: A) -> io::Result<Self> {
        let addrs = super::addr::resolve_blocking(addr.addrs())?;
        super::addr::first_that_works(addrs, Async::<std::net::TcpListener>::bind).map(Listener::from)
    }

    /// Waits for a connection: the stream and the peer's address.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::net::{TcpListener, TcpStream};
    ///
    /// let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.get_ref().local_addr().unwrap();
    /// crew::block_on(async {
    ///     let client = TcpStream::connect(addr).await.unwrap();
    ///     let (_server, peer) = listener.accept().await.unwrap();
    ///     assert_eq!(peer, client.get_ref().local_addr().unwrap());
    /// });
    /// ```
    pub async fn accept(&self) -> io::Result<(Stream<std::net::TcpStream>, std::net::SocketAddr)> {
        let (stream, peer) = self.io.accept().await?;
        Ok((Stream::from(stream), peer))
    }

    /// The accepted connections, as a stream that never ends.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::net::{TcpListener, TcpStream};
    /// use futures_lite::StreamExt;
    ///
    /// let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.get_ref().local_addr().unwrap();
    /// crew::block_on(async {
    ///     let _client = TcpStream::connect(addr).await.unwrap();
    ///     let mut incoming = std::pin::pin!(listener.incoming());
    ///     let server = incoming.next().await.unwrap().unwrap();
    ///     assert_eq!(server.get_ref().local_addr().unwrap(), addr);
    /// });
    /// ```
    pub fn incoming(&self) -> impl AsyncStream<Item = io::Result<Stream<std::net::TcpStream>>> + Send + '_ {
        self.io.incoming().map(|accepted| accepted.map(Stream::from))
    }
}

#[cfg(unix)]
impl Listener<std::os::unix::net::UnixListener> {
    /// Binds a listener to the Unix socket path `path` (which must not exist yet).
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("crew-doc-bind-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let listener = crew::net::UnixListener::bind(dir.join("sock")).unwrap();
    /// assert!(listener.get_ref().local_addr().is_ok());
    /// drop(listener);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn bind<P: AsRef<std::path::Path>>(path: P) -> io::Result<Self> {
        Async::<std::os::unix::net::UnixListener>::bind(path).map(Listener::from)
    }

    /// Waits for a connection: the stream and the peer's address.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("crew-doc-accept-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("sock");
    /// let listener = crew::net::UnixListener::bind(&path).unwrap();
    /// crew::block_on(async {
    ///     let _client = crew::net::UnixStream::connect(&path).await.unwrap();
    ///     let (server, _peer) = listener.accept().await.unwrap();
    ///     assert!(server.get_ref().peer_addr().is_ok());
    /// });
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub async fn accept(&self) -> io::Result<(Stream<std::os::unix::net::UnixStream>, std::os::unix::net::SocketAddr)> {
        let (stream, peer) = self.io.accept().await?;
        Ok((Stream::from(stream), peer))
    }

    /// The accepted connections, as a stream that never ends.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::StreamExt;
    ///
    /// let dir = std::env::temp_dir().join(format!("crew-doc-incoming-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("sock");
    /// let listener = crew::net::UnixListener::bind(&path).unwrap();
    /// crew::block_on(async {
    ///     let _client = crew::net::UnixStream::connect(&path).await.unwrap();
    ///     let mut incoming = std::pin::pin!(listener.incoming());
    ///     assert!(incoming.next().await.unwrap().is_ok());
    /// });
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn incoming(&self) -> impl AsyncStream<Item = io::Result<Stream<std::os::unix::net::UnixStream>>> + Send + '_ {
        self.io.incoming().map(|accepted| accepted.map(Stream::from))
    }
}
