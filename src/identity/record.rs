//! A task's record for the task dump (`Builder::task_dump`): what it is doing now, where, since
//! when, and how many times it was polled.
//!
//! Invariants:
//! - A record exists only on a pool with the dump on. It lives in the task's identity
//!   (`TaskInfo`, behind the pointer that also holds its name), shared by the task's metadata
//!   (so that whoever holds the task's `Runnable` can update it: the scheduler as it queues it,
//!   the worker as it polls it) and by the pool's registry entry (so that the dump can list it). No lock guards it: every field is a statistic that
//!   any thread may write, and a dump may read a state a little behind.
//! - The state is one word: what (queued, running, waiting for a wake, ended), the core index
//!   it concerns, and when it began, in nanoseconds since the task was spawned. The scheduler
//!   and the worker overwrite it; the end of a poll turns "running" into "waiting" only if no
//!   wake queued the task meanwhile (a compare-exchange), and "ended" is never overwritten.
//! - Reading the clock is the dump's price, paid only with the dump on: once per queueing and
//!   once at each end of a poll.

use std::time::{Duration, Instant};

use crate::sync::{Gauge, SingleWriterCounter};

/// Where a queued task waits, or what the task does: the low bits of a state word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activity {
    /// In the injector.
    Injector,
    /// In core `.0`'s LIFO slot.
    Lifo(usize),
    /// In core `.0`'s deque (or stolen from it since).
    Deque(usize),
    /// In core `.0`'s deferred list (it yielded, or was woken while it ran).
    Deferred(usize),
    /// Being polled by core `.0`'s thread, or, [`Activity::NO_CORE`], by a thread that runs
    /// none (a local task on its own thread).
    Running(usize),
    /// Waiting for a wake.
    Waiting,
    /// Its future was dropped.
    Ended,
    /// A local task, in its thread's own queue; `.0` is the core that thread runs, or
    /// [`Activity::NO_CORE`].
    Local(usize),
}

const KIND_BITS: u32 = 3;
const CORE_BITS: u32 = 13;
const SINCE_SHIFT: u32 = KIND_BITS + CORE_BITS;

impl Activity {
    /// [`Activity::Local`]'s core for a thread that runs none.
    pub(crate) const NO_CORE: usize = (1 << CORE_BITS) - 1;

    fn pack(self, since_ns: u64) -> u64 {
        let (kind, core) = match self {
            Activity::Injector => (0, 0),
            Activity::Lifo(core) => (1, core),
            Activity::Deque(core) => (2, core),
            Activity::Deferred(core) => (3, core),
            Activity::Running(core) => (4, core),
            Activity::Waiting => (5, 0),
            Activity::Ended => (6, 0),
            Activity::Local(core) => (7, core),
        };
        let core = (core as u64).min((1 << CORE_BITS) - 1);
        kind | core << KIND_BITS | since_ns.min(u64::MAX >> SINCE_SHIFT) << SINCE_SHIFT
    }

    fn unpack(word: u64) -> (Activity, u64) {
        let core = ((word >> KIND_BITS) & ((1 << CORE_BITS) - 1)) as usize;
        let doing = match word & ((1 << KIND_BITS) - 1) {
            0 => Activity::Injector,
            1 => Activity::Lifo(core),
            2 => Activity::Deque(core),
            3 => Activity::Deferred(core),
            4 => Activity::Running(core),
            5 => Activity::Waiting,
            6 => Activity::Ended,
            _ => Activity::Local(core),
        };
        (doing, word >> SINCE_SHIFT)
    }
}

/// A task's record (see the module docs).
#[derive(Debug)]
pub(crate) struct TaskRecord {
    spawned: Instant,
    /// Polls begun; written by the thread that polls the task, one at a time.
    polls: SingleWriterCounter,
    state: Gauge,
}

impl TaskRecord {
    /// The record of a task just spawned, about to be queued.
    pub(crate) fn new() -> TaskRecord {
        TaskRecord {
            spawned: Instant::now(),
            polls: SingleWriterCounter::default(),
            state: Gauge::new(Activity::Injector.pack(0)),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.spawned.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// The task was put in a queue (`doing` says which). Out of line: callers check for a
    /// record first, and most pools keep none.
    #[inline(never)]
    pub(crate) fn queued(&self, doing: Activity) {
        let current = self.state.get();
        if Activity::unpack(current).0 != Activity::Ended {
            self.state.replace(current, doing.pack(self.now()));
        }
    }

    /// Core `core`'s thread begins a poll of the task.
    #[inline(never)]
    pub(crate) fn running(&self, core: usize) {
        self.polls.incr();
        let current = self.state.get();
        if Activity::unpack(current).0 != Activity::Ended {
            self.state.replace(current, Activity::Running(core).pack(self.now()));
        }
    }

    /// The poll ended: the task waits for a wake, unless one queued it meanwhile.
    #[inline(never)]
    pub(crate) fn poll_ended(&self) {
        let current = self.state.get();
        if let (Activity::Running(_), _) = Activity::unpack(current) {
            self.state.replace(current, Activity::Waiting.pack(self.now()));
        }
    }

    /// The task's future was dropped.
    pub(crate) fn ended(&self) {
        self.state.set(Activity::Ended.pack(self.now()));
    }

    /// What the task does, for how long it has, its polls and its age, as of now.
    pub(crate) fn read(&self) -> (Activity, Duration, u64, Duration) {
        let age = self.spawned.elapsed();
        let (doing, since) = Activity::unpack(self.state.get());
        let elapsed = age.saturating_sub(Duration::from_nanos(since));
        (doing, elapsed, self.polls.get(), age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_round_trip_through_one_word() {
        for doing in [
            Activity::Injector,
            Activity::Lifo(3),
            Activity::Deque(1023),
            Activity::Deferred(0),
            Activity::Running(2047),
            Activity::Waiting,
            Activity::Ended,
        ] {
            assert_eq!(Activity::unpack(doing.pack(123_456_789)), (doing, 123_456_789));
        }
    }

    #[test]
    fn an_ended_task_stays_ended_and_a_wake_during_a_poll_is_kept() {
        let record = TaskRecord::new();
        record.running(0);
        record.queued(Activity::Deferred(0)); // woken while it ran
        record.poll_ended();
        assert_eq!(record.read().0, Activity::Deferred(0), "the end of the poll keeps the wake");
        record.running(1);
        record.poll_ended();
        assert_eq!(record.read().0, Activity::Waiting);
        assert_eq!(record.read().2, 2, "two polls");
        record.ended();
        record.queued(Activity::Injector);
        record.running(0);
        assert_eq!(record.read().0, Activity::Ended);
    }
}
