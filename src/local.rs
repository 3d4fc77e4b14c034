//! [`spawn_local`] and [`spawn_pinned`]: `!Send` tasks on crew's threads, next to ordinary
//! tasks (the guide: `docs/local-tasks.md`; the queues: `scheduler/cores/local.rs`).
//!
//! Invariants:
//! - A local task runs only on the thread that spawned it, and is dropped only there
//!   (async-task checks both); its queue is that thread's own, never stolen.
//! - `spawn_pinned` spawns an ordinary (`Send`) task whose first run goes to the chosen
//!   worker's inbox (`scheduler/cores/pinned.rs`); that run spawns the `!Send` future as a local task of the worker's thread,
//!   and the ordinary task awaits it. So its handle is an ordinary `JoinHandle`, `Send` when the
//!   output is.

use std::future::Future;
use std::panic::Location;

use crate::handle::JoinHandle;
use crate::identity::info::TaskName;
use crate::identity::TaskInfo;
use crate::policy::Policy;
use crate::scheduler;
use crate::spawning::{LocalHandles, Spawnable};

/// Spawns a `!Send` future as a local task of the current thread, which alone polls it and
/// drops it; the handle is `Send` when the output is.
///
/// Where it works:
/// - **Inside a task on a crew worker thread** (any pool): the task is pinned to that thread's
///   worker, in a queue of its own that no other worker steals from; the worker runs it among
///   its other tasks, taking turns with them.
/// - **Inside [`block_on`](fn@crate::block_on)** (or [`Pool::block_on`](crate::Pool::block_on))
///   on any thread, the main thread included: it runs on that thread while that `block_on`, or a
///   later one on the same thread, runs. Local tasks still pending when the thread exits are
///   dropped there; the main thread's are never dropped (its thread-locals never are).
///
/// Wakes from any thread reach the owner. A worker stuck in a poll hands its ordinary queues to
/// another thread but keeps its local tasks, and runs them once the poll returns (see the
/// guide). Dropping the handle cancels the task (the drop runs on its thread).
///
/// # Panics
///
/// Anywhere else (a plain thread outside `block_on`): the message says where `spawn_local`
/// works. From such a thread, use [`spawn_pinned`].
///
/// # Examples
///
/// ```
/// use std::{cell::RefCell, rc::Rc};
///
/// let total = crew::block_on(async {
///     let counter = Rc::new(RefCell::new(0));
///     let handles: Vec<_> = (1..=3)
///         .map(|n| {
///             let counter = counter.clone();
///             crew::spawn_local(async move { *counter.borrow_mut() += n })
///         })
///         .collect();
///     for handle in handles {
///         handle.await;
///     }
///     let total = *counter.borrow();
///     total
/// });
/// assert_eq!(total, 6);
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    spawn_local_as(None, Location::caller(), future)
}

/// [`spawn_local`] of a task named `name` (`task::Builder::spawn_local`), spawned at `location`,
/// with the policy `P`.
#[track_caller]
pub(crate) fn spawn_local_as<P, F>(
    name: Option<TaskName>,
    location: &'static Location<'static>,
    future: F,
) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + 'static,
    F::Output: 'static,
{
    scheduler::spawn_local::<LocalHandles<P>, F>(TaskInfo::new(name, location), future)
}

/// Spawns a `!Send` future, built by `make` on a lightly loaded worker of the current pool (the
/// less loaded of two, as [`spawn`](fn@crate::spawn) picks the pool), as a local task of that
/// worker's thread. `make`
/// travels there; the future never leaves it. Works from any thread.
///
/// # Examples
///
/// ```
/// use std::rc::Rc;
///
/// let handle = crew::spawn_pinned(|| async {
///     let shared = Rc::new(20);
///     crew::yield_now().await;
///     *shared + 1
/// });
/// assert_eq!(crew::block_on(handle), 21);
/// ```
#[track_caller]
pub fn spawn_pinned<M, F>(make: M) -> JoinHandle<F::Output>
where
    M: FnOnce() -> F + Send + 'static,
    F: Future + 'static,
    F::Output: Send + 'static,
{
    let location = Location::caller();
    let task = Spawnable(crate::pool::pinned(make, location));
    match scheduler::current_private_pool() {
        Some(private) => crate::pool::spawn_pinned(&private, TaskInfo::new(None, location), task),
        None => crate::global::spawn_pinned_on_global(TaskInfo::new(None, location), task),
    }
}
