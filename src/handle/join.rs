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
//! - The handle owns its task and polls it with no lock, until [`JoinHandle::abort_handle`]
//!   is first called: the task then moves into an [`Aborter`] shared with the abort handles
//!   (`abort.rs`), and the handle polls it through the aborter's lock. The handle's own
//!   `Mutex` is only locked by `abort_handle` and `is_finished`; polls, which hold `&mut self`,
//!   reach it with `get_mut`.
//! - `is_finished` is tokio's rule (completed, or its future dropped). async-task's own flag
//!   is also set for a closed task still dropping its future, so an owned handle whose waker
//!   async-task does not hold asks the task (a poll with a waker nobody needs) and keeps what
//!   it gave for the handle's poll (`Task::Ended`); one whose waker it holds (`POLLED_PENDING`)
//!   must not replace it, and reads the flag: the one case where a task its pool is dropping
//!   reads finished as that drop begins.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::abort::{AbortHandle, Aborter};
use super::outcome::{noop_waker, outcome, Fallible, TaskOutput};
use crate::policy::{Outcome, Policy, Propagate};
use std::sync::Arc;

use crate::identity::{current, TaskId, TaskLabel, TaskNameRef};
use crate::scheduler::TaskMeta;
use crate::sync::planted_bug;

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
    /// The task: owned, or shared with abort handles (see the module docs).
    task: std::sync::Mutex<Task<T>>,
    /// The task's id (async-task's `FallibleTask` does not lend the task's metadata, and a copy
    /// of all of it would triple the handle's size), and in its top bit, [`RETURNED`].
    id_returned: u64,
    /// The task's name, for a [`JoinError`](crate::JoinError): one pointer, `None` if unnamed.
    name: TaskNameRef,
    /// `fn() -> P`: the handle is `Unpin`, `Send` and `Sync` whatever `P` is.
    policy: PhantomData<fn() -> P>,
}

/// Set in a handle's `id_returned` once a poll returned the task's output (or resumed its
/// panic). Ids are counted from 1 by one process-wide counter and never reach it.
const RETURNED: u64 = 1 << 63;

/// Set in a handle's `id_returned` once a poll of the handle's own task found it pending, so
/// that async-task holds the handle's waker (see `is_finished`). Below `RETURNED`, and ids
/// never reach it either.
const POLLED_PENDING: u64 = 1 << 62;

/// Where a [`JoinHandle`]'s task is.
enum Task<T> {
    /// The handle's alone.
    Owned(Fallible<T>),
    /// Shared with abort handles.
    Shared(Arc<Aborter<T>>),
    /// Ended, as `is_finished` learnt by asking the task: the outcome, for the handle's poll.
    /// Boxed: rare, and the handle stays small whatever `T` is.
    Ended(Box<Outcome<T>>),
    /// Given up: detached, cancelled, or the handle is being dropped.
    Gone,
}

/// What polling (or cancelling) a [`JoinHandle`] that already returned panics with.
pub(crate) const POLLED_AFTER_RETURN: &str =
    "crew: a JoinHandle was polled again after it returned its task's output (a handle yields its output once)";

impl<T, P: Policy> JoinHandle<T, P> {
    pub(crate) fn new(task: async_task::Task<TaskOutput<T>, TaskMeta>) -> JoinHandle<T, P> {
        let info = task.metadata().info();
        let id = info.id().as_u64();
        debug_assert_eq!(id & (RETURNED | POLLED_PENDING), 0, "task ids never reach 2^62");
        let name = info.label().into_name();
        JoinHandle {
            task: std::sync::Mutex::new(Task::Owned(task.fallible())),
            id_returned: id,
            name,
            policy: PhantomData,
        }
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
        TaskId::from_u64(self.id_returned & !(RETURNED | POLLED_PENDING))
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
    pub fn detach(mut self) {
        match self.take() {
            Task::Owned(task) if planted_bug!("detach_forgets") => std::mem::forget(task),
            Task::Owned(task) => task.detach(),
            Task::Shared(aborter) => aborter.detach(),
            Task::Ended(_) | Task::Gone => {}
        }
    }

    /// The task, taken out of the handle (which then holds [`Task::Gone`]).
    fn take(&mut self) -> Task<T> {
        std::mem::replace(self.task.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner), Task::Gone)
    }

