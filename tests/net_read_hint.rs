//! `crew::net::Stream`'s read hint, counted at the syscall: a read that came back short makes the
//! next read wait for readiness instead of trying a read bound to fail, and no data or wakeup is
//! lost by it.
//!
//! The socket is a Unix stream pair whose crew side counts every `read` it is asked for, and
//! those that failed with `WouldBlock` (the `Counted` wrapper below), so each test asserts how
//! many reads reached the socket. Every wait is bounded by `common::HANG_TIMEOUT`, only to turn a
//! hang into a failure.
//!
//! A new stream starts ready, so its first read is tried at once; the counting tests make that
//! first read fail (nothing sent yet) and send only then, so the readiness they count comes from
//! the driver's events. The kernel may report one edge twice (`FAILED_READS_ALLOWED` says when),
//! so they bound the failed reads rather than count them exactly.

// Not under miri: every socket registers with crew's driver, whose epoll miri does not
// implement.
#![cfg(all(unix, not(miri)))]

use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::net::{Stream, StreamSocket};
use futures_lite::future::poll_once;

mod common;
use common::probe::block_on_within;
use common::HANG_TIMEOUT;

/// A Unix stream that counts the reads made on it.
struct Counted {
    socket: UnixStream,
    reads: AtomicUsize,
    would_blocks: AtomicUsize,
}

impl AsFd for Counted {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.as_fd()
    }
}

impl AsRawFd for Counted {
    fn as_raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }
}

/// std's Unix stream's calls, each read counted.
impl StreamSocket for Counted {
    fn shutdown_socket(&self, how: Shutdown) -> io::Result<()> {
        self.socket.shutdown_socket(how)
    }
    fn peek_socket(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.socket.peek_socket(buf)
    }
    fn read_socket(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.counted(self.socket.read_socket(buf))
    }
    fn read_socket_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        self.counted(self.socket.read_socket_vectored(bufs))
    }
    fn write_socket(&self, buf: &[u8]) -> io::Result<usize> {
        self.socket.write_socket(buf)
    }
    fn write_socket_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.socket.write_socket_vectored(bufs)
    }
    fn take_error_socket(&self) -> io::Result<Option<io::Error>> {
        self.socket.take_error_socket()
    }
    fn is_connected(&self) -> io::Result<bool> {
        self.socket.is_connected()
    }
}

impl Counted {
    /// Counts a read that reached the socket, and whether it would have blocked.
    fn counted(&self, read: io::Result<usize>) -> io::Result<usize> {
        self.reads.fetch_add(1, SeqCst);
        if matches!(&read, Err(error) if error.kind() == io::ErrorKind::WouldBlock) {
            self.would_blocks.fetch_add(1, SeqCst);
        }
        read
    }
}

/// A plain (blocking) peer and the counted crew stream connected to it.
fn pair() -> (UnixStream, Stream<Counted>) {
    let (peer, ours) = UnixStream::pair().unwrap();
    let counted = Counted { socket: ours, reads: AtomicUsize::new(0), would_blocks: AtomicUsize::new(0) };
    (peer, Stream::from_std(counted).unwrap())
}

/// The reads that reached the socket.
fn reads(stream: &Stream<Counted>) -> usize {
    stream.get_ref().reads.load(SeqCst)
}

/// The reads that reached the socket and failed with `WouldBlock`.
fn would_blocks(stream: &Stream<Counted>) -> usize {
    stream.get_ref().would_blocks.load(SeqCst)
}

/// `block_on(future)`, failing if it takes longer than [`HANG_TIMEOUT`].
fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    block_on_within(HANG_TIMEOUT, "the test's reads and writes", future)
}

/// Runs `ROUNDS` requests through a new stream: each round's read is polled once before the
/// peer sends (nothing is there yet), then awaited; with `answer`, the stream then writes a reply
/// that the peer reads, which makes the socket writable again while the next request is on its
/// way (that edge is the write direction's). Asserts one read with data per round, and at most
/// [`FAILED_READS_ALLOWED`] failed reads.
fn assert_rounds_cost_one_read_each(answer: bool) {
    let (mut peer, mut stream) = pair();
    run(async {
        let mut buf = [0; 64];
        for round in 0..ROUNDS {
            let mut read = stream.read(&mut buf);
            assert!(poll_once(&mut read).await.is_none(), "round {round}: nothing was sent yet");
            peer.write_all(b"ping").unwrap();
            assert_eq!(read.await.unwrap(), 4, "round {round}");
            assert_eq!(&buf[..4], b"ping", "round {round}");
            if answer {
                stream.write_all(b"pong").await.unwrap();
                let mut answer = [0; 4];
                peer.read_exact(&mut answer).unwrap();
                assert_eq!(&answer, b"pong");
            }
        }
    });
    let (reads, would_blocks) = (reads(&stream), would_blocks(&stream));
    assert_eq!(reads, ROUNDS + would_blocks, "one read with data per round");
    assert!(
        (1..=FAILED_READS_ALLOWED).contains(&would_blocks),
        "{would_blocks} failed reads in {ROUNDS} rounds: a read was tried on a drained socket"
    );
}

