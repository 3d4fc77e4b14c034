//! One timer's shared state ([`TimerShared`]): its deadline, its waker, and its place in the
//! wheel, shared by the timer's owner and the driver.
//!
//! Invariants:
//! - `deadline` holds nanoseconds since the driver's epoch, or [`FIRED`] once the driver fired
//!   it. Only the driver sets `FIRED` (under the wheel's lock); only the owner sets a deadline
//!   (a new timer, a reset), and a reset to an earlier deadline files the entry again under the
//!   wheel's lock, while a reset to a later one only stores it (the wheel files it again when
//!   its old slot comes, `wheel.rs`).
//! - `key` is the entry's key in the wheel while it is filed, `NOT_FILED` otherwise; it is read
//!   and written under the wheel's lock only.
//! - The waker is stored before the owner looks at `deadline` for `FIRED`, and the driver
//!   takes it after it stored `FIRED`: either the owner sees it fired, or the driver wakes it.

use std::task::Waker;

use crate::sync::{lock, AtomicU64, AtomicUsize, Mutex, Ordering};

/// `deadline`'s value once fired.
pub(crate) const FIRED: u64 = u64::MAX;

/// `key`'s value while the entry is not in the wheel.
pub(crate) const NOT_FILED: usize = usize::MAX;

/// A timer's state shared with the driver (see the module docs).
#[derive(Debug)]
pub(crate) struct TimerShared {
    deadline: AtomicU64,
    waker: Mutex<Option<Waker>>,
    pub(crate) key: AtomicUsize,
}

impl TimerShared {
    /// An entry due at `deadline` (nanoseconds since the driver's epoch), not filed yet.
    pub(crate) fn new(deadline: u64) -> TimerShared {
        TimerShared {
            deadline: AtomicU64::new(deadline.min(FIRED - 1)),
            waker: Mutex::new(None),
            key: AtomicUsize::new(NOT_FILED),
        }
    }

    /// Its deadline, or [`FIRED`].
    pub(crate) fn deadline_nanos(&self) -> u64 {
        // SeqCst: pairs with `fire`'s store and the owner's waker (module docs).
        self.deadline.load(Ordering::SeqCst)
    }

    /// True once fired.
    pub(crate) fn is_fired(&self) -> bool {
        self.deadline_nanos() == FIRED
    }

    /// Moves a deadline that did not fire yet: false, with nothing changed, if it fired
    /// meanwhile (the owner then files it again). The owner's reset to a later deadline.
    pub(crate) fn set_deadline_nanos(&self, deadline: u64) -> bool {
        let deadline = deadline.min(FIRED - 1);
        // SeqCst: against `fire_if_due`'s exchange, so that a reset and a firing never both win.
        self.deadline.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| (old != FIRED).then_some(deadline)).is_ok()
    }

    /// Fires it if its deadline is at or before `now`: its waker, taken (the driver, under the
    /// wheel's lock); `None` if it is not due (a reset moved it later meanwhile).
    pub(crate) fn fire_if_due(&self, now: u64) -> Option<Option<Waker>> {
        // SeqCst: see `set_deadline_nanos`.
        let due = self.deadline.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| (old <= now).then_some(FIRED));
        due.is_ok().then(|| lock(&self.waker).take())
    }

    /// Stores `waker` to be woken when it fires (the owner's poll), unless it is the one there.
    pub(crate) fn set_waker(&self, waker: &Waker) {
        let stale = {
            let mut slot = lock(&self.waker);
            match &*slot {
                Some(stored) if stored.will_wake(waker) => None,
                _ => slot.replace(waker.clone()),
            }
        };
        drop(stale);
    }
}
