//! Where a task's runs go: a new task's first run ([`Shared::first_run`]: where any schedule of
//! its pool's goes, or a pinned task's core's inbox), and the schedule function of a private
//! pool's tasks ([`schedule_private`]).
//!
//! Invariants:
//! - The first run goes where any schedule of this pool's goes ([`Shared::schedule_spawned`]):
//!   this thread's core if it runs one of the pool's, else the injector; a pinned task's to its
//!   core's inbox, which only that core's owner takes from (`pinned.rs`).
//! - A private pool's task reaches its pool through its metadata: the schedule function
//!   captures nothing (`task.rs`, "The metadata").
//! - A paused pool's schedules (a first run in its spawn, `spawning/pool.rs`; every later one
//!   in [`schedule_private`]; a local task's in its own schedule function) each take a unit of
//!   the pool's work in flight before the task can run (`clock.rs`); `task_run.rs`'s
//!   `run_task` gives it back.

use async_task::{Schedule, ScheduleInfo, WithInfo};

use crate::scheduler::cores::context;
use crate::scheduler::cores::shared::Shared;
use crate::scheduler::cores::shared::{RawRunnable, Runnable, TaskMeta};
use crate::sync::Arc;

/// Where a `spawn_pinned` task's first run goes: the inbox of core `.0` (see `pinned.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pinned(pub(in crate::scheduler) usize);

impl Shared {
    /// A new task's first run: where any schedule of this pool's goes, or a pinned task's core's
    /// inbox.
    #[inline]
    pub(crate) fn first_run(&self, runnable: Runnable, pinned: Option<Pinned>) {
        match pinned {
            None => self.schedule_spawned(runnable),
            Some(Pinned(core)) => self.push_inbox(core, runnable),
        }
    }
}

/// The schedule function of a private pool's tasks. It captures nothing, so async-task takes
/// no reference to the task for the call (as it must for a function with captures). The pool
/// is the one in the task's metadata: reached through the worker's own reference when one of
/// the pool's workers schedules it; else through a clone of the metadata's, since once pushed
/// the task may run and be freed on another worker while this call still uses the pool.
pub(crate) fn schedule_private() -> impl Schedule<TaskMeta> + Send + Sync + 'static {
    WithInfo(|runnable: RawRunnable, info: ScheduleInfo| {
        let runnable = Runnable::new(runnable);
        count_scheduled(runnable.metadata());
        let pool = runnable.metadata().pool().expect("a private pool's task carries its pool");
        let home = Arc::as_ptr(pool);
        let Err(runnable) = context::schedule_on_own_core(home, runnable, info.woken_while_running) else {
            return;
        };
        let pool = runnable.metadata().pool().expect("a private pool's task carries its pool").clone();
        pool.push_remote(runnable);
    })
}

/// A paused pool's task counts each of its schedules as work in flight (`clock.rs`), before it
/// can run; other tasks test their identity's out-of-line word, which their run reads anyway.
#[inline(always)]
pub(crate) fn count_scheduled(meta: &TaskMeta) {
    if let Some(clock) = meta.info().paused_clock() {
        clock.begin_work();
    }
}
