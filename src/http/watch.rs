//! [`Watch`]: what one connection's socket wrapper ([`Watched`](super::watched::Watched)) and
//! its requests ([`request`](super::request)) tell the task that drives the connection: the
//! protocol, and the requests in flight.
//!
//! Invariants:
//! - **In flight**, on HTTP/1: a request from the service's call until its response is on the
//!   socket (its body has ended, or was dropped, and hyper's next flush of the socket has
//!   returned: hyper flushes the socket only once its own write buffer is empty). On HTTP/2: a
//!   stream, from the client's HEADERS until the server's END_STREAM or a reset is on the
//!   socket ([`h2_frames`](super::h2_frames)). Before the protocol is told, none.
//! - Every count changes on the task that drives the connection (HTTP/1 requests run inside
//!   it; HTTP/2's frames are read and written by it), so that task sees each change at the end
//!   of the poll that made it; the atomics are relaxed, as nothing else is ordered by them.
//! - The protocol is told once, and never changes after.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// What the first bytes of a connection said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    /// Not told yet.
    Unknown = 0,
    Http1 = 1,
    Http2 = 2,
}

/// One connection's protocol and requests in flight.
#[derive(Debug, Default)]
pub(super) struct Watch {
    /// A [`Protocol`], as `u8`.
    protocol: AtomicU8,
    /// See the module docs.
    in_flight: AtomicUsize,
    /// HTTP/1 responses whose body has ended and that wait for the next flush to leave flight.
    unflushed: AtomicUsize,
}

/// One HTTP/1 request in flight: dropping it (when its response body ends, or is dropped) hands
/// it to the next flush.
#[derive(Debug)]
pub(super) struct InFlight {
    watch: Arc<Watch>,
}

impl Watch {
    pub(super) fn new() -> Arc<Watch> {
        Arc::new(Watch::default())
    }

    pub(super) fn protocol(&self) -> Protocol {
        match self.protocol.load(Ordering::Relaxed) {
            1 => Protocol::Http1,
            2 => Protocol::Http2,
            _ => Protocol::Unknown,
        }
    }

    /// The first bytes told the protocol.
    pub(super) fn told(&self, protocol: Protocol) {
        self.protocol.store(protocol as u8, Ordering::Relaxed);
    }

    /// Requests (HTTP/1) or streams (HTTP/2) in flight.
    pub(super) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// The service was called: on HTTP/1, one more request in flight until the token is dropped
    /// and the socket flushed after that. HTTP/2's streams are counted from their frames.
    pub(super) fn request_began(self: &Arc<Self>) -> Option<InFlight> {
        (self.protocol() == Protocol::Http1).then(|| {
            self.in_flight.fetch_add(1, Ordering::Relaxed);
            InFlight { watch: self.clone() }
        })
    }

    /// hyper's flush of the socket returned: every HTTP/1 response whose body had ended is on
    /// the socket.
    pub(super) fn flushed(&self) {
        if self.unflushed.load(Ordering::Relaxed) > 0 {
            let done = self.unflushed.swap(0, Ordering::Relaxed);
            self.in_flight.fetch_sub(done, Ordering::Relaxed);
        }
    }

    /// The HTTP/2 streams in flight, as the frames tell them.
    pub(super) fn set_streams(&self, streams: usize) {
        self.in_flight.store(streams, Ordering::Relaxed);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.watch.unflushed.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http1_request_leaves_flight_at_the_first_flush_after_its_response_ended() {
        let watch = Watch::new();
        watch.told(Protocol::Http1);
        let first = watch.request_began().unwrap();
        let second = watch.request_began().unwrap();
        watch.flushed();
        assert_eq!(watch.in_flight(), 2, "a flush before the end leaves both in flight");
        drop(first);
        assert_eq!(watch.in_flight(), 2, "ended, not yet flushed");
        watch.flushed();
        assert_eq!(watch.in_flight(), 1);
        drop(second);
        watch.flushed();
        assert_eq!(watch.in_flight(), 0);
    }

    #[test]
    fn http2_requests_are_counted_from_frames_not_calls() {
        let watch = Watch::new();
        assert!(watch.request_began().is_none(), "no protocol told yet");
        watch.told(Protocol::Http2);
        assert!(watch.request_began().is_none());
        watch.set_streams(3);
        assert_eq!(watch.in_flight(), 3);
    }
}
