//! HTTP servers on crew (the `http` feature): [`serve`] runs a tower service (an axum
//! `Router`, tonic's `Routes`, any `Service` of `http::Request`s) with every connection and every
//! request on crew's workers, shaped like `axum::serve` so that moving is one line.
//!
//! Invariants:
//! - Every accepted connection is a crew task in one task group (named [`GROUP_NAME`]) that
//!   the serve future owns, on the current pool (the pool that polls the serve future, as
//!   [`crew::spawn`](crate::spawn) picks it); what hyper spawns for a connection (an HTTP/2
//!   stream) joins the same group through an executor that holds the group weakly, so that no
//!   member keeps its own group alive. Dropping the serve future drops the group, which aborts
//!   every member: nothing it started outlives it but the tasks a handler spawns itself (an
//!   upgraded connection's, say).
//! - The listener lives inside the accept loop only: graceful shutdown drops the loop, and the
//!   listener with it (new connects are refused), before it tells a single connection to stop.
//! - The accept loop polls the shutdown signal before every accept, and accepts no connection
//!   once it has completed; it accepts at most 64 connections in one poll, then yields to the
//!   other tasks of its worker, however many connects are queued.
//! - An accept error never ends the loop, except one that says the listener itself is broken
//!   (`InvalidInput`: `EINVAL`, the socket no longer listens); the loop backs off (10 ms,
//!   doubling up to 1 s, back to 10 ms after the next accept) and reports the first error of
//!   each run with `tracing::warn!`.
//! - Once the serve shuts down gracefully, every connection is told to wind down, and one
//!   with no request in flight is closed 1 s after its GOAWAY (or its last response), whatever
//!   its peer does: the serve resolves once every connection has ended, or been closed so.
//! - At most `max_connections` connections are open at once: the loop does not call `accept`
//!   while the limit is reached, so new connects wait in the kernel's backlog.
//! - A connection is closed when it has waited on its peer with no byte moved for the stall
//!   timeout (a write that waits; on HTTP/1, a read that waits while a request is in flight),
//!   when its HTTP/1 client hangs up with a request in flight, and when the header-read
//!   timeout passes before its protocol is told or, on HTTP/1, before a request head is
//!   whole (an idle keep-alive connection's next one included). Nothing else times a
//!   connection: not a handler that takes long, nor an HTTP/2 connection past its preface but
//!   for a write that waits.
//! - A panic inside the service unwinds into the task polling it and ends that task only: the
//!   connection's (HTTP/1, whose requests run inside the connection's task) or the stream's
//!   (HTTP/2, whose requests each run in a task of their own).
//!
//! # Examples
//!
//! ```no_run
//! use std::convert::Infallible;
//!
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use hyper::{body::Incoming, Request, Response};
//!
//! # async fn run() -> std::io::Result<()> {
//! // Any tower service of `http::Request<hyper::body::Incoming>`: an axum Router, or a closure.
//! let hello = tower::service_fn(|_request: Request<Incoming>| async {
//!     Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("hello"))))
//! });
//! let listener = crew::net::TcpListener::bind("127.0.0.1:3000")?;
//! crew::http::serve(listener, hello)
//!     .with_graceful_shutdown(async { std::future::pending::<()>().await })
//!     .await
//! # }
//! ```

mod accept;
mod config;
mod connection;
mod gate;
mod h2_frames;
mod listener;
mod peer;
mod request;
mod server;
mod watch;
mod watched;

use std::time::Duration;

pub use listener::Listener;
pub use server::{serve, Serve, ServeFuture, WithGracefulShutdown};

/// The task group every connection task (and every HTTP/2 stream task) of a serve joins: the
/// task dump and slow-poll reports name their set by it.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::http::GROUP_NAME, "http connections");
/// ```
pub const GROUP_NAME: &str = "http connections";

/// How many connections a serve keeps open at most unless told otherwise
/// ([`Serve::max_connections`]).
///
/// # Examples
///
/// ```
/// assert_eq!(crew::http::DEFAULT_MAX_CONNECTIONS, 10_000);
/// ```
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// How long a connection may take to send a request head unless told otherwise
/// ([`Serve::header_read_timeout`]): hyper's own default.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::http::DEFAULT_HEADER_READ_TIMEOUT.as_secs(), 30);
/// ```
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a connection may wait on its peer with no byte moved unless told otherwise
/// ([`Serve::stall_timeout`]): nginx's `client_body_timeout` and `send_timeout`.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::http::DEFAULT_STALL_TIMEOUT.as_secs(), 60);
/// ```
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The peer's address, which [`serve`] puts in every request's extensions: a
/// `std::net::SocketAddr` for a [`TcpListener`](crate::net::TcpListener), a
/// `std::os::unix::net::SocketAddr` for a [`UnixListener`](crate::net::UnixListener).
///
/// It is what axum's `ConnectInfo<SocketAddr>` gives under `axum::serve` with
/// `into_make_service_with_connect_info`: take it with `Extension<PeerAddr>` in axum, or
/// `request.extensions().get::<PeerAddr>()` anywhere (docs/http.md shows both).
///
/// # Examples
///
/// ```
/// use crew::http::PeerAddr;
///
/// let mut request = http::Request::new(());
/// request.extensions_mut().insert(PeerAddr(std::net::SocketAddr::from(([127, 0, 0, 1], 4000))));
/// let PeerAddr(peer) = request.extensions().get::<PeerAddr>().copied().unwrap();
/// assert_eq!(peer.port(), 4000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeerAddr<A = std::net::SocketAddr>(pub A);

/// What a service's errors and a body's errors turn into (hyper's own error type).
type BoxError = Box<dyn std::error::Error + Send + Sync>;
