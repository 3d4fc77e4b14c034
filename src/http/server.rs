//! [`serve`], [`Serve`] and [`WithGracefulShutdown`]: the accept loop and what configures it.
//!
//! Invariants:
//! - The serve future owns the connections' group (an `Arc` no member holds): dropping the
//!   future drops the group, and every member with it.
//! - The accept loop (`accept.rs`) owns the listener. It ends only on the shutdown signal or on
//!   a broken listener; either way it is dropped (and the listener with it) before the
//!   connections are told to wind down, and the serve resolves once the last member of the
//!   group has ended.
//! - Bad settings panic at the call that makes them, naming the value and what is accepted.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;

use super::accept::accept_until;
use super::config::Config;
use super::gate::Gate;
use super::listener::Listener;
use super::{BoxError, GROUP_NAME};
use crate::join_set::TaskGroup;

/// Serves `service` on every connection `listener` accepts, until the listener breaks; each
/// connection is a crew task on the current pool, and so is each HTTP/2 stream. What
/// `axum::serve(listener, app)` is, on crew: HTTP/1.1 with keep-alive and HTTP/2 with prior
/// knowledge on one port, upgrades (`hyper::upgrade::on`), the peer's address as a
/// [`PeerAddr`](super::PeerAddr) request extension, and `TCP_NODELAY` on accepted TCP sockets.
///
/// Await the [`Serve`] it returns (it is [`IntoFuture`]), after configuring it if need be:
/// [`with_graceful_shutdown`](Serve::with_graceful_shutdown),
/// [`max_connections`](Serve::max_connections),
/// [`header_read_timeout`](Serve::header_read_timeout), [`stall_timeout`](Serve::stall_timeout),
/// [`tcp_nodelay`](Serve::tcp_nodelay).
///
/// # Errors
///
/// The future gives `Err` only when the listener itself breaks (`accept` fails with
/// `InvalidInput`: the socket no longer listens); it then winds the open connections down as a
/// graceful shutdown does first. Any other accept error (out of file descriptors, a connection
/// reset before it was accepted) never ends it: it waits 10 ms, doubling up to 1 s while the
/// errors go on, and tries again; the first error of each run is reported with
/// `tracing::warn!`, the others at `debug`, and the end of the run at `info` (install a
/// `tracing` subscriber to see them). A bad request, a client gone mid-body, a timed-out
/// header read or a stall ([`stall_timeout`](Serve::stall_timeout)) ends only that
/// connection; a panic in the service ends only the connection (HTTP/1) or the stream
/// (HTTP/2) of its request.
///
/// # Examples
///
/// ```no_run
/// use std::convert::Infallible;
///
/// use hyper::{body::Incoming, Request, Response};
///
/// # async fn run() -> std::io::Result<()> {
/// let app = tower::service_fn(|request: Request<Incoming>| async move {
///     let crew::http::PeerAddr(peer) = *request.extensions().get::<crew::http::PeerAddr>().unwrap();
///     Ok::<_, Infallible>(Response::new(format!("hello, {peer}")))
/// });
/// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
/// crew::http::serve(listener, app).await
/// # }
/// ```
pub fn serve<L, S, B>(listener: L, service: S) -> Serve<L, S>
where
    L: Listener,
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    Serve { listener, service, config: Config::default() }
}

/// A server not yet started: what [`serve`] returns. Configure it, then `.await` it.
///
/// # Examples
///
/// ```no_run
/// use std::convert::Infallible;
/// use std::time::Duration;
///
/// # async fn run() -> std::io::Result<()> {
/// let app = tower::service_fn(|_: hyper::Request<hyper::body::Incoming>| async {
///     Ok::<_, Infallible>(hyper::Response::new(String::from("ok")))
/// });
/// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
/// crew::http::serve(listener, app)
///     .max_connections(1_000)
///     .header_read_timeout(Duration::from_secs(5))
///     .await
/// # }
/// ```
#[must_use = "a server does nothing until it is awaited"]
pub struct Serve<L, S> {
    listener: L,
    service: S,
    config: Config,
}

/// A server that shuts down gracefully when its signal completes: what
/// [`Serve::with_graceful_shutdown`] returns. `.await` it.
///
/// # Examples
///
/// ```no_run
/// # async fn run(app: App) -> std::io::Result<()> {
/// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
/// let (stop, stopped) = futures::channel::oneshot::channel::<()>();
/// let server = crew::spawn(async move {
///     crew::http::serve(listener, app).with_graceful_shutdown(async move { stopped.await.ok(); }).await
/// });
/// stop.send(()).unwrap();
/// server.await
/// # }
/// # type App = tower::util::ServiceFn<fn(hyper::Request<hyper::body::Incoming>) -> std::future::Ready<Result<hyper::Response<String>, std::convert::Infallible>>>;
/// ```
#[must_use = "a server does nothing until it is awaited"]
pub struct WithGracefulShutdown<L, S, F> {
    serve: Serve<L, S>,
    signal: F,
}

