//! [`yield_now`]: give other tasks a turn.
//!
//! Invariant: the first poll wakes the task and returns `Pending`; async-task then reports the
//! wake as "woken while running", which crew puts on the worker's deferred list (never the LIFO
//! slot), or, for a local task, on its thread's yielded list, which the worker treats the same
//! way (`scheduler/cores/local.rs`). The deferred list runs once the worker has nothing else ready
//! (its LIFO slot, deque and the injector empty, after a reactor turn when the worker drives
//! the reactor), or moves to the back of the deque at the worker's next fairness tick (the
//! cadence is stated in `scheduler/mod.rs`), whichever comes first; so the tasks ready on that
//! worker run before this one is polled again, and a task that yields forever cannot starve
//! them.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Lets the other tasks queued on this worker run before the current task continues.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn(async {
///     for _ in 0..3 {
///         crew::yield_now().await;
///     }
///     "yielded three times"
/// });
/// assert_eq!(crew::block_on(handle), "yielded three times");
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future returned by [`yield_now`].
///
/// # Examples
///
/// ```
/// let future: crew::YieldNow = crew::yield_now();
/// crew::block_on(future);
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless you .await or poll them"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
