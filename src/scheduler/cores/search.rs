//! Searching: how a worker with no local work takes tasks from the others.
//!
//! Invariants:
//! - A worker searches only as a counted searcher (`Sleepers::try_start_searching`), and stops
//!   being one as soon as it finds a task; the last searcher to stop calls `notify_one`, so
//!   that work it left behind gets a searcher (see `sleep/README.md`).
//! - A scan starts with a SeqCst fence, which the no-lost-wakeup proof relies on.
//! - A searcher that found nothing sweeps again for up to the pool's spin before parking
//!   (`Builder::spin_before_park`: 20 µs by default, none by default in a pool with more
//!   workers than the process may use CPUs, zero under loom), yielding its thread
//!   between sweeps, still counted as a searcher, then parks. It spins only if it found a task
//!   since it last woke or spun, so a worker woken for nothing (the watcher at its deadline, a
//!   searcher whose work another took) parks again at once. Searchers are capped at half the
//!   workers (rounded up); one searcher at a time spins (the others park, and parked workers
//!   woken one at a time take the injector's tasks in batches, where spinners would take them
//!   one at a time); a pool whose work ran out spins once per worker, then sleeps. A default
//!   spin (not set on the builder) is skipped while the driver has a socket or fd registered
//!   (`driver::has_io_sources`, a hint): then the next work mostly comes through the driver,
//!   whose holder the kernel wakes, and a spinner only takes CPU from the threads that send it
//!   (tokio's workers never spin; measured in `docs/performance-notes.md`). Skipping is always
//!   safe: the searcher parks as after any fruitless search.
//! - A searcher steals from other workers' deques (a batch: half of the deque, at most 32
//!   tasks, crossbeam-deque's cap), the injector (its fair share: `Core::steal_injector`), and,
//!   as a last resort, the older half of another worker's deferred list. It never touches
//!   another core's LIFO slot: that is the watcher's (`watch.rs`).

use crate::scheduler::cores::shared::Runnable;

use crate::identity::Activity;
use crate::scheduler::cores::shared::Shared;
use crate::scheduler::cores::worker::Core;
use crate::sync::{fence, retry, thread, Deadline, Ordering};

impl Core {
    /// A task from this core's queues, the injector, or (as a searcher) other workers.
    #[inline]
    pub(in crate::scheduler) fn find_task(&mut self, shared: &Shared) -> Option<Runnable> {
        let found = match self.next_local(shared) {
            Some(runnable) => Some(runnable),
            // Back after the reactor's turn, to run the deferred tasks.
            None if self.reactor_turn.is_wanted() => None,
            // A seeded pool's one worker steals nothing: whatever arrives is drawn by its pick
            // (`seeded.rs`), and traced.
            None if self.seeded.is_some() => None,
            None if self.searching || self.start_searching(shared) => {
                self.steal(shared).or_else(|| self.spin_steal(shared))
            }
            None => None,
        };
        if found.is_some() {
            self.spin_armed = true;
            self.stop_searching(shared);
        }
        found
    }

    fn start_searching(&mut self, shared: &Shared) -> bool {
        self.searching = shared.sleepers.try_start_searching();
        self.searching
    }

    #[inline]
    fn stop_searching(&mut self, shared: &Shared) {
        if std::mem::replace(&mut self.searching, false) && shared.sleepers.stop_searching() {
            // The last searcher leaves: make sure any other queued work gets one.
            self.notify_one(shared);
        }
    }

