//! [`scope`]: tasks that borrow from the caller's stack, on crew's pools, with a blocking wait
//! that makes them sound, as `std::thread::scope` and `rayon::scope` do for threads.
//!
//! Invariant (what makes it sound, and what `unchecked.rs`'s `unsafe` rests on): [`scope`]
//! returns or unwinds only after every task spawned into the scope has ended (its future and
//! its output dropped, or its output handed to a handle bound to the scope), however the
//! closure or the tasks end: a panic in either, a handle leaked with `mem::forget` (the count is
//! of tasks' ends, never of handles), a pool that shuts down meanwhile (it drops the tasks'
//! futures, which ends them).
//!
//! The parts:
//! - `count.rs`: the count of running tasks and the blocking wait for zero (model-checked by
//!   `loom-tests/tests/scope_count.rs`).
//! - `task.rs`: the future around the user's, which delivers the task's end and then leaves the
//!   count, from its `Drop`; and what the scope shares with its tasks.
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

use crate::join::JoinHandle;
use crate::policy::Propagate;
use crate::pool::Pool;
use crate::target::Target;
use crate::task::TaskInfo;
use handle::Slot;
use task::{ScopedTask, Shared, UnclaimedList};
use unchecked::Borrowing;

/// The message `scope` panics with when a scoped task panicked and nobody awaited its handle.
pub const SCOPED_TASK_PANICKED: &str = "crew::scope: a scoped task panicked and its handle was not awaited";

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
/// [`SCOPED_TASK_PANICKED`] if a task panicked and its handle was dropped (or never awaited).
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
    let shared = Shared { count: ScopeCount::new(), unclaimed: ManuallyDrop::new(UnclaimedList::default()) };
    let scope = Scope { shared: Arc::new(shared), scope: PhantomData, env: PhantomData };
    let result = panic::catch_unwind(AssertUnwindSafe(|| f(&scope)));
    // A worker blocks only after handing its queues to a fresh thread, as `block_on` does. If
    // that thread cannot start, the wait happens all the same (it is what makes the scope
    // sound; other workers, or the takeover, run this worker's queue), and the error is
    // raised once it is over.
    let handed_off = crate::scheduler::try_hand_off_core();
    scope.wait_for_every_task();
    if let Err(err) = handed_off {
        panic!(
            "crew::scope: blocking on a worker thread needs a replacement worker thread, which could not start: {err}"
        );
    }
    match result {
        Err(payload) => panic::resume_unwind(payload),
        Ok(_) if scope.shared.count.unobserved_panic() => panic!("{SCOPED_TASK_PANICKED}"),
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

    /// Waits until every task has ended, then disposes of the ends no handle took.
    fn wait_for_every_task(&self) {
        self.shared.count.wait();
        let unclaimed = std::mem::take(&mut *self.shared.unclaimed.lock().unwrap_or_else(PoisonError::into_inner));
        for slot in unclaimed {
            slot.dispose_unclaimed(&self.shared.count);
        }
    }
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}
