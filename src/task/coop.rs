//! The cooperative budget's public face: [`unconstrained`] and [`consume_budget`] (tokio's
//! names). The budget itself is `identity/current.rs`.
//!
//! Invariants: a task's poll starts with 128 units; crew's own resources (sockets, listeners,
//! `AsyncFd`, timers already due, `JoinHandle`, `JoinSet`, `TaskGroup`) spend one per `Ready`
//! result and, once none is left, return `Pending` once and wake the task; other crates'
//! resources (tokio's, async-channel's) spend nothing.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use crate::identity::current;

pin_project! {
    /// The future [`unconstrained`] returns.
    #[derive(Debug)]
    #[must_use = "futures do nothing unless polled"]
    pub struct Unconstrained<F> {
        #[pin]
        future: F,
    }
}

/// Runs `future` with no budget: crew's resources never return `Pending` to it because its
/// task's budget is spent (tokio's `task::unconstrained`). For a future that must drain what is
/// ready in one go, knowing that it may then hold its worker as long as work keeps coming.
///
/// # Examples
///
/// ```
/// crew::block_on(async {
///     let set: crew::task::JoinSet<u32> = (0..1_000u32).map(|i| async move { i }).collect();
///     // Members that ended are joined without going back to the scheduler every 128.
///     let outputs = crew::task::unconstrained(set.join_all()).await;
///     assert_eq!(outputs.len(), 1_000);
/// });
/// ```
pub fn unconstrained<F: Future>(future: F) -> Unconstrained<F> {
    Unconstrained { future }
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _free = current::unconstrained();
        self.project().future.poll(cx)
    }
}

/// Spends one unit of the running task's budget, returning at once while units are left, and
/// going back to the scheduler once (with the task woken) when none is (tokio's
/// `task::consume_budget`). For a loop over resources that are not crew's, so that it still
/// lets the pool's other work and its timers run.
///
/// # Examples
///
/// ```
/// crew::block_on(crew::spawn(async {
///     let mut sum = 0u64;
///     for i in 0..10_000u64 {
///         sum += i; // work that never waits
///         crew::task::consume_budget().await; // yields once every 128 rounds
///     }
///     assert_eq!(sum, 49_995_000);
/// }));
/// ```
pub async fn consume_budget() {
    std::future::poll_fn(|cx| current::budgeted(cx, |_| Poll::Ready(()))).await;
}
