//! [`Target`]: the pool a spawn goes to; [`spawn_named`], the one path every public spawn takes;
//! and `crew::spawn` and `crew::spawn_with`, which spawn onto the current pool.
//!
//! Invariants:
//! - Every public spawn ends in a pool's own spawn (`pool::spawn`, `global::spawn_on_global`),
//!   `#[track_caller]` all the way down, so the task's location is the user's call. Those that
//!   name a target (`crew::spawn`, `Spawner::spawn`, `task::Builder::spawn`, a set's spawns, and
//!   their `_with` and `_on` forms) go through [`spawn_named`] or [`spawn_told`]; `Pool::spawn`
//!   calls its pool's directly.
//! - [`Target::Current`] is resolved at the spawn, on the spawning thread: the private pool the
//!   thread works for or blocks in, or whose task started the blocking job it runs
//!   (`scheduler/cores/context.rs`), else the global pool.
//! - A private pool's tasks hold a reference to the pool in their metadata (their schedule
//!   function captures nothing); the global pool's hold none (it is never dropped).

use std::convert;
use std::future::Future;
use std::panic::Location;

use crate::handle::JoinHandle;
use crate::identity::info::TaskName;
use crate::identity::{OnTaskEnd, TaskInfo};
use crate::policy::{Policy, Propagate};
use crate::scheduler::{self, Shared};
use crate::spawning::{Build, Spawnable};
use crate::sync::Arc;

/// Where a spawn goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    /// The thread's current pool (see the module docs).
    Current,
    /// The global pool, from every thread.
    Global,
    /// One private pool.
    Private(&'a Arc<Shared>),
}

/// Spawns `future` as a task named `name`, spawned from the caller's location, onto `target`.
#[track_caller]
#[inline]
pub(crate) fn spawn_named<P, F>(target: Target<'_>, name: Option<TaskName>, future: F) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_told(target, TaskInfo::new(name, Location::caller()), Spawnable(future), (), convert::identity)
}

/// [`spawn_named`] of the task `info`, which also tells `end` when it ends, and hands its handle to
/// `place` before it can first run (a set's member: its set files the handle, then hears of the
/// end). Returns what `place` returns.
#[track_caller]
#[inline]
pub(crate) fn spawn_told<P, B, E, R>(
    target: Target<'_>,
    info: TaskInfo,
    task: B,
    end: E,
    place: impl FnOnce(JoinHandle<B::Output, P>) -> R,
) -> R
where
    P: Policy,
    B: Build,
    E: OnTaskEnd,
{
    match target {
        Target::Current => match scheduler::current_private_pool() {
            Some(private) => spawn_on_current_private(&private, info, task, end, place),
            None => crate::global::spawn_on_global(info, task, end, place),
        },
        Target::Global => crate::global::spawn_on_global(info, task, end, place),
        Target::Private(shared) => crate::pool::spawn(shared, info, task, end, place),
    }
}

/// [`crate::pool::spawn`], kept out of line so that the global pool's spawn path stays small
/// enough to inline where it is called.
#[inline(never)]
fn spawn_on_current_private<P, B, E, R>(
    shared: &Arc<Shared>,
    info: TaskInfo,
    task: B,
    end: E,
    place: impl FnOnce(JoinHandle<B::Output, P>) -> R,
) -> R
where
    P: Policy,
    B: Build,
    E: OnTaskEnd,
{
    crate::pool::spawn(shared, info, task, end, place)
}

/// Spawns `future` on the current pool with the default [`Propagate`] policy: the global pool,
/// except on a private [`Pool`](crate::Pool)'s threads (inside its tasks) and inside
/// [`Pool::block_on`](crate::Pool::block_on), where it spawns onto that pool, as `tokio::spawn` spawns onto the runtime it is called in.
///
/// Callable from any thread — `main`, a crew worker, a foreign thread, a `Drop` impl — with no
/// runtime context. The first call that targets the global pool starts it. Inside a
/// `spawn_blocking` job it spawns onto the pool whose task or `block_on` started the job.
///
/// # Panics
///
/// If the global pool cannot start: `CREW_WORKERS` is set to something other than a whole
/// number in `1..=1024`, or the OS refuses a thread. The panic names the caller's location.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn(async { 2 + 2 });
/// assert_eq!(crew::block_on(handle), 4);
/// ```
#[track_caller]
#[inline]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_with(Propagate, future)
}

/// Spawns `future` on the current pool (as [`spawn`] picks it) with the panic policy `policy`:
/// [`Propagate`], [`Catch`](crate::Catch) or [`Ignore`](crate::Ignore).
///
/// # Panics
///
/// As [`spawn`].
///
/// # Examples
///
/// ```
/// let result = crew::block_on(crew::spawn_with(crew::Catch, async { panic!("oops") }));
/// let err = result.unwrap_err();
/// assert!(err.is_panic());
/// assert_eq!(err.panic_message(), Some("oops"));
/// ```
#[track_caller]
#[inline]
pub fn spawn_with<P, F>(policy: P, future: F) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let _ = policy;
    spawn_named(Target::Current, None, future)
}
