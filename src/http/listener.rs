//! [`Listener`]: what [`serve`](super::serve) accepts on, crew's TCP and Unix listeners.
//!
//! Invariants:
//! - The trait is sealed: its methods live in a supertrait that only this module implements,
//!   so the accept loop's contract (what a broken listener is, what `prepare` sets) can change
//!   without breaking anyone.
//! - An accepted stream is handed over unchanged but for `TCP_NODELAY` when the serve asks for
//!   it; failing to set it is reported at `debug` and the connection is served anyway.
//! - An accepted stream reads and writes through a shared reference ([`sealed::SharedSocket`]),
//!   so that a connection's driving task can read it while hyper holds it.

use std::fmt;
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::io::{AsyncRead, AsyncWrite};

use crate::net::{Stream, StreamSocket, TcpListener, TcpStream};
#[cfg(unix)]
use crate::net::{UnixListener, UnixStream};

/// A listening socket [`serve`](super::serve) accepts connections on:
/// [`TcpListener`] and [`UnixListener`].
/// Sealed: no other type implements it.
///
/// # Examples
///
/// ```
/// fn accepts_on<L: crew::http::Listener>(_: &L) {}
///
/// accepts_on(&crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap());
/// ```
pub trait Listener: sealed::Accept + Send + Sync + 'static {}

impl Listener for TcpListener {}

#[cfg(unix)]
impl Listener for UnixListener {}

/// The sealed half of [`Listener`]: nameable nowhere outside this crate.
pub(crate) mod sealed {
    use super::*;

    /// How the accept loop uses a listener.
    // `pub` in a private module: the supertrait of a public trait, which no one else can name.
    #[allow(unreachable_pub)]
    pub trait Accept {
        /// An accepted connection's stream.
        type Io: SharedSocket;
        /// The peer's address, as `accept` gives it (what [`PeerAddr`](crate::http::PeerAddr) holds).
        type Addr: Clone + fmt::Debug + Send + Sync + 'static;

        /// The next connection.
        fn accept(&self) -> impl Future<Output = io::Result<(Self::Io, Self::Addr)>> + Send;

        /// The address the listener is bound to.
        fn local_addr(&self) -> io::Result<Self::Addr>;

        /// Sets what the serve asks of an accepted stream before hyper sees it.
        fn prepare(io: &Self::Io, tcp_nodelay: bool);
    }

    /// A stream that reads and writes through a shared reference, as crew's sockets do: hyper
    /// holds the connection's stream while the task driving it looks for the peer's hang-up.
    // `pub` in a private module, as `Accept`.
    #[allow(unreachable_pub)]
    pub trait SharedSocket: Send + Sync + 'static {
        fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>>;
        fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>>;
        fn poll_write_vectored(&self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>>;
        fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
        fn poll_close(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
    }

    /// crew's stream sockets ([`TcpStream`], [`UnixStream`]), through
    /// their `&Stream` impls.
    impl<T: StreamSocket> SharedSocket for Stream<T> {
        fn poll_read(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
            AsyncRead::poll_read(Pin::new(&mut &*self), cx, buf)
        }

        fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            AsyncWrite::poll_write(Pin::new(&mut &*self), cx, buf)
        }

        fn poll_write_vectored(&self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
            AsyncWrite::poll_write_vectored(Pin::new(&mut &*self), cx, bufs)
        }

        fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            AsyncWrite::poll_flush(Pin::new(&mut &*self), cx)
        }

        fn poll_close(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            AsyncWrite::poll_close(Pin::new(&mut &*self), cx)
        }
    }
}

impl sealed::Accept for TcpListener {
    type Io = TcpStream;
    type Addr = std::net::SocketAddr;

    fn accept(&self) -> impl Future<Output = io::Result<(TcpStream, std::net::SocketAddr)>> + Send {
        TcpListener::accept(self)
    }

    fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.get_ref().local_addr()
    }

    fn prepare(io: &TcpStream, tcp_nodelay: bool) {
        // Off is the socket's own default: only turning it on is worth a system call.
        if tcp_nodelay {
            if let Err(error) = io.get_ref().set_nodelay(true) {
                tracing::debug!(%error, "crew::http: could not set TCP_NODELAY on an accepted socket");
            }
        }
    }
}

#[cfg(unix)]
impl sealed::Accept for UnixListener {
    type Io = UnixStream;
    type Addr = std::os::unix::net::SocketAddr;

    fn accept(&self) -> impl Future<Output = io::Result<(UnixStream, std::os::unix::net::SocketAddr)>> + Send {
        UnixListener::accept(self)
    }

    fn local_addr(&self) -> io::Result<std::os::unix::net::SocketAddr> {
        self.get_ref().local_addr()
    }

    /// Unix sockets have no Nagle algorithm to turn off.
    fn prepare(_: &UnixStream, _: bool) {}
}

/// Whether `error`, returned by `accept`, says the listener itself is broken: `EINVAL` (the
/// socket does not listen, e.g. after `shutdown(2)`). Every other error is of one connection
/// (`ECONNABORTED`, a reset before accept) or of a resource that frees up (`EMFILE`, `ENFILE`,
/// `ENOBUFS`, `ENOMEM`): worth a retry.
pub(super) fn is_fatal(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::InvalidInput
}

#[cfg(test)]
mod tests {
    use super::sealed::Accept;
    use super::*;

    /// An accepted stream after `prepare(tcp_nodelay)`: whether `TCP_NODELAY` is on.
    fn nodelay_after_prepare(tcp_nodelay: bool) -> bool {
        let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
        let addr = listener.get_ref().local_addr().unwrap();
        crate::block_on(async {
            let _client = TcpStream::connect(addr).await.unwrap();
            let (accepted, _) = Accept::accept(&listener).await.unwrap();
            TcpListener::prepare(&accepted, tcp_nodelay);
            accepted.get_ref().nodelay().unwrap()
        })
    }

    #[test]
    fn prepare_turns_tcp_nodelay_on_when_asked_and_leaves_it_off_otherwise() {
        assert!(nodelay_after_prepare(true));
        assert!(!nodelay_after_prepare(false));
    }

    #[test]
    fn only_invalid_input_is_fatal() {
        assert!(is_fatal(&io::Error::from(io::ErrorKind::InvalidInput)));
        for kind in [io::ErrorKind::ConnectionAborted, io::ErrorKind::ConnectionReset, io::ErrorKind::OutOfMemory] {
            assert!(!is_fatal(&io::Error::from(kind)), "{kind:?}");
        }
        assert!(!is_fatal(&io::Error::from_raw_os_error(24)), "EMFILE");
    }
}
