//! A core's progress word: how many polls its owner began, whether one is running now, and
//! whether the monitor reported it as slow or took the core over. The one sign of life that the
//! watcher (`watch.rs`) and the monitor (`monitor.rs`) both read, so that a worker stuck inside
//! one poll is recognised the same way by both.
//!
//! Invariants:
//! - Only the core's owner begins and ends polls; the monitor only sets [`REPORTED`] or
//!   [`TAKEN`], each with a compare-exchange against a value it read *in* a poll, so a flag can
//!   only land on the poll that was running when the monitor looked.
//! - The owner ends a poll with a swap, which returns the flags set during it: a poll that ends
//!   after the monitor's `TAKEN` sees it, and its thread gives the core up; a poll that ends
//!   before makes the monitor's compare-exchange fail, and the core stays with its owner. So a
//!   core is never driven by two threads, and a takeover never misses its owner's leaving.
//! - The owner never reads the clock for this: the monitor does, at each of its samples.

use crate::sync::{AtomicUsize, Ordering};

/// Set while the owner is inside a poll.
const IN_POLL: usize = 1;
/// Set by the monitor on the current poll once it reported it as slow.
const REPORTED: usize = 1 << 1;
/// Set by the monitor on the current poll when it hands the core to another thread.
const TAKEN: usize = 1 << 2;
/// One poll begun.
const ONE_POLL: usize = 1 << 3;

/// A value of a core's progress word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ProgressSnapshot(usize);

impl ProgressSnapshot {
    /// True while the owner was inside a poll.
    pub(super) fn in_poll(self) -> bool {
        self.0 & IN_POLL != 0
    }

    /// True if the monitor reported this poll as slow.
    pub(super) fn reported(self) -> bool {
        self.0 & REPORTED != 0
    }

    /// True if the monitor took the core over during this poll.
    pub(super) fn taken(self) -> bool {
        self.0 & TAKEN != 0
    }

    /// The number of polls the owner began (wrapping at 2^61).
    pub(super) fn polls(self) -> u64 {
        (self.0 / ONE_POLL) as u64
    }

    /// True if `self` and `other` are the same poll (or the same pause between polls): no poll
    /// began or ended in between. Flags do not count.
    pub(super) fn same_as(self, other: ProgressSnapshot) -> bool {
        (self.0 | REPORTED | TAKEN) == (other.0 | REPORTED | TAKEN)
    }
}

/// A core's progress word (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Progress(AtomicUsize);

impl Progress {
    /// The current value.
    pub(super) fn load(&self) -> ProgressSnapshot {
        // Acquire: pairs with `begin_poll`'s Release (the poll's record). Otherwise a sample for
        // heuristics (is the owner stuck?): takeover itself is decided by the compare-exchange
        // in `take`, never by a load.
        ProgressSnapshot(self.0.load(Ordering::Acquire))
    }

    /// Called by the owner right before its poll number `polls` (counted by the owner).
    #[inline]
    pub(super) fn begin_poll(&self, polls: usize) {
        // Release: the monitor's Acquire load of an in-poll value then sees what the owner
        // recorded of the poll before (`Remote::record_poll`). Only the owner stores, between
        // polls, when no flag can be set; the monitor's compare-exchanges order themselves
        // against the owner's swap below.
        self.0.store(polls.wrapping_mul(ONE_POLL) | IN_POLL, Ordering::Release);
    }

    /// Called by the owner right after its poll number `polls`: what the monitor set during it.
    #[inline]
    pub(super) fn end_poll(&self, polls: usize) -> ProgressSnapshot {
        // SeqCst read-modify-write: pairs with `take`'s compare-exchange; exactly one of them
        // comes first (see the module docs).
        ProgressSnapshot(self.0.swap(polls.wrapping_mul(ONE_POLL), Ordering::SeqCst))
    }

    /// The monitor marks the poll it saw as `seen` as reported. False if that poll is over.
    pub(super) fn report(&self, seen: ProgressSnapshot) -> bool {
        self.mark(seen, REPORTED)
    }

    /// The monitor takes the core over during the poll it saw as `seen`. False if that poll is
    /// over: then the owner still has its core.
    pub(super) fn take(&self, seen: ProgressSnapshot) -> bool {
        self.mark(seen, TAKEN)
    }

    fn mark(&self, seen: ProgressSnapshot, flag: usize) -> bool {
        seen.in_poll() && self.0.compare_exchange(seen.0, seen.0 | flag, Ordering::SeqCst, Ordering::SeqCst).is_ok()
    }

    /// Clears the flags of a core given up after a takeover (its owner's count `polls`), before
    /// it is handed out again.
    pub(super) fn reset(&self, polls: usize) {
        self.0.store(polls.wrapping_mul(ONE_POLL), Ordering::SeqCst);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_takeover_lands_only_on_the_poll_it_saw() {
        let progress = Progress::default();
        assert!(!progress.take(progress.load()), "no poll running");
        progress.begin_poll(1);
        let seen = progress.load();
        assert!(seen.in_poll());
        assert!(progress.report(seen));
        assert!(!progress.take(seen), "the word changed (reported): the monitor must look again");
        let seen = progress.load();
        assert!(progress.take(seen));
        let ended = progress.end_poll(1);
        assert!(ended.taken() && ended.reported());
        progress.reset(1);
        progress.begin_poll(2);
        let stale = seen;
        assert!(!progress.take(stale), "a later poll is not the one the monitor saw");
        assert!(!progress.end_poll(2).taken());
        assert!(!stale.same_as(progress.load()));
    }
}
