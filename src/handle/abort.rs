//! [`AbortHandle`]: cancels a task from anywhere, without its [`JoinHandle`](crate::JoinHandle);
//! and [`Aborter`], the task shared by a join handle and its abort handles.
//!
//! Invariants:
//! - Aborting closes the task through async-task (the first step of `cancel`): a task waiting
//!   for a wake is scheduled one last time so that its pool drops its future; a running task's
//!   future is dropped when its current poll returns. It is never polled again.
//! - The aborter keeps async-task's handle on the task for as long as an abort handle lives,
//!   whatever became of the join handle: detached (the aborter then waits for the task's end
//!   itself, and drops its output as it ends, as a detached task's is), dropped (which cancels
//!   the task, as it does without abort handles) or moved. When the last of them goes, a task
//!   still running is detached in async-task.
//! - "Finished" is tokio's rule: the task completed, or its future was dropped. An aborted task
//!   whose poll still runs (and whose future still holds what it holds) is not finished; the
//!   aborter learns that the future is gone from async-task's cancellation, which resolves only
//!   once the task stopped running.
//! - async-task keeps one awaiter: the aborter's own waker is the one registered (by every poll
//!   of the task, the join handle's included); it wakes the join handle's last waker, kept
//!   beside it. So no poll of the aborter (an `is_finished`, an abort) steals the join handle's
//!   wake, and none is lost.
//! - The aborter's state lock is never held while user code runs (a waker's `wake`, an output's
//!   drop): both happen after it is released. A wake of the aborter's own waker that arrives
//!   while the lock is held (async-task may wake it inside a poll made under the lock) is noted
//!   and handled by the holder once it unlocks.
//! - Aborting a task that finished (or was aborted) does nothing: a finished task's output stays
//!   for its awaiter.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Wake, Waker};

use super::outcome::{outcome, Fallible, TaskOutput};
use crate::identity::TaskId;
use crate::policy::Outcome;

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
/// assert!(crew::block_on(handle).unwrap_err().is_aborted());
/// assert!(abort.is_finished()); // its future is gone
/// ```
///
/// It aborts its task whatever became of the join handle:
///
/// ```
/// // A task that keeps its waker (the timer's), detached.
/// let handle = crew::spawn(crew::time::sleep(std::time::Duration::from_secs(3600)));
/// let abort = handle.abort_handle();
/// handle.detach();
/// assert!(!abort.is_finished());
/// abort.abort();
/// while !abort.is_finished() {
///     std::thread::yield_now();
/// }
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

    /// True once the task completed (returned or panicked) or its future was dropped (aborted,
    /// cancelled by its join handle's drop, or dropped by its pool's shutdown), as tokio's
    /// `is_finished`: then whatever the future held is gone. An aborted task whose poll is still
    /// running is not finished yet.
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
/// waits until the task stopped running (its future dropped), giving its output if it had
/// finished.
type Cancelling<T> = Pin<Box<dyn Future<Output = Option<TaskOutput<T>>> + Send>>;

/// A task shared by its join handle and its abort handles (see the module docs).
pub(crate) struct Aborter<T> {
    state: Mutex<State<T>>,
    /// The join handle's last waker, woken by [`Forward`]: a lock of its own, never held while
    /// the task is polled.
    join_waker: Mutex<Option<Waker>>,
    /// The waker every poll of the task registers with async-task.
    own: Waker,
    /// The own waker was woken while the state was locked (see the module docs).
    woken: AtomicBool,
    /// async-task's `cancel`, boxed: made where `T: Send` is known (`new`), so that the
    /// aborter's other steps need no bound (a join handle's drop is generic).
    cancel: fn(Fallible<T>) -> Cancelling<T>,
}

struct State<T> {
    stage: Stage<T>,
    /// The join handle still wants the outcome: not detached, dropped, or given the outcome.
    joined: bool,
}

enum Stage<T> {
    /// Not aborted.
    Running(Fallible<T>),
    /// Aborted (or its join handle dropped): its cancellation, polled until the task stopped.
    Aborting(Cancelling<T>),
    /// Stopped: how it ended, until the join handle takes it (`None` once taken or dropped).
    Stopped(Option<Outcome<T>>),
}

