//! A seeded pool's pick ([`Builder::seed`](crate::Builder::seed)): its one worker takes every
//! task queued anywhere in the pool into a list of ready tasks, and runs the one a generator
//! seeded with the pool's seed draws from that list (`pick.rs`'s `Core::next_seeded`); and the
//! pool's trace of those runs, as per-pool spawn ordinals. Generic over what it holds, it
//! names no other file of the scheduler's but the generator.
//!
//! Invariants:
//! - The order depends on the seed and on the order of the schedules alone: a schedule from
//!   the worker's own thread lands in its queues in program order, and before each pick the
//!   worker moves all of them (its LIFO slot, deferred list, deque, inbox, and the injector, in
//!   that order) to the back of the ready list. Nothing else runs a task from those queues:
//!   the worker's pick takes one only by a draw (with its ready list empty it runs only its
//!   thread's local tasks, `Core::next_seeded_local`, so that a task another thread queues
//!   meanwhile waits for the next draw), and the pool has one worker, no spare core, no monitor
//!   and no watcher to rescue a LIFO task (`config/mod.rs` refuses the settings that would add
//!   one).
//! - A draw is `below(len)` of a xorshift generator whose state comes from the seed alone
//!   (through SplitMix64, so that neighbouring seeds diverge at once); the drawn task is taken
//!   out with `swap_remove`, itself a function of the list alone.
//! - The trace lists the spawn ordinal (`TaskInfo::ordinal`, per pool, from 0) of each task the
//!   draw picked, in pick order; a task with no ordinal (spawned before the pool was seeded:
//!   none) is listed as `u64::MAX`. A thread's local tasks are not drawn: they run in their
//!   own queue's order, which is fixed too, after the ready list is empty.
//! - The ready list belongs to the core: dropped with it when the pool shuts down, task by task
//!   (`worker.rs`'s `Drop for Core`), as its deque.

use crate::scheduler::cores::rand::FastRand;
use crate::sync::{lock, AtomicUsize, Mutex, Ordering};

/// A seeded pool's shared part: its spawn ordinals and its trace.
#[derive(Debug)]
pub(in crate::scheduler) struct Seeded {
    seed: u64,
    /// The next spawn's ordinal.
    ordinals: AtomicUsize,
    /// Spawn ordinals in pick order.
    trace: Mutex<Vec<u64>>,
}

impl Seeded {
    pub(in crate::scheduler) fn new(seed: u64) -> Seeded {
        Seeded { seed, ordinals: AtomicUsize::new(0), trace: Mutex::new(Vec::new()) }
    }

    /// The next spawn's ordinal.
    pub(in crate::scheduler) fn next_ordinal(&self) -> u64 {
        // Relaxed: a counter whose only property is uniqueness; a seeded pool's spawns that
        // the replay depends on all come from its one worker.
        self.ordinals.fetch_add(1, Ordering::Relaxed) as u64
    }

    /// Notes a pick of the task numbered `ordinal`.
    pub(in crate::scheduler) fn note_pick(&self, ordinal: u64) {
        lock(&self.trace).push(ordinal);
    }

    /// The trace so far.
    pub(in crate::scheduler) fn trace(&self) -> Vec<u64> {
        lock(&self.trace).clone()
    }

    /// The core part of this pool's one worker.
    pub(in crate::scheduler) fn pick<R>(&self) -> SeededPick<R> {
        SeededPick { ready: Vec::new(), rng: FastRand::new(splitmix(self.seed)) }
    }
}

/// A seeded pool's core part: the ready list of tasks `R` and the generator.
#[derive(Debug)]
pub(in crate::scheduler) struct SeededPick<R> {
    ready: Vec<R>,
    rng: FastRand,
}

impl<R> SeededPick<R> {
    /// Puts `tasks` at the back of the ready list, in their order.
    pub(in crate::scheduler) fn extend(&mut self, tasks: impl IntoIterator<Item = R>) {
        self.ready.extend(tasks);
    }

    /// The task the generator draws from the ready list, taken out; `None` if it is empty.
    pub(in crate::scheduler) fn draw(&mut self) -> Option<R> {
        match self.ready.len() {
            0 => None,
            len => Some(self.ready.swap_remove(self.rng.below(len))),
        }
    }

    /// Takes the ready tasks out, for a drop.
    pub(in crate::scheduler) fn take_ready(&mut self) -> Vec<R> {
        std::mem::take(&mut self.ready)
    }
}

/// SplitMix64's output function: spreads nearby seeds over the generator's states.
fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::splitmix;

    #[test]
    fn neighbouring_seeds_start_far_apart() {
        let (a, b) = (splitmix(0), splitmix(1));
        assert!((a ^ b).count_ones() > 16, "{a:x} and {b:x}");
    }
}
