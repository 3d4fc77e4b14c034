//! Unix domain stream sockets on crew's driver: what [`UnixStream`](super::UnixStream) and
//! [`UnixListener`](super::UnixListener) add to [`Stream`] and [`Listener`].
//!
//! Invariants: a connect is non-blocking (mio's `UnixStream::connect`), registered at once, and
//! waits for its outcome as a TCP connect does (`Stream::connected`).

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::net::SocketAddr;
use std::path::Path;

use super::{Listener, Stream};

impl Stream<std::os::unix::net::UnixStream> {
    /// Connects to the Unix socket at `path`.
    ///
    /// # Errors
    ///
    /// The connect's (`NotFound` for no socket there, `ConnectionRefused` for one nobody
    /// listens on).
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("crew-doc-connect-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("sock");
    /// let listener = crew::net::UnixListener::bind(&path).unwrap();
    /// let client = crew::block_on(crew::net::UnixStream::connect(&path)).unwrap();
    /// assert!(client.peer_addr().is_ok());
    /// drop(listener);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub async fn connect<P: AsRef<Path>>(path: P) -> io::Result<Self> {
        let socket = std::os::unix::net::UnixStream::from(OwnedFd::from(mio::net::UnixStream::connect(path)?));
        Stream::connected(socket).await
    }

    /// A pair of connected Unix streams.
    ///
    /// # Errors
    ///
    /// The kernel's (`socketpair(2)`, out of descriptors), or the driver's registration.
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
        let (a, b) = std::os::unix::net::UnixStream::pair()?;
        Ok((Stream::from_std(a)?, Stream::from_std(b)?))
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
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// assert!(a.local_addr().unwrap().is_unnamed());
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().local_addr()
    }

    /// The peer's address.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, _b) = crew::net::UnixStream::pair().unwrap();
    /// assert!(a.peer_addr().unwrap().is_unnamed());
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().peer_addr()
    }
}

impl Listener<std::os::unix::net::UnixListener> {
    /// Binds a listener to the Unix socket path `path` (which must not exist yet).
    ///
    /// # Errors
    ///
    /// The bind's (`AddrInUse` if `path` exists).
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("crew-doc-bind-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let listener = crew::net::UnixListener::bind(dir.join("sock")).unwrap();
    /// assert!(listener.local_addr().is_ok());
    /// drop(listener);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<Self> {
        Listener::from_std(std::os::unix::net::UnixListener::bind(path)?)
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
    /// let dir = std::env::temp_dir().join(format!("crew-doc-laddr-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("sock");
    /// let listener = crew::net::UnixListener::bind(&path).unwrap();
    /// assert_eq!(listener.local_addr().unwrap().as_pathname(), Some(path.as_path()));
    /// drop(listener);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().local_addr()
    }
}
