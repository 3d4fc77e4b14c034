//! [`Watch`]: what one connection's socket wrapper ([`Watched`](super::watched::Watched)) and
//! its requests ([`request`](super::request)) tell the task that drives the connection: the
//! protocol, the requests in flight, and since when hyper's reads and writes of the socket have
//! waited on the peer.
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
//! - **Waits on the peer**: a read (or a write) of hyper's waits on the peer from the first of
//!   its calls that returns `Pending` until one returns `Ready` (a byte moved, the end, or an
//!   error); a round of the driving task (one poll of the connection) in which hyper did not
//!   read (or write) at all ends that wait too, since hyper has stopped asking. The reads of
//!   the driving task's own [probe](super::connection) are not hyper's and count for nothing.
//! - A wait is kept as bits, which hyper's calls set and clear without a lock or a clock read
//!   (they run several times per request). Its start is read from the clock at the end of the
//!   first round in which it **counts** as a stall ([`Watch::reads_count`]: a write always, a
//!   read on HTTP/1 with a request in flight), and kept until the wait ends: so the wait of an
//!   idle keep-alive connection's read, the steady state of a busy server, never reads the
//!   clock, and a read's wait that began while idle counts from the round a request came in.
//! - The **stash** holds the bytes of at most one read of the probe's (at most
//!   [`PROBE_CHUNK`]), made while hyper did not read; hyper's next reads get them before any
//!   byte of the socket's, so no byte is lost or reordered. It is empty (and holds no memory)
//!   but between such a read and hyper's.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

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
    /// hyper's waits on the peer, as bits (`READ_BITS`, `WRITE_BITS`): see the module docs.
    waits: AtomicU8,
    /// When each counting wait began (read, write): meaningful while its `stamped` bit is set.
    since: Mutex<(Option<Instant>, Option<Instant>)>,
    /// Bytes the probe read, and how many of them hyper has taken: see the module docs.
    stash: Mutex<(Vec<u8>, usize)>,
    /// Whether `stash` holds bytes hyper has not taken.
    stashed: AtomicBool,
}

/// The most the probe reads at once: hyper's first read buffer's size.
pub(super) const PROBE_CHUNK: usize = 8 * 1024;

/// Since when hyper's reads and writes have waited on the peer, each only where the wait counts
/// as a stall (see the module docs), and whether hyper read and wrote in the current round.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Waits {
    pub(super) read_since: Option<Instant>,
    pub(super) write_since: Option<Instant>,
    pub(super) read_polled: bool,
    pub(super) write_polled: bool,
}

/// `Watch::waits`' bits for one direction: hyper called in this round, it waits on the peer,
/// and the wait's start is in `Watch::since`.
#[derive(Clone, Copy)]
struct WaitBits {
    polled: u8,
    waiting: u8,
    stamped: u8,
}

const READ_BITS: WaitBits = WaitBits { polled: 1, waiting: 1 << 1, stamped: 1 << 2 };
const WRITE_BITS: WaitBits = WaitBits { polled: 1 << 3, waiting: 1 << 4, stamped: 1 << 5 };

impl Direction {
    fn bits(self) -> WaitBits {
        match self {
            Direction::Read => READ_BITS,
            Direction::Write => WRITE_BITS,
        }
    }
}

