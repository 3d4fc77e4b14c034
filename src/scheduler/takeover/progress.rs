//! A core's progress word: how many polls its owner began, whether one is running now, and
//! whether the monitor reported it as slow or took the core over. The one sign of life that the
//! watcher (`watch.rs`) and the monitor (`monitor.rs`) both read, so that a worker stuck inside
//! one poll is recognised the same way by both.
//!
//! Invariants:
//! - Two atomics. The *word* is the owner's alone: polls begun, and whether one runs now, written
//!   with plain stores. The *flags* hold the monitor's marks on the poll running now
//!   ([`REPORTED`], [`TAKEN`]) and its [`REQUEST`] while it checks that the poll still runs; the
//!   owner only clears them.
//! - The owner ends a poll with a store to the word, the light half of the asymmetric fence
//!   (crew-slot's `asymmetric`, `slot/src/asymmetric.rs`: a compiler fence where `membarrier`
//!   is offered) and a load of the flags: no locked instruction while the monitor has nothing
//!   on the core.
//! - The monitor marks a poll it saw in the word in four steps: it sets `REQUEST` (a
//!   compare-exchange from the flags it saw), runs the fence's heavy half, re-reads the word, and
//!   settles with a compare-exchange from its request to its mark (the poll still runs) or back
//!   (it ended). The fence pair makes at least one of two things true: the re-read sees the
//!   poll's end, or the owner's load after that end sees the request (or what replaced it).
//! - An owner that finds flags clears them with a compare-exchange, which races the monitor's
//!   settling one: exactly one of them wins. So a mark lands only on a poll still running when
//!   the monitor looked after its barrier, and the owner sees it at that poll's end: a poll that
//!   ends after the monitor's `TAKEN` sees it, and its thread gives the core up; a poll that ends
//!   before leaves no mark, and the core stays with its owner. A core is never driven by two
//!   threads, and a takeover never misses its owner's leaving.
//! - `REPORTED` and `REQUEST` are cleared at the end of the poll they were set in; `TAKEN` stays
//!   until the core given up is [`Progress::reset`].
//! - The owner never reads the clock for this: the monitor does, at each of its samples.

use crate::sync::{asymmetric, AtomicUsize, Deadline, Ordering};

/// Set while the owner is inside a poll (in the word).
const IN_POLL: usize = 1;
/// Set by the monitor on the current poll once it reported it as slow (in the flags).
const REPORTED: usize = 1 << 1;
/// Set by the monitor on the current poll when it hands the core to another thread (in the
/// flags).
const TAKEN: usize = 1 << 2;
/// Set by the monitor while it checks that the poll it saw still runs (in the flags only; never
/// in a snapshot).
const REQUEST: usize = 1 << 3;
/// The marks a snapshot carries besides the word.
const MARKS: usize = REPORTED | TAKEN;
/// One poll begun (in the word).
const ONE_POLL: usize = 1 << 3;

/// One term of the watcher role (`watch.rs`): when it ends, and each core's progress when it
/// began. A worker's `Core` holds it while the worker watches.
#[derive(Debug)]
pub(in crate::scheduler) struct Watch {
    /// When the watcher wakes itself to look again.
    pub(in crate::scheduler) deadline: Deadline,
    /// Each core's progress when the term began.
    pub(in crate::scheduler) progress: Box<[ProgressSnapshot]>,
}

/// A value of a core's progress: its word, and the marks in its flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::scheduler) struct ProgressSnapshot(usize);

impl ProgressSnapshot {
    /// True while the owner was inside a poll.
    pub(in crate::scheduler) fn in_poll(self) -> bool {
        self.0 & IN_POLL != 0
    }

    /// True if the monitor reported this poll as slow.
    #[cfg(test)]
    pub(in crate::scheduler) fn reported(self) -> bool {
        self.0 & REPORTED != 0
    }

    /// True if the monitor took the core over during this poll.
    pub(in crate::scheduler) fn taken(self) -> bool {
        self.0 & TAKEN != 0
    }

