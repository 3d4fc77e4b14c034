//! hyper 1.x on crew (the `hyper` feature): hyper's runtime traits, so that its servers and
//! clients run on crew's pools, timers and sockets, with hyper's own connection code.
//!
//! Invariants:
//! - [`Executor`] spawns what hyper hands it (HTTP/2 streams, connection tasks) with
//!   `crew::spawn`, onto the current pool: the pool whose task serves the connection. A
//!   [`Spawner`] is an executor too, for a fixed pool. Either way the task is
//!   detached with the `Ignore` policy: hyper keeps no handle, so a panic is reported by the
//!   panic hook and swallowed, and never kills a worker.
//! - [`Timer`]'s sleeps are [`crew::time::Sleep`](crate::time::Sleep)s; `reset` moves the same
//!   timer rather than making a new one; its `now` is [`crew::time::now`](crate::time::now), so
//!   both follow a paused pool's clock (`Builder::start_paused`).
//! - [`Io`] reads through a buffer of its own (allocated at the first read, zeroed once) and
//!   copies into hyper's, because hyper hands out uninitialised memory that only `unsafe` code
//!   may fill; the copy is of bytes already in cache, next to a system call. Writes go straight
//!   through, vectored when the stream says its vectored writes write every buffer.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use futures_lite::io::{AsyncRead, AsyncWrite};
use hyper::rt::{ReadBufCursor, Sleep as HyperSleep};

use crate::spawner::Spawner;
use crate::time::Sleep;
use crate::Ignore;

/// hyper's executor on crew: spawns onto the current pool (as [`crew::spawn`](crate::spawn)
/// does), detached, with the `Ignore` policy. Use a [`Spawner`] instead to pin a pool.
///
/// # Examples
///
/// ```
/// use hyper::rt::Executor as _;
///
/// let (tx, rx) = std::sync::mpsc::channel();
/// crew::hyper::Executor.execute(async move { tx.send(7).unwrap() });
/// assert_eq!(rx.recv().unwrap(), 7);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Executor;

impl<F> hyper::rt::Executor<F> for Executor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    #[track_caller]
    fn execute(&self, future: F) {
        crate::spawn_with(Ignore, future).detach();
    }
}

impl<F> hyper::rt::Executor<F> for Spawner
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    /// Spawns `future` onto this spawner's pool, detached, with the `Ignore` policy.
    ///
    /// # Examples
    ///
    /// ```
    /// use hyper::rt::Executor as _;
    ///
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawner().execute(async move { tx.send(8).unwrap() });
    /// assert_eq!(rx.recv().unwrap(), 8);
    /// ```
    #[track_caller]
    fn execute(&self, future: F) {
        self.spawn_with(Ignore, future).detach();
    }
}

/// hyper's timer on crew: its sleeps are [`crew::time`](crate::time)'s.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
/// use hyper::rt::Timer as _;
///
/// let start = Instant::now();
/// crew::block_on(crew::hyper::Timer.sleep(Duration::from_millis(5)));
/// assert!(start.elapsed() >= Duration::from_millis(5));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer;

/// A [`crew::time::Sleep`](crate::time::Sleep) as hyper's `Sleep`.
#[derive(Debug)]
struct TimerSleep(Sleep);

impl Future for TimerSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl HyperSleep for TimerSleep {}

impl hyper::rt::Timer for Timer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn HyperSleep>> {
        Box::pin(TimerSleep(crate::time::sleep(duration)))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn HyperSleep>> {
        Box::pin(TimerSleep(crate::time::sleep_until(deadline)))
    }

    fn now(&self) -> Instant {
        crate::time::now()
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn HyperSleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<TimerSleep>() {
            Some(mine) => mine.get_mut().0.reset(new_deadline),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// How many bytes [`Io`] reads at most per call: its buffer's size.
const READ_CHUNK: usize = 16 * 1024;

/// A futures-io stream (crew's sockets, or any `AsyncRead + AsyncWrite`) as hyper's `Read` and
/// `Write`.
///
/// # Examples
///
/// ```no_run
/// # async fn serve() -> std::io::Result<()> {
/// let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0))?;
/// let (stream, _) = listener.accept().await?;
/// let io = crew::hyper::Io::vectored(stream); // crew's sockets write every buffer at once
/// # let _ = io; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Io<T> {
    inner: T,
    /// Where reads land before they are copied into hyper's buffer (empty until the first).
    buffer: Vec<u8>,
    vectored: bool,
}

impl<T> Io<T> {
    /// `inner`, for hyper. Its vectored writes are not used: hyper joins its buffers first.
    ///
    /// # Examples
    ///
    /// ```
    /// let io = crew::hyper::Io::new(futures_lite::io::Cursor::new(Vec::<u8>::new()));
    /// assert!(io.get_ref().get_ref().is_empty());
    /// ```
    pub fn new(inner: T) -> Io<T> {
        Io { inner, buffer: Vec::new(), vectored: false }
    }

    /// `inner`, for hyper, which then writes its buffers with one vectored write. For streams
    /// whose `poll_write_vectored` writes every buffer (crew's sockets do; futures-io's default
    /// writes only the first).
    ///
    /// # Examples
    ///
    /// ```
    /// let io = crew::hyper::Io::vectored(futures_lite::io::Cursor::new(Vec::<u8>::new()));
    /// assert!(hyper::rt::Write::is_write_vectored(&io));
    /// ```
    pub fn vectored(inner: T) -> Io<T> {
        Io { inner, buffer: Vec::new(), vectored: true }
    }

    /// The stream.
    ///
    /// # Examples
    ///
    /// ```
    /// let io = crew::hyper::Io::new(futures_lite::io::Cursor::new(vec![1u8]));
    /// assert_eq!(io.get_ref().get_ref(), &[1]);
    /// ```
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The stream, mutably.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut io = crew::hyper::Io::new(futures_lite::io::Cursor::new(vec![1u8]));
    /// io.get_mut().get_mut().push(2);
    /// assert_eq!(io.into_inner().into_inner(), vec![1, 2]);
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// The stream, back.
    ///
    /// # Examples
    ///
    /// ```
    /// let io = crew::hyper::Io::new(futures_lite::io::Cursor::new(vec![3u8]));
    /// assert_eq!(io.into_inner().into_inner(), vec![3]);
    /// ```
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: AsyncRead + Unpin> hyper::rt::Read for Io<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, mut buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.buffer.is_empty() {
            this.buffer = vec![0; READ_CHUNK];
        }
        let len = buf.remaining().min(READ_CHUNK);
        let read = ready!(Pin::new(&mut this.inner).poll_read(cx, &mut this.buffer[..len]))?;
        buf.put_slice(&this.buffer[..read]);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> hyper::rt::Write for Io<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.vectored
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }
}
