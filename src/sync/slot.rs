//! The one-task slot behind each core's LIFO slot (`scheduler/remote.rs`).
//!
//! Invariants:
//! - A [`Slot`] holds at most one task. [`Slot::swap`] and [`Slot::take`] are linearizable:
//!   each task put in is taken out (or returned by the `swap` that displaced it) exactly once,
//!   whichever threads race, so the task in a LIFO slot runs exactly once whether its owner or
//!   the watcher takes it.
//! - A normal build uses the workspace's `crew-slot` crate (`slot/`): one `AtomicPtr` holding
//!   the task's raw pointer, so a `swap` and a `take` of a full slot are one `SeqCst` exchange
//!   each, and an empty slot's `take` is one load (crossbeam-queue's `ArrayQueue` of capacity
//!   1, before, did the same with a head, a tail and stamps: about 25 more instructions per
//!   operation, `docs/performance-notes.md`). Its `unsafe` (`Runnable::from_raw`) lives in that
//!   crate, behind a safe API, miri-tested with planted bugs (`slot/planted-bugs.sh`).
//! - Under loom (whose atomics `crew-slot` does not use) it is a loom mutex around an `Option`,
//!   with the same linearizable operations: the models check the protocols around the slot,
//!   not the slot.
//! - [`Slot::is_occupied`] is a snapshot: one `SeqCst` load in a normal build (which is what
//!   the parking worker's re-scan after its SeqCst fence needs, see
//!   `scheduler/sleep/README.md`), the lock under loom. A push into an empty slot is a `SeqCst`
//!   read-modify-write, which lets the owner's notify after it go without a fence (the sleep
//!   README's C11 argument, checked with Relacy).

use crate::task::Runnable;

#[cfg(not(loom))]
mod imp {
    use crate::task::{Runnable, TaskMeta};

    pub(crate) struct Slot {
        slot: crew_slot::Slot<TaskMeta>,
    }

    impl Slot {
        pub(crate) fn new() -> Slot {
            Slot { slot: crew_slot::Slot::new() }
        }

        #[inline]
        pub(crate) fn swap(&self, runnable: Runnable) -> Option<Runnable> {
            self.slot.swap(runnable)
        }

        #[inline]
        pub(crate) fn take(&self) -> Option<Runnable> {
            self.slot.take()
        }

        #[inline]
        pub(crate) fn is_occupied(&self) -> bool {
            self.slot.is_occupied()
        }
    }
}

#[cfg(loom)]
mod imp {
    use super::super::{lock, Mutex};
    use crate::task::Runnable;

    pub(crate) struct Slot {
        cell: Mutex<Option<Runnable>>,
    }

    impl Slot {
        pub(crate) fn new() -> Slot {
            Slot { cell: Mutex::new(None) }
        }

        pub(crate) fn swap(&self, runnable: Runnable) -> Option<Runnable> {
            lock(&self.cell).replace(runnable)
        }

        pub(crate) fn take(&self) -> Option<Runnable> {
            lock(&self.cell).take()
        }

        pub(crate) fn is_occupied(&self) -> bool {
            lock(&self.cell).is_some()
        }
    }
}

/// A one-task slot that any thread may swap into or take from (see the module docs).
pub(crate) struct Slot(imp::Slot);

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Slot")
    }
}

impl Slot {
    /// An empty slot.
    pub(crate) fn new() -> Slot {
        Slot(imp::Slot::new())
    }

    /// Puts `runnable` in, returning the task that was there.
    #[inline]
    pub(crate) fn swap(&self, runnable: Runnable) -> Option<Runnable> {
        self.0.swap(runnable)
    }

    /// Takes the task that is there.
    #[inline]
    pub(crate) fn take(&self) -> Option<Runnable> {
        self.0.take()
    }

    /// True if a task is there (a snapshot).
    #[inline]
    pub(crate) fn is_occupied(&self) -> bool {
        self.0.is_occupied()
    }
}
