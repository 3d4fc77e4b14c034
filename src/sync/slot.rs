//! The one-task slot behind each core's LIFO slot (`scheduler/remote.rs`).
//!
//! Invariants:
//! - A `Slot` holds at most one `Runnable`. Its `swap` and `take` are linearizable: each task
//!   put in is taken out (or returned by the `swap` that displaced it) exactly once, whichever
//!   threads race, so the task in a LIFO slot runs exactly once whether its owner, the watcher
//!   or the monitor takes it.
//! - A normal build uses crew-slot's `RunnableSlot` (the workspace crate `slot/`, which holds
//!   the `unsafe` of `Runnable::from_raw` behind a safe API, its own loom model and miri tests):
//!   one `AtomicPtr`, so a `swap` is one atomic swap, a `take` of a full slot one swap, of an
//!   empty one a load. Every access is SeqCst: the push into an empty slot and the parking
//!   worker's re-scan load (`is_occupied`, after its SeqCst fence) are both in C11's single
//!   SeqCst order, which the private notify's missing fence relies on
//!   (`scheduler/sleep/README.md`).
//! - Under loom it is a loom mutex around an `Option`, with the same API and linearizable
//!   operations: crew's models check the protocols around the slot, crew-slot's model
//!   (`loom-tests/tests/slot_race.rs`) the slot.

#[cfg(not(loom))]
pub(crate) use crew_slot::RunnableSlot as Slot;

#[cfg(loom)]
pub(crate) use loom_slot::Slot;

/// The slot under loom, with crew-slot's API (see the module docs).
#[cfg(loom)]
mod loom_slot {
    use async_task::Runnable;

    use super::super::{lock, Mutex};

    /// A one-task slot that any thread may swap into or take from.
    pub(crate) struct Slot<M> {
        cell: Mutex<Option<Runnable<M>>>,
    }

    impl<M> std::fmt::Debug for Slot<M> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Slot")
        }
    }

    impl<M> Slot<M> {
        /// An empty slot.
        pub(crate) fn new() -> Slot<M> {
            Slot { cell: Mutex::new(None) }
        }

        /// Puts `runnable` in, returning the task that was there.
        pub(crate) fn swap(&self, runnable: Runnable<M>) -> Option<Runnable<M>> {
            lock(&self.cell).replace(runnable)
        }

        /// Takes the task that is there.
        pub(crate) fn take(&self) -> Option<Runnable<M>> {
            lock(&self.cell).take()
        }

        /// True if a task is there (a snapshot).
        pub(crate) fn is_occupied(&self) -> bool {
            lock(&self.cell).is_some()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Slot;

    #[test]
    fn swap_returns_the_task_displaced() {
        let slot = Slot::new();
        assert!(!slot.is_occupied());
        let (first, first_task) = async_task::spawn(async { 1 }, |_| {});
        let (second, second_task) = async_task::spawn(async { 2 }, |_| {});
        assert!(slot.swap(first).is_none());
        assert!(slot.is_occupied());
        slot.swap(second).expect("the first task, displaced").run();
        assert!(first_task.is_finished() && !second_task.is_finished());
        slot.take().expect("the second task").run();
        assert!(second_task.is_finished());
        assert!(slot.take().is_none());
        assert!(!slot.is_occupied());
    }
}