/// The future of a [`Serve`] or a [`WithGracefulShutdown`]: `Ok(())` once it has shut down
/// gracefully, `Err` if its listener broke. Dropping it drops every connection.
///
/// # Examples
///
/// ```no_run
/// use std::future::IntoFuture;
///
/// # fn run(app: App) -> std::io::Result<()> {
/// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
/// let server: crew::http::ServeFuture = crew::http::serve(listener, app).into_future();
/// crew::spawn(server).detach();
/// # Ok(()) }
/// # type App = tower::util::ServiceFn<fn(hyper::Request<hyper::body::Incoming>) -> std::future::Ready<Result<hyper::Response<String>, std::convert::Infallible>>>;
/// ```
#[must_use = "a server does nothing until it is awaited"]
pub struct ServeFuture(Pin<Box<dyn Future<Output = io::Result<()>> + Send>>);

impl<L: Listener, S> Serve<L, S> {
    /// Sets `TCP_NODELAY` on every accepted TCP socket (`true`, the default: responses go out
    /// as soon as they are written, not held back by Nagle's algorithm), or leaves the socket's
    /// own default (`false`). Unix sockets have no such option: it changes nothing for them.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(app: App) -> std::io::Result<()> {
    /// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
    /// crew::http::serve(listener, app).tcp_nodelay(false).await
    /// # }
    /// # type App = tower::util::ServiceFn<fn(hyper::Request<hyper::body::Incoming>) -> std::future::Ready<Result<hyper::Response<String>, std::convert::Infallible>>>;
    /// ```
    pub fn tcp_nodelay(mut self, on: bool) -> Serve<L, S> {
        self.config.tcp_nodelay = on;
        self
    }

    /// Keeps at most `limit` connections open at once ([`DEFAULT_MAX_CONNECTIONS`](super::DEFAULT_MAX_CONNECTIONS) by
    /// default): while `limit` are open, the server accepts no more, and new connects wait in
    /// the kernel's backlog (or are refused once it is full) until one closes. So a client
    /// that holds connections open holds at most this many places; how long it can hold one
    /// is up to the [header-read](Serve::header_read_timeout) and
    /// [stall](Serve::stall_timeout) timeouts, and docs/http.md ("Limits") says exactly what
    /// each of them stops and what none does.
    ///
    /// # Panics
    ///
    /// If `limit` is 0: a server that accepts nothing. Any limit from 1 up is accepted.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(app: App) -> std::io::Result<()> {
    /// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
    /// crew::http::serve(listener, app).max_connections(512).await
    /// # }
    /// # type App = tower::util::ServiceFn<fn(hyper::Request<hyper::body::Incoming>) -> std::future::Ready<Result<hyper::Response<String>, std::convert::Infallible>>>;
    /// ```
    pub fn max_connections(mut self, limit: usize) -> Serve<L, S> {
        assert!(limit > 0, "max_connections({limit}): a server must accept at least 1 connection (expected 1 or more)");
        self.config.max_connections = limit;
        self
    }

    /// How long a client may take to send a request head: from its connect to the bytes that
    /// tell HTTP/1 from HTTP/2, then, on HTTP/1, for each request head (hyper's
    /// `header_read_timeout`, which also closes a keep-alive connection left idle that long).
    /// A client that is too slow has its connection closed.
    /// [`DEFAULT_HEADER_READ_TIMEOUT`](super::DEFAULT_HEADER_READ_TIMEOUT)
    /// (30 s) by default; `None` turns it off. An HTTP/2 connection past its preface is not
    /// timed out: [`max_connections`](Serve::max_connections) bounds their number.
    ///
    /// # Panics
    ///
    /// If the timeout is zero: every connection would time out at once. Any duration above
    /// zero, or `None`, is accepted.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # async fn run(app: App) -> std::io::Result<()> {
    /// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
    /// crew::http::serve(listener, app).header_read_timeout(Duration::from_secs(5)).await
    /// # }
    /// # type App = tower::util::ServiceFn<fn(hyper::Request<hyper::body::Incoming>) -> std::future::Ready<Result<hyper::Response<String>, std::convert::Infallible>>>;
    /// ```
    pub fn header_read_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Serve<L, S> {
        let timeout = timeout.into();
        assert!(
            timeout != Some(Duration::ZERO),
            "header_read_timeout({timeout:?}): a zero timeout closes every connection at once (expected a duration above zero, or None to turn it off)"
        );
        self.config.header_read_timeout = timeout;
        self
    }