    /// After a sweep found nothing: sweeps again, yielding the thread between sweeps, until one
    /// finds a task or the pool's spin before parking (`Builder::spin_before_park`) is over;
    /// still a counted searcher meanwhile, so that pushers skip their notify (see the module
    /// docs). `None`: the caller parks as after any fruitless search.
    ///
    /// The yield (`sched_yield`) rather than pause instructions: on a machine with no idle core
    /// the thread that will produce the next task (a spawner or `block_on` thread outside the
    /// pool, another worker) may be waiting for this very core, and a spinner that held it would
    /// delay the work it waits for (measured: `docs/performance-notes.md`, "The spin before
    /// parking").
    #[cold]
    #[inline(never)]
    fn spin_steal(&mut self, shared: &Shared) -> Option<Runnable> {
        let spin = shared.config.spin_before_park;
        if !std::mem::replace(&mut self.spin_armed, false) || spin.is_zero() || shared.is_shutdown() {
            return None;
        }
        if !shared.config.spin_despite_io && crate::driver::has_io_sources() {
            return None;
        }
        // Relaxed: a throttle, not part of any hand-over; a searcher that does not spin parks
        // as after any fruitless search, which the no-lost-wakeup proof already covers.
        if shared.spinning.swap(true, Ordering::Relaxed) {
            return None;
        }
        let deadline = Deadline::after(spin);
        let found = loop {
            // Offers the core to any other thread that is ready to run (see the function's docs).
            thread::yield_now();
            if let Some(runnable) = self.steal(shared) {
                break Some(runnable);
            }
            // Back to the loop for a task only this worker takes (`next_local`).
            if deadline.has_passed() || shared.is_shutdown() || self.has_own_task_hint() {
                break None;
            }
        };
        // Relaxed: as the swap above.
        shared.spinning.store(false, Ordering::Relaxed);
        found
    }

    /// One sweep over the other workers' deques (from a random one) and the injector, then, as
    /// a last resort, their deferred lists. Their LIFO slots are not touched (see `watch.rs`).
    fn steal(&mut self, shared: &Shared) -> Option<Runnable> {
        // A scan starts after a SeqCst fence (see `sleep/README.md`'s proof).
        fence(Ordering::SeqCst);
        let counters = &shared.counters[self.index];
        counters.steal_attempts.incr();
        // Every core a thread runs (a stuck core taken over included, until its thread gives it
        // up): spares' queues are empty, and those that never ran are not even looked at.
        let slots = shared.active_slots();
        let (start, me) = (self.rng.below(slots), self.index);
        let victims = (0..slots)
            .map(|offset| (start + offset) % slots)
            .filter(|&victim| victim != me && shared.is_active(victim));
        for victim in victims.clone() {
            if let Some(runnable) = retry(|| shared.stealers[victim].steal_batch_and_pop(&self.local)) {
                // The batch: the task popped and the ones left in the deque (empty before).
                counters.stolen.add(1 + self.local.len() as u64);
                return Some(runnable);
            }
        }
        if let Some(runnable) = self.steal_injector(shared) {
            return Some(runnable);
        }
        for victim in victims {
            let mut deferred = shared.remotes[victim].deferred.lock();
            if deferred.is_empty() {
                continue;
            }
            // The older half (rounded up), as a batch steal takes half a deque: the owner keeps
            // the rest, so two workers sharing yielders do not hand all of them back and forth.
            let half = deferred.len().div_ceil(2);
            counters.stolen.add(half as u64);
            for runnable in deferred.drain(..half) {
                shared.record_queued(&runnable, Activity::Deque(self.index));
                self.local.push(runnable);
            }
            drop(deferred);
            return self.local.pop();
        }
        None
    }
}

// Not under miri: its isolation has no sockets, and no default spin.
#[cfg(all(test, not(miri)))]
mod tests {
    use std::time::Duration;

    use crate::scheduler::cores::shared::{PoolKind, Shared};

    /// Whether a searcher of a 2-worker pool built from `builder` (its loops never started),
    /// armed to spin and finding nothing, sweeps again before it parks: a spin sweeps at least
    /// once more (the deadline is looked at after each sweep).
    fn spins(builder: crate::Builder) -> bool {
        let config = builder.workers(2).check(crate::config::Env::none()).unwrap();
        let (shared, mut cores) = Shared::new(config, PoolKind::Private);
        let core = &mut cores[0];
        core.spin_armed = true;
        let found = core.spin_steal(&shared);
        assert!(found.is_none(), "nothing was queued");
        shared.counters[core.index].steal_attempts.get() > 0
    }

    #[test]
    fn a_default_spin_is_skipped_while_the_driver_has_a_source_and_a_set_one_is_not() {
        // Registered on the process's driver for the whole test, whatever other tests do.
        let _socket = crate::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let spin = Duration::from_micros(20);
        // (Where the process may use one CPU only, two workers get no default spin at all.)
        assert!(!spins(crate::Builder::new()), "a default spin with a socket registered");
        assert!(spins(crate::Builder::new().spin_before_park(spin)), "a spin set on the builder");
    }
}
