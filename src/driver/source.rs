//! An fd registered with the driver ([`IoSource`]): the owner of a non-blocking socket, pipe or
//! user fd, and the syscall loops on its readiness.
//!
//! Invariants:
//! - The fd is registered once, when the source is made, for both directions
//!   (edge-triggered), and deregistered when it is dropped or taken back
//!   ([`IoSource::into_inner`]), *before* the fd is closed: a closed fd would leave epoll's
//!   set on its own only once every duplicate of it is closed, so crew never closes one it still
//!   watches.
//! - A new source starts ready in both directions, so the first read or write tries the
//!   syscall at once (a freshly accepted socket often has its request already): a `WouldBlock`
//!   clears that readiness (its direction's first tick), unless the driver's first event in
//!   that direction came in between.
//! - Every `Pending` comes from [`ScheduledIo::poll_ready`], which stored the caller's waker
//!   and looked again under the lock (`scheduled_io.rs`); a `WouldBlock` clears only the
//!   readiness it acted on (its tick), so no edge is lost.
//! - A source whose readiness says [`Ready::SHUTDOWN`] fails every call with an error that says
//!   so, rather than waiting forever.

use std::fmt;
use std::future::Future;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::driver::poller::driver;
use crate::identity::current::budgeted;
use crate::driver::scheduled_io::{Direction, Ready, ReadyEvent, ScheduledIo};

/// An fd registered with the process's driver (see the module docs).
pub(crate) struct IoSource<T: AsFd> {
    io: Option<T>,
    token: usize,
    readiness: Arc<ScheduledIo>,
}

impl<T: AsFd> IoSource<T> {
    /// Registers `io`, which must be in non-blocking mode already.
    ///
    /// # Errors
    ///
    /// The kernel's, if it refuses the registration (`EMFILE`, `ENOMEM`, an fd registered
    /// already, a closed fd); `io` is dropped then.
    pub(crate) fn new(io: T) -> io::Result<IoSource<T>> {
        let (token, readiness) = driver().register(io.as_fd().as_raw_fd())?;
        readiness.set_readiness(Ready::READABLE.union(Ready::WRITABLE));
        Ok(IoSource { io: Some(io), token, readiness })
    }

    /// The fd's owner.
    pub(crate) fn get_ref(&self) -> &T {
        self.io.as_ref().expect("an IoSource holds its io until it is dropped")
    }