    /// A handle that aborts this task from anywhere: see [`AbortHandle`]. Awaiting this handle
    /// after an abort gives what the policy gives a cancelled task ([`ABORTED_MESSAGE`] under
    /// [`Propagate`] and [`Ignore`](crate::Ignore), `Err` with [`JoinError::is_aborted`] under
    /// [`Catch`](crate::Catch)), or the task's output if it finished first.
    ///
    /// [`ABORTED_MESSAGE`]: crate::ABORTED_MESSAGE
    /// [`JoinError::is_aborted`]: crate::JoinError::is_aborted
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn_with(crew::Catch, std::future::pending::<()>());
    /// let abort = handle.abort_handle();
    /// assert_eq!(abort.id(), handle.id());
    /// std::thread::spawn(move || abort.abort()).join().unwrap();
    /// assert!(crew::block_on(handle).unwrap_err().is_aborted());
    /// ```
    pub fn abort_handle(&self) -> AbortHandle
    where
        T: Send + 'static,
    {
        let mut task = self.task.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let aborter = match std::mem::replace(&mut *task, Task::Gone) {
            Task::Owned(owned) => Aborter::new(owned),
            Task::Shared(aborter) => aborter,
            Task::Ended(outcome) => Aborter::stopped(*outcome),
            // Only the handle's own consuming methods and its drop leave it `Gone`.
            Task::Gone => unreachable!("a JoinHandle's task is gone only once the handle is consumed"),
        };
        *task = Task::Shared(aborter.clone());
        AbortHandle::new(aborter, self.id())
    }

    /// Aborts the task, as tokio's `JoinHandle::abort`: its future is dropped at its next return
    /// from a poll (at once if it is not running), unless it finished first. Awaiting this
    /// handle afterwards gives what [`abort_handle`](JoinHandle::abort_handle) says: the
    /// task's output if it finished first, else [`ABORTED_MESSAGE`] as a panic under
    /// [`Propagate`] and [`Ignore`](crate::Ignore), `Err` with [`JoinError::is_aborted`] under
    /// [`Catch`](crate::Catch). Unlike dropping the handle, it keeps the handle to await.
    ///
    /// [`ABORTED_MESSAGE`]: crate::ABORTED_MESSAGE
    /// [`JoinError::is_aborted`]: crate::JoinError::is_aborted
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn_with(crew::Catch, std::future::pending::<()>());
    /// handle.abort();
    /// let err = crew::block_on(handle).unwrap_err();
    /// assert!(err.is_aborted());
    /// ```
    pub fn abort(&self)
    where
        T: Send + 'static,
    {
        self.abort_handle().abort();
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
    pub async fn cancel(mut self) -> Option<P::Output<T>> {
        assert!(!self.returned(), "{POLLED_AFTER_RETURN}");
        let shared = match self.task.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner) {
            // Kept in the handle meanwhile: if this future is dropped, the handle's drop cancels.
            Task::Shared(aborter) => Some(aborter.clone()),
            _ => None,
        };
        let output = match shared {
            Some(aborter) => std::future::poll_fn(|cx| aborter.poll_cancel(cx)).await,
            None => match self.take() {
                Task::Owned(task) => task.cancel().await.map(|output| outcome(Some(output))),
                Task::Ended(ended) => match *ended {
                    Outcome::Aborted | Outcome::Cancelled => None,
                    ended => Some(ended),
                },
                Task::Shared(_) | Task::Gone => None,
            },
        };
        let output = if planted_bug!("cancel_forgets_output") { output.and_then(forget_output) } else { output };
        output.map(|output| P::complete(output, self.label()))
    }

    /// The task's name, kept for a set's aborted member whose handle is dropped.
    pub(crate) fn name_ref(&self) -> TaskNameRef {
        self.name.clone()
    }

