//! A [`File`](super::File)'s jobs on the blocking pool: reads ahead, writes behind, one job at a
//! time, with the task and the job each holding a buffer so that neither waits for the other
//! while both have work.
//!
//! Invariants:
//! - **One job at a time** (`job`): a read, the write loop, or another call (seek, `set_len`,
//!   sync). An operation that needs the cursor where the reader or writer left it first settles
//!   the job in flight; so operations take effect in the order they were called.
//! - **Reading**: the kernel's cursor is ahead of the reader by the unread bytes of `buf`, of
//!   `ahead` (the next chunk, read while the reader consumed `buf`) and of a read job in flight. A
//!   read job starts only when `ahead` is empty, and its result always lands in `ahead`. An
//!   operation other than a read settles the read in flight, drops all of those bytes and moves
//!   the cursor back by their count, first thing in its own job. A chunk of 0 bytes in `ahead`
//!   is the end of the file, given to the reader once (the file may grow after).
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
//!   `std::io::BufWriter`'s drop does.

use std::future::Future;
use std::io::{self, Seek, SeekFrom, Write};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{ready, Context, Poll};

use super::buf::{seek_back_by, Buf, MAX_BUF};
use crate::handle::JoinHandle;

/// The jobs of one open file (see the module docs).
pub(super) struct Pipeline {
    pub(super) std: Arc<std::fs::File>,
    job: Option<Job>,
    /// The read-ahead bytes the reader is consuming.
    buf: Buf,
    /// The next chunk, read ahead (empty: the end of the file), or its read's error.
    ahead: Option<io::Result<Buf>>,
    /// An empty buffer for the next read job.
    spare: Buf,
    writes: Arc<Mutex<Writes>>,
    /// The least a read job asks the kernel for.
    pub(super) read_ahead: usize,
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
    Read(Buf, io::Result<usize>),
    Wrote,
    /// The position asked for, and where the seek went.
    Sought(SeekFrom, io::Result<u64>),
    /// `set_len` or a sync, whose future takes the result.
    Other(io::Result<()>),
}

/// The job in flight; dropped, it runs to its end anyway (the module docs).
struct Job {
    handle: Option<JoinHandle<Done>>,
    write_loop: bool,
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.detach();
        }
    }
}

fn lock(writes: &Mutex<Writes>) -> std::sync::MutexGuard<'_, Writes> {
    // No code panics while holding it.
    writes.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pipeline {
    pub(super) fn new(std: std::fs::File, read_ahead: usize) -> Pipeline {
        Pipeline {
            std: Arc::new(std),
            job: None,
            buf: Buf::default(),
            ahead: None,
            spare: Buf::default(),
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

    /// The read-ahead bytes held by the file (not counting a read in flight).
    pub(super) fn unread(&self) -> usize {
        self.buf.len() + self.ahead.as_ref().map_or(0, |ahead| ahead.as_ref().map_or(0, Buf::len))
    }

    /// Starts `run` as the job in flight.
    fn spawn(&mut self, write_loop: bool, run: impl FnOnce(&std::fs::File) -> Done + Send + 'static) {
        let std = self.std.clone();
        let handle = crate::spawn_blocking(move || run(&std));
        self.job = Some(Job { handle: Some(handle), write_loop });
    }

    /// Completes the job in flight, if any: a read's bytes go to `ahead`; a seek's or another
    /// call's result is given back.
    fn poll_settle(&mut self, cx: &mut Context<'_>) -> Poll<Option<Done>> {
        let Some(job) = &mut self.job else { return Poll::Ready(None) };
        let handle = job.handle.as_mut().expect("crew::fs: a file's job polled after it ended");
        let done = ready!(Pin::new(handle).poll(cx));
        job.handle = None;
        self.job = None;
        Poll::Ready(match done {
            Done::Read(buf, result) => {
                debug_assert!(self.ahead.is_none(), "a read job starts only with nothing ahead");
                self.ahead = Some(result.map(|_| buf));
                None
            }
            Done::Wrote => None,
            done => Some(done),
        })
    }

    /// The write behind's error, once.
    fn write_error(&self) -> io::Result<()> {
        lock(&self.writes).error.take().map_or(Ok(()), Err)
    }

    /// Drops every read-ahead byte the file holds (a read in flight must be settled); returns
    /// how far the kernel's cursor is ahead of the reader.
    pub(super) fn take_unread(&mut self) -> usize {
        let mut unread = self.buf.discard();
        if let Some(Ok(mut ahead)) = self.ahead.take() {
            unread += ahead.discard();
            self.spare = ahead;
        }
        unread
    }

    /// Starts a read of at least `want` bytes into the spare buffer (nothing is ahead).
    fn start_read(&mut self, want: usize) {
        let mut buf = std::mem::take(&mut self.spare);
        self.spawn(false, move |file| {
            let result = buf.read_from(file, want);
            Done::Read(buf, result)
        });
    }

    /// Makes sure `buf` holds unread bytes, or that the reader is at the end of the file (an
    /// empty `buf`), after the writes behind; reads ahead of the reader if nothing runs.
    pub(super) fn poll_fill(&mut self, cx: &mut Context<'_>, want: usize) -> Poll<io::Result<&mut Buf>> {
        if self.job.as_ref().is_some_and(|job| !job.write_loop) {
            // A read: it lands in `ahead` below. Another call's (its future dropped): settled.
        } else {
            ready!(self.poll_settle(cx));
        }
        self.write_error()?;
        loop {
            if !self.buf.is_empty() {
                if self.read_ahead > 0 && self.job.is_none() && self.ahead.is_none() {
                    self.start_read(self.read_ahead);
                }
                return Poll::Ready(Ok(&mut self.buf));
            }
            match self.ahead.take() {
                Some(Ok(next)) => {
                    self.spare = std::mem::replace(&mut self.buf, next);
                    if self.buf.is_empty() {
                        // The end of the file, said once: the next read looks again.
                        return Poll::Ready(Ok(&mut self.buf));
                    }
                    continue;
                }
                Some(Err(error)) => return Poll::Ready(Err(error)),
                None => {}
            }
            if self.job.is_some() {
                // Another call's result, its future dropped: nobody wants it.
                let _ = ready!(self.poll_settle(cx));
                continue;
            }
            self.start_read(want.max(self.read_ahead));
        }
    }

    pub(super) fn poll_write(&mut self, cx: &mut Context<'_>, src: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            if self.job.as_ref().is_some_and(|job| !job.write_loop) {
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
            self.spawn(true, move |file| write_loop(file, &writes, unread));
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
                // The kernel's cursor is `unread` (at most 4 MiB) bytes ahead of the reader.
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
            self.spawn(false, move |mut file| Done::Sought(pos, file.seek(target)));
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
        self.spawn(false, move |file| Done::Other(call(file, unread)));
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
                return Done::Wrote;
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
    Done::Wrote
}
