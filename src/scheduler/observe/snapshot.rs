//! A snapshot of a pool's counters ([`Metrics`]), read from `counters.rs`'s blocks, the cores'
//! progress words and the queues' lengths.
//!
//! Invariants:
//! - Reading never blocks a worker and takes no lock a worker takes (see `crate::metrics`),
//!   but a core's local-home slot, which its owner locks only as its thread's home attaches or
//!   leaves (`local.rs`).
//! - Ends are read before spawns, so a task that ends meanwhile counts as a little more live,
//!   never as ended and not spawned.
//! - The blocking pool's part is left at its default: that pool belongs to no scheduler, and
//!   the public callers fill it in.

use std::time::Duration;

use crate::metrics::{BlockingMetrics, Metrics, WorkerMetrics};
use crate::scheduler::cores::shared::Shared;
use crate::sync::lock;

impl Shared {
    /// A snapshot of this pool's counters (see [`Metrics`]).
    pub(crate) fn metrics(&self) -> Metrics {
        let now = self.clock.now();
        let used = self.active_slots();
        let mut workers = Vec::with_capacity(used);
        let mut total = WorkerMetrics::default();
        // Ends first, spawns after: a task that ends meanwhile is then counted as spawned (a
        // little more live) rather than as ended and not spawned.
        let ended = self.outside.ended.get() + self.counters.iter().map(|counters| counters.ended.get()).sum::<u64>();
        let mut stuck_threads = 0;
        for index in 0..self.slots() {
            let (counters, remote) = (&self.counters[index], &self.remotes[index]);
            let seen = remote.progress.load();
            if self.is_active(index) && seen.taken() {
                stuck_threads += 1;
            }
            let number = self.worker_number(index);
            // Locked by the owner only as its thread's home attaches or leaves.
            let (local_tasks, local_depth) =
                lock(&remote.home).as_ref().map_or((0, 0), |home| (home.live(), home.queued()));
            let core = WorkerMetrics {
                worker: (self.is_active(index) && number != usize::MAX).then_some(number),
                polls: seen.polls(),
                spawned: counters.spawned.get(),
                stolen: counters.stolen.get(),
                steal_attempts: counters.steal_attempts.get(),
                lifo_runs: counters.lifo_runs.get(),
                rescues: counters.rescues.get(),
                takeovers: counters.takeovers.get(),
                injector_batches: counters.injector_batches.get(),
                parks: counters.parks.get(),
                unparks: counters.unparks.get(),
                notifies: counters.notifies.get(),
                notifies_skipped: counters.notifies_skipped.get(),
                busy: Duration::from_nanos(counters.busy.read(now)),
                lifo_depth: usize::from(remote.lifo.is_occupied()),
                deque_depth: self.stealers[index].len(),
                deferred_depth: remote.deferred.len_hint(),
                local_spawned: counters.local_spawned.get(),
                local_runs: counters.local_runs.get(),
                local_tasks,
                local_depth,
            };
            total.add(&core);
            if index < used {
                workers.push(core);
            }
        }
        let spawned_outside = self.outside.spawned.get();
        let live_tasks = match self.registry() {
            Some(registry) => registry.live(),
            None => (total.spawned + spawned_outside).saturating_sub(ended),
        };
        Metrics {
            workers,
            total,
            spawned_outside,
            live_tasks,
            notifies_outside: self.outside.notifies.get(),
            notifies_skipped_outside: self.outside.notifies_skipped.get(),
            injector_depth: self.injector.len(),
            stuck_threads,
            threads_started: self.threads_started.get(),
            spare_threads: self.spare_threads.len(),
            slow_poll_reports_dropped: self.reports.as_ref().map_or(0, |reports| reports.dropped.get()),
            // The blocking pool is no pool's: the caller fills it in (`pool.rs`, `global.rs`).
            blocking: BlockingMetrics::default(),
            elapsed: Duration::from_nanos(now),
        }
    }
}