/// One direction of the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    Read,
    Write,
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

    /// Whether a read of hyper's that waits is a stall: on HTTP/1 with a request in flight (see
    /// [`peer`](super::peer)).
    pub(super) fn reads_count(&self) -> bool {
        self.protocol() == Protocol::Http1 && self.in_flight() > 0
    }

    /// Sets the wait bits to `bits`. Relaxed, and a load and a store rather than a
    /// read-modify-write: only the driving task changes them (module docs).
    fn set_waits(&self, bits: u8) {
        self.waits.store(bits, Ordering::Relaxed);
    }

    /// One of hyper's calls in `direction` returned: `Pending` (`waiting`) or `Ready`.
    pub(super) fn polled(&self, direction: Direction, waiting: bool) {
        let WaitBits { polled, waiting: wait, stamped } = direction.bits();
        let before = self.waits.load(Ordering::Relaxed);
        let after = if waiting { before | polled | wait } else { (before | polled) & !(wait | stamped) };
        if after != before {
            self.set_waits(after);
        }
    }

    /// The driving task is about to poll the connection.
    pub(super) fn round_begins(&self) {
        let before = self.waits.load(Ordering::Relaxed);
        let after = before & !(READ_BITS.polled | WRITE_BITS.polled);
        if after != before {
            self.set_waits(after);
        }
    }

    /// The poll of the connection returned `Pending`: its waits on the peer that count as
    /// stalls, those in a direction hyper did not touch in the round ended; a counting wait's
    /// start is read from the clock now if it was not yet.
    pub(super) fn round_ended(&self) -> Waits {
        let mut bits = self.waits.load(Ordering::Relaxed);
        for WaitBits { polled, waiting, stamped } in [READ_BITS, WRITE_BITS] {
            if bits & polled == 0 {
                bits &= !(waiting | stamped);
            }
        }
        let read_counts = bits & READ_BITS.waiting != 0 && self.reads_count();
        let write_counts = bits & WRITE_BITS.waiting != 0;
        let mut waits = Waits {
            read_polled: bits & READ_BITS.polled != 0,
            write_polled: bits & WRITE_BITS.polled != 0,
            ..Waits::default()
        };
        if read_counts || write_counts {
            // Nothing panics while it is held.
            let mut since = self.since.lock().unwrap_or_else(PoisonError::into_inner);
            let stamp_read = read_counts && bits & READ_BITS.stamped == 0;
            let stamp_write = write_counts && bits & WRITE_BITS.stamped == 0;
            if stamp_read || stamp_write {
                let now = Some(crate::time::now());
                if stamp_read {
                    since.0 = now;
                    bits |= READ_BITS.stamped;
                }
                if stamp_write {
                    since.1 = now;
                    bits |= WRITE_BITS.stamped;
                }
            }
            waits.read_since = since.0.filter(|_| read_counts);
            waits.write_since = since.1.filter(|_| write_counts);
        }
        self.set_waits(bits);
        waits
    }

    /// Keeps `bytes`, which the probe read (the stash is empty), for hyper's next reads.
    pub(super) fn stash(&self, bytes: &[u8]) {
        debug_assert!(!self.has_stash() && bytes.len() <= PROBE_CHUNK);
        *self.stash.lock().unwrap_or_else(PoisonError::into_inner) = (bytes.to_vec(), 0);
        self.stashed.store(!bytes.is_empty(), Ordering::Relaxed);
    }

    pub(super) fn has_stash(&self) -> bool {
        self.stashed.load(Ordering::Relaxed)
    }

    /// Moves stashed bytes into `buf`: how many (0 with none stashed).
    pub(super) fn take_stash(&self, buf: &mut [u8]) -> usize {
        if !self.has_stash() {
            return 0;
        }
        let mut stash = self.stash.lock().unwrap_or_else(PoisonError::into_inner);
        let (bytes, taken) = &mut *stash;
        let n = (bytes.len() - *taken).min(buf.len());
        buf[..n].copy_from_slice(&bytes[*taken..*taken + n]);
        *taken += n;
        if *taken == bytes.len() {
            *stash = (Vec::new(), 0);
            self.stashed.store(false, Ordering::Relaxed);
        }
        n
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

    /// One round of the driving task in which hyper made `calls` (direction, `Pending`?).
    fn round(watch: &Watch, calls: &[(Direction, bool)]) -> Waits {
        watch.round_begins();
        for &(direction, waiting) in calls {
            watch.polled(direction, waiting);
        }
        watch.round_ended()
    }

    #[test]
    fn a_wait_runs_from_the_first_pending_to_a_ready_or_a_round_without_a_call() {
        use Direction::{Read, Write};
        let watch = Watch::new();
        let began = round(&watch, &[(Write, true)]).write_since.expect("a write is pending");
        assert_eq!(round(&watch, &[(Write, true)]).write_since, Some(began), "still the same wait");
        assert_eq!(round(&watch, &[(Write, false)]).write_since, None, "a write went through");
        assert_eq!(round(&watch, &[(Read, true)]).read_since, None, "no protocol yet: a read's wait is no stall");
        watch.told(Protocol::Http1);
        assert_eq!(round(&watch, &[(Read, true)]).read_since, None, "idle: a read's wait is no stall");
        let _request = watch.request_began().unwrap();
        let began =
            round(&watch, &[(Read, true)]).read_since.expect("a request is in flight: the same wait counts now");
        assert_eq!(round(&watch, &[(Read, true)]).read_since, Some(began), "still the same wait");
        assert_eq!(round(&watch, &[]), Waits::default(), "hyper stopped reading");
    }

    #[test]
    fn the_stash_hands_its_bytes_over_in_order_however_small_the_reads() {
        let watch = Watch::new();
        let mut buf = [0; 2];
        assert_eq!(watch.take_stash(&mut buf), 0);
        watch.stash(b"abc");
        assert!(watch.has_stash());
        assert_eq!((watch.take_stash(&mut buf), &buf), (2, b"ab"));
        assert_eq!((watch.take_stash(&mut buf), &buf[..1]), (1, &b"c"[..]));
        assert!(!watch.has_stash());
        assert_eq!(watch.take_stash(&mut buf), 0);
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