/// The rounds [`assert_rounds_cost_one_read_each`] runs.
const ROUNDS: usize = 50;

/// The failed reads the rounds may make: the new stream's first read (tried at once, as it
/// starts ready), and a few more for a read edge the kernel reported twice. With edge-triggered
/// epoll and threads that poll it by turns, a request can be reported twice (it came while the
/// driver was collecting the previous events, so epoll lists it again); the second report can
/// land between a read's look and its clear, which then rightly keeps it, and the next round's
/// first poll tries a read that fails. That is rare (once in 1,500 runs of 20 rounds on a
/// loaded 2-core machine). Without the short read's clear every round's first poll fails once:
/// `ROUNDS` failed reads, the first one among them.
const FAILED_READS_ALLOWED: usize = 1 + ROUNDS / 10;

#[test]
fn after_a_short_read_the_next_read_waits_without_a_syscall() {
    assert_rounds_cost_one_read_each(false);
}

#[test]
fn request_response_rounds_cost_one_read_each() {
    // The answer's write edge keeps no stale read readiness (a tick per direction, see
    // `src/driver/scheduled_io.rs`): still one read per round.
    assert_rounds_cost_one_read_each(true);
}

#[test]
fn data_sent_between_a_short_read_and_the_next_is_not_lost() {
    let (mut peer, mut stream) = pair();
    run(async {
        let mut buf = [0; 64];
        peer.write_all(b"one").unwrap();
        assert_eq!(stream.read(&mut buf).await.unwrap(), 3);
        // Arrives while the hint says "drained": the reactor must still report it.
        peer.write_all(b"two").unwrap();
        assert_eq!(stream.read(&mut buf).await.unwrap(), 3);
        assert_eq!(&buf[..3], b"two");
    });
}

#[test]
fn a_full_read_keeps_reading_first() {
    let (mut peer, mut stream) = pair();
    peer.write_all(b"abcdefgh").unwrap();
    run(async {
        let mut buf = [0; 4];
        stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"abcd");
        // The buffer came back full, so more may be waiting: read at once, no reactor turn.
        let mut next = stream.read(&mut buf);
        assert_eq!(poll_once(&mut next).await.map(Result::unwrap), Some(4));
        assert_eq!(&buf, b"efgh");
    });
    assert_eq!(reads(&stream), 2);
}

#[test]
fn end_of_stream_after_a_short_read_is_reported() {
    let (mut peer, mut stream) = pair();
    run(async {
        let mut buf = [0; 64];
        peer.write_all(b"bye").unwrap();
        assert_eq!(stream.read(&mut buf).await.unwrap(), 3);
        drop(peer);
        assert_eq!(stream.read(&mut buf).await.unwrap(), 0);
        // An empty buffer reads nothing, whatever the hint.
        assert_eq!(stream.read(&mut []).await.unwrap(), 0);
    });
}

#[test]
fn one_task_reads_while_another_writes_through_shared_references() {
    const MESSAGES: usize = 200;
    let (a, b) = crew::net::UnixStream::pair().unwrap();
    let echoed = run(async move {
        // The echo side reads and writes through `&Stream` from a single task.
        let echo = crew::spawn(async move {
            let mut buf = [0; 256];
            loop {
                let n = (&b).read(&mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                (&b).write_all(&buf[..n]).await.unwrap();
            }
        });
        let a = std::sync::Arc::new(a);
        let writer = {
            let a = a.clone();
            crew::spawn(async move {
                for i in 0..MESSAGES {
                    (&*a).write_all(format!("{i:03}").as_bytes()).await.unwrap();
                }
                a.get_ref().shutdown(std::net::Shutdown::Write).unwrap();
            })
        };
        let mut echoed = Vec::new();
        (&*a).read_to_end(&mut echoed).await.unwrap();
        writer.await;
        echo.await;
        echoed
    });
    let expected: Vec<u8> = (0..MESSAGES).flat_map(|i| format!("{i:03}").into_bytes()).collect();
    assert_eq!(echoed, expected);
}
