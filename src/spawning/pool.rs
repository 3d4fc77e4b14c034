//! Spawning onto a pool: the pool's spawn calls down to [`Build`] for the task's allocation,
//! registers it if the pool keeps a registry, and schedules its first run.
//!
//! Invariants:
//! - A task of a pool with a registry (every private pool, and the global pool with the task
//!   dump on) is registered before its first run and leaves the registry when its future is
//!   dropped, however that happens (its `Registration`), so that a pool's drop reaches it.
//! - A spawn that a closed registry refuses (the pool shuts down) drops its future at once, on
//!   the spawning thread and outside every lock, and hands back a handle that reports the task
//!   cancelled, with the identity it would have had.
//! - A set's member is labelled with its set (an allocation for its identity's out-of-line part)
//!   only in a pool that shows it: one that keeps task records (the dump) or has a slow-poll
//!   hook.
//! - A spawn hands the task's handle to its caller's `place` before the task can first run (and,
//!   for a refused spawn, before the future and `end` are dropped).
//! - The first run goes where any schedule of this pool's goes (`scheduler/cores/schedule.rs`);
//!   a paused pool counts it as work first (`clock.rs`). Only private pools can be paused, and
//!   all of them have a registry: the path without one (the global pool's) counts nothing.

use async_task::Schedule;

use super::build::{self, Build};
use crate::handle::JoinHandle;
use crate::identity::{OnTaskEnd, TaskInfo};
use crate::policy::Policy;
use crate::scheduler::{count_scheduled, shard_hint, Pinned, Registration, Runnable, Shared, TaskMeta};
use crate::sync::Arc;

impl Shared {
    /// Spawns `task` (a future, built by [`Build`]) as the task `info` on this pool, scheduled
    /// by `schedule`; `pool` is this pool's own reference for the task's metadata if it is a
    /// private pool ([`schedule_private`](crate::scheduler::schedule_private) reaches it there). `end` is told when the task ends
    /// (after its registry entry goes, if the pool keeps a registry). `place` gets the task's
    /// handle before the task can first run (a set files its member's handle there, so that no
    /// end comes before it); what it returns is returned.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn spawn<P, B, S, E, R>(
        &self,
        info: TaskInfo,
        pool: Option<Arc<Shared>>,
        pinned: Option<Pinned>,
        task: B,
        schedule: S,
        end: E,
        place: impl FnOnce(JoinHandle<B::Output, P>) -> R,
    ) -> R
    where
        P: Policy,
        B: Build,
        S: Schedule<TaskMeta> + Send + Sync + 'static,
        E: OnTaskEnd,
    {
        // A set's member carries its set's name only where it is shown: the dump, the reports.
        let info = match end.set_label() {
            Some(label) if self.keeps_task_records() || self.records_polls() => info.in_set(label.clone()),
            _ => info,
        };
        let Some(registry) = self.registry() else {
            let (runnable, handle) = task.build(TaskMeta::new(info, pool), end, schedule);
            let placed = place(handle);
            self.first_run(runnable, pinned);
            return placed;
        };
        let records = self.keeps_task_records();
        let info = if records { info.with_record() } else { info };
        let info = if self.is_paused() { self.paused_info(info) } else { info };
        // For a refused spawn's handle: `build` is given back with `info` inside it.
        let (id, location) = (info.id(), info.location());
        let build = |registration: Registration| {
            task.build::<P, S, _>(TaskMeta::new(info, pool), (registration, end), schedule)
        };
        let entry = |(runnable, _): &(Runnable, JoinHandle<B::Output, P>)| {
            (runnable.waker(), records.then(|| runnable.metadata().info().clone()))
        };
        match registry.register(shard_hint(), build, entry) {
            Ok((runnable, handle)) => {
                let placed = place(handle);
                // A paused pool (a private one: all have a registry) counts the first run.
                count_scheduled(runnable.metadata());
                self.first_run(runnable, pinned);
                placed
            }
            Err(refused) => {
                // The pool is shutting down: hand back a cancelled handle, then drop the future
                // (and `end`, which a set's member tells its set with: after `place`).
                let placed = place(build::refused(id, location));
                drop(refused);
                placed
            }
        }
    }
}
