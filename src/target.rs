//! [`Target`]: the pool a spawn goes to, and [`spawn`], the one path every public spawn takes.
//!
//! Invariants:
//! - Every public spawn (`crew::spawn`, `Pool::spawn`, `Spawner::spawn`, `task::Builder::spawn`,
//!   their `_with` and `_on` forms) names its target and calls [`spawn`], `#[track_caller]` all
//!   the way down, so the task's location is the user's call.
//! - [`Target::Current`] is resolved at the spawn, on the spawning thread: the private pool the
//!   thread works for or blocks in (`scheduler/context.rs`), else the global pool.
//! - A private pool's tasks hold a reference to the pool in their metadata (their schedule
//!   function captures nothing); the global pool's hold none (it is never dropped).

use std::convert;
use std::future::Future;
use std::panic::Location;

use crate::join::JoinHandle;
use crate::policy::Policy;
use crate::scheduler::{self, Shared};
use crate::sync::Arc;
use crate::task::info::TaskName;
use crate::task::{Build, OnTaskEnd, Spawnable, TaskInfo};

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
pub(crate) fn spawn<P, F>(target: Target<'_>, name: Option<TaskName>, future: F) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_told(target, TaskInfo::new(name, Location::caller()), Spawnable(future), (), convert::identity)
}

/// [`spawn`] of the task `info`, which also tells `end` when it ends, and hands its handle to
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
