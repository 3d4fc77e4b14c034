//! [`Watched`]: a connection's socket as hyper reads and writes it, with what its bytes tell the
//! connection's [`Watch`]: the protocol (from the first bytes), HTTP/2's streams in flight
//! (from the frames each way), the flushes that put HTTP/1 responses on the socket, and each
//! read and write that waits on the peer.
//!
//! Invariants:
//! - Bytes go through unchanged, in both directions; the wrapper only looks at them, but for
//!   those the driving task's probe stashed, which the next reads return first.
//! - Every read and write hyper calls is reported to [`Watch::polled`], `Pending` or not; a
//!   flush that returns `Pending` counts as a write that waits.
//! - Until a connection has sent the bytes that tell HTTP/1 from HTTP/2 (hyper-util reads at
//!   most the 24 of HTTP/2's preface, and stops at the first that differs), its reads fail
//!   with `TimedOut` once the header-read timeout has passed: hyper's own timeout only starts
//!   with HTTP/1's first request head, so without this a client that sends nothing would hold
//!   its place under the connection limit for good.
//! - On HTTP/2, every byte read after the preface and every byte written goes through
//!   [`Frames`], and [`Watch::set_streams`] follows each read and write that moved one.

use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use futures_lite::io::{AsyncRead, AsyncWrite};

use super::h2_frames::{Frames, Streams, PREFACE_LEN};
use super::listener::sealed::SharedSocket;
use super::watch::{Direction, Protocol, Watch};
use crate::time::Sleep;

/// HTTP/2's connection preface, which hyper-util looks for to tell HTTP/2 from HTTP/1.
const H2_PREFACE: &[u8; PREFACE_LEN] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A connection's stream, watched.
#[derive(Debug)]
pub(super) struct Watched<T> {
    /// Shared with the driving task's probe.
    inner: Arc<T>,
    watch: Arc<Watch>,
    /// `Some` until the first bytes have told the protocol.
    first: Option<FirstBytes>,
    /// `Some` once the protocol is HTTP/2.
    h2: Option<Box<H2Frames>>,
}

/// Until the protocol is told: the header-read deadline, and the preface so far.
#[derive(Debug)]
struct FirstBytes {
    /// `None` with no header-read timeout.
    deadline: Option<Sleep>,
    /// How many bytes of the preface have been read.
    matched: usize,
}

/// What some bytes read said about the protocol.
#[derive(Debug, PartialEq, Eq)]
enum Told {
    /// Nothing yet: they are the preface's next bytes.
    Nothing,
    /// The end of the stream before the protocol was told.
    Ended,
    Http1,
    /// HTTP/2, the preface's last `preface_left` bytes among them.
    Http2 {
        preface_left: usize,
    },
}

/// An HTTP/2 connection's frames each way, and the streams they tell.
#[derive(Debug)]
struct H2Frames {
    read: Frames,
    written: Frames,
    streams: Streams,
}

impl FirstBytes {
    /// Looks at bytes just read.
    fn saw(&mut self, read: &[u8]) -> Told {
        let rest = &H2_PREFACE[self.matched..];
        if read.is_empty() {
            Told::Ended
        } else if read.len() >= rest.len() && read[..rest.len()] == *rest {
            Told::Http2 { preface_left: rest.len() }
        } else if read.len() < rest.len() && read == &rest[..read.len()] {
            self.matched += read.len();
            Told::Nothing
        } else {
            Told::Http1
        }
    }
}

impl<T> Watched<T> {
    /// `inner`, its first bytes due within `header_read_timeout` (`None`: no limit).
    pub(super) fn new(inner: Arc<T>, watch: Arc<Watch>, header_read_timeout: Option<Duration>) -> Watched<T> {
        let first = FirstBytes { deadline: header_read_timeout.map(crate::time::sleep), matched: 0 };
        Watched { inner, watch, first: Some(first), h2: None }
    }

    /// Takes in bytes just read.
    fn after_read(&mut self, read: &[u8]) {
        if let Some(first) = self.first.as_mut() {
            let told = first.saw(read);
            match told {
                Told::Nothing => return,
                Told::Ended => {}
                Told::Http1 => self.watch.told(Protocol::Http1),
                Told::Http2 { preface_left } => {
                    self.watch.told(Protocol::Http2);
                    let frames = H2Frames {
                        read: Frames::after(preface_left),
                        written: Frames::after(0),
                        streams: Streams::default(),
                    };
                    self.h2 = Some(Box::new(frames));
                }
            }
            self.first = None;
        }
        if let Some(h2) = self.h2.as_deref_mut() {
            let streams = &mut h2.streams;
            h2.read.feed(read, |frame| streams.read(frame));
            self.watch.set_streams(streams.in_flight());
        }
    }

