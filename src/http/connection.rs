//! One connection: hyper-util's HTTP/1-or-2 connection over a crew socket, driven until it
//! ends or, once the serve shuts down gracefully, until hyper has wound it down or the
//! connection has had no request in flight for [`CLOSE_AFTER_GOAWAY`].
//!
//! Invariants:
//! - What hyper spawns for a connection ([`GroupExecutor`]) joins the serve's group, which it
//!   holds weakly: a member holding it strongly would keep the group (and itself) alive after
//!   the serve future is dropped. Once the group is gone, a spawn is dropped unrun: its
//!   connection is being dropped too.
//! - hyper reads and writes the socket through [`Watched`], and calls the service through
//!   [`Served`]: between them they keep the connection's [`Watch`] (its protocol, its requests
//!   in flight), which the driving task reads after each poll of the connection.
//! - Between two polls of the connection, the task watches the peer ([`Peer`]): a client that
//!   hangs up with an HTTP/1 request in flight, and a stall of the stall timeout, close the
//!   connection (the task returns, dropping it).
//! - `graceful_shutdown` is called at most once, while the connection is still pending. From
//!   then on, the connection is dropped (closed) once it has had none in flight for
//!   [`CLOSE_AFTER_GOAWAY`] without hyper ending it first: h2 waits for its peer's answer to
//!   the PING it sends with its first GOAWAY, and nothing else bounds that wait.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::{Arc, Weak};
use std::task::Poll;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;

use super::config::Config;
use super::gate::Permit;
use super::listener::sealed::SharedSocket;
use super::peer::Peer;
use super::request::Served;
use super::watch::Watch;
use super::watched::Watched;
use super::BoxError;
use crate::hyper::{Io, Timer};
use crate::join_set::TaskGroup;
use crate::time::Sleep;

/// How long a connection that has wound down to no request in flight is left to its peer after
/// the GOAWAY (or after its last response, if later) before it is closed: Go's HTTP/2 server's
/// `goAwayTimeout`.
pub(super) const CLOSE_AFTER_GOAWAY: Duration = Duration::from_secs(1);

/// hyper's executor for a serve's connections: spawns into the serve's group, on the current
/// pool (the connection task's).
#[derive(Debug, Clone)]
pub(super) struct GroupExecutor(Weak<TaskGroup>);

impl<F> hyper::rt::Executor<F> for GroupExecutor
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, future: F) {
        if let Some(group) = self.0.upgrade() {
            crate::task::Builder::new().name(STREAM_TASK).spawn_in_group(&group, future);
        }
    }
}

/// The name of the task serving one connection, as the task dump shows it.
pub(super) const CONNECTION_TASK: &str = "http connection";

/// The name of a task hyper spawns for a connection (an HTTP/2 stream), as the dump shows it.
const STREAM_TASK: &str = "http2 stream";

/// The connection builder every connection of a serve shares.
pub(super) type Builder = auto::Builder<GroupExecutor>;

/// HTTP/1.1 (keep-alive) and HTTP/2 (prior knowledge) on crew's timer, spawning into `group`,
/// with HTTP/1's header-read timeout at `config`'s. HTTP/1 runs with `half_close`: hyper reads
/// during a request only the body its handler asks for, and leaves the look for a hang-up to
/// the driving task's probe ([`Peer`]), so that a read that waits while a request is in flight
/// is one the handler waits on.
pub(super) fn builder(group: &Arc<TaskGroup>, config: &Config) -> Builder {
    let mut builder = auto::Builder::new(GroupExecutor(Arc::downgrade(group)));
    builder.http1().timer(Timer).header_read_timeout(config.header_read_timeout).half_close(true);
    builder.http2().timer(Timer);
    builder
}

/// What one connection needs besides its stream.
pub(super) struct Connection<S, A> {
    pub(super) builder: Arc<Builder>,
    pub(super) service: S,
    pub(super) peer: A,
    pub(super) config: Config,
    /// Its place under the limit, and the shutdown word.
    pub(super) permit: Permit,
}

impl<S, A> Connection<S, A> {
    /// Serves `io` until the connection ends; an error ends this connection only, and is
    /// reported at `debug`.
    pub(super) async fn serve<I, B>(self, io: I)
    where
        I: SharedSocket,
        A: Clone + Send + Sync + 'static,
        S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let watch = Watch::new();
        let io = Arc::new(io);
        let peer = Peer::new(io.clone(), self.config.stall_timeout);
        let io = Io::vectored(Watched::new(io, watch.clone(), self.config.header_read_timeout));
        let service = TowerToHyperService::new(Served { inner: self.service, peer: self.peer, watch: watch.clone() });
        let connection = self.builder.serve_connection_with_upgrades(io, service);
        if let Err(error) = until_wound_down(connection, &self.permit, &watch, peer).await {
            tracing::debug!(%error, "crew::http: a connection ended with an error");
        }
    }
}

/// Drives `connection` to its end, or until its peer hangs up or stalls (`peer`); once the
/// serve shuts down, tells hyper to wind it down (an idle connection closes, HTTP/1 closes
/// after the response in flight, HTTP/2 sends GOAWAY and finishes its streams) and drives it
/// on until it has, or until it has had none in flight for [`CLOSE_AFTER_GOAWAY`]. A
/// connection the task gives up on is dropped, which closes it.
async fn until_wound_down<I, S, B, T>(
    connection: auto::UpgradeableConnection<'_, I, S, GroupExecutor>,
    permit: &Permit,
    watch: &Watch,
    mut peer: Peer<T>,
) -> Result<(), BoxError>
where
    T: SharedSocket,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::Service<http::Request<Incoming>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let mut connection = pin!(connection);
    let mut shutdown = permit.shutdown();
    let mut winding_down = false;
    // Since the connection last had none in flight, once winding down.
    let mut idle: Option<Sleep> = None;
    poll_fn(|cx| loop {
        watch.round_begins();
        if let Poll::Ready(ended) = connection.as_mut().poll(cx) {
            return Poll::Ready(ended);
        }
        if let Poll::Ready(error) = peer.poll(cx, watch, watch.round_ended()) {
            return Poll::Ready(Err(error.into()));
        }
        if !winding_down {
            if Pin::new(&mut shutdown).poll(cx).is_pending() {
                return Poll::Pending;
            }
            connection.as_mut().graceful_shutdown();
            winding_down = true;
            // Polled again at once: an idle connection is done now, and HTTP/2 writes its GOAWAY.
            continue;
        }
        if watch.in_flight() > 0 {
            idle = None;
            return Poll::Pending;
        }
        let idle = idle.get_or_insert_with(|| crate::time::sleep(CLOSE_AFTER_GOAWAY));
        if Pin::new(idle).poll(cx).is_pending() {
            return Poll::Pending;
        }
        tracing::debug!("crew::http: closing a connection that had nothing in flight for 1 s after its GOAWAY");
        return Poll::Ready(Ok(()));
    })
    .await
}
