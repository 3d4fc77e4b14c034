//! A one-task slot for an [`async_task::Runnable`] with one owner, which puts tasks in and takes
//! them out at no read-modify-write on the take, and thieves, which may take the task at any
//! time: crew's LIFO slot, the task a worker runs next, rescued when its worker is stuck.
//!
//! Invariants (each `unsafe` block's `// SAFETY:` argument rests on them):
//! - The slot's pointer is null when empty, else the pointer of exactly one `Runnable<M>` that
//!   the owner's [`SlotOwner::push`] converted with [`Runnable::into_raw`] and that the slot
//!   still owns. A pointer leaves the slot once: through a thief's atomic swap, the owner's
//!   displacing swap, the owner's take, or the slot's drop; whoever it leaves through converts
//!   it back with [`Runnable::from_raw`], once. No task is lost, none is duplicated.
//! - One [`SlotOwner`] per slot ([`RunnableSlot::claim`] hands it out once), and its methods take
//!   `&mut self`: one owner operation at a time. Only the owner puts tasks in.
//! - The owner's take is a load and a store, not a swap: it marks itself `busy`, passes the light
//!   side of an asymmetric barrier ([`asymmetric`]), and takes that way only if it then sees no
//!   thief (`thieves` zero); else it swaps. A thief counts itself in `thieves`, passes the heavy
//!   side, and swaps only if it then sees the owner not `busy` (else the owner is taking the task
//!   now, and keeps it). The barrier pair is a Dekker pair: the owner sees the thief's count, or
//!   the thief sees the owner busy; a `false` it reads is the Release store that ended the
//!   owner's last take (Acquire), after that take's store of null. So a thief's swap and the
//!   owner's load-and-store never interleave, and every other pair of operations on the pointer
//!   is two read-modify-writes. A thief's count falls (Release) after its swap, and the
//!   owner's load of it is Acquire: an owner that reads the fallen count sees the null the thief
//!   left.
//! - The put-in swap is `SeqCst`: its Release half publishes the task's writes to whoever takes
//!   it, its Acquire half receives the task it displaced; crew's sleep protocol counts on the
//!   push into an empty slot and a parking worker's re-scan load ([`RunnableSlot::is_occupied`])
//!   being in C11's single `SeqCst` order (`src/scheduler/sleep/README.md` in crew).
//! - The API is safe: a `RunnableSlot<M>` and a `SlotOwner<M>` are `Send` and `Sync` exactly
//!   when `Runnable<M>` is.
//!
//! So a take by the owner costs three plain stores and two loads (on x86, no locked
//! instruction), and a thief's take a system call that interrupts every CPU running the
//! process (Linux's `membarrier`; a `SeqCst` fence on each side where that is missing, see
//! [`asymmetric`]). Thieves are meant to be rare: crew's take only from a worker stuck in a poll.
//!
//! A normal build uses `std`'s atomics; `--cfg loom` swaps in loom's, so that a loom model
//! (crew's `loom-tests/tests/slot_race.rs`) checks the hand-over between owner and thieves.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use crew_slot::RunnableSlot;
//!
//! let slot = Arc::new(RunnableSlot::new());
//! let mut owner = slot.claim().expect("the first claim");
//! let (runnable, task) = async_task::spawn(async { 7 }, |_| {});
//! assert!(owner.push(runnable).is_none());
//! assert!(slot.is_occupied());
//! // A thief (any thread holding the slot) could take it with `slot.take()`.
//! owner.take().expect("the task put in").run();
//! assert!(!slot.is_occupied());
//! assert!(task.is_finished());
//! ```

#![warn(missing_docs)]

pub mod asymmetric;

use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use async_task::Runnable;

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use Ordering::{Acquire, Relaxed, Release, SeqCst};

/// A slot holding at most one [`Runnable`], shared by its owner and its thieves (see the crate
/// docs). Aligned to 128 bytes, so that two slots never share a cache line or an adjacent-line
/// prefetch pair: the owner writes its slot at every take.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
///
/// let slot = Arc::new(crew_slot::RunnableSlot::new());
/// let mut owner = slot.claim().expect("the first claim");
/// let (first, _first_task) = async_task::spawn(async {}, |_| {});
/// let (second, _second_task) = async_task::spawn(async {}, |_| {});
/// assert!(owner.push(first).is_none());
/// // The second displaces the first, which comes back to the owner.
/// let displaced = owner.push(second).expect("the first task");
/// displaced.run();
/// // A thief takes the second.
/// assert!(std::thread::spawn(move || slot.take().is_some()).join().unwrap());
/// assert!(owner.take().is_none());
/// ```
///
/// A slot whose tasks may not leave their thread cannot be shared either:
///
/// ```compile_fail
/// fn shared<T: Sync>(_: &T) {}
/// shared(&crew_slot::RunnableSlot::<std::rc::Rc<()>>::new());
/// ```
#[repr(align(128))]
pub struct RunnableSlot<M = ()> {
    /// Null, or a pointer from `Runnable::<M>::into_raw` that the slot owns.
    ptr: AtomicPtr<()>,
    /// Set while the owner is inside its take's load and store (crate docs).
    busy: AtomicBool,
    /// Thieves whose take is under way: while not zero, the owner takes by a swap.
    thieves: AtomicUsize,
    /// Set once the owner was handed out ([`RunnableSlot::claim`]).
    claimed: AtomicBool,
    /// The slot owns a `Runnable<M>`: it is `Send`/`Sync` exactly when that is, and drops it.
    _owns: PhantomData<Runnable<M>>,
}

