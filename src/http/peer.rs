//! [`Peer`]: what the task driving a connection watches of the peer between two polls of
//! hyper's connection: a hang-up while an HTTP/1 request is in flight, and a stall (hyper
//! waits on the peer, and no byte moves, for the stall timeout).
//!
//! Invariants:
//! - **The probe** reads the socket only on HTTP/1, with a request in flight, after a round that
//!   left no read of hyper's waiting, and with nothing stashed: hyper then is not reading, and
//!   no readiness of the socket will wake it (HTTP/1 runs
//!   with hyper's `half_close`, so hyper reads during a request only the body its handler asks
//!   for), and the probe takes the place of hyper's own look for the end of the stream, which
//!   `half_close` turns off. What it reads (at most [`PROBE_CHUNK`], as hyper's look read into
//!   hyper's buffer) hyper's next reads get first ([`Watch::stash`]); the end of the stream
//!   there closes the connection, as hyper's look does (an error on a busy connection): a
//!   client that hangs up drops its handler. The end is read again at the next look (a
//!   socket at its end reads 0 each time) before it closes anything: a handler that asks for
//!   the rest of its body meanwhile reads the end through hyper, which gives it the body's
//!   error, whichever of the probe and hyper read first.
//! - **A stall** is a wait of hyper's on the peer ([`Watch::round_ended`]) during which no byte
//!   moved: a write that waits, on either protocol; a read that waits on HTTP/1 while a
//!   request is in flight (the handler asked for body bytes the client does not send). Reads
//!   on HTTP/2 never count: its connection reads for every stream at once and all the time, so
//!   a read that waits says nothing of a request. A stall closes the connection at its start
//!   plus the stall timeout, if it is still the same stall then.
//! - The stall timer is one [`Sleep`] per connection, made at the first stall and moved to the
//!   deadline of the current one when it fires early; it is not polled while nothing waits.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::listener::sealed::SharedSocket;
use super::watch::{Direction, Waits, Watch, PROBE_CHUNK};
use crate::time::Sleep;

/// The peer of one connection, as its driving task watches it.
#[derive(Debug)]
pub(super) struct Peer<T> {
    /// The socket hyper holds too.
    io: Arc<T>,
    /// The stall timeout; `None`: stalls are not timed.
    timeout: Option<Duration>,
    timer: Option<Sleep>,
    /// The probe read the end of the stream once: hyper gets a round to read it itself first.
    saw_end: bool,
}

impl<T: SharedSocket> Peer<T> {
    pub(super) fn new(io: Arc<T>, stall_timeout: Option<Duration>) -> Peer<T> {
        Peer { io, timeout: stall_timeout, timer: None, saw_end: false }
    }

    /// After a round that left the connection pending (`waits`, from
    /// [`Watch::round_ended`]): `Ready` with the reason to close it, or `Pending`, with the
    /// task's waker registered for what would change that.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>, watch: &Watch, waits: Waits) -> Poll<io::Error> {
        if let Poll::Ready(hung_up) = self.poll_probe(cx, watch, waits) {
            return Poll::Ready(hung_up);
        }
        match stall(watch, waits) {
            Some((since, direction)) => self.poll_stall(cx, since, direction),
            None => Poll::Pending,
        }
    }

    fn poll_probe(&mut self, cx: &mut Context<'_>, watch: &Watch, waits: Waits) -> Poll<io::Error> {
        let busy_and_unread = watch.reads_count() && waits.read_since.is_none();
        if !busy_and_unread || watch.has_stash() {
            return Poll::Pending;
        }
        let mut chunk = [0; PROBE_CHUNK];
        match self.io.poll_read(cx, &mut chunk) {
            // The first time, a round more: a handler that asks for the rest of its body then
            // reads the end itself (hyper gives it the body's error); one that does not is
            // dropped at the next look.
            Poll::Ready(Ok(0)) if !std::mem::replace(&mut self.saw_end, true) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Poll::Ready(Ok(0)) => Poll::Ready(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the client closed its connection while a request was in flight",
            )),
            Poll::Ready(Ok(n)) => {
                watch.stash(&chunk[..n]);
                Poll::Pending
            }
            Poll::Ready(Err(error)) => Poll::Ready(error),
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_stall(&mut self, cx: &mut Context<'_>, since: Instant, direction: Direction) -> Poll<io::Error> {
        let Some(timeout) = self.timeout else { return Poll::Pending };
        let Some(due) = since.checked_add(timeout) else { return Poll::Pending };
        let timer = self.timer.get_or_insert_with(|| crate::time::sleep_until(due));
        loop {
            if !matches!(timer.deadline(), Some(deadline) if deadline <= due) {
                timer.reset(due);
            }
            if Pin::new(&mut *timer).poll(cx).is_pending() {
                return Poll::Pending;
            }
            if timer.deadline() == Some(due) {
                let waited = match direction {
                    Direction::Read => "for the request body it sent no byte of",
                    Direction::Write => "to take the response, and it took no byte",
                };
                let message = format!("the connection waited {timeout:?} on its peer {waited} (the stall timeout)");
                return Poll::Ready(io::Error::new(io::ErrorKind::TimedOut, message));
            }
            // It fired for an earlier stall, which has ended: on to this one's deadline.
            timer.reset(due);
        }
    }
}

/// The current stall, if hyper waits on the peer: since when, and in which direction (the
/// earlier of the two if both wait).
fn stall(watch: &Watch, waits: Waits) -> Option<(Instant, Direction)> {
    let read = waits.read_since.filter(|_| watch.reads_count()).map(|since| (since, Direction::Read));
    let write = waits.write_since.map(|since| (since, Direction::Write));
    match (read, write) {
        (Some(read), Some(write)) => Some(if read.0 <= write.0 { read } else { write }),
        (read, write) => read.or(write),
    }
}

#[cfg(test)]
mod tests {
    use super::super::watch::Protocol;
    use super::*;

    fn waits(read: Option<Instant>, write: Option<Instant>) -> Waits {
        Waits { read_since: read, write_since: write, read_polled: read.is_some(), write_polled: write.is_some() }
    }

    #[test]
    fn a_waiting_read_is_a_stall_only_on_http1_with_a_request_in_flight() {
        let now = Instant::now();
        let watch = Watch::new();
        assert_eq!(stall(&watch, waits(Some(now), None)), None, "no protocol yet");
        watch.told(Protocol::Http1);
        assert_eq!(stall(&watch, waits(Some(now), None)), None, "idle: the header-read timeout's");
        let _request = watch.request_began().unwrap();
        assert_eq!(stall(&watch, waits(Some(now), None)), Some((now, Direction::Read)));
        let h2 = Watch::new();
        h2.told(Protocol::Http2);
        h2.set_streams(1);
        assert_eq!(stall(&h2, waits(Some(now), None)), None, "HTTP/2 reads all the time");
    }

    #[test]
    fn a_waiting_write_is_a_stall_on_either_protocol_and_the_earlier_wait_counts() {
        let now = Instant::now();
        let later = now + Duration::from_secs(1);
        let watch = Watch::new();
        assert_eq!(stall(&watch, waits(None, Some(now))), Some((now, Direction::Write)));
        watch.told(Protocol::Http1);
        let _request = watch.request_began().unwrap();
        assert_eq!(stall(&watch, waits(Some(later), Some(now))), Some((now, Direction::Write)));
        assert_eq!(stall(&watch, waits(Some(now), Some(later))), Some((now, Direction::Read)));
    }
}
