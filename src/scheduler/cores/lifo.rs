//! A core's LIFO slot in crew's own types: [`LifoSlot`], the half other threads take from
//! (`Remote::lifo`), and [`LifoOwner`], the core's own end (`Core::lifo`).
//!
//! Invariants:
//! - **Every way out yields crew's [`Runnable`].** A task leaves the slot only as crew's
//!   `Runnable`: through a take ([`LifoOwner::take`], [`LifoSlot::take`]), as the task a push
//!   displaced ([`LifoOwner::push`]), or through either half's `Drop`, which takes what is left
//!   and drops it as crew's `Runnable`. So a task in a slot when its pool shuts down, its core
//!   retires or its core is dropped tells its deferred end (`task.rs`: a borrowing scope's count)
//!   that its `Runnable` is gone, whichever half is dropped last. async-task's raw `Runnable`
//!   exists here only between [`Runnable::into_raw`] and crew-slot's store, and between
//!   crew-slot's load and [`Runnable::new`]: nothing runs in between.
//! - The slot itself is `sync::Slot` (crew-slot's one-`AtomicPtr` slot, a loom mutex under loom;
//!   `sync/slot.rs` states its hand-over): at most one task, handed out exactly once, one owner.
//!   Neither half adds synchronisation of its own.
//! - A drop runs the task's future's destructor (user code): a half is dropped only where no
//!   lock of crew's is held (a core retired or dropped, a pool's shared state dropped), as any
//!   queued task is (`shutdown.rs`).

use std::fmt;

use crate::scheduler::cores::task::{Runnable, TaskMeta};
use crate::sync::{planted_bug, Slot, SlotOwner};

/// The LIFO slot as other threads than its owner see it: the watcher's and the monitor's
/// takes, and the parking worker's look (see the module docs). Its own allocation: crew-slot
/// aligns it to lines of its own.
pub(in crate::scheduler) struct LifoSlot<P> {
    /// `std`'s `Arc` under loom too: `Slot::claim` takes `self` in one.
    slot: std::sync::Arc<Slot<TaskMeta<P>>>,
}

/// The one owner's end of a [`LifoSlot`]: puts tasks in, and takes them without a
/// read-modify-write (`sync/slot.rs`).
pub(in crate::scheduler) struct LifoOwner<P> {
    owner: SlotOwner<TaskMeta<P>>,
}

impl<P> LifoSlot<P> {
    /// An empty slot, not yet claimed.
    pub(in crate::scheduler) fn new() -> LifoSlot<P> {
        LifoSlot { slot: std::sync::Arc::new(Slot::new()) }
    }

    /// The slot's owner, on the first call only.
    pub(in crate::scheduler) fn claim(&self) -> Option<LifoOwner<P>> {
        self.slot.claim().map(|owner| LifoOwner { owner })
    }

    /// Takes the task that is there, from any thread (`None` too while the owner takes it).
    #[inline]
    pub(in crate::scheduler) fn take(&self) -> Option<Runnable<P>> {
        self.slot.take().map(Runnable::new)
    }

    /// True if a task is there (a snapshot).
    #[inline]
    pub(in crate::scheduler) fn is_occupied(&self) -> bool {
        self.slot.is_occupied()
    }
}

impl<P> LifoOwner<P> {
    /// Puts `runnable` in, returning the task it displaced.
    #[inline]
    pub(in crate::scheduler) fn push(&mut self, runnable: Runnable<P>) -> Option<Runnable<P>> {
        self.owner.push(runnable.into_raw()).map(Runnable::new)
    }

    /// Takes the task that is there.
    #[inline]
    pub(in crate::scheduler) fn take(&mut self) -> Option<Runnable<P>> {
        self.owner.take().map(Runnable::new)
    }
}

impl<P> Drop for LifoSlot<P> {
    fn drop(&mut self) {
        drop_left(self.slot.take());
    }
}

impl<P> Drop for LifoOwner<P> {
    fn drop(&mut self) {
        drop_left(self.owner.take());
    }
}

/// Drops a task left in a slot as crew's `Runnable`, which tells its deferred end.
fn drop_left<P>(raw: Option<async_task::Runnable<TaskMeta<P>>>) {
    let Some(raw) = raw else { return };
    if planted_bug!("lifo_raw_drop") {
        // The bug this file's structure rules out: async-task's drop alone, which no deferred
        // end hears of.
        drop(raw);
    } else {
        drop(Runnable::new(raw));
    }
}

impl<P> fmt::Debug for LifoSlot<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LifoSlot").field("occupied", &self.is_occupied()).finish()
    }
}

impl<P> fmt::Debug for LifoOwner<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LifoOwner")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::{LifoOwner, LifoSlot};
    use crate::identity::{DeferredEnd, TaskInfo};
    use crate::scheduler::cores::task::{Runnable, TaskMeta};

    /// Counts the times a task told its deferred end that its `Runnable` is gone.
    #[derive(Default)]
    struct Gone(AtomicUsize);

    impl DeferredEnd for Gone {
        fn runnable_gone(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A pending task whose runnable tells `gone`, and its task (kept, so that a drop of the
    /// runnable does not end it as a cancellation would).
    fn told(gone: &Arc<Gone>) -> (Runnable<()>, async_task::Task<(), TaskMeta<()>>) {
        let meta =
            TaskMeta::new(TaskInfo::new(None, std::panic::Location::caller()), None).with_deferred_end(gone.clone());
        let (raw, task) = async_task::Builder::new().metadata(meta).spawn(|_| std::future::pending::<()>(), |_| {});
        (Runnable::new(raw), task)
    }

    fn slot_and_owner() -> (LifoSlot<()>, LifoOwner<()>) {
        let slot = LifoSlot::new();
        let owner = slot.claim().expect("the first claim");
        assert!(slot.claim().is_none(), "one owner per slot");
        (slot, owner)
    }

    #[test]
    fn a_task_left_in_the_slot_tells_its_end_whichever_half_drops_last() {
        for owner_last in [false, true] {
            let gone = Arc::new(Gone::default());
            let (slot, mut owner) = slot_and_owner();
            let (runnable, _task) = told(&gone);
            assert!(owner.push(runnable).is_none());
            if owner_last {
                drop(slot);
                assert_eq!(gone.0.load(Ordering::SeqCst), 1, "the shared half's drop took it");
                drop(owner);
            } else {
                drop(owner);
                assert_eq!(gone.0.load(Ordering::SeqCst), 1, "the owner's drop took it");
                drop(slot);
            }
            assert_eq!(gone.0.load(Ordering::SeqCst), 1, "told once");
        }
    }

    #[test]
    fn a_displaced_or_taken_task_comes_out_as_crews_runnable() {
        let gone = Arc::new(Gone::default());
        let (slot, mut owner) = slot_and_owner();
        let (first, _first_task) = told(&gone);
        let (second, _second_task) = told(&gone);
        owner.push(first);
        drop(owner.push(second).expect("the first, displaced"));
        assert_eq!(gone.0.load(Ordering::SeqCst), 1);
        assert!(slot.is_occupied());
        drop(slot.take().expect("the second, taken by a thief"));
        assert_eq!(gone.0.load(Ordering::SeqCst), 2);
        assert!(owner.take().is_none() && !slot.is_occupied());
    }
}
