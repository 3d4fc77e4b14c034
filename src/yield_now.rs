//! [`yield_now`]: give other tasks a turn.
//!
//! Invariant: the first poll wakes the task and returns `Pending`; async-task then reports the
//! wake as "woken while running", which crew schedules at the back of the worker's deque (never
//! the LIFO slot), so every task queued on that worker runs before this one is polled again.

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
