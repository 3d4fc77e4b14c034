//! A [`File`](super::File)'s jobs on the blocking pool: reads ahead, writes behind, one job at a
//! time, with the task and the job each holding a buffer so that neither waits for the other
//! while both have work.
//!
//! Invariants:
//! - **One job at a time** (`job`): a read, the write loop, or another call (seek, `set_len`,
//!   sync). An operation that needs the cursor where the reader or writer left it first settles
//!   the job in flight; so operations take effect in the order they were called.
//! - **Reading**: the read loop reads chunks ahead of the reader into `reads.chunks`, at most
//!   [`AHEAD`] of them (the first of [`MIN_CHUNK`] bytes, each next one twice the last up to the
//!   file's read-ahead), and
//!   wakes the reader after each; it ends when the queue is full, at the end of the file, on an
//!   error, or when asked to stop, always setting `running` false and waking the reader under
//!   the lock. The reader takes chunks in order into `buf`; it waits only after storing its
//!   waker under the same lock while `running` is true, so no chunk is missed. While no loop
//!   runs, the kernel's cursor is ahead of the reader by exactly the unread bytes of `buf` and of
//!   `reads.chunks`: an operation other than a read stops the loop, waits for its end, drops
//!   those bytes, and moves the cursor back by their count first thing in its own job. A chunk
//!   of 0 bytes is the end of the file, given to the reader once (the file may grow after).
//!   With a read-ahead of 0, a loop reads one chunk of exactly the reader's request.
//! - **Writing**: a write returns once its bytes are in `writes.pending` (at most [`MAX_BUF`]).
//!   The write loop takes the pending bytes under the lock and writes them, and ends only when it
//!   finds none left (setting `running` false under the same lock) or after an error (then it
//!   drops the pending bytes and keeps the error): a byte appended while the loop runs is written
//!   by that loop, and one appended after it ended starts a new loop. `pending` is non-empty only
//!   while `running` is true, and `running` only while the loop is the job in flight.
//! - **Errors**: a write behind's error is kept and given once, to the next operation on the file
//!   (a read, write, seek, flush, close, `set_len` or sync); the bytes acknowledged after the
//!   failed ones are dropped with it.
//! - **Dropped**: a file dropped with a job in flight lets the job end on the blocking pool; the
//!   write loop still writes every byte a write acknowledged, and drops its error, as
//!   `std::io::BufWriter`'s drop does; a read loop is told to stop at its next look.

use std::collections::VecDeque;
use std::future::Future;
use std::io::{self, Seek, SeekFrom, Write};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{ready, Context, Poll, Waker};

use super::background::Background;
use super::buf::{seek_back_by, Buf, MAX_BUF};

/// The most chunks read ahead of the reader.
const AHEAD: usize = 4;

/// A read loop's first chunk, unless the reader asks for more: a small file costs a small
/// buffer; a long read doubles it up to the read-ahead.
pub(super) const MIN_CHUNK: usize = 16 * 1024;

/// The jobs of one open file (see the module docs).
pub(super) struct Pipeline {
    pub(super) std: Arc<std::fs::File>,
    job: Option<Job>,
    /// The read-ahead bytes the reader is consuming.
    buf: Buf,
    reads: Arc<Mutex<Reads>>,
    writes: Arc<Mutex<Writes>>,
    /// The largest chunk a read loop reads.
    pub(super) read_ahead: usize,
}

/// The chunks read ahead, between the read loop and the reader.
#[derive(Default)]
struct Reads {
    /// In order; `Ok` of an empty buffer is the end of the file.
    chunks: VecDeque<io::Result<Buf>>,
    /// Emptied buffers, for the loop to read into.
    free: Vec<Buf>,
    running: bool,
    /// The loop must end at its next look.
    stop: bool,
    /// The last chunk queued is the end of the file or an error: no loop starts until the reader
    /// took it.
    ended: bool,
    /// The next chunk's size.
    chunk: usize,
    /// The reader's waker, while it waits for a chunk.
    waker: Option<Waker>,
}