/// The aborter's own waker: wakes the join handle's last waker, and lets an aborter nobody
/// joins drop its task's output as the task ends.
struct Forward<T> {
    aborter: Weak<Aborter<T>>,
}

impl<T: Send + 'static> Wake for Forward<T> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let Some(aborter) = self.aborter.upgrade() else { return };
        let join_waker = lock(&aborter.join_waker).take();
        // SeqCst, and the fence: the holder of the state lock loads `woken` after unlocking
        // (after a fence), this side stores it before trying the lock (see `settle`).
        aborter.woken.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        aborter.settle();
        if let Some(waker) = join_waker {
            waker.wake();
        }
    }
}

/// What a step of the aborter leaves to do once its lock is released: an outcome nobody will
/// take, to drop (user code).
type Leftover<T> = Option<Outcome<T>>;

impl<T: Send + 'static> Aborter<T> {
    /// The aborter of `task`, whose join handle awaits it.
    pub(crate) fn new(task: Fallible<T>) -> Arc<Aborter<T>> {
        Aborter::with_stage(Stage::Running(task))
    }

    /// The aborter of a task that ended with `outcome`, not yet taken by its join handle.
    pub(crate) fn stopped(outcome: Outcome<T>) -> Arc<Aborter<T>> {
        Aborter::with_stage(Stage::Stopped(Some(outcome)))
    }

    fn with_stage(stage: Stage<T>) -> Arc<Aborter<T>> {
        Arc::new_cyclic(|aborter| Aborter {
            state: Mutex::new(State { stage, joined: true }),
            join_waker: Mutex::new(None),
            own: Waker::from(Arc::new(Forward { aborter: aborter.clone() })),
            woken: AtomicBool::new(false),
            cancel: |task| Box::pin(task.cancel()),
        })
    }
}

impl<T> Aborter<T> {
    /// Runs `step` on the locked state; after unlocking, drops what it left and handles a wake
    /// of the own waker that came meanwhile.
    fn with_state<R>(&self, step: impl FnOnce(&mut State<T>, &Own<'_, T>) -> (R, Leftover<T>)) -> R {
        let own = Own { waker: &self.own, cancel: self.cancel };
        let (result, leftover) = {
            let mut state = lock(&self.state);
            step(&mut state, &own)
        };
        drop(leftover);
        // See `Forward::wake_by_ref`.
        fence(Ordering::SeqCst);
        self.settle();
        result
    }

    /// Handles the own waker's wakes noted while the lock was held, or takes the lock for one
    /// that came now: for an aborter nobody joins, polls the task (so that a finished task's
    /// output is dropped now). Gives up at once if another thread holds the lock: that holder
    /// settles after unlocking.
    fn settle(&self) {
        while self.woken.load(Ordering::SeqCst) {
            let Ok(mut state) = self.state.try_lock() else { return };
            self.woken.store(false, Ordering::SeqCst);
            let own = Own { waker: &self.own, cancel: self.cancel };
            let leftover = if state.joined { None } else { state.advance(&own).then(|| state.take()).flatten() };
            drop(state);
            drop(leftover);
            fence(Ordering::SeqCst);
        }
    }

    /// The join handle's poll.
    pub(crate) fn poll(&self, cx: &mut Context<'_>) -> Poll<Outcome<T>> {
        {
            let mut join_waker = lock(&self.join_waker);
            if !join_waker.as_ref().is_some_and(|waker| waker.will_wake(cx.waker())) {
                *join_waker = Some(cx.waker().clone());
            }
        }
        self.with_state(|state, own| {
            if !state.advance(own) {
                return (Poll::Pending, None);
            }
            match state.take() {
                Some(outcome) => {
                    state.joined = false;
                    (Poll::Ready(outcome), None)
                }
                None => unreachable!("the join handle polls only before it gives the task up"),
            }
        })
    }

    /// Lets the task run on, or stop if it was aborted, with nobody waiting: its output is
    /// dropped when it ends.
    pub(crate) fn detach(&self) {
        self.with_state(|state, own| {
            state.joined = false;
            // Registers the own waker, which drops the output at the task's end.
            let leftover = state.advance(own).then(|| state.take()).flatten();
            ((), leftover)
        });
    }

    /// The join handle's drop: cancels the task, as a join handle's drop does.
    pub(crate) fn drop_task(&self) {
        self.with_state(|state, own| {
            state.joined = false;
            state.abort(own);
            let leftover = state.advance(own).then(|| state.take()).flatten();
            ((), leftover)
        });
    }

    /// `JoinHandle::cancel`'s poll: aborts the task, then waits until it stopped. What the task
    /// gave if it had finished (`Some`), `None` if it had not.
    pub(crate) fn poll_cancel(&self, cx: &mut Context<'_>) -> Poll<Option<Outcome<T>>> {
        self.with_state(|state, own| {
            state.abort(own);
            ((), None)
        });
        self.poll(cx).map(|outcome| match outcome {
            Outcome::Aborted | Outcome::Cancelled => None,
            ended => Some(ended),
        })
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.with_state(|state, own| (state.advance_if_ended(own), None))
    }
}

/// What the state's steps use of the aborter: its own waker, and async-task's `cancel`.
struct Own<'a, T> {
    waker: &'a Waker,
    cancel: fn(Fallible<T>) -> Cancelling<T>,
}

