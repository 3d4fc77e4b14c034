//! The one-task slot behind each core's LIFO slot (`Remote`, `scheduler/cores/shared.rs`).
//!
//! Invariants:
//! - A `Slot` holds at most one `Runnable` and has one `SlotOwner` (`Slot::claim`), held by its
//!   core: only the owner puts tasks in (`SlotOwner::push`, returning the one displaced); the
//!   owner's `take` and any thread's `Slot::take` (the watcher's and the monitor's) hand each
//!   task out exactly once, whichever threads race, so the task in a LIFO slot runs exactly once
//!   whether its owner, the watcher or the monitor takes it. A thread's `Slot::take` may also
//!   return `None` while the owner is taking the task at that moment (the owner gets it).
//! - A normal build uses crew-slot's `RunnableSlot` and `SlotOwner` (the workspace crate
//!   `slot/`, which holds the `unsafe` of `Runnable::from_raw` behind a safe API, its own loom
//!   model and miri tests): one `AtomicPtr`. A push is one SeqCst swap: the push into an empty
//!   slot and the parking worker's re-scan load (`is_occupied`, after its SeqCst fence) are both
//!   in C11's single SeqCst order, which the private notify's missing fence relies on
//!   (`scheduler/sleep/README.md`). The owner's take is a load and a store, no read-modify-write,
//!   ordered against the rare thieves by an asymmetric barrier (Linux's `membarrier` on the
//!   thieves' side); a thief's take is a system call and a swap (crew-slot's docs).
//! - Under loom it is a loom mutex around an `Option`, with the same API and linearizable
//!   operations: crew's models check the protocols around the slot, crew-slot's model
//!   (`loom-tests/tests/slot_race.rs`) the slot's own hand-over.

#[cfg(not(loom))]
pub(crate) use crew_slot::{RunnableSlot as Slot, SlotOwner};

#[cfg(loom)]
pub(crate) use loom_slot::{Slot, SlotOwner};

/// The slot under loom, with crew-slot's API (see the module docs).
#[cfg(loom)]
mod loom_slot {
    use std::sync::Arc;

    use async_task::Runnable;

    use super::super::{lock, AtomicBool, Mutex};

    /// A one-task slot that its owner puts into and any thread takes from.
    pub(crate) struct Slot<M> {
        cell: Mutex<Option<Runnable<M>>>,
        claimed: AtomicBool,
    }

    /// The one owner of a `Slot`.
    pub(crate) struct SlotOwner<M> {
        slot: Arc<Slot<M>>,
    }

    impl<M> std::fmt::Debug for SlotOwner<M> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("SlotOwner")
        }
    }

    impl<M> SlotOwner<M> {
        /// Puts `runnable` in, returning the task that was there.
        pub(crate) fn push(&mut self, runnable: Runnable<M>) -> Option<Runnable<M>> {
            lock(&self.slot.cell).replace(runnable)
        }

        /// Takes the task that is there.
        pub(crate) fn take(&mut self) -> Option<Runnable<M>> {
            self.slot.take()
        }
    }

    impl<M> std::fmt::Debug for Slot<M> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Slot")
        }
    }

    impl<M> Slot<M> {
        /// An empty slot.
        pub(crate) fn new() -> Slot<M> {
            Slot { cell: Mutex::new(None), claimed: AtomicBool::new(false) }
        }

        /// The slot's owner, on the first call only.
        pub(crate) fn claim(self: &Arc<Self>) -> Option<SlotOwner<M>> {
            // SeqCst: a model's flag, no ordering argument needed.
            (!self.claimed.swap(true, std::sync::atomic::Ordering::SeqCst)).then(|| SlotOwner { slot: self.clone() })
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
    use std::sync::Arc;

    use super::Slot;

    #[test]
    fn a_push_returns_the_task_displaced_and_either_take_empties_the_slot() {
        let slot = Arc::new(Slot::new());
        let mut owner = slot.claim().expect("the first claim");
        assert!(slot.claim().is_none(), "one owner per slot");
        assert!(!slot.is_occupied());
        let (first, first_task) = async_task::spawn(async { 1 }, |_| {});
        let (second, second_task) = async_task::spawn(async { 2 }, |_| {});
        let (third, third_task) = async_task::spawn(async { 3 }, |_| {});
        assert!(owner.push(first).is_none());
        assert!(slot.is_occupied());
        owner.push(second).expect("the first task, displaced").run();
        assert!(first_task.is_finished() && !second_task.is_finished());
        owner.take().expect("the second task").run();
        assert!(second_task.is_finished());
        assert!(owner.take().is_none());
        assert!(!slot.is_occupied());
        owner.push(third);
        slot.take().expect("the third task, taken by another than the owner").run();
        assert!(third_task.is_finished());
        assert!(owner.take().is_none() && slot.take().is_none());
    }
}
