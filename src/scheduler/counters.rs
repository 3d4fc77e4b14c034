//! What a pool counts about itself, for [`crate::metrics`]: one block of counters per core,
//! written only by the thread that owns the core, and one block for what happens outside the
//! workers.
//!
//! Invariants:
//! - A core's [`CoreCounters`] are written only by the thread that owns the core (or, for
//!   `takeovers`, by the monitor), so counting is a load and a store on a line no other thread
//!   writes (see `sync/counter.rs`). They travel with the core slot, not the thread: a core
//!   handed to another thread keeps counting in the same block.
//! - Polls are not counted here: a core's progress word already holds the number of polls it
//!   began (`progress.rs`).
//! - [`OutsideCounters`] are written by threads that run no core of the pool (spawns and wakes
//!   from outside, tasks that end away from a worker), through one shared counter each: those
//!   paths already write the injector's shared lines.
//! - Busy time is measured at parks and wakes only, never per poll: a busy period opens when
//!   the core leaves a park (or starts) and closes when it parks, in nanoseconds since the pool
//!   started (`sync/counter.rs`'s `BusyTime`: a reader never double-counts a period that closes
//!   while it reads, and never sees the total go backwards).

use std::time::{Duration, Instant};

use super::shared::Shared;
use crate::metrics::{BlockingMetrics, Metrics, WorkerMetrics};
use crate::sync::{BusyTime, Counter, SharedCounter};

/// One core's counters (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct CoreCounters {
    /// Tasks spawned by tasks running on this core.
    pub(crate) spawned: Counter,
    /// Tasks whose future ended (returned, panicked) in a poll on this core.
    pub(crate) ended: Counter,
    /// Tasks taken from other cores' deques and deferred lists.
    pub(crate) stolen: Counter,
    /// Searches of the other cores and the injector (each a sweep over all of them).
    pub(crate) steal_attempts: Counter,
    /// Tasks run from the LIFO slot.
    pub(crate) lifo_runs: Counter,
    /// Tasks moved out of a stuck core's LIFO slot by this core as the watcher.
    pub(crate) rescues: Counter,
    /// Times the monitor took this core over. Written by the monitor only.
    pub(crate) takeovers: Counter,
    /// Batches taken from the injector.
    pub(crate) injector_batches: Counter,
    /// Times this core parked.
    pub(crate) parks: Counter,
    /// Times it was woken from a park.
    pub(crate) unparks: Counter,
    /// Wakes of a parked worker that this core sent.
    pub(crate) notifies: Counter,
    /// Wakes this core skipped because a worker was already searching.
    pub(crate) notifies_skipped: Counter,
    /// Time spent out of park.
    pub(crate) busy: BusyTime,
}

/// What happens away from the pool's cores (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct OutsideCounters {
    /// Tasks spawned from threads that run no core of the pool.
    pub(crate) spawned: SharedCounter,
    /// Tasks whose future ended away from a core (a cancelled handle, a pool's shutdown, a poll
    /// on a thread that handed its core off).
    pub(crate) ended: SharedCounter,
    /// Wakes of a parked worker sent from outside the cores.
    pub(crate) notifies: SharedCounter,
    /// Wakes skipped, from outside the cores, because a worker was already searching.
    pub(crate) notifies_skipped: SharedCounter,
}

/// The pool's clock for busy time: nanoseconds since it started.
#[derive(Debug)]
pub(crate) struct Clock(Instant);

impl Clock {
    pub(crate) fn start() -> Clock {
        Clock(Instant::now())
    }

    /// Nanoseconds since the pool started.
    pub(crate) fn now(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

impl Shared {
    /// A snapshot of this pool's counters (see [`Metrics`]).
    pub(crate) fn metrics(&self) -> Metrics {
        let now = self.clock.now();
        let used = usize::try_from(self.slots_used.get()).unwrap_or(usize::MAX).min(self.slots());
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
            slow_poll_reports_dropped: self.reports.as_ref().map_or(0, |reports| reports.dropped.get()),
            blocking: blocking_metrics(),
            elapsed: Duration::from_nanos(now),
        }
    }
}

#[cfg(not(loom))]
fn blocking_metrics() -> BlockingMetrics {
    crate::blocking::metrics()
}

/// Loom builds have no blocking pool.
#[cfg(loom)]
fn blocking_metrics() -> BlockingMetrics {
    BlockingMetrics::default()
}
