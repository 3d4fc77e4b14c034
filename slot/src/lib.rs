//! A one-task slot that any thread may put an [`async_task::Runnable`] into or take it from:
//! crew's LIFO slot, the task a worker runs next.
//!
//! Invariants (each `unsafe` block's `// SAFETY:` argument rests on them):
//! - The slot is one `AtomicPtr`: null when empty, else the pointer of exactly one
//!   `Runnable<M>` that [`RunnableSlot::swap`] converted with [`Runnable::into_raw`] and still
//!   owns. A pointer leaves the slot only through an atomic swap (in `swap`, `take` and `Drop`),
//!   so among racing threads exactly one receives it and converts it back with
//!   [`Runnable::from_raw`], once: no task is lost, none is duplicated.
//! - Every access is `SeqCst`. The swap's Release half publishes the task's writes (its future,
//!   its state) to the thread that takes it, the Acquire half receives them; the total order is
//!   what crew's sleep protocol counts on (a push into an empty slot and a parking worker's
//!   re-scan load are both in the single order S: `src/scheduler/sleep/README.md` in crew). On
//!   x86 a swap is an `xchg` and a load a `mov` at any ordering; on ARMv8 `SeqCst` costs no more
//!   than Acquire/Release for these.
//! - The API is safe: a `RunnableSlot<M>` is `Send` and `Sync` exactly when `Runnable<M>` is.
//!
//! A normal build uses `std`'s atomics; `--cfg loom` swaps in loom's, so that a loom model
//! (crew's `loom-tests/tests/slot_race.rs`) checks the slot's own hand-over.
//!
//! # Example
//!
//! ```
//! use crew_slot::RunnableSlot;
//!
//! let slot = RunnableSlot::new();
//! let (runnable, task) = async_task::spawn(async { 7 }, |_| {});
//! assert!(slot.swap(runnable).is_none());
//! assert!(slot.is_occupied());
//! slot.take().expect("the task put in").run();
//! assert!(!slot.is_occupied());
//! assert!(task.is_finished());
//! ```

#![warn(missing_docs)]

use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use async_task::Runnable;

#[cfg(loom)]
use loom::sync::atomic::{AtomicPtr, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicPtr, Ordering};
use Ordering::SeqCst;

/// A slot holding at most one [`Runnable`] (see the crate docs).
///
/// # Example
///
/// ```
/// let slot = crew_slot::RunnableSlot::new();
/// let (first, _first_task) = async_task::spawn(async {}, |_| {});
/// let (second, _second_task) = async_task::spawn(async {}, |_| {});
/// assert!(slot.swap(first).is_none());
/// // The second displaces the first, which comes back to the caller.
/// let displaced = slot.swap(second).expect("the first task");
/// displaced.run();
/// assert!(slot.take().is_some());
/// assert!(slot.take().is_none());
/// ```
///
/// A slot whose tasks may not leave their thread cannot be shared either:
///
/// ```compile_fail
/// fn shared<T: Sync>(_: &T) {}
/// shared(&crew_slot::RunnableSlot::<std::rc::Rc<()>>::new());
/// ```
pub struct RunnableSlot<M = ()> {
    /// Null, or a pointer from `Runnable::<M>::into_raw` that the slot owns.
    ptr: AtomicPtr<()>,
    /// The slot owns a `Runnable<M>`: it is `Send`/`Sync` exactly when that is, and drops it.
    _owns: PhantomData<Runnable<M>>,
}

impl<M> RunnableSlot<M> {
    /// An empty slot.
    ///
    /// # Example
    ///
    /// ```
    /// let slot: crew_slot::RunnableSlot = crew_slot::RunnableSlot::new();
    /// assert!(!slot.is_occupied());
    /// ```
    pub fn new() -> RunnableSlot<M> {
        RunnableSlot { ptr: AtomicPtr::new(ptr::null_mut()), _owns: PhantomData }
    }

