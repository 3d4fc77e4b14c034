//! TCP on crew's driver: what [`TcpStream`](super::TcpStream) and
//! [`TcpListener`](super::TcpListener) add to [`Stream`] and [`Listener`].
//!
//! Invariants:
//! - A connect is non-blocking (mio's `TcpStream::connect`): the socket is registered at once,
//!   and the connect waits for write readiness, then reads `SO_ERROR` (`Stream::connected`), so
//!   a refused connect is the error the kernel gave, never a hang.
//! - Names are looked up as `addr.rs` says: off the workers, each address tried in order.

use std::io;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;

use super::addr::{first_that_works, resolve, resolve_blocking};
use super::{Listener, Stream, ToSocketAddrs};

impl Stream<std::net::TcpStream> {
    /// Connects to `addr`: anything [`ToSocketAddrs`] takes. A name is looked up on the blocking
    /// pool, and each address it gives is tried in order until one connects (the last error
    /// otherwise), as std does.
    ///
    /// # Errors
    ///
    /// The last address's connect error (`ConnectionRefused`, ...), or the lookup's.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let stream = crew::block_on(crew::net::TcpStream::connect(addr)).unwrap();
    /// assert_eq!(stream.peer_addr().unwrap(), addr);
    /// ```
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<Self> {
        let addrs = resolve(addr.addrs()).await?;
        let mut last = None;
        for addr in addrs {
            match connect_one(addr).await {
                Ok(stream) => return Ok(stream),
                Err(error) => last = Some(error),
            }
        }
        Err(last.expect("resolve gives at least one address"))
    }

    /// The local address.
    ///
    /// # Errors
    ///
    /// The socket's (`getsockname(2)`).
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let stream = crew::block_on(crew::net::TcpStream::connect(listener.local_addr().unwrap())).unwrap();
    /// assert!(stream.local_addr().unwrap().ip().is_loopback());
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().local_addr()
    }

    /// The peer's address.
    ///
    /// # Errors
    ///
    /// The socket's (`NotConnected` once the peer is gone).
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let addr = listener.local_addr().unwrap();
    /// let stream = crew::block_on(crew::net::TcpStream::connect(addr)).unwrap();
    /// assert_eq!(stream.peer_addr().unwrap(), addr);
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().peer_addr()
    }

    /// Sets `TCP_NODELAY`: `true` sends each write at once, rather than holding small ones back
    /// (Nagle's algorithm).
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let stream = crew::block_on(crew::net::TcpStream::connect(listener.local_addr().unwrap())).unwrap();
    /// stream.set_nodelay(true).unwrap();
    /// assert!(stream.nodelay().unwrap());
    /// ```
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.get_ref().set_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let stream = crew::block_on(crew::net::TcpStream::connect(listener.local_addr().unwrap())).unwrap();
    /// assert!(!stream.nodelay().unwrap());
    /// ```
    pub fn nodelay(&self) -> io::Result<bool> {
        self.get_ref().nodelay()
    }

    /// Sets the IP time-to-live of what this socket sends.
    ///
    /// # Errors
    ///
    /// The socket's (`InvalidInput` for a TTL the kernel refuses).
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let stream = crew::block_on(crew::net::TcpStream::connect(listener.local_addr().unwrap())).unwrap();
    /// stream.set_ttl(42).unwrap();
    /// assert_eq!(stream.ttl().unwrap(), 42);
    /// ```
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.get_ref().set_ttl(ttl)
    }

    /// The IP time-to-live of what this socket sends.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// let stream = crew::block_on(crew::net::TcpStream::connect(listener.local_addr().unwrap())).unwrap();
    /// assert!(stream.ttl().unwrap() > 0);
    /// ```
    pub fn ttl(&self) -> io::Result<u32> {
        self.get_ref().ttl()
    }
}

/// Connects to one address: a non-blocking connect, then the wait for its outcome.
async fn connect_one(addr: SocketAddr) -> io::Result<Stream<std::net::TcpStream>> {
    Stream::connected(std::net::TcpStream::from(OwnedFd::from(mio::net::TcpStream::connect(addr)?))).await
}

impl Listener<std::net::TcpListener> {
    /// Binds a listener to `addr` (port 0 picks a free port): anything [`ToSocketAddrs`] takes.
    /// A name is looked up in [`block_in_place`](fn@crate::block_in_place), and each address it
    /// gives is tried in order until one binds (the last error otherwise).
    ///
    /// # Errors
    ///
    /// The last address's bind error (`AddrInUse`, ...), or the lookup's.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert!(listener.local_addr().unwrap().ip().is_loopback());
    /// let by_name = crew::net::TcpListener::bind("localhost:0").unwrap();
    /// assert!(by_name.local_addr().unwrap().ip().is_loopback());
    /// ```
    pub fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<Self> {
        let addrs = resolve_blocking(addr.addrs())?;
        first_that_works(addrs, |addr| Listener::from_std(std::net::TcpListener::bind(addr)?))
    }

    /// The local address (with the port the kernel picked for port 0).
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert_ne!(listener.local_addr().unwrap().port(), 0);
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.get_ref().local_addr()
    }

    /// Sets the IP time-to-live of the sockets it accepts.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// listener.set_ttl(42).unwrap();
    /// assert_eq!(listener.ttl().unwrap(), 42);
    /// ```
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.get_ref().set_ttl(ttl)
    }

    /// The IP time-to-live of the sockets it accepts.
    ///
    /// # Errors
    ///
    /// The socket's.
    ///
    /// # Examples
    ///
    /// ```
    /// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    /// assert!(listener.ttl().unwrap() > 0);
    /// ```
    pub fn ttl(&self) -> io::Result<u32> {
        self.get_ref().ttl()
    }
}
