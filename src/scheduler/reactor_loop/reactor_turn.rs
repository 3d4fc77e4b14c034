//! When a worker that drives the reactor lets it turn: periodically, and before running its
//! yielded tasks.
//!
//! Invariants:
//! - A worker in the reactor lets it turn at a fairness tick (every `GLOBAL_QUEUE_INTERVAL`
//!   *ticks*, `worker.rs`) if its last turn, of either kind, was [`REACTOR_TURN_GAP`] ago or
//!   more. Ticks, not polls: a task run from the LIFO slot continues its waker's tick, so a
//!   chain of wakes between two tasks (message passing) turns the reactor once per up to
//!   `(MAX_LIFO_POLLS + 1) * GLOBAL_QUEUE_INTERVAL` polls, and a turn of local tasks counts one
//!   tick, so a stream of them turns it once per up to `LOCAL_TURN * GLOBAL_QUEUE_INTERVAL`
//!   polls, as tokio polls its driver every `event_interval` ticks and counts a `LocalSet`'s
//!   poll (up to 61 local tasks) as one. The gap, because a turn costs a syscall: on crew's
//!   driver one `epoll_wait` when the driver is free (it was five through async-io, where a turn
//!   at every tick took 24% of a yield storm's time, `docs/performance-notes.md`, "What the
//!   periodic turn costs"). So a pool kept busy handles I/O and timer events within about
//!   250 µs plus one tick.
//! - Before a worker in the reactor runs its deferred tasks for want of other work, it lets the
//!   reactor turn once without blocking, at most once per [`REACTOR_TURN_GAP`], so that tasks
//!   woken by I/O and timers run before tasks that merely yielded (tokio polls its driver before
//!   waking its deferred tasks likewise). Without that, workers kept busy by yielding tasks would
//!   leave I/O and timer wakes to the turn every `GLOBAL_QUEUE_INTERVAL` tasks.
//! - A worker outside the driver loop (a seeded pool's, and every loom build's) never asks.

// loom builds have no driver loop (mio does not build under loom): nothing gives the turn.
#![cfg_attr(loom, allow(dead_code))]

use std::time::{Duration, Instant};

/// A worker gives the reactor a turn (periodic, or before its deferred tasks) at most once per
/// this long. A turn costs a syscall (an `epoll_wait` with no timeout), so a turn at
/// every yield of a lone task that yields fast slows it down, and one every 61 ticks slows
/// message passing (measured: `docs/performance-notes.md`, "Yielding and the reactor"). Tasks
/// that compute for longer than this between yields get a turn before every one of their runs.
pub(in crate::scheduler) const REACTOR_TURN_GAP: Duration = Duration::from_micros(250);

/// Where a core stands on the reactor's turn before its deferred tasks.
#[derive(Debug)]
pub(in crate::scheduler) struct ReactorTurn {
    step: Step,
    /// The fairness tick came round since the last periodic turn (never set outside the reactor).
    periodic: bool,
    /// When the turn was last given (`None`: never).
    pub(in crate::scheduler) last: Option<Instant>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// This loop does not run inside the reactor.
    Off,
    /// No turn asked for since the deferred tasks last ran.
    Idle,
    /// The pick stopped short of the deferred tasks: the loop is to give the reactor a turn.
    Wanted,
    /// The turn was given: the deferred tasks run at the next look.
    Given,
}

impl ReactorTurn {
    /// For a core whose loop runs inside the reactor if `in_reactor`.
    pub(in crate::scheduler) fn new(in_reactor: bool) -> ReactorTurn {
        ReactorTurn { step: if in_reactor { Step::Idle } else { Step::Off }, periodic: false, last: None }
    }

    /// Called at each fairness tick (every `GLOBAL_QUEUE_INTERVAL` ticks): a worker in the
    /// reactor lets it turn once the task it picks at this tick has run, unless it gave the
    /// reactor a turn less than [`REACTOR_TURN_GAP`] ago.
    #[inline]
    pub(in crate::scheduler) fn interval_reached(&mut self) {
        self.periodic = self.step != Step::Off && self.due();
    }

    /// True once if the periodic turn is due, or at once if `backstop` (the loop ran its most
    /// tasks between two turns): the loop then gives it (now), and the time is kept.
    #[inline]
    pub(in crate::scheduler) fn take_periodic(&mut self, backstop: bool) -> bool {
        let turn = std::mem::replace(&mut self.periodic, false) || backstop;
        if turn {
            self.last = Some(Instant::now());
        }
        turn
    }

    /// The worker parks inside the reactor, which then turns anyway: no periodic turn is due.
    pub(in crate::scheduler) fn parked(&mut self) {
        self.periodic = false;
    }

    /// Called when the worker is about to run its deferred tasks (`deferred_filled`: it may have
    /// some): true if it should stop short and let the reactor turn first.
    pub(in crate::scheduler) fn wanted_before_deferred(&mut self, deferred_filled: bool) -> bool {
        match self.step {
            Step::Idle if deferred_filled && self.due() => {
                self.step = Step::Wanted;
                true
            }
            Step::Given => {
                self.step = Step::Idle;
                self.last = Some(Instant::now());
                false
            }
            _ => false,
        }
    }

    /// True while a turn was asked for and not yet given.
    pub(in crate::scheduler) fn is_wanted(&self) -> bool {
        self.step == Step::Wanted
    }

    /// The loop gives the asked-for turn (it returns `Pending` having woken itself). False if
    /// none was asked for.
    pub(in crate::scheduler) fn give(&mut self) -> bool {
        if self.step != Step::Wanted {
            return false;
        }
        self.step = Step::Given;
        true
    }

    /// True if this worker gave the reactor no turn (periodic or before its deferred tasks) for
    /// [`REACTOR_TURN_GAP`].
    fn due(&self) -> bool {
        self.last.map_or(true, |last| last.elapsed() >= REACTOR_TURN_GAP)
    }
}
