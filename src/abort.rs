//! [`AbortHandle`]: cancels a task from anywhere, without its [`JoinHandle`](crate::JoinHandle);
//! and [`Aborter`], the task shared by a join handle and its abort handles.
//!
//! Invariants:
//! - Aborting closes the task through async-task (the first step of `cancel`): a task waiting
//!   for a wake is scheduled one last time so that its pool drops its future; a running task's
//!   future is dropped when its current poll returns. It is never polled again.
//! - No wakeup is lost: closing notifies the awaiter already registered with async-task (the
//!   join handle's last poll) before the aborter's own first poll registers anything, and every
//!   later poll of the join handle registers its own waker again.
//! - Aborting a task that finished (or was aborted) does nothing: a finished task's output stays
//!   for its awaiter.
//! - Dropping the join handle cancels the task even while abort handles live: they keep the
//!   aborter, not the task.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use crate::join::{outcome, Fallible};
use crate::policy::Outcome;
use crate::task::{TaskId, TaskOutput};
use std::sync::Arc;

/// A handle that aborts a task: from [`JoinHandle::abort_handle`](crate::JoinHandle::abort_handle),
/// or returned by a [`JoinSet`](crate::task::JoinSet)'s spawns. `Clone`, `Send` and `Sync`;
/// dropping it does nothing to the task.
///
/// [`abort`](AbortHandle::abort) cancels the task at its next return from `poll` (at once if it
/// waits for a wake): its future is dropped and never polled again, and its join handle resolves
/// as aborted ([`ABORTED_MESSAGE`](crate::ABORTED_MESSAGE), or `Err` with
/// [`JoinError::is_aborted`](crate::JoinError::is_aborted) under [`Catch`](crate::Catch)).
/// A task that finished first keeps its output.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn_with(crew::Catch, std::future::pending::<()>());
/// let abort = handle.abort_handle();
/// assert!(!abort.is_finished());
/// abort.abort();
/// assert!(abort.is_finished());
/// assert!(crew::block_on(handle).unwrap_err().is_aborted());
/// ```
#[derive(Clone)]
pub struct AbortHandle {
    target: Arc<dyn Abort>,
    id: TaskId,
}

/// What an abort handle aborts: one task's [`Aborter`], or a set's member.
pub(crate) trait Abort: Send + Sync {
    fn abort(&self, id: TaskId);
    fn is_finished(&self, id: TaskId) -> bool;
}

impl AbortHandle {
    pub(crate) fn new(target: Arc<dyn Abort>, id: TaskId) -> AbortHandle {
        AbortHandle { target, id }
    }

    /// Aborts the task (see [`AbortHandle`]). Does nothing if it finished or was aborted.
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn(std::future::pending::<()>());
    /// let abort = handle.abort_handle();
    /// abort.abort();
    /// abort.abort(); // no effect the second time
    /// let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(handle))).unwrap_err();
    /// assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some(crew::ABORTED_MESSAGE));
    /// ```
    pub fn abort(&self) {
        self.target.abort(self.id);
    }

    /// True once the task finished, or was aborted (it will then never be polled again; a poll
    /// running as it was aborted may still be returning).
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn(async { 3 });
    /// let abort = handle.abort_handle();
    /// while !abort.is_finished() { std::thread::yield_now(); }
    /// abort.abort(); // too late: the output stays
    /// assert_eq!(crew::block_on(handle), 3);
    /// ```
    pub fn is_finished(&self) -> bool {
        self.target.is_finished(self.id)
    }

    /// The task's id.
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn(async {});
    /// assert_eq!(handle.abort_handle().id(), handle.id());
    /// # crew::block_on(handle);
    /// ```
    pub fn id(&self) -> TaskId {
        self.id
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle").field("id", &self.id.as_u64()).finish_non_exhaustive()
    }
}

/// async-task's cancel of a task, as a boxed future: closes the task on its first poll, then
/// waits until the task stopped, giving its output if it had finished.
type Cancelling<T> = Pin<Box<dyn Future<Output = Option<TaskOutput<T>>> + Send>>;

/// A task shared by its join handle and its abort handles.
pub(crate) struct Aborter<T> {
    state: Mutex<State<T>>,
}

enum State<T> {
    /// Not aborted.
    Running(Fallible<T>),
    /// Aborted: its cancellation, polled by the join handle until the task stopped.
    Aborting(Cancelling<T>),
    /// Detached, cancelled, or dropped by the join handle.
    Gone,
}

impl<T> Aborter<T> {
    pub(crate) fn new(task: Fallible<T>) -> Aborter<T> {
        Aborter { state: Mutex::new(State::Running(task)) }
    }

    fn state(&self) -> MutexGuard<'_, State<T>> {
        // No code under this lock panics halfway; take the state as it is.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The join handle's poll.
    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<Outcome<T>> {
        let mut state = self.state();
        match &mut *state {
            State::Running(task) => Pin::new(task).poll(cx).map(outcome),
            // Finished before the abort took effect: its own outcome; else aborted.
            State::Aborting(cancelling) => cancelling.as_mut().poll(cx).map(|output| match output {
                Some(output) => outcome(Some(output)),
                None => Outcome::Aborted,
            }),
            State::Gone => unreachable!("the join handle polls only before it gives the task up"),
        }
    }

    /// Lets the task run on, or stop if it was aborted, with nobody waiting.
    pub(crate) fn detach(&self) {
        let taken = std::mem::replace(&mut *self.state(), State::Gone);
        if let State::Running(task) = taken {
            task.detach();
        }
    }

    /// Drops the task (cancelling it, if it runs), outside the lock.
    pub(crate) fn drop_task(&self) {
        let taken = std::mem::replace(&mut *self.state(), State::Gone);
        drop(taken);
    }

    /// `JoinHandle::cancel`: what the task gave if it had finished.
    pub(crate) async fn cancel(&self) -> Option<TaskOutput<T>> {
        let taken = std::mem::replace(&mut *self.state(), State::Gone);
        match taken {
            State::Running(task) => task.cancel().await,
            State::Aborting(cancelling) => cancelling.await,
            State::Gone => None,
        }
    }

    pub(crate) fn is_finished(&self) -> bool {
        match &*self.state() {
            State::Running(task) => task.is_finished(),
            State::Aborting(_) | State::Gone => true,
        }
    }
}

impl<T: Send + 'static> Abort for Aborter<T> {
    fn abort(&self, _id: TaskId) {
        let mut state = self.state();
        if !matches!(&*state, State::Running(task) if !task.is_finished()) {
            return;
        }
        let State::Running(task) = std::mem::replace(&mut *state, State::Gone) else { unreachable!() };
        let mut cancelling: Cancelling<T> = Box::pin(task.cancel());
        // The first poll closes the task (which notifies the join handle's registered waker);
        // the join handle's next poll registers its own waker again.
        match cancelling.as_mut().poll(&mut Context::from_waker(&noop_waker())) {
            Poll::Pending => *state = State::Aborting(cancelling),
            // Already stopped: a cancellation that is over, kept for the join handle.
            Poll::Ready(output) => *state = State::Aborting(Box::pin(std::future::ready(output))),
        }
    }

    fn is_finished(&self, _id: TaskId) -> bool {
        Aborter::is_finished(self)
    }
}

/// A waker that does nothing, for a poll whose wake nobody needs: the aborter's own poll only
/// closes the task, and a set's poll of a finished member's handle is ready at once.
pub(crate) fn noop_waker() -> Waker {
    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    Waker::from(Arc::new(Noop))
}