/// The bytes written behind, between the writing task and the write loop.
#[derive(Default)]
struct Writes {
    pending: Buf,
    running: bool,
    error: Option<io::Error>,
}

/// What a job gave back.
enum Done {
    /// A read or write loop ended.
    Looped,
    /// The position asked for, and where the seek went.
    Sought(SeekFrom, io::Result<u64>),
    /// `set_len` or a sync, whose future takes the result.
    Other(io::Result<()>),
}

/// The job in flight; dropped, it runs to its end anyway (the module docs).
struct Job {
    handle: Background<Done>,
    kind: Kind,
    /// A read loop's state, which its drop tells to stop: its chunks would go to no reader.
    reads: Option<Arc<Mutex<Reads>>>,
}

/// Which job runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    ReadLoop,
    WriteLoop,
    /// A seek, `set_len` or sync.
    Call,
}

impl Drop for Job {
    fn drop(&mut self) {
        // Still in flight: its `Background` detaches it; a read loop stops at its next look.
        if let (true, Some(reads)) = (self.handle.in_flight(), &self.reads) {
            lock(reads).stop = true;
        }
    }
}

/// Locks the reads' or the writes' state (no code panics while holding either).
fn lock<T>(state: &Mutex<T>) -> MutexGuard<'_, T> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pipeline {
    pub(super) fn new(std: std::fs::File, read_ahead: usize) -> Pipeline {
        Pipeline {
            std: Arc::new(std),
            job: None,
            buf: Buf::default(),
            reads: Arc::default(),
            writes: Arc::default(),
            read_ahead,
        }
    }

    /// Consumes `n` bytes the reader took from `buf` (futures-io's `consume`).
    pub(super) fn consume(&mut self, n: usize) {
        self.buf.consume(n);
    }

    /// Whether a job is in flight.
    pub(super) fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// The read-ahead bytes held by the file (not counting a chunk being read).
    pub(super) fn unread(&self) -> usize {
        let chunks = lock(&self.reads).chunks.iter().map(|chunk| chunk.as_ref().map_or(0, Buf::len)).sum::<usize>();
        self.buf.len() + chunks
    }

    /// Whether the job in flight is a `kind`.
    fn running(&self, kind: Kind) -> bool {
        self.job.as_ref().is_some_and(|job| job.kind == kind)
    }

    /// Starts `run` as the job in flight (a loop that ended, not settled yet, does nothing more).
    fn spawn(&mut self, kind: Kind, run: impl FnOnce(&std::fs::File) -> Done + Send + 'static) {
        let std = self.std.clone();
        if let Some(mut ended) = self.job.take() {
            // A loop that ended on its own, replaced: it must not stop the one starting now.
            ended.reads = None;
        }
        let handle = Background::spawn(move || run(&std));
        let reads = (kind == Kind::ReadLoop).then(|| self.reads.clone());
        self.job = Some(Job { handle, kind, reads });
    }

    /// Completes the job in flight, if any (a read loop is asked to stop first), and gives a
    /// seek's or another call's result.
    fn poll_settle(&mut self, cx: &mut Context<'_>) -> Poll<Option<Done>> {
        let Some(job) = &mut self.job else { return Poll::Ready(None) };
        if job.kind == Kind::ReadLoop {
            lock(&self.reads).stop = true;
        }
        let done = ready!(Pin::new(&mut job.handle).poll(cx));
        self.job = None;
        Poll::Ready(match done {
            Done::Looped => None,
            done => Some(done),
        })
    }

    /// The write behind's error, once.
    fn write_error(&self) -> io::Result<()> {
        lock(&self.writes).error.take().map_or(Ok(()), Err)
    }

    /// Drops every read-ahead byte the file holds (no read loop may run); returns how far the
    /// kernel's cursor is ahead of the reader.
    pub(super) fn take_unread(&mut self) -> usize {
        let mut unread = self.buf.discard();
        let mut reads = lock(&self.reads);
        debug_assert!(!reads.running, "the read loop was settled");
        while let Some(chunk) = reads.chunks.pop_front() {
            if let Ok(mut chunk) = chunk {
                unread += chunk.discard();
                reads.free.push(chunk);
            }
        }
        reads.stop = false;
        reads.ended = false;
        reads.chunk = 0;
        unread
    }

    /// Starts a read loop whose first chunk is at least `want` bytes (no loop runs).
    fn start_read_loop(&mut self, reads: &mut Reads, want: usize) {
        reads.running = true;
        reads.stop = false;
        // No read-ahead: one chunk, the reader's request.
        let (chunk, chunks) = match self.read_ahead {
            0 => (want.min(MAX_BUF), 1),
            read_ahead => (reads.chunk.max(want).max(MIN_CHUNK).min(read_ahead.max(want)).min(MAX_BUF), usize::MAX),
        };
        reads.chunk = chunk;
        let (shared, read_ahead) = (self.reads.clone(), self.read_ahead.max(want).min(MAX_BUF));
        self.spawn(Kind::ReadLoop, move |file| read_loop(file, &shared, chunks, read_ahead));
    }

    /// Makes sure `buf` holds unread bytes, or that the reader is at the end of the file (an
    /// empty `buf`), after the writes behind; keeps a read loop going ahead of the reader.
    pub(super) fn poll_fill(&mut self, cx: &mut Context<'_>, want: usize) -> Poll<io::Result<&mut Buf>> {
        if self.job.is_some() && !self.running(Kind::ReadLoop) {
            // The write loop (its error is this read's), or a call whose future was dropped
            // (nobody wants its result).
            let _ = ready!(self.poll_settle(cx));
            self.write_error()?;
        }
        if !self.buf.is_empty() {
            // Most reads: the chunk in hand, with no lock taken.
            return Poll::Ready(Ok(&mut self.buf));
        }
        let reads = self.reads.clone();
        let mut reads = lock(&reads);
        loop {
            match reads.chunks.pop_front() {
                Some(Ok(next)) => {
                    let emptied = std::mem::replace(&mut self.buf, next);
                    reads.free.push(emptied);
                    if self.buf.is_empty() {
                        // The end of the file, said once: the next read looks again.
                        reads.ended = false;
                    } else if self.read_ahead > 0 && !reads.running && !reads.ended {
                        // The loop stopped with the queue full: a chunk was just taken.
                        self.start_read_loop(&mut reads, want);
                    }
                    return Poll::Ready(Ok(&mut self.buf));
                }
                Some(Err(error)) => {
                    reads.ended = false;
                    return Poll::Ready(Err(error));
                }
                None if reads.running => {
                    reads.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                None => self.start_read_loop(&mut reads, want),
            }
        }
    }

    pub(super) fn poll_write(&mut self, cx: &mut Context<'_>, src: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            if self.job.as_ref().is_some_and(|job| job.kind != Kind::WriteLoop) {
                let _ = ready!(self.poll_settle(cx));
            }
            let mut writes = lock(&self.writes);
            if let Some(error) = writes.error.take() {
                return Poll::Ready(Err(error));
            }
            if src.is_empty() {
                return Poll::Ready(Ok(0));
            }
            if writes.pending.len() >= MAX_BUF {
                // Full: wait for the loop to take them (it ends once it drained them).
                drop(writes);
                ready!(self.poll_settle(cx));
                continue;
            }
            let n = writes.pending.append(src, MAX_BUF);
            if writes.running {
                return Poll::Ready(Ok(n));
            }
            writes.running = true;
            drop(writes);
            // The loop that ended, if not settled yet, does nothing more.
            let unread = self.take_unread();
            let writes = self.writes.clone();
            self.spawn(Kind::WriteLoop, move |file| write_loop(file, &writes, unread));
            return Poll::Ready(Ok(n));
        }
    }

    /// Settles the job in flight (every write behind written), then gives a write's error.
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A seek's or another call's result, its future dropped: nobody wants it.
        let _ = ready!(self.poll_settle(cx));
        Poll::Ready(self.write_error())
    }

    pub(super) fn poll_seek(&mut self, cx: &mut Context<'_>, pos: SeekFrom) -> Poll<io::Result<u64>> {
        loop {
            match ready!(self.poll_settle(cx)) {
                // This seek's job (or an equal one whose future was dropped: the same move).
                Some(Done::Sought(asked, result)) if asked == pos => return Poll::Ready(result),
                _ => {}
            }
            self.write_error()?;
            let unread = self.take_unread();
            let target = match pos {
                // The kernel's cursor is `unread` (a few MiB at most) bytes ahead of the reader.
                SeekFrom::Current(offset) => match offset.checked_sub(unread as i64) {
                    Some(offset) => SeekFrom::Current(offset),
                    None => {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("crew::fs::File: seek to SeekFrom::Current({offset}) is before any position"),
                        )))
                    }
                },
                other => other,
            };
            self.spawn(Kind::Call, move |mut file| Done::Sought(pos, file.seek(target)));
        }
    }

    /// After every write behind: drops the read-ahead bytes if `drop_unread`, then runs `call`
    /// (given how far back to move the cursor) as a job, and gives its result.
    pub(super) async fn run(
        &mut self,
        drop_unread: bool,
        call: impl FnOnce(&std::fs::File, usize) -> io::Result<()> + Send + 'static,
    ) -> io::Result<()> {
        futures_lite::future::poll_fn(|cx| self.poll_flush(cx)).await?;
        let unread = if drop_unread { self.take_unread() } else { 0 };
        self.spawn(Kind::Call, move |file| Done::Other(call(file, unread)));
        match futures_lite::future::poll_fn(|cx| self.poll_settle(cx)).await {
            Some(Done::Other(result)) => result,
            _ => unreachable!("crew::fs: a file's call gave another job's result"),
        }
    }
}