/// The one owner of a [`RunnableSlot`]: puts tasks in, and takes them out without a
/// read-modify-write unless a thief is at work (see the crate docs).
///
/// # Example
///
/// ```
/// use std::sync::Arc;
///
/// let slot = Arc::new(crew_slot::RunnableSlot::new());
/// let mut owner = slot.claim().expect("the first claim");
/// assert!(slot.claim().is_none(), "one owner per slot");
/// let (runnable, _task) = async_task::spawn(async {}, |_| {});
/// owner.push(runnable);
/// assert!(owner.take().is_some());
/// ```
pub struct SlotOwner<M = ()> {
    slot: Arc<RunnableSlot<M>>,
}

impl<M> RunnableSlot<M> {
    /// An empty slot with no owner yet.
    ///
    /// # Example
    ///
    /// ```
    /// let slot: crew_slot::RunnableSlot = crew_slot::RunnableSlot::new();
    /// assert!(!slot.is_occupied());
    /// ```
    pub fn new() -> RunnableSlot<M> {
        RunnableSlot {
            ptr: AtomicPtr::new(ptr::null_mut()),
            busy: AtomicBool::new(false),
            thieves: AtomicUsize::new(0),
            claimed: AtomicBool::new(false),
            _owns: PhantomData,
        }
    }

    /// The slot's owner: `Some` on the first call only.
    ///
    /// # Example
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let slot: Arc<crew_slot::RunnableSlot> = Arc::new(crew_slot::RunnableSlot::new());
    /// assert!(slot.claim().is_some());
    /// assert!(slot.claim().is_none());
    /// ```
    pub fn claim(self: &Arc<Self>) -> Option<SlotOwner<M>> {
        // Relaxed: the swap's atomicity alone makes one claim win; nothing else is published.
        (!self.claimed.swap(true, Relaxed)).then(|| SlotOwner { slot: self.clone() })
    }

    /// A thief's take: the task, if there is one and the owner is not taking it at this moment
    /// (then the owner gets it). Costs a process-wide barrier when the slot holds a task (crate
    /// docs); `None` at once when it looks empty, and `None` if that barrier failed (it never
    /// panics: the task stays for its owner or a later thief, see [`asymmetric::heavy`]).
    ///
    /// # Example
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let slot = Arc::new(crew_slot::RunnableSlot::new());
    /// let mut owner = slot.claim().unwrap();
    /// assert!(slot.take().is_none());
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// owner.push(runnable);
    /// assert!(slot.take().is_some());
    /// assert!(owner.take().is_none());
    /// ```
    pub fn take(&self) -> Option<Runnable<M>> {
        // A null seen is a linearization point of an empty slot: nothing to take.
        if !self.is_occupied() {
            return None;
        }
        // SeqCst: this count and the owner's `busy` are the two stores of the Dekker pair that
        // the barriers order (crate docs); the RMW also keeps the count exact among thieves.
        self.thieves.fetch_add(1, SeqCst);
        if !asymmetric::heavy() {
            // The barrier failed (it ordered nothing): take nothing. The owner keeps the task.
            // Release: as the decrement below.
            self.thieves.fetch_sub(1, Release);
            return None;
        }
        // Acquire: a `false` read is the owner's Release store that ended its last take, so
        // this thread sees that take's store of null. After the barrier (crate docs).
        let owner_busy = !cfg!(crew_bug = "slot_thief_ignores_busy") && self.busy.load(Acquire);
        let taken = if owner_busy {
            // The owner is inside a take now (it stores null, or swaps, and keeps what it
            // finds): it is not stuck, and this thief takes nothing.
            ptr::null_mut()
        } else if cfg!(crew_bug = "slot_split_take") {
            // Planted bug: a load and a store instead of one swap. Two racing thieves can both
            // read the same pointer, and both convert it back.
            let seen = self.ptr.load(SeqCst);
            self.ptr.store(ptr::null_mut(), SeqCst);
            seen
        } else {
            // SeqCst: Acquire receives the task from the owner's put-in swap; in the total order
            // with that swap and the re-scan loads (crate docs).
            self.ptr.swap(ptr::null_mut(), SeqCst)
        };
        // Release: an owner that reads the count fallen sees the null swapped in above.
        self.thieves.fetch_sub(1, Release);
        // SAFETY: `taken` left the slot through this swap, which no owner load-and-store
        // overlapped (the barrier pair and `busy`, crate docs), so no other thread received it;
        // it is null or a pointer the slot owned.
        unsafe { Self::owned(taken) }
    }

