//! [`scope`]: tasks that borrow from the caller's stack, on crew's pools, with a blocking wait
//! that makes them sound, as `std::thread::scope` and `rayon::scope` do for threads.
//!
//! Invariant (what makes it sound, and what `unchecked.rs`'s `unsafe` rests on): [`scope`]
//! returns or unwinds only after every task spawned into the scope has ended (its future and
//! its output dropped, or its output handed to a handle bound to the scope, and async-task's
//! last run or drop of its `Runnable` returned), however the closure or the tasks end: a panic
//! in either, a handle leaked with `mem::forget` (the count is of tasks' ends, never of
//! handles), a pool that shuts down meanwhile (it drops the tasks' futures, which ends them).
//!
//! # Why it is sound
//!
//! What borrows `'env` data: the tasks' futures and outputs, and the closure. The closure
//! returns (or unwinds) before the wait begins. A task is counted before it can run and
//! uncounted only once its `Runnable` is gone (`count.rs`, `task.rs`). So the wait's work is to
//! outlast every task, and it must also outlast every piece of user code that can spawn one.
//! Who can spawn into the scope: whoever holds the `&'scope Scope`, that is the closure, a
//! running task, and any value that captured the reference, which lives (by `'scope`) in the
//! closure's frame, a task's future or output, or a handle's end. The user code that runs
//! *inside* the scope's own wait, and so after the closure returned, is:
//! - the drop of an end whose handle was leaked (its output's `Drop`, or a panic payload's),
//!   which the scope itself disposes of: it may spawn, so the wait loops (count zero, then
//!   dispose of the unclaimed ends, then wait again) and returns only when the count is zero
//!   *and* no unclaimed end was left (`wait_for_every_task`);
//! - a task's own end: its future's and output's drops, and the wake of its handle's awaiter,
//!   all before the task's count ends (`task.rs`), so a spawn there is counted first; a panic
//!   there is caught and reported as the scope reports a task's panic, never unwinds past the
//!   count (a count left above zero would hang the scope);
//! - a handle's drop, inside an output dropped by either of the above: it disposes of its end or
//!   leaves it to its task, counted.
//!
//! Once the count is zero and the list of unclaimed ends is empty, every task has ended, every
//! end was given to a handle's awaiter or dropped, and the closure has returned: no value that
//! holds `&Scope` is left to run, so no spawn can follow and the borrows may end. What the scope
//! returns and what it resumes cannot hold `'scope` (the closure's `for<'scope>` bound, and a
//! panic payload is `'static`).
//!
//! The parts:
//! - `count.rs`: the count of running tasks, each task's end delivered once its `Runnable` is
//!   gone, and the blocking wait for zero (model-checked by `loom-tests/tests/scope_count.rs`).
//! - `task.rs`: the future around the user's, which delivers the task's end and then notes it
//!   for the count, from its `Drop`; and what the scope shares with its tasks.
//! - `handle.rs`: the handle and the slot where a task's end waits for it.
//! - `unchecked.rs`: the only `unsafe` in crew, the task's allocation.

mod count;
mod handle;
mod task;
mod unchecked;

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe, Location};
use std::sync::{Arc, PoisonError};

use count::ScopeCount;
pub use handle::ScopedJoinHandle;

use crate::handle::JoinHandle;
use crate::identity::TaskInfo;
use crate::policy::Propagate;
use crate::pool::Pool;
use crate::sync::planted_bug;
use crate::target::Target;
use handle::Slot;
use task::{ScopedTask, Shared, UnclaimedList};
use unchecked::Borrowing;

/// The message `scope` panics with when a scoped task panicked and nobody awaited its handle.
///
/// # Examples
///
/// ```
/// let payload = std::panic::catch_unwind(|| {
///     crew::scope(|s| drop(s.spawn(async { panic!("not awaited") })));
/// })
/// .unwrap_err();
/// assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some(crew::SCOPED_TASK_PANICKED_MESSAGE));
/// ```
pub const SCOPED_TASK_PANICKED_MESSAGE: &str = "crew::scope: a scoped task panicked and its handle was not awaited";

