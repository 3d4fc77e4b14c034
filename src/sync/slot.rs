//! The one-task slot behind each core's LIFO slot (`scheduler/remote.rs`).
//!
//! Invariants:
//! - A [`Slot`] holds at most one value. [`Slot::swap`] and [`Slot::take`] are linearizable:
//!   each value put in is taken out (or returned by the `swap` that displaced it) exactly once,
//!   whichever threads race, so the task in a LIFO slot runs exactly once whether its owner or
//!   the watcher takes it.
//! - A normal build uses crossbeam-queue's lock-free `ArrayQueue` of capacity 1: a `swap` into
//!   an empty slot and a `take` of a full one are one compare-and-swap each (a mutex costs a
//!   lock and an unlock, two locked instructions, measured in `docs/performance-notes.md`,
//!   "Message passing"). `force_push` is the swap. crossbeam-queue keeps the value in an
//!   `UnsafeCell<MaybeUninit<T>>`, never as an integer, so miri accepts it (crossbeam's
//!   `AtomicCell<Option<Runnable>>` does not: it round-trips the pointer through an integer,
//!   crossbeam-rs/crossbeam#908).
//! - Under loom (whose atomics crossbeam-queue cannot use) it is a loom mutex around an
//!   `Option`, with the same linearizable operations: the models check the protocols around
//!   the slot, not the slot.
//! - [`Slot::is_occupied`] is a snapshot: SeqCst loads of the queue's head and tail in a normal
//!   build (which is what the parking worker's re-scan after its SeqCst fence needs, see
//!   `scheduler/sleep/README.md`), the lock under loom. A `swap` into a full slot moves the
//!   queue's head before its tail, so a concurrent `is_occupied` may see it empty for that
//!   instant. Harmless: the owner notifies after its swap with a SeqCst fence before the
//!   notify's load of the state, so a parking worker whose re-scan (after its own fence) saw
//!   the instant is one that notify sees; and the monitor's read is a heuristic re-read every
//!   interval.

#[cfg(not(loom))]
mod imp {
    use crossbeam_queue::ArrayQueue;

    pub(crate) struct Slot<T> {
        queue: ArrayQueue<T>,
    }

    impl<T> Slot<T> {
        pub(crate) fn new() -> Slot<T> {
            Slot { queue: ArrayQueue::new(1) }
        }

        #[inline]
        pub(crate) fn swap(&self, value: T) -> Option<T> {
            self.queue.force_push(value)
        }

        #[inline]
        pub(crate) fn take(&self) -> Option<T> {
            self.queue.pop()
        }

        #[inline]
        pub(crate) fn is_occupied(&self) -> bool {
            !self.queue.is_empty()
        }
    }
}

#[cfg(loom)]
mod imp {
    use super::super::{lock, Mutex};

    pub(crate) struct Slot<T> {
        cell: Mutex<Option<T>>,
    }

    impl<T> Slot<T> {
        pub(crate) fn new() -> Slot<T> {
            Slot { cell: Mutex::new(None) }
        }

        pub(crate) fn swap(&self, value: T) -> Option<T> {
            lock(&self.cell).replace(value)
        }

        pub(crate) fn take(&self) -> Option<T> {
            lock(&self.cell).take()
        }

        pub(crate) fn is_occupied(&self) -> bool {
            lock(&self.cell).is_some()
        }
    }
}

/// A one-value slot that any thread may swap into or take from (see the module docs).
pub(crate) struct Slot<T>(imp::Slot<T>);

impl<T> std::fmt::Debug for Slot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Slot")
    }
}

impl<T> Slot<T> {
    /// An empty slot.
    pub(crate) fn new() -> Slot<T> {
        Slot(imp::Slot::new())
    }

    /// Puts `value` in, returning what was there.
    #[inline]
    pub(crate) fn swap(&self, value: T) -> Option<T> {
        self.0.swap(value)
    }

    /// Takes what is there.
    #[inline]
    pub(crate) fn take(&self) -> Option<T> {
        self.0.take()
    }

    /// True if something is there (a snapshot).
    #[inline]
    pub(crate) fn is_occupied(&self) -> bool {
        self.0.is_occupied()
    }
}

#[cfg(test)]
mod tests {
    use super::Slot;

    #[test]
    fn swap_returns_the_previous_value() {
        let slot = Slot::new();
        assert!(!slot.is_occupied());
        assert_eq!(slot.swap(Box::new(1)), None);
        assert!(slot.is_occupied());
        assert_eq!(slot.swap(Box::new(2)), Some(Box::new(1)));
        assert_eq!(slot.take(), Some(Box::new(2)));
        assert_eq!(slot.take(), None);
        assert!(!slot.is_occupied());
    }

    /// One thread swaps values in while another takes: every value comes out exactly once,
    /// from a take or as displaced by a swap, and a value left in the slot is dropped with it.
    #[cfg(not(loom))]
    #[test]
    fn racing_swaps_and_takes_lose_and_duplicate_nothing() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;

        let rounds: usize = if cfg!(miri) { 200 } else { 100_000 };
        let slot = Arc::new(Slot::new());
        let done = Arc::new(AtomicBool::new(false));
        let taker = std::thread::spawn({
            let (slot, done) = (slot.clone(), done.clone());
            move || {
                let mut taken = Vec::new();
                // SeqCst: a test's flag, no ordering argument needed.
                while !done.load(Ordering::SeqCst) {
                    taken.extend(slot.take());
                }
                taken.extend(slot.take());
                taken
            }
        });
        let mut displaced: Vec<usize> = (0..rounds).filter_map(|i| slot.swap(i)).collect();
        done.store(true, Ordering::SeqCst);
        displaced.extend(taker.join().unwrap());
        displaced.extend(slot.take());
        displaced.sort_unstable();
        assert_eq!(displaced, (0..rounds).collect::<Vec<_>>());
    }
}