    /// The number of polls the owner began (wrapping at 2^61).
    pub(in crate::scheduler) fn polls(self) -> u64 {
        (self.0 / ONE_POLL) as u64
    }

    /// True if `self` and `other` are the same poll (or the same pause between polls): no poll
    /// began or ended in between. Flags do not count.
    pub(in crate::scheduler) fn same_as(self, other: ProgressSnapshot) -> bool {
        self.word() == other.word()
    }

    fn word(self) -> usize {
        self.0 & !MARKS
    }

    fn flags(self) -> usize {
        self.0 & MARKS
    }
}

/// A core's progress word and flags (see the module docs).
#[derive(Debug, Default)]
pub(in crate::scheduler) struct Progress {
    word: AtomicUsize,
    flags: AtomicUsize,
}

impl Progress {
    /// The current value.
    pub(in crate::scheduler) fn load(&self) -> ProgressSnapshot {
        // Acquire: pairs with `begin_poll`'s Release (the poll's record), and the word before
        // the flags: flags cleared at a poll's end are seen cleared with the next poll's word.
        // Otherwise a sample for heuristics (is the owner stuck?): marks are decided by the
        // compare-exchanges in `mark`, never by a load.
        let word = self.word.load(Ordering::Acquire);
        ProgressSnapshot(word | (self.flags.load(Ordering::Acquire) & MARKS))
    }

    /// How many polls the owner began since its poll number `polls`, as its word says (a turn
    /// of local tasks begins polls without the core's count, `local_turn.rs`). Called by the
    /// owner.
    pub(in crate::scheduler) fn polls_since(&self, polls: usize) -> usize {
        // Relaxed: the owner reads its own last store. The word wraps at 2^61 polls.
        (self.word.load(Ordering::Relaxed) / ONE_POLL).wrapping_sub(polls) & (usize::MAX / ONE_POLL)
    }

    /// Called by the owner right before its poll number `polls` (counted by the owner).
    #[inline]
    pub(in crate::scheduler) fn begin_poll(&self, polls: usize) {
        // Release: the monitor's Acquire load of an in-poll value then sees what the owner
        // recorded of the poll before (`Remote::record_poll`), and the flags it cleared.
        self.word.store(polls.wrapping_mul(ONE_POLL) | IN_POLL, Ordering::Release);
    }

    /// Called by the owner right after its poll number `polls`: `Some` of the marks the monitor
    /// set during it (reported, taken), `None` without one (the common case, decided by one load).
    #[inline]
    pub(in crate::scheduler) fn end_poll(&self, polls: usize) -> Option<ProgressSnapshot> {
        let ended = polls.wrapping_mul(ONE_POLL);
        // Release: as `begin_poll`'s. The store, the light half and the load are the owner's
        // side of the fence pair (see the module docs).
        self.word.store(ended, Ordering::Release);
        if !crate::sync::planted_bug!("end_poll_without_fence") {
            asymmetric::light();
        }
        // Acquire: a mark seen here was set with the monitor's report or takeover done before.
        let flags = self.flags.load(Ordering::Acquire);
        if flags == 0 {
            return None;
        }
        self.clear_flags(ended, flags)
    }