/// The old name of [`SCOPED_TASK_PANICKED_MESSAGE`].
#[deprecated(note = "renamed to `crew::SCOPED_TASK_PANICKED_MESSAGE`")]
pub const SCOPED_TASK_PANICKED: &str = SCOPED_TASK_PANICKED_MESSAGE;

/// Runs `f` with a [`Scope`] whose tasks may borrow anything that outlives the call, and returns
/// once every task spawned into it has ended (its future and output dropped), as
/// `std::thread::scope` does for threads.
///
/// It blocks the calling thread, which may be any thread: `main`, a thread inside
/// [`block_on`](crate::block_on()), or a crew worker (whose queued tasks are first handed to a
/// replacement worker thread, as `block_on` does). Tasks go to the current pool, as
/// [`crew::spawn`](crate::spawn) picks it ([`Scope::spawn_on`] names one).
///
/// # Panics
///
/// After every task has ended: with `f`'s panic if `f` panicked, else with
/// [`SCOPED_TASK_PANICKED_MESSAGE`] if a task panicked and its handle was dropped (or never awaited).
/// A panic of a task whose handle was awaited passes through the awaiter instead.
///
/// # Examples
///
/// ```
/// let mut totals = vec![0u64; 8];
/// let data: Vec<u64> = (0..1_000_000).collect();
/// crew::scope(|s| {
///     for (chunk, total) in data.chunks(125_000).zip(totals.iter_mut()) {
///         s.spawn(async move { *total = chunk.iter().sum(); });
///     }
/// });
/// assert_eq!(totals.iter().sum::<u64>(), data.iter().sum::<u64>());
/// ```
///
/// What would be unsound does not compile. A task cannot borrow what the closure owns (it
/// may outlive the closure's body, never the `scope` call):
///
/// ```compile_fail,E0373
/// crew::scope(|s| {
///     let local = 1;
///     s.spawn(async { local + 1 });
/// });
/// ```
///
/// A handle cannot leave the scope:
///
/// ```compile_fail
/// let handle = crew::scope(|s| s.spawn(async { 1 }));
/// ```
///
/// A task's future must be `Send`, as every crew task's (it runs on any worker):
///
/// ```compile_fail
/// crew::scope(|s| {
///     s.spawn(async {
///         let shared = std::rc::Rc::new(1);
///         crew::yield_now().await;
///         drop(shared);
///     });
/// });
/// ```
#[track_caller]
pub fn scope<'env, F, R>(f: F) -> R
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> R,
{
    // A worker blocks only after handing its queues to a fresh thread, as `block_on` does: first,
    // before any task exists, so that a thread that cannot start fails the call here, with
    // nothing to wait for (the tasks would otherwise queue behind this blocked worker).
    if let Err(err) = crate::scheduler::try_hand_off_core() {
        panic!(
            "crew::scope: blocking on a worker thread needs a replacement worker thread, which could not start: {err}"
        );
    }
    let count = Arc::new(ScopeCount::new());
    let shared = Shared { count, unclaimed: ManuallyDrop::new(UnclaimedList::default()) };
    let scope = Scope { shared: Arc::new(shared), scope: PhantomData, env: PhantomData };
    let result = panic::catch_unwind(AssertUnwindSafe(|| f(&scope)));
    // Inside a paused pool's task: the closure ran as the task's work; the clock may move only
    // while this thread waits for the scope's tasks (`scheduler/cores/task_run.rs`).
    let _released = crate::scheduler::release_while_blocked();
    scope.wait_for_every_task();
    match result {
        Err(payload) => panic::resume_unwind(payload),
        Ok(_) if scope.shared.count.unobserved_panic() => panic!("{SCOPED_TASK_PANICKED_MESSAGE}"),
        Ok(value) => value,
    }
}