impl<T> State<T> {
    /// Polls the task, or its cancellation, with the own waker: true once it stopped (its
    /// outcome is then in `Stopped`).
    fn advance(&mut self, own: &Own<'_, T>) -> bool {
        let mut cx = Context::from_waker(own.waker);
        let stopped = match &mut self.stage {
            Stage::Running(task) => match Pin::new(task).poll(&mut cx) {
                Poll::Ready(output) => outcome(output),
                Poll::Pending => return false,
            },
            Stage::Aborting(cancelling) => match cancelling.as_mut().poll(&mut cx) {
                // Finished before the abort took effect: its own outcome; else aborted.
                Poll::Ready(Some(output)) => outcome(Some(output)),
                Poll::Ready(None) => Outcome::Aborted,
                Poll::Pending => return false,
            },
            Stage::Stopped(_) => return true,
        };
        self.stage = Stage::Stopped(Some(stopped));
        true
    }

    /// [`advance`](State::advance), but a running task that async-task does not call finished
    /// (neither completed nor closed) is not polled: true once the task stopped.
    fn advance_if_ended(&mut self, own: &Own<'_, T>) -> bool {
        match &self.stage {
            Stage::Running(task) if !task.is_finished() => false,
            _ => self.advance(own),
        }
    }

    /// The outcome, taken out of `Stopped`.
    fn take(&mut self) -> Option<Outcome<T>> {
        match &mut self.stage {
            Stage::Stopped(outcome) => outcome.take(),
            _ => None,
        }
    }

    /// Closes a task that has not finished: its cancellation's first poll (which closes it),
    /// with the own waker.
    fn abort(&mut self, own: &Own<'_, T>) {
        if !matches!(&self.stage, Stage::Running(task) if !task.is_finished()) {
            return;
        }
        let Stage::Running(task) = std::mem::replace(&mut self.stage, Stage::Stopped(None)) else { unreachable!() };
        let mut cancelling = (own.cancel)(task);
        self.stage = match cancelling.as_mut().poll(&mut Context::from_waker(own.waker)) {
            Poll::Pending => Stage::Aborting(cancelling),
            Poll::Ready(Some(output)) => Stage::Stopped(Some(outcome(Some(output)))),
            Poll::Ready(None) => Stage::Stopped(Some(Outcome::Aborted)),
        };
    }
}

/// The last handle is gone: a task still running runs on, detached in async-task (dropping
/// async-task's handle would cancel it).
impl<T> Drop for Aborter<T> {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Stage::Running(task) = std::mem::replace(&mut state.stage, Stage::Stopped(None)) {
            task.detach();
        }
    }
}

impl<T: Send + 'static> Abort for Aborter<T> {
    fn abort(&self, _id: TaskId) {
        self.with_state(|state, own| {
            state.abort(own);
            // A task nobody joins: its outcome (aborted, or finished first) is dropped.
            let leftover = if state.joined { None } else { state.advance(own).then(|| state.take()).flatten() };
            ((), leftover)
        });
    }

    fn is_finished(&self, _id: TaskId) -> bool {
        Aborter::is_finished(self)
    }
}

/// Locks `mutex`; no code under the aborter's locks panics halfway, so a poisoned one is taken
/// as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