    /// The owner's end of a poll that found flags: clears them (a request, a report) unless the
    /// core was taken, and returns the marks.
    #[cold]
    #[inline(never)]
    fn clear_flags(&self, ended: usize, mut flags: usize) -> Option<ProgressSnapshot> {
        let marked = |flags: usize| Some(ProgressSnapshot(ended | (flags & MARKS)));
        loop {
            if flags & TAKEN != 0 {
                return marked(flags);
            }
            // AcqRel: Acquire as the load above; the monitor's settling compare-exchange reads
            // what this one wrote.
            match self.flags.compare_exchange(flags, 0, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) if flags & REPORTED != 0 => return marked(flags),
                Ok(_) => return None,
                Err(0) => return None,
                Err(now) => flags = now,
            }
        }
    }

    /// The monitor marks the poll it saw as `seen` as reported. False if that poll is over (or
    /// its flags changed: the monitor looks again).
    pub(in crate::scheduler) fn report(&self, seen: ProgressSnapshot) -> bool {
        self.mark(seen, REPORTED)
    }

    /// The monitor takes the core over during the poll it saw as `seen`. False if that poll is
    /// over (or its flags changed): then the owner still has its core.
    pub(in crate::scheduler) fn take(&self, seen: ProgressSnapshot) -> bool {
        self.mark(seen, TAKEN)
    }

    fn mark(&self, seen: ProgressSnapshot, flag: usize) -> bool {
        if !seen.in_poll() || seen.taken() {
            return false;
        }
        let (before, requested) = (seen.flags(), seen.flags() | REQUEST);
        // SeqCst: the monitor's side of the fence pair is this store, the heavy half, and the
        // re-read below.
        if self.flags.compare_exchange(before, requested, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return false;
        }
        // A heavy half that failed ordered nothing: the mark falls back, as for a poll that ended.
        let fenced = asymmetric::heavy();
        let still = if !fenced {
            false
        } else if crate::sync::planted_bug!("takeover_without_exchange") && flag == TAKEN {
            // The mark lands even if the poll it was meant for has ended.
            true
        } else {
            self.word.load(Ordering::SeqCst) == seen.word()
        };
        let settled = if still { before | flag } else { before };
        // SeqCst: races the owner's clearing compare-exchange; fails if the owner cleared the
        // request (its poll ended), and then there is nothing to undo.
        self.flags.compare_exchange(requested, settled, Ordering::SeqCst, Ordering::SeqCst).is_ok() && still
    }

    /// Clears the flags of a core given up after a takeover (its owner's count `polls`), before
    /// it is handed out again.
    pub(in crate::scheduler) fn reset(&self, polls: usize) {
        self.word.store(polls.wrapping_mul(ONE_POLL), Ordering::SeqCst);
        self.flags.store(0, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use super::*;

    /// The mode the owners run in now (the racing test prepares membarrier mode first).
    fn mode() -> &'static str {
        if asymmetric::is_membarrier() {
            "membarrier"
        } else {
            "fences"
        }
    }

    #[test]
    fn a_failed_heavy_half_makes_the_mark_fall_back_instead_of_panicking() {
        asymmetric::prepare();
        let progress = Progress::default();
        progress.begin_poll(1);
        let seen = progress.load();
        // In fence mode a heavy half cannot fail, and the switch does nothing. Every barrier
        // fails until reset (other tests' monitors meanwhile only see their marks fall back).
        asymmetric::fail_next_barriers(usize::MAX);
        let landed = progress.take(seen);
        asymmetric::fail_next_barriers(0);
        assert_eq!(landed, !asymmetric::is_membarrier(), "a failed barrier: no mark ({})", mode());
        if !landed {
            assert!(!progress.load().taken() && progress.load().same_as(seen), "nothing left behind");
            assert!(progress.take(progress.load()), "the next look marks it");
        }
        assert!(progress.end_poll(1).expect("marked").taken());
    }

    #[test]
    fn a_takeover_lands_only_on_the_poll_it_saw() {
        let progress = Progress::default();
        assert!(!progress.take(progress.load()), "no poll running");
        progress.begin_poll(1);
        let seen = progress.load();
        assert!(seen.in_poll());
        assert!(progress.report(seen));
        assert!(!progress.take(seen), "the flags changed (reported): the monitor must look again");
        let seen = progress.load();
        assert!(seen.reported() && seen.same_as(progress.load()));
        assert!(progress.take(seen));
        assert!(!progress.take(progress.load()), "taken once");
        let ended = progress.end_poll(1).expect("marked");
        assert!(ended.taken() && ended.reported());
        progress.reset(1);
        progress.begin_poll(2);
        let stale = seen;
        assert!(!progress.take(stale), "a later poll is not the one the monitor saw");
        assert_eq!(progress.end_poll(2), None);
        assert!(!stale.same_as(progress.load()));
    }

    #[test]
    fn a_report_is_seen_at_its_polls_end_and_cleared() {
        let progress = Progress::default();
        progress.begin_poll(1);
        assert!(progress.report(progress.load()));
        let ended = progress.end_poll(1).expect("reported");
        assert!(ended.reported() && !ended.taken());
        progress.begin_poll(2);
        assert!(!progress.load().reported(), "cleared at the end of the poll it was set in");
        assert_eq!(progress.end_poll(2), None);
    }

    #[test]
    fn a_mark_on_an_ended_poll_fails_and_leaves_nothing() {
        let progress = Progress::default();
        progress.begin_poll(1);
        let seen = progress.load();
        assert_eq!(progress.end_poll(1), None);
        assert!(!progress.take(seen) && !progress.report(seen));
        progress.begin_poll(2);
        assert_eq!(progress.end_poll(2), None, "no flag left over for the next poll");
    }

    /// An owner ending polls as fast as it can, a monitor marking what it sees: every mark the
    /// monitor made is the one the owner finds, at the end of the poll the monitor saw, and no
    /// other poll ends marked. In membarrier mode where the kernel offers it (so the pairing is
    /// run for real), in fence mode under miri.
    #[test]
    fn racing_marks_land_exactly_on_the_poll_they_saw() {
        asymmetric::prepare();
        // Fewer and shorter under miri, which interprets every step.
        let (rounds, long) = if cfg!(miri) { (2, 2_000) } else { (20, 100_000) };
        for round in 0..rounds {
            let progress = Arc::new(Progress::default());
            let stop = Arc::new(AtomicBool::new(false));
            let owner = std::thread::spawn({
                let (progress, stop) = (progress.clone(), stop.clone());
                move || {
                    let mut marked = Vec::new();
                    let mut polls = 0;
                    while !stop.load(Ordering::Relaxed) {
                        polls += 1;
                        progress.begin_poll(polls);
                        // Mostly short polls, and now and then one long enough to span
                        // the monitor's whole mark (a syscall in membarrier mode).
                        let spins = if polls % 256 == 0 { long } else { polls % 64 };
                        for _ in 0..spins {
                            std::hint::spin_loop();
                        }
                        if let Some(seen) = progress.end_poll(polls) {
                            marked.push((polls as u64, seen.reported(), seen.taken()));
                            if seen.taken() {
                                // A taken core's owner stops driving it.
                                break;
                            }
                        }
                    }
                    marked
                }
            });
            let mut made = Vec::new();
            // Until a take lands (the owner's long polls make sure one can); the deadline
            // only turns a hang into a failure.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            for attempt in 0.. {
                assert!(std::time::Instant::now() < deadline, "{}: no take landed", mode());
                let seen = progress.load();
                if !seen.in_poll() || seen.taken() {
                    continue;
                }
                let take = attempt % 4 == 3 || round % 2 == 1 && attempt > 100;
                if take && progress.take(seen) {
                    made.push((seen.polls(), seen.reported(), true));
                    break;
                } else if !take && !seen.reported() && progress.report(seen) {
                    made.push((seen.polls(), true, false));
                }
            }
            stop.store(true, Ordering::Relaxed);
            let marked = owner.join().unwrap();
            // A report followed by a take on the same poll ends as one marked poll.
            let mut expected: Vec<(u64, bool, bool)> = Vec::new();
            for (polls, reported, taken) in made {
                match expected.last_mut() {
                    Some(last) if last.0 == polls => *last = (polls, last.1 || reported, taken),
                    _ => expected.push((polls, reported, taken)),
                }
            }
            assert_eq!(marked, expected, "{}, round {round}", mode());
            assert!(expected.last().is_some_and(|mark| mark.2), "each round ends with a take");
        }
    }
}
