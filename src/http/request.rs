//! [`Served`]: the tower service a connection hands hyper: the user's, with the peer's address
//! put in every request, and each HTTP/1 request counted in flight ([`Watch`]) from the call
//! until its response body ends.
//!
//! Invariants:
//! - The request reaches the user's service with a [`PeerAddr`] in its extensions, inserted
//!   before the service sees it.
//! - An HTTP/1 request's [`InFlight`] token lives in its response future, then in its response
//!   body, and is dropped when the body ends (`poll_frame` gives `None` or an error) or is
//!   dropped, whichever comes first; an error from the service drops it at once. The response
//!   and its body are otherwise handed through unchanged (frames, `is_end_stream`,
//!   `size_hint`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::watch::{InFlight, Watch};
use super::PeerAddr;

/// The user's service `inner`, as one connection serves it.
#[derive(Debug, Clone)]
pub(super) struct Served<S, A> {
    pub(super) inner: S,
    pub(super) peer: A,
    pub(super) watch: Arc<Watch>,
}

impl<S, A, R, B> tower_service::Service<http::Request<R>> for Served<S, A>
where
    S: tower_service::Service<http::Request<R>, Response = http::Response<B>>,
    A: Clone + Send + Sync + 'static,
{
    type Response = http::Response<Counted<B>>;
    type Error = S::Error;
    type Future = Counting<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<R>) -> Counting<S::Future> {
        request.extensions_mut().insert(PeerAddr(self.peer.clone()));
        let in_flight = self.watch.request_began();
        Counting { future: self.inner.call(request), in_flight }
    }
}

pin_project! {
    /// A response future that hands its request's [`InFlight`] token to the response's body.
    #[derive(Debug)]
    pub(super) struct Counting<F> {
        #[pin]
        future: F,
        in_flight: Option<InFlight>,
    }
}

impl<F, B, E> Future for Counting<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
{
    type Output = Result<http::Response<Counted<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = ready!(this.future.poll(cx));
        let in_flight = this.in_flight.take();
        Poll::Ready(response.map(|response| response.map(|body| Counted { body, in_flight })))
    }
}

pin_project! {
    /// A response body that holds its request's [`InFlight`] token until it ends.
    #[derive(Debug)]
    pub(super) struct Counted<B> {
        #[pin]
        body: B,
        in_flight: Option<InFlight>,
    }
}

impl<B: Body> Body for Counted<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.project();
        let frame = ready!(this.body.poll_frame(cx));
        if !matches!(frame, Some(Ok(_))) {
            this.in_flight.take();
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;
    use crate::http::watch::Protocol;

    /// A body of two frames, then its end.
    #[derive(Debug)]
    struct Two(u8);

    impl Body for Two {
        type Data = bytes::Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<bytes::Bytes>, Self::Error>>> {
            self.0 += 1;
            Poll::Ready((self.0 <= 2).then(|| Ok(Frame::data(bytes::Bytes::from_static(b"x")))))
        }
    }

    #[test]
    fn a_request_is_in_flight_until_its_body_ends_and_a_flush_follows() {
        let watch = Watch::new();
        watch.told(Protocol::Http1);
        let respond = |_: http::Request<()>| std::future::ready(Ok::<_, ()>(http::Response::new(Two(0))));
        let mut served = Served { inner: tower::service_fn(respond), peer: 7u8, watch: watch.clone() };
        let response = crate::block_on(tower_service::Service::call(&mut served, http::Request::new(())));
        let mut body = response.unwrap().into_body();
        for _ in 0..2 {
            assert!(matches!(crate::block_on(body.frame()), Some(Ok(_))));
            watch.flushed();
            assert_eq!(watch.in_flight(), 1, "mid-body");
        }
        assert!(crate::block_on(body.frame()).is_none());
        assert_eq!(watch.in_flight(), 1, "ended, not yet flushed");
        watch.flushed();
        assert_eq!(watch.in_flight(), 0);
    }
}