    /// Puts `runnable` in and returns the task it displaced, if any: one atomic swap.
    ///
    /// # Example
    ///
    /// ```
    /// let slot = crew_slot::RunnableSlot::new();
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// assert!(slot.swap(runnable).is_none());
    /// ```
    #[inline]
    pub fn swap(&self, runnable: Runnable<M>) -> Option<Runnable<M>> {
        let ordering = if cfg!(crew_bug = "slot_relaxed_swap") {
            // Planted bug: the task's writes are not published to its taker.
            Ordering::Relaxed
        } else {
            // SeqCst: Release publishes the task to its taker, Acquire receives the one
            // displaced; crew's sleep protocol needs the push in the total order (crate docs).
            SeqCst
        };
        let previous = self.ptr.swap(runnable.into_raw().as_ptr(), ordering);
        // SAFETY: `previous` left the slot through this swap, so no other thread received it;
        // it is null or a pointer the slot owned (crate invariants).
        unsafe { Self::owned(previous) }
    }

    /// Takes the task out, if there is one: a load, and a swap only when the slot is full.
    ///
    /// # Example
    ///
    /// ```
    /// let slot = crew_slot::RunnableSlot::new();
    /// assert!(slot.take().is_none());
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// slot.swap(runnable);
    /// assert!(slot.take().is_some());
    /// ```
    #[inline]
    pub fn take(&self) -> Option<Runnable<M>> {
        // SeqCst: the same total order as the swap's (crate docs); an empty slot then costs no
        // read-modify-write.
        if self.ptr.load(SeqCst).is_null() {
            return None;
        }
        let taken = if cfg!(crew_bug = "slot_split_take") {
            // Planted bug: a load and a store instead of one swap. Two racing takers can both
            // read the same pointer, and both convert it back.
            let seen = self.ptr.load(SeqCst);
            self.ptr.store(ptr::null_mut(), SeqCst);
            seen
        } else {
            // SeqCst: as in `swap`; Acquire receives the task from the thread that put it in.
            self.ptr.swap(ptr::null_mut(), SeqCst)
        };
        // SAFETY: `taken` left the slot through this swap, so no other thread received it; it
        // is null or a pointer the slot owned (crate invariants).
        unsafe { Self::owned(taken) }
    }

    /// True if a task was in the slot at the instant of the load (a snapshot).
    ///
    /// # Example
    ///
    /// ```
    /// let slot = crew_slot::RunnableSlot::new();
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// slot.swap(runnable);
    /// assert!(slot.is_occupied());
    /// ```
    #[inline]
    pub fn is_occupied(&self) -> bool {
        // SeqCst: crew's parking worker re-scans with this load after its SeqCst fence (crate
        // docs).
        !self.ptr.load(SeqCst).is_null()
    }

    /// Converts a pointer that left the slot back into the `Runnable` it was.
    ///
    /// # Safety
    ///
    /// `ptr` is null, or a pointer from `Runnable::<M>::into_raw` that the caller alone received
    /// from the slot (no other call ever converts it back).
    #[inline]
    unsafe fn owned(ptr: *mut ()) -> Option<Runnable<M>> {
        // SAFETY: the caller's contract: a non-null `ptr` came from `Runnable::<M>::into_raw`
        // and is converted back here only, once.
        NonNull::new(ptr).map(|ptr| unsafe { Runnable::from_raw(ptr) })
    }
}

impl<M> Default for RunnableSlot<M> {
    /// An empty slot, as [`RunnableSlot::new`].
    fn default() -> RunnableSlot<M> {
        RunnableSlot::new()
    }
}

impl<M> Drop for RunnableSlot<M> {
    /// Drops the task left in the slot, if any (dropping a `Runnable` cancels its task).
    fn drop(&mut self) {
        drop(self.take());
    }
}

impl<M> fmt::Debug for RunnableSlot<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunnableSlot").field("occupied", &self.is_occupied()).finish()
    }
}