    /// The task's id and name, for what the policy makes of its end.
    pub(crate) fn label(&self) -> TaskLabel {
        self.name.label(self.id())
    }

    /// True once the task completed (returned or panicked) or its future was dropped (aborted
    /// through an [`AbortHandle`], or dropped by its pool's shutdown), as tokio's `is_finished`:
    /// then whatever the future held is gone. An aborted task whose poll still runs is not
    /// finished. (One case reads async-task's flag alone: a handle with no abort handle, already
    /// polled while its task was pending, whose pool's shutdown is dropping the task right
    /// now: it reads finished as that drop begins.)
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn(async { 1 });
    /// while !handle.is_finished() { std::thread::yield_now(); }
    /// assert_eq!(crew::block_on(handle), 1);
    /// ```
    pub fn is_finished(&self) -> bool {
        let mut task = self.task.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match &mut *task {
            // Neither completed nor closed: running.
            Task::Owned(owned) if !owned.is_finished() => false,
            // Completed, or closed and maybe still dropping its future. The handle's waker is
            // registered with async-task (a poll that found it pending): asking the task would
            // replace it, so async-task's answer stands.
            Task::Owned(_) if self.id_returned & POLLED_PENDING != 0 => true,
            // Nothing of the handle's is registered: ask the task (a poll that registers nothing
            // that is ever needed: the handle's next poll registers its own waker), and keep the
            // outcome for the handle's poll.
            Task::Owned(owned) => match Pin::new(owned).poll(&mut Context::from_waker(&noop_waker())) {
                Poll::Ready(output) => {
                    *task = Task::Ended(Box::new(outcome(output)));
                    true
                }
                Poll::Pending => false,
            },
            Task::Shared(aborter) => {
                let aborter = aborter.clone();
                drop(task);
                aborter.is_finished()
            }
            Task::Ended(_) | Task::Gone => true,
        }
    }
}

/// The `cancel_forgets_output` planted bug: forgets the output instead of returning it.
fn forget_output<O>(output: O) -> Option<O> {
    std::mem::forget(output);
    None
}

impl<T, P: Policy> JoinHandle<T, P> {
    /// The handle's poll, before the policy: how the task ended. For a set, which skips aborted
    /// members.
    pub(crate) fn poll_outcome(&mut self, cx: &mut Context<'_>) -> Poll<Outcome<T>> {
        assert!(!self.returned(), "{POLLED_AFTER_RETURN}");
        // `&mut self`: no lock (see the module docs).
        let task = self.task.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        let ended = match task {
            Task::Owned(owned) => match Pin::new(owned).poll(cx) {
                Poll::Ready(output) => outcome(output),
                Poll::Pending => {
                    self.id_returned |= POLLED_PENDING;
                    return Poll::Pending;
                }
            },
            Task::Shared(aborter) => std::task::ready!(aborter.poll(cx)),
            Task::Ended(_) => match std::mem::replace(task, Task::Gone) {
                Task::Ended(ended) => *ended,
                _ => unreachable!("matched as ended"),
            },
            Task::Gone => unreachable!("a JoinHandle's task is gone only once the handle is consumed"),
        };
        // Before `complete`, which resumes a `Propagate` task's panic.
        self.id_returned |= RETURNED;
        Poll::Ready(ended)
    }
}

impl<T, P: Policy> Future for JoinHandle<T, P> {
    type Output = P::Output<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Under the running task's budget (`identity/current.rs`), as tokio's handle.
        current::budgeted(cx, |cx| self.poll_outcome(cx)).map(|outcome| P::complete(outcome, self.label()))
    }
}

/// Dropping the handle cancels the task, also when abort handles share it.
impl<T, P: Policy> Drop for JoinHandle<T, P> {
    fn drop(&mut self) {
        if let Task::Shared(aborter) = self.take() {
            aborter.drop_task();
        }
    }
}

impl<T, P: Policy> fmt::Debug for JoinHandle<T, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("policy", &std::any::type_name::<P>())
            .field("finished", &self.is_finished())
            .finish()
    }
}