/// Spawns tasks that may borrow from outside the [`scope`] call: `'env` is what they may
/// borrow, `'scope` the scope itself. `&Scope` is `Send + Sync`, so scoped tasks can spawn into
/// the same scope.
///
/// # Examples
///
/// ```
/// let names = vec!["a".to_string(), "b".to_string()];
/// let lengths = crew::scope(|s| {
///     let handles: Vec<_> = names.iter().map(|name| s.spawn(async move { name.len() })).collect();
///     handles.into_iter().map(crew::block_on).collect::<Vec<_>>()
/// });
/// assert_eq!(lengths, [1, 1]);
/// ```
pub struct Scope<'scope, 'env: 'scope> {
    /// The count, and the slots whose end waited for a handle: shared with every task (each
    /// holds an `Arc`), see `task.rs`.
    shared: Arc<Shared<'scope>>,
    /// Invariant in both lifetimes, as `std::thread::Scope`.
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Spawns `future` into the scope on the current pool (as [`crew::spawn`](crate::spawn)
    /// picks it). It may borrow anything that outlives the scope. The handle is a future of
    /// the task's output; dropping it detaches the task (see [`ScopedJoinHandle`]).
    ///
    /// # Panics
    ///
    /// As [`crew::spawn`](crate::spawn): if the global pool cannot start.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut hits = [0u32; 2];
    /// crew::scope(|s| {
    ///     let [a, b] = &mut hits;
    ///     s.spawn(async move { *a += 1 });
    ///     s.spawn(async move { *b += 2 });
    /// });
    /// assert_eq!(hits, [1, 2]);
    /// ```
    #[track_caller]
    pub fn spawn<F>(&'scope self, future: F) -> ScopedJoinHandle<'scope, F::Output>
    where
        F: Future + Send + 'scope,
        F::Output: Send + 'scope,
    {
        self.spawn_to(Target::Current, future)
    }

    /// Spawns `future` into the scope on `pool`.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(2).build().unwrap();
    /// let text = String::from("borrowed");
    /// let length = crew::scope(|s| crew::block_on(s.spawn_on(&pool, async { text.len() })));
    /// assert_eq!(length, 8);
    /// ```
    #[track_caller]
    pub fn spawn_on<F>(&'scope self, pool: &Pool, future: F) -> ScopedJoinHandle<'scope, F::Output>
    where
        F: Future + Send + 'scope,
        F::Output: Send + 'scope,
    {
        self.spawn_to(Target::Private(pool.shared_arc()), future)
    }

    #[track_caller]
    fn spawn_to<F>(&'scope self, target: Target<'_>, future: F) -> ScopedJoinHandle<'scope, F::Output>
    where
        F: Future + Send + 'scope,
        F::Output: Send + 'scope,
    {
        let slot = Arc::new(Slot::new());
        // Counted before the task exists; a spawn that fails drops the task, which ends it.
        self.shared.count.start();
        let task = ScopedTask::new(future, slot.clone(), self.shared.clone());
        let info = TaskInfo::new(None, Location::caller());
        // The task's own handle is not needed: the slot carries its end.
        let detach = |handle: JoinHandle<(), Propagate>| handle.detach();
        crate::target::spawn_told(target, info, Borrowing(task), (), detach);
        ScopedJoinHandle::new(slot, &self.shared.count)
    }

    /// Waits until every task has ended and no end is left that a handle did not take: disposes
    /// of those (user code, which may spawn into the scope again) and waits again, until a wait
    /// finds nothing left to dispose of (see "Why it is sound" above).
    fn wait_for_every_task(&self) {
        loop {
            self.shared.count.wait();
            let unclaimed = std::mem::take(&mut *self.shared.unclaimed.lock().unwrap_or_else(PoisonError::into_inner));
            if unclaimed.is_empty() {
                return;
            }
            for slot in unclaimed {
                slot.dispose_unclaimed(&self.shared.count);
            }
            if planted_bug!("scope_wait_once") {
                return;
            }
        }
    }
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}