/// The write loop (see the module docs): moves the cursor back by `unread` read-ahead bytes,
/// then writes the pending bytes until it finds none.
fn write_loop(mut file: &std::fs::File, writes: &Mutex<Writes>, unread: usize) -> Done {
    let mut taken = Buf::default();
    let mut result = seek_back_by(file, unread);
    while result.is_ok() {
        {
            let mut writes = lock(writes);
            if writes.pending.is_empty() {
                writes.running = false;
                return Done::Looped;
            }
            std::mem::swap(&mut writes.pending, &mut taken);
        }
        result = file.write_all(taken.bytes());
        taken.discard();
    }
    let mut writes = lock(writes);
    writes.pending.discard();
    writes.error = result.err();
    writes.running = false;
    Done::Looped
}

/// The read loop (see the module docs): reads `chunks` chunks at most, and no more than
/// [`AHEAD`] ahead of the reader, each twice the last up to `read_ahead` bytes.
fn read_loop(file: &std::fs::File, reads: &Mutex<Reads>, chunks: usize, read_ahead: usize) -> Done {
    let mut read = 0;
    loop {
        let (mut buf, chunk) = {
            let mut reads = lock(reads);
            if reads.stop || read == chunks || reads.chunks.len() >= AHEAD {
                reads.running = false;
                let waker = reads.waker.take();
                drop(reads);
                if let Some(waker) = waker {
                    waker.wake();
                }
                return Done::Looped;
            }
            (reads.free.pop().unwrap_or_default(), reads.chunk)
        };
        let result = buf.read_from(file, chunk);
        read += 1;
        let mut reads = lock(reads);
        reads.chunk = (chunk * 2).min(read_ahead);
        let ended = !matches!(result, Ok(n) if n > 0);
        reads.chunks.push_back(result.map(|_| buf));
        if ended {
            reads.ended = true;
            reads.running = false;
        }
        let waker = reads.waker.take();
        drop(reads);
        if let Some(waker) = waker {
            waker.wake();
        }
        if ended {
            return Done::Looped;
        }
    }
}