    /// True if a task was in the slot at the instant of the load (a snapshot).
    ///
    /// # Example
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let slot = Arc::new(crew_slot::RunnableSlot::new());
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// slot.claim().unwrap().push(runnable);
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

impl<M> SlotOwner<M> {
    /// The slot this owns, for thieves to take from.
    ///
    /// # Example
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let slot = Arc::new(crew_slot::RunnableSlot::<()>::new());
    /// let owner = slot.claim().unwrap();
    /// assert!(Arc::ptr_eq(owner.slot(), &slot));
    /// ```
    pub fn slot(&self) -> &Arc<RunnableSlot<M>> {
        &self.slot
    }

    /// Puts `runnable` in and returns the task it displaced, if any: one atomic swap.
    ///
    /// # Example
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let mut owner = Arc::new(crew_slot::RunnableSlot::new()).claim().unwrap();
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// assert!(owner.push(runnable).is_none());
    /// ```
    #[inline]
    pub fn push(&mut self, runnable: Runnable<M>) -> Option<Runnable<M>> {
        let ordering = if cfg!(crew_bug = "slot_relaxed_swap") {
            // Planted bug: the task's writes are not published to its taker.
            Relaxed
        } else {
            // SeqCst: Release publishes the task to its taker, Acquire receives the one
            // displaced; crew's sleep protocol needs the push in the total order (crate docs).
            SeqCst
        };
        let previous = self.slot.ptr.swap(runnable.into_raw().as_ptr(), ordering);
        // SAFETY: `previous` left the slot through this swap, an RMW, so no thief's swap and no
        // take of this owner's (`&mut self`) received it; it is null or a pointer the slot
        // owned (crate invariants).
        unsafe { RunnableSlot::owned(previous) }
    }

    /// Takes the task out, if there is one: a load and a store when no thief is at work, a swap
    /// when one is (crate docs).
    ///
    /// # Example
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let mut owner = Arc::new(crew_slot::RunnableSlot::new()).claim().unwrap();
    /// assert!(owner.take().is_none());
    /// let (runnable, _task) = async_task::spawn(async {}, |_| {});
    /// owner.push(runnable);
    /// assert!(owner.take().is_some());
    /// ```
    #[inline]
    pub fn take(&mut self) -> Option<Runnable<M>> {
        let slot = &*self.slot;
        // No look at the pointer first: an owner takes when it knows it put a task in (crew's
        // `lifo_filled`), so the slot is rarely empty here.
        // Relaxed: ordered before the load of `thieves` by the barrier pair, not by the store.
        slot.busy.store(true, Relaxed);
        if !cfg!(crew_bug = "slot_owner_no_barrier") {
            // Planted bug: without it, the owner and a thief can both miss the other's store.
            asymmetric::light();
        }
        // Acquire: a fallen count was stored after its thief's swap (Release): see its null.
        let thieves_at_work = !cfg!(crew_bug = "slot_owner_ignores_thieves") && slot.thieves.load(Acquire) != 0;
        let taken = if thieves_at_work {
            // SeqCst: as a thief's swap; racing theirs, one of the two receives the task.
            slot.ptr.swap(ptr::null_mut(), SeqCst)
        } else {
            // Relaxed: a thief swaps only after reading `busy`'s Release store below, which orders
            // these before its swap; the task's writes are this thread's own push.
            let seen = slot.ptr.load(Relaxed);
            slot.ptr.store(ptr::null_mut(), Relaxed);
            seen
        };
        // Release: a thief that sees `busy` false (Acquire) sees the null stored above.
        slot.busy.store(false, Release);
        // SAFETY: `taken` left the slot through this owner's store or swap, which no thief's
        // swap overlapped (crate invariants), so no other thread received it; it is null or a
        // pointer the slot owned.
        unsafe { RunnableSlot::owned(taken) }
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
        // SeqCst: alone with the slot (`&mut self`); no ordering argument needed.
        let left = self.ptr.swap(ptr::null_mut(), SeqCst);
        // SAFETY: with `&mut self` no other thread can hold a reference to the slot, so this
        // swap alone received `left`, a pointer the slot owned or null.
        drop(unsafe { Self::owned(left) });
    }
}

impl<M> fmt::Debug for RunnableSlot<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunnableSlot").field("occupied", &self.is_occupied()).finish()
    }
}

impl<M> fmt::Debug for SlotOwner<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlotOwner").field("slot", &*self.slot).finish()
    }
}