    /// The fd's owner, mutably (for calls that take `&mut`).
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.io.as_mut().expect("an IoSource holds its io until it is dropped")
    }

    /// Deregisters the fd and gives its owner back.
    pub(crate) fn into_inner(mut self) -> T {
        self.deregister();
        self.io.take().expect("an IoSource holds its io until it is dropped")
    }

    fn deregister(&self) {
        if let Some(io) = &self.io {
            driver().deregister(io.as_fd().as_raw_fd(), self.token, &self.readiness);
        }
    }

    /// Ready once a call in `direction` may not block (or the source is shut down); else
    /// `Pending`, with `cx`'s waker stored for that direction.
    pub(crate) fn poll_ready(&self, direction: Direction, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        // Under the running task's budget (`identity/current.rs`): a socket that is always
        // ready returns `Pending` once the budget is spent.
        budgeted(cx, |cx| match self.readiness.poll_ready(direction, cx) {
            Poll::Ready(event) => Poll::Ready(check(event)),
            Poll::Pending => Poll::Pending,
        })
    }

    /// Runs `call` (a non-blocking syscall on the fd) until it does not return `WouldBlock`,
    /// waiting for readiness in `direction` between tries.
    pub(crate) fn poll_io<R>(
        &self,
        direction: Direction,
        cx: &mut Context<'_>,
        mut call: impl FnMut(&T) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        loop {
            let event = match self.poll_ready(direction, cx) {
                Poll::Ready(Ok(event)) => event,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            };
            match call(self.get_ref()) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => self.readiness.clear_readiness(event),
                result => return Poll::Ready(result),
            }
        }
    }

    /// Runs `call` once if the source looks ready in `direction`; `WouldBlock` if it does not,
    /// or if `call` says so (the readiness it acted on is then cleared).
    pub(crate) fn try_io<R>(&self, direction: Direction, call: impl FnOnce(&T) -> io::Result<R>) -> io::Result<R> {
        let Some(event) = self.readiness.ready_now(direction) else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        let event = check(event)?;
        match call(self.get_ref()) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                self.readiness.clear_readiness(event);
                Err(error)
            }
            result => result,
        }
    }

    /// Waits until a call in `direction` may not block (what `readable()` and `writable()` are):
    /// any number of these may wait at once.
    pub(crate) fn ready(&self, direction: Direction) -> ReadyFuture<'_> {
        ReadyFuture { readiness: &self.readiness, direction, id: None }
    }

    /// A new place among the waiters in one direction (see [`poll_waiter`](IoSource::poll_waiter)).
    #[cfg_attr(not(feature = "signal"), allow(dead_code))] // `crew::signal`'s listeners
    pub(crate) fn waiter_id(&self) -> WaiterId {
        WaiterId(self.readiness.waiter_id())
    }

    /// As [`ready`](IoSource::ready), for a caller that keeps its own waiter's place `id` across
    /// polls: `Ready` once a call in `direction` may not block (its place is then given up),
    /// else `Pending` with `cx`'s waker stored in its place. A caller that stops waiting before
    /// `Ready` gives its place up with [`forget_waiter`](IoSource::forget_waiter).
    #[cfg_attr(not(feature = "signal"), allow(dead_code))]
    pub(crate) fn poll_waiter(&self, id: WaiterId, direction: Direction, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.readiness.poll_waiter(id.0, direction, cx).map(|event| check(event).map(drop))
    }

    /// Gives a waiter's place up.
    #[cfg_attr(not(feature = "signal"), allow(dead_code))]
    pub(crate) fn forget_waiter(&self, id: WaiterId) {
        self.readiness.forget_waiter(id.0);
    }

    /// Clears `event`'s readiness after a call that returned `WouldBlock` outside this type's
    /// loops (a user's own syscall behind `AsyncFd`'s guard).
    pub(crate) fn clear(&self, event: ReadyEvent) {
        self.readiness.clear_readiness(event);
    }
}

/// An event's readiness, or the error of a source that is shut down.
fn check(event: ReadyEvent) -> io::Result<ReadyEvent> {
    if event.ready.contains(Ready::SHUTDOWN) {
        return Err(io::Error::other("the source was deregistered from crew's I/O driver"));
    }
    Ok(event)
}

impl<T: AsFd> Drop for IoSource<T> {
    fn drop(&mut self) {
        // Before `io` is dropped, and its fd closed, with it (module docs).
        self.deregister();
    }
}

impl<T: AsFd> AsFd for IoSource<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.get_ref().as_fd()
    }
}

impl<T: AsFd + fmt::Debug> fmt::Debug for IoSource<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IoSource").field("io", &self.io).field("readiness", &self.readiness).finish()
    }
}

/// A waiter's place among a source's waiters ([`IoSource::poll_waiter`]).
#[cfg_attr(not(feature = "signal"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WaiterId(u64);

/// Waits for readiness in one direction, as one of many waiters (see [`IoSource::ready`]).
#[must_use = "futures do nothing unless polled"]
#[derive(Debug)]
pub(crate) struct ReadyFuture<'a> {
    readiness: &'a ScheduledIo,
    direction: Direction,
    id: Option<u64>,
}

impl Future for ReadyFuture<'_> {
    type Output = io::Result<ReadyEvent>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        let this = &mut *self;
        let id = *this.id.get_or_insert_with(|| this.readiness.waiter_id());
        budgeted(cx, |cx| match this.readiness.poll_waiter(id, this.direction, cx) {
            Poll::Ready(event) => {
                this.id = None;
                Poll::Ready(check(event))
            }
            Poll::Pending => Poll::Pending,
        })
    }
}

impl Drop for ReadyFuture<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.readiness.forget_waiter(id);
        }
    }
}