    /// Takes in the first `n` bytes of `bufs`, just written.
    fn after_write(&mut self, bufs: &[IoSlice<'_>], mut n: usize) {
        let Some(h2) = self.h2.as_deref_mut() else { return };
        let streams = &mut h2.streams;
        for buf in bufs {
            let take = n.min(buf.len());
            h2.written.feed(&buf[..take], |frame| streams.wrote(frame));
            n -= take;
            if n == 0 {
                break;
            }
        }
        self.watch.set_streams(streams.in_flight());
    }
}

impl<T: SharedSocket> AsyncRead for Watched<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let read = match this.watch.take_stash(buf) {
            0 => this.inner.poll_read(cx, buf),
            stashed => Poll::Ready(Ok(stashed)),
        };
        this.watch.polled(Direction::Read, read.is_pending());
        match read {
            Poll::Ready(Ok(n)) => {
                this.after_read(&buf[..n]);
                Poll::Ready(Ok(n))
            }
            Poll::Pending => {
                let deadline = this.first.as_mut().and_then(|first| first.deadline.as_mut());
                if deadline.is_some_and(|deadline| Pin::new(deadline).poll(cx).is_ready()) {
                    let message = "the client sent no request within the header-read timeout";
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, message)));
                }
                Poll::Pending
            }
            failed => failed,
        }
    }
}

impl<T: SharedSocket> AsyncWrite for Watched<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = this.inner.poll_write(cx, buf);
        this.watch.polled(Direction::Write, written.is_pending());
        let n = ready!(written)?;
        this.after_write(&[IoSlice::new(buf)], n);
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = this.inner.poll_write_vectored(cx, bufs);
        this.watch.polled(Direction::Write, written.is_pending());
        let n = ready!(written)?;
        this.after_write(bufs, n);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = this.inner.poll_flush(cx);
        this.watch.polled(Direction::Write, flushed.is_pending());
        ready!(flushed)?;
        this.watch.flushed();
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().inner.poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_bytes() -> FirstBytes {
        FirstBytes { deadline: None, matched: 0 }
    }

    #[test]
    fn an_http1_request_tells_the_protocol_at_its_first_byte() {
        assert_eq!(first_bytes().saw(b"G"), Told::Http1);
    }

    #[test]
    fn the_preface_tells_the_protocol_only_when_whole() {
        let mut first = first_bytes();
        assert_eq!(first.saw(&H2_PREFACE[..10]), Told::Nothing, "10 bytes of the preface say nothing yet");
        assert_eq!(first.saw(&H2_PREFACE[10..23]), Told::Nothing, "23 bytes of the preface say nothing yet");
        assert_eq!(first.saw(&H2_PREFACE[23..]), Told::Http2 { preface_left: 1 });
        let mut with_a_frame = H2_PREFACE.to_vec();
        with_a_frame.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        assert_eq!(first_bytes().saw(&with_a_frame), Told::Http2 { preface_left: PREFACE_LEN });
    }

    #[test]
    fn a_byte_off_the_preface_or_the_end_tells_the_protocol() {
        assert_eq!(first_bytes().saw(b"PRI * HTTP/1"), Told::Http1, "PRI * HTTP/1 is not HTTP/2");
        assert_eq!(first_bytes().saw(b""), Told::Ended, "the end of the stream");
    }

    /// A socket that reads its bytes, and takes every write whole.
    #[derive(Debug)]
    struct Script(std::sync::Mutex<std::io::Cursor<Vec<u8>>>);

    impl SharedSocket for Script {
        fn poll_read(&self, _: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
            Poll::Ready(std::io::Read::read(&mut *self.0.lock().unwrap(), buf))
        }
        fn poll_write(&self, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_write_vectored(&self, _: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
            Poll::Ready(Ok(bufs.iter().map(|buf| buf.len()).sum()))
        }
        fn poll_flush(&self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_close(&self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    fn watched(input: &[u8]) -> (Watched<Script>, Arc<Watch>) {
        let watch = Watch::new();
        let script = Script(std::sync::Mutex::new(std::io::Cursor::new(input.to_vec())));
        (Watched::new(Arc::new(script), watch.clone(), None), watch)
    }

    #[test]
    fn a_stashed_byte_comes_before_the_sockets() {
        let (mut io, watch) = watched(b"bc");
        watch.stash(b"a");
        let mut read = Vec::new();
        crate::block_on(futures_lite::AsyncReadExt::read_to_end(&mut io, &mut read)).unwrap();
        assert_eq!(read, b"abc");
    }

    #[test]
    fn http2_streams_are_followed_through_the_reads_and_writes() {
        let mut input = H2_PREFACE.to_vec();
        input.extend_from_slice(&[0, 0, 0, 1, 0x4, 0, 0, 0, 1]); // HEADERS, stream 1, no payload
        let (mut io, watch) = watched(&input);
        crate::block_on(async {
            use futures_lite::{AsyncReadExt, AsyncWriteExt};
            let mut buf = [0; 7];
            while io.read(&mut buf).await.unwrap() > 0 {}
            assert_eq!(watch.protocol(), Protocol::Http2);
            assert_eq!(watch.in_flight(), 1);
            io.write_all(&[0, 0, 1, 0, 0x1, 0, 0]).await.unwrap(); // DATA with END_STREAM, split
            assert_eq!(watch.in_flight(), 1, "half a frame");
            io.write_all(&[0, 1, 7]).await.unwrap();
            assert_eq!(watch.in_flight(), 0);
        });
    }
}