    /// How long a connection may wait on its peer with no byte moved before it is closed:
    /// [`DEFAULT_STALL_TIMEOUT`](super::DEFAULT_STALL_TIMEOUT) (60 s, nginx's
    /// `client_body_timeout` and `send_timeout`) by default; `None` turns it off. A connection
    /// waits on its peer when
    /// - a write waits: the peer takes no more of the response (its socket is full), on
    ///   HTTP/1 or HTTP/2;
    /// - on HTTP/1, a read waits while a request is in flight: the handler asked for body
    ///   bytes the client does not send.
    ///
    /// The wait is timed from its start, and starts over at each byte the waiting side moves.
    /// Not timed: a handler that takes long to answer (it waits on itself, not on the peer);
    /// an idle keep-alive connection (the [header-read timeout](Serve::header_read_timeout)'s);
    /// on HTTP/2, a request body that stops coming (its connection reads for all its streams
    /// at once, all the time, so a read says nothing of one request) and a response its peer's
    /// flow-control window holds back (no write waits); and a client that moves a byte within
    /// every timeout, however slowly (bound that outside the serve, with a deadline on the
    /// whole request or a proxy that buffers bodies: docs/http.md, "Limits").
    ///
    /// # Panics
    ///
    /// If the timeout is zero: every connection would be closed at its first wait. Any
    /// duration above zero, or `None`, is accepted.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # async fn run(app: App) -> std::io::Result<()> {
    /// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
    /// crew::http::serve(listener, app).stall_timeout(Duration::from_secs(20)).await
    /// # }
    /// # type App = tower::util::ServiceFn<fn(hyper::Request<hyper::body::Incoming>) -> std::future::Ready<Result<hyper::Response<String>, std::convert::Infallible>>>;
    /// ```
    pub fn stall_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Serve<L, S> {
        let timeout = timeout.into();
        assert!(
            timeout != Some(Duration::ZERO),
            "stall_timeout({timeout:?}): a zero timeout closes every connection at its first wait on its peer (expected a duration above zero, or None to turn it off)"
        );
        self.config.stall_timeout = timeout;
        self
    }

    /// This server, to shut down gracefully once `signal` completes: it then stops accepting
    /// at once (the signal is polled before every accept, so not one connection is accepted
    /// after it has completed, however many are queued; the listener is closed, so new
    /// connects are refused), closes idle connections, lets the requests in flight finish
    /// (HTTP/1 closes each connection after its response, HTTP/2 sends GOAWAY and finishes
    /// the streams it has), and resolves once every connection has ended.
    ///
    /// A connection with no request in flight is closed 1 s after its GOAWAY (HTTP/1: after
    /// it was told to wind down; or after its last response is on the socket, if that is
    /// later) whatever its peer does, as Go's HTTP/2 server does: h2 waits for the peer's answer to the PING it sends with its
    /// GOAWAY, and a peer that never answers would hold the shutdown forever. In flight means,
    /// on HTTP/1, from the service's call until the response is on the socket; on HTTP/2, a
    /// stream from the client's HEADERS until the server's END_STREAM (or a reset) is on the
    /// socket, so a response that its peer's flow-control window holds back is not cut. A
    /// request in flight is waited for as long as its handler takes and its peer keeps moving
    /// bytes ([`stall_timeout`](Serve::stall_timeout)); to bound the whole wait, wrap the
    /// future in [`crew::time::timeout`](crate::time::timeout): when it fires, the serve
    /// future is dropped, and every connection with it.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn run(app: App) -> std::io::Result<()> {
    /// let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
    /// crew::http::serve(listener, app)
    ///     .with_graceful_shutdown(async { crew::time::sleep(std::time::Duration::from_secs(60)).await })
    ///     .await
    /// # }
    /// # type App = tower::util::ServiceFn<fn(hyper::Request<hyper::body::Incoming>) -> std::future::Ready<Result<hyper::Response<String>, std::convert::Infallible>>>;
    /// ```
    pub fn with_graceful_shutdown<F>(self, signal: F) -> WithGracefulShutdown<L, S, F>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        WithGracefulShutdown { serve: self, signal }
    }
}

impl<L, S, B> IntoFuture for Serve<L, S>
where
    L: Listener,
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Output = io::Result<()>;
    type IntoFuture = ServeFuture;

    fn into_future(self) -> ServeFuture {
        self.with_graceful_shutdown(std::future::pending()).into_future()
    }
}

impl<L, S, B, F> IntoFuture for WithGracefulShutdown<L, S, F>
where
    L: Listener,
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: Future<Output = ()> + Send + 'static,
{
    type Output = io::Result<()>;
    type IntoFuture = ServeFuture;

    fn into_future(self) -> ServeFuture {
        let Serve { listener, service, config } = self.serve;
        ServeFuture(Box::pin(run(listener, service, config, self.signal)))
    }
}

impl Future for ServeFuture {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll(cx)
    }
}

/// Accepts until `signal` or a broken listener, then winds every connection down.
async fn run<L, S, B>(listener: L, service: S, config: Config, signal: impl Future<Output = ()>) -> io::Result<()>
where
    L: Listener,
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let group = Arc::new(TaskGroup::named(GROUP_NAME));
    let gate = Gate::new(config.max_connections);
    // The loop, and the listener in it, are gone once it returns.
    let stopped = accept_until(listener, service, config, &group, &gate, signal).await;
    gate.shut_down();
    group.wait().await;
    stopped
}

impl<L: fmt::Debug, S> fmt::Debug for Serve<L, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve").field("listener", &self.listener).field("config", &self.config).finish_non_exhaustive()
    }
}

impl<L: fmt::Debug, S, F> fmt::Debug for WithGracefulShutdown<L, S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithGracefulShutdown").field("serve", &self.serve).finish_non_exhaustive()
    }
}

impl fmt::Debug for ServeFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServeFuture")
    }
}
