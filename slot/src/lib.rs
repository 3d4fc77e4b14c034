//! A one-task slot for [async-task](https://docs.rs/async-task)'s [`Runnable`]: the LIFO slot of
//! each of crew's workers, which its owner fills and empties and which other threads (crew's
//! watcher, its monitor, a pool's shutdown) may empty.
//!
//! Invariants:
//! - The slot holds at most one task, as the pointer `Runnable::into_raw` gave (null: empty).
//!   Every pointer stored is taken out by exactly one atomic exchange: [`Slot::swap`] or
//!   [`Slot::take`], on any thread, or the slot's drop. So each task put in is returned exactly
//!   once (by the `take` that emptied the slot, the `swap` that displaced it, or dropped with
//!   the slot), whichever threads race: it runs at most once, and is never lost.
//! - Every operation is one `SeqCst` access of the one pointer: a `swap` and a `take` of a full
//!   slot one exchange (one locked instruction on x86, as a compare-and-swap is), a `take` of an
//!   empty slot and [`Slot::is_occupied`] one load. So a `swap` into an empty slot is a `SeqCst`
//!   read-modify-write, which crew's sleep protocol relies on (its notify after such a push has
//!   no fence of its own), and `is_occupied` never sees a full slot empty.
//! - The crate's whole API is safe: the raw pointer never leaves the slot. Its `unsafe` is the
//!   two `Runnable::from_raw` calls, each with its argument.
//!
//! A slot is the cheaper form of crossbeam-queue's `ArrayQueue` of capacity 1 (crew's slot
//! before): the same linearizable operations, without the queue's head, tail and stamps.
//!
//! # Examples
//!
//! ```
//! use crew_slot::Slot;
//!
//! let slot = Slot::new();
//! let (runnable, task) = async_task::spawn(async { 7 }, |_| {});
//! assert!(slot.swap(runnable).is_none());
//! assert!(slot.is_occupied());
//! slot.take().expect("the task is in the slot").run();
//! assert!(task.is_finished() && !slot.is_occupied());
//! ```

#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use async_task::Runnable;

/// A slot that holds at most one [`Runnable`] (see the crate docs). `Send` and `Sync` when
/// `Runnable<M>` is: any thread may swap into it or take from it.
pub struct Slot<M = ()> {
    /// The task, as `Runnable::<M>::into_raw` gave it; null when empty.
    task: AtomicPtr<()>,
    /// The slot owns a `Runnable<M>` (its auto traits and drop check follow).
    owns: PhantomData<Runnable<M>>,
}

impl<M> Slot<M> {
    /// An empty slot.
    ///
    /// # Examples
    ///
    /// ```
    /// let slot = crew_slot::Slot::<()>::new();
    /// assert!(!slot.is_occupied());
    /// ```
    pub const fn new() -> Slot<M> {
        Slot { task: AtomicPtr::new(ptr::null_mut()), owns: PhantomData }
    }

    /// Puts `runnable` in, returning the task that was there, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// let slot = crew_slot::Slot::new();
    /// let (first, _a) = async_task::spawn(async {}, |_| {});
    /// let (second, _b) = async_task::spawn(async {}, |_| {});
    /// assert!(slot.swap(first).is_none());
    /// assert!(slot.swap(second).is_some(), "the first task comes back");
    /// ```
    #[inline]
    pub fn swap(&self, runnable: Runnable<M>) -> Option<Runnable<M>> {
        let new = runnable.into_raw().as_ptr();
        // SeqCst: the sleep protocol's push into an empty slot (see the crate docs).
        let old = self.task.swap(new, Ordering::SeqCst);
        if cfg!(crew_slot_bug = "swap_forgets") {
            return None;
        }
        // SAFETY: `old`, if not null, was stored by a `swap` from `Runnable::<M>::into_raw`, and
        // this exchange took it out of the slot: no other call can return it.
        NonNull::new(old).map(|old| unsafe { Runnable::from_raw(old) })
    }

    /// Takes the task out, if there is one.
    ///
    /// # Examples
    ///
    /// ```
    /// let slot = crew_slot::Slot::new();
    /// assert!(slot.take().is_none());
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// slot.swap(runnable);
    /// assert!(slot.take().is_some());
    /// assert!(slot.take().is_none());
    /// ```
    #[inline]
    pub fn take(&self) -> Option<Runnable<M>> {
        // SeqCst: an empty slot's take is one load, ordered as the exchanges are.
        if self.task.load(Ordering::SeqCst).is_null() {
            return None;
        }
        let old = if cfg!(crew_slot_bug = "take_keeps") {
            self.task.load(Ordering::SeqCst)
        } else {
            self.task.swap(ptr::null_mut(), Ordering::SeqCst)
        };
        // SAFETY: as in `swap`: `old`, if not null, came from `Runnable::<M>::into_raw`, and this
        // exchange took it out of the slot.
        NonNull::new(old).map(|old| unsafe { Runnable::from_raw(old) })
    }

    /// Whether a task is in the slot (a snapshot: any thread may change it at once).
    ///
    /// # Examples
    ///
    /// ```
    /// let slot = crew_slot::Slot::new();
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// slot.swap(runnable);
    /// assert!(slot.is_occupied());
    /// ```
    #[inline]
    pub fn is_occupied(&self) -> bool {
        // SeqCst: the parking worker's re-scan after its fence reads it (crew's sleep protocol).
        !self.task.load(Ordering::SeqCst).is_null()
    }
}

impl<M> Default for Slot<M> {
    fn default() -> Slot<M> {
        Slot::new()
    }
}

impl<M> Drop for Slot<M> {
    fn drop(&mut self) {
        // A task left in the slot is dropped with it (async-task cancels it).
        drop(self.take());
    }
}

impl<M> fmt::Debug for Slot<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot").field("occupied", &self.is_occupied()).finish()
    }
}
