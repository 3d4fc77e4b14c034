//! One connection: hyper-util's HTTP/1-or-2 connection over a crew socket, driven until it
//! ends or, once the serve shuts down gracefully, until hyper has wound it down.
//!
//! Invariants:
//! - What hyper spawns for a connection ([`GroupExecutor`]) joins the serve's group, which it
//!   holds weakly: a member holding it strongly would keep the group (and itself) alive after
//!   the serve future is dropped. Once the group is gone, a spawn is dropped unrun: its
//!   connection is being dropped too.
//! - The request reaches the service with a [`PeerAddr`] in its extensions, inserted before
//!   the service sees it.
//! - Until a connection has sent the bytes that tell HTTP/1 from HTTP/2 (hyper-util reads at
//!   most the 24 of HTTP/2's preface, and stops at the first that differs), its reads fail
//!   with `TimedOut` once the header-read timeout has passed ([`FirstBytes`]): hyper's own
//!   timeout only starts with HTTP/1's first request head, so without this a client that sends
//!   nothing would hold its place under the connection limit for good.
//! - `graceful_shutdown` is called at most once, while the connection is still pending.

use std::future::{poll_fn, Future};
use std::io::{self, IoSlice};
use std::pin::{pin, Pin};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_lite::io::{AsyncRead, AsyncWrite};
use hyper::body::Incoming;
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;

use super::config::Config;
use super::gate::Permit;
use super::{BoxError, PeerAddr};
use crate::hyper::{Io, Timer};
use crate::join_set::TaskGroup;
use crate::time::Sleep;

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
/// with HTTP/1's header-read timeout at `config`'s.
pub(super) fn builder(group: &Arc<TaskGroup>, config: &Config) -> Builder {
    let mut builder = auto::Builder::new(GroupExecutor(Arc::downgrade(group)));
    builder.http1().timer(Timer).header_read_timeout(config.header_read_timeout);
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
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
        A: Clone + Send + Sync + 'static,
        S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        let io = Io::vectored(FirstBytes::new(io, self.config.header_read_timeout));
        let service = TowerToHyperService::new(AddPeer { inner: self.service, peer: self.peer });
        let connection = self.builder.serve_connection_with_upgrades(io, service);
        if let Err(error) = until_wound_down(connection, &self.permit).await {
            tracing::debug!(%error, "crew::http: a connection ended with an error");
        }
    }
}

/// Drives `connection` to its end; once the serve shuts down, tells hyper to wind it down
/// (an idle connection closes, HTTP/1 closes after the response in flight, HTTP/2 sends
/// GOAWAY and finishes its streams) and drives it on until it has.
async fn until_wound_down<I, S, B>(
    connection: auto::UpgradeableConnection<'_, I, S, GroupExecutor>,
    permit: &Permit,
) -> Result<(), BoxError>
where
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
    poll_fn(|cx| loop {
        if let Poll::Ready(ended) = connection.as_mut().poll(cx) {
            return Poll::Ready(ended);
        }
        if winding_down || Pin::new(&mut shutdown).poll(cx).is_pending() {
            return Poll::Pending;
        }
        connection.as_mut().graceful_shutdown();
        winding_down = true;
        // Polled again at once: an idle connection is done now.
    })
    .await
}

/// A tower service that puts the peer's address in every request's extensions.
#[derive(Debug, Clone)]
struct AddPeer<S, A> {
    inner: S,
    peer: A,
}

impl<S, A, R> tower_service::Service<http::Request<R>> for AddPeer<S, A>
where
    S: tower_service::Service<http::Request<R>>,
    A: Clone + Send + Sync + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<R>) -> S::Future {
        request.extensions_mut().insert(PeerAddr(self.peer.clone()));
        self.inner.call(request)
    }
}

/// HTTP/2's connection preface, which hyper-util looks for to tell HTTP/2 from HTTP/1.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A stream whose reads fail with `TimedOut` once its deadline has passed, until it has read
/// enough to tell HTTP/1 from HTTP/2: the whole preface, a byte that differs from it, or the
/// end of the stream. Writes go straight through.
#[derive(Debug)]
struct FirstBytes<T> {
    inner: T,
    /// `None` once the protocol is told (or with no timeout).
    deadline: Option<Sleep>,
    /// How many bytes of the preface it has read so far.
    matched: usize,
}

impl<T> FirstBytes<T> {
    fn new(inner: T, timeout: Option<Duration>) -> FirstBytes<T> {
        FirstBytes { inner, deadline: timeout.map(crate::time::sleep), matched: 0 }
    }

    /// Looks at bytes just read: the deadline goes once they tell the protocol.
    fn saw(&mut self, read: &[u8]) {
        let rest = &H2_PREFACE[self.matched..];
        let told = read.is_empty() || read.len() >= rest.len() || read != &rest[..read.len()];
        if told {
            self.deadline = None;
        } else {
            self.matched += read.len();
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for FirstBytes<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let read = Pin::new(&mut this.inner).poll_read(cx, buf);
        let Some(deadline) = this.deadline.as_mut() else {
            return read;
        };
        match read {
            Poll::Ready(Ok(n)) => {
                this.saw(&buf[..n]);
                Poll::Ready(Ok(n))
            }
            Poll::Pending if Pin::new(deadline).poll(cx).is_ready() => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client sent no request within the header-read timeout",
            ))),
            other => other,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for FirstBytes<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_bytes() -> FirstBytes<()> {
        FirstBytes::new((), Some(Duration::from_secs(3600)))
    }

    #[test]
    fn an_http1_request_tells_the_protocol_at_its_first_byte() {
        let mut io = first_bytes();
        io.saw(b"G");
        assert!(io.deadline.is_none());
    }

    #[test]
    fn the_preface_tells_the_protocol_only_when_whole() {
        let mut io = first_bytes();
        io.saw(&H2_PREFACE[..10]);
        assert!(io.deadline.is_some(), "10 bytes of the preface say nothing yet");
        io.saw(&H2_PREFACE[10..23]);
        assert!(io.deadline.is_some(), "23 bytes of the preface say nothing yet");
        io.saw(&H2_PREFACE[23..]);
        assert!(io.deadline.is_none());
    }

    #[test]
    fn a_byte_off_the_preface_or_the_end_tells_the_protocol() {
        let mut io = first_bytes();
        io.saw(b"PRI * HTTP/1");
        assert!(io.deadline.is_none(), "PRI * HTTP/1 is not HTTP/2");
        let mut io = first_bytes();
        io.saw(b"");
        assert!(io.deadline.is_none(), "the end of the stream");
    }
}
