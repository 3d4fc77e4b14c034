//! The part of a core that threads other than its owner touch, besides its deque.
//!
//! Invariants:
//! - The LIFO slot is *private*: taken from by its owner, and by the watcher only when the
//!   owner took nothing from it for a whole interval (see `watch.rs`). The deferred list is
//!   *shared*: any searcher may take its older half as a last resort.
//! - Only the owner fills either, and only the owner writes the take count; its mutexes are
//!   uncontended but for the watcher's and searchers' rare looks.

use crate::task::Runnable;

use crate::sync::{AtomicUsize, Mutex, Ordering, Slot};

/// A core's LIFO slot and deferred list, and the sign of its progress that the watcher reads.
pub(super) struct Remote {
    /// The task woken last on this core (by a task it ran), run next. Private (see `watch.rs`).
    pub(super) lifo: Slot<Runnable>,
    /// Tasks woken while they ran (yields, and any wake during the poll, from any thread), held
    /// back until the owner runs out of other work or reaches its fairness tick. Searchers take
    /// from it as a last resort.
    pub(super) deferred: Mutex<Vec<Runnable>>,
    /// How many times the owner took from its LIFO slot, wrapping. While the slot holds a
    /// task, a count that does not move means the owner is stuck inside a poll.
    taken: AtomicUsize,
}

impl Remote {
    pub(super) fn new() -> Remote {
        Remote { lifo: Slot::new(), deferred: Mutex::new(Vec::new()), taken: AtomicUsize::new(0) }
    }

    /// Called by the owner each time it takes from its LIFO slot.
    #[inline]
    pub(super) fn count_take(&self) {
        // Relaxed: a hint for the watcher. Only the owner writes it, so a load and a store do;
        // a stale value read by the watcher delays a rescue by one interval or makes it steal
        // early from a live owner, and either way the task runs exactly once (the slot is
        // mutex-guarded).
        let taken = self.taken.load(Ordering::Relaxed);
        self.taken.store(taken.wrapping_add(1), Ordering::Relaxed);
    }

    /// The owner's take count (see `count_take`).
    #[inline]
    pub(super) fn taken(&self) -> usize {
        // Relaxed: as in `count_take`.
        self.taken.load(Ordering::Relaxed)
    }

    /// True if the LIFO slot holds a task.
    #[inline]
    pub(super) fn has_lifo_task(&self) -> bool {
        self.lifo.is_occupied()
    }
}
