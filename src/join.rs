//! [`JoinHandle`]: the typed handle to a spawned task.
//!
//! Invariants:
//! - Dropping the handle cancels the task: its future is never polled again and is dropped by
//!   the pool soon after (async-task schedules an idle task one last time for that; a running
//!   task's future is dropped when its current poll returns). `detach` gives that up and lets the task run
//!   to completion with nobody waiting for it.
//! - The handle is a plain future over async-task's `FallibleTask`: it can be awaited from any
//!   executor or thread; nothing in it depends on crew's thread-locals.
//! - What awaiting yields is decided by the policy `P` (see `policy`), from how the task ended.
//! - A handle yields once. Polling it again after it returned (or after its poll resumed the
//!   task's panic), or cancelling it then, panics with [`POLLED_AFTER_RETURN`]: async-task would
//!   report the taken output as a cancelled task, which is not what happened.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use async_task::FallibleTask;

use crate::policy::{Outcome, Policy, Propagate};
use crate::sync::planted_bug;
use crate::task::{TaskId, TaskInfo, TaskOutput};

/// A handle to a spawned task; awaiting it yields the task's output as its policy `P` says.
///
/// Dropping a `JoinHandle` cancels the task. Use [`detach`](JoinHandle::detach) to let it run in
/// the background instead.
///
/// A handle yields its task's output once: polling it again after it returned (or after it
/// resumed the task's panic) panics with a message saying so, under every policy.
///
/// # Examples
///
/// ```
/// let handle: crew::JoinHandle<u32> = crew::spawn(async { 40 + 2 });
/// assert_eq!(crew::block_on(handle), 42);
///
/// // The handle is an ordinary future: any executor can await it.
/// let handle = crew::spawn(async { "hi" });
/// assert_eq!(futures::executor::block_on(handle), "hi");
/// ```
#[must_use = "dropping a JoinHandle cancels its task; call .detach() to let it run in the background"]
pub struct JoinHandle<T, P: Policy = Propagate> {
    task: FallibleTask<TaskOutput<T>, TaskInfo>,
    /// The task's id (async-task's `FallibleTask` does not lend the task's metadata, and a copy
    /// of all of it would triple the handle's size), and in its top bit, [`RETURNED`]: the
    /// handle stays two words, as it was before tasks had ids.
    id_returned: u64,
    /// `fn() -> P`: the handle is `Unpin`, `Send` and `Sync` whatever `P` is.
    policy: PhantomData<fn() -> P>,
}

/// Set in a handle's `id_returned` once a poll returned the task's output (or resumed its
/// panic). Ids are counted from 1 by one process-wide counter and never reach it.
const RETURNED: u64 = 1 << 63;

/// What polling (or cancelling) a [`JoinHandle`] that already returned panics with.
pub(crate) const POLLED_AFTER_RETURN: &str =
    "crew: a JoinHandle was polled again after it returned its task's output (a handle yields its output once)";

impl<T, P: Policy> JoinHandle<T, P> {
    pub(crate) fn new(task: async_task::Task<TaskOutput<T>, TaskInfo>) -> JoinHandle<T, P> {
        let id = task.metadata().id().as_u64();
        debug_assert_eq!(id & RETURNED, 0, "task ids never reach 2^63");
        JoinHandle { task: task.fallible(), id_returned: id, policy: PhantomData }
    }

    /// The task's id, as slow-poll reports name it.
    ///
    /// # Examples
    ///
    /// ```
    /// let a = crew::spawn(async {});
    /// let b = crew::spawn(async {});
    /// assert_ne!(a.id(), b.id());
    /// # crew::block_on(a); crew::block_on(b);
    /// ```
    pub fn id(&self) -> TaskId {
        TaskId::from_u64(self.id_returned & !RETURNED)
    }

    /// True once a poll returned the task's output (or resumed its panic).
    fn returned(&self) -> bool {
        self.id_returned & RETURNED != 0
    }

    /// Lets the task run to completion in the background; its output (or panic, under
    /// [`Propagate`] and [`Catch`](crate::Catch)) is dropped when it finishes.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// crew::spawn(async move { tx.send("done").unwrap() }).detach();
    /// assert_eq!(rx.recv().unwrap(), "done");
    /// ```
    pub fn detach(self) {
        if planted_bug!("detach_forgets") {
            std::mem::forget(self.task);
        } else {
            self.task.detach();
        }
    }

    /// Cancels the task and waits until its future is dropped.
    ///
    /// Returns `None` if the task had not finished, else `Some` of what awaiting the handle would
    /// have given (so under [`Propagate`], cancelling a task that already panicked resumes
    /// its panic).
    ///
    /// # Panics
    ///
    /// If the handle was already polled to completion (its output is gone).
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn(std::future::pending::<()>());
    /// assert_eq!(crew::block_on(handle.cancel()), None);
    ///
    /// let handle = crew::spawn(async { 5 });
    /// while !handle.is_finished() { std::thread::yield_now(); }
    /// assert_eq!(crew::block_on(handle.cancel()), Some(5));
    /// ```
    pub async fn cancel(self) -> Option<P::Output<T>> {
        assert!(!self.returned(), "{POLLED_AFTER_RETURN}");
        let output = self.task.cancel().await;
        let output = if planted_bug!("cancel_forgets_output") { output.and_then(forget_output) } else { output };
        output.map(|output| P::complete(outcome(Some(output))))
    }

    /// True if the task has finished: completed, panicked, or been dropped by its pool's
    /// shutdown.
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn(async { 1 });
    /// while !handle.is_finished() { std::thread::yield_now(); }
    /// assert_eq!(crew::block_on(handle), 1);
    /// ```
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

/// The `cancel_forgets_output` planted bug: forgets the output instead of returning it.
fn forget_output<O>(output: O) -> Option<O> {
    std::mem::forget(output);
    None
}

/// How the task ended, from what async-task gave back (`None`: dropped before finishing).
fn outcome<T>(output: Option<TaskOutput<T>>) -> Outcome<T> {
    match output.map(TaskOutput::into_inner) {
        Some(Ok(value)) => Outcome::Finished(value),
        Some(Err(Some(payload))) => Outcome::Panicked(payload),
        Some(Err(None)) => Outcome::Swallowed,
        None => Outcome::Cancelled,
    }
}

impl<T, P: Policy> Future for JoinHandle<T, P> {
    type Output = P::Output<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        assert!(!self.returned(), "{POLLED_AFTER_RETURN}");
        let output = std::task::ready!(Pin::new(&mut self.task).poll(cx));
        // Before `complete`, which resumes a `Propagate` task's panic.
        self.id_returned |= RETURNED;
        Poll::Ready(P::complete(outcome(output)))
    }
}

impl<T, P: Policy> fmt::Debug for JoinHandle<T, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("policy", &std::any::type_name::<P>())
            .field("finished", &self.task.is_finished())
            .finish()
    }
}
