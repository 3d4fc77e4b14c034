//! Running one task: the guard around its run, and the unit of work a paused pool's run holds
//! (`clock.rs`), given back once the run is over or while the task blocks its thread.
//!
//! Invariants:
//! - `HELD` names the clock whose unit this thread's current run holds; a run nested in it (a
//!   local task run by `block_on` inside the task) saves and puts back the outer one.
//! - A task that blocks its thread waiting for something gives its unit back for as long as it
//!   waits, and takes one again before its poll goes on: otherwise the clock could never move
//!   while it waits, and a wait on one of the pool's timers would never end. Never before the
//!   user's code it runs first, which is still the task's work (the clock must not move between
//!   the task's run and that code):
//!   - [`crew::block_on`](crate::block_on()) (and `Pool::block_on`) of a future that counts as
//!     the same pool's work hands the unit to the future's first poll ([`block_while_held`]):
//!     not given back and taken again, so the clock cannot move in between; the unit ends with
//!     that poll, and the thread blocks from then on. A future counted on another pool's clock,
//!     or on none, has the unit given back first.
//!   - `crew::scope` gives it back only once its closure has returned, just before it waits for
//!     the scope's tasks ([`release_while_blocked`]); a `block_on` inside the closure hands it
//!     over as above, and takes it back when it returns.
//!   - `crew::block_in_place` never gives it back: its closure counts as the task's work, as a
//!     pool's own blocking job does.
//! - The last unit's end may fire timers: it runs with the thread's core set aside
//!   (`context::without_core`), so their tasks go to the injector in firing order.

use std::cell::Cell;

use crate::clock::{ClockRef, PausedClock};
use crate::scheduler::cores::context;
use crate::scheduler::cores::shared::Runnable;
use crate::sync::const_thread_local;

const_thread_local! {
    static HELD: Cell<Option<ClockRef>> = Cell::new(None);
}

/// Runs one task, whose poll the loop recorded (`Core::begin_poll`). A panic is already caught
/// inside the task; this guard only keeps the worker alive should `run` unwind anyway (it never
/// does for crew's own tasks). A paused pool's task gives back the unit of work its schedule
/// took (`clock.rs`) once the run, its wakes of others included, is over.
#[inline]
pub(in crate::scheduler) fn run_task(runnable: Runnable) {
    match runnable.metadata().info().paused_clock().cloned() {
        None => run_caught(runnable),
        Some(clock) => run_paused(runnable, clock),
    }
}

#[inline(always)]
fn run_caught(runnable: Runnable) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runnable.run())) {
        crate::policy::drop_payload(payload);
    }
}

/// [`run_task`] of a paused pool's task, out of the common path.
#[cold]
#[inline(never)]
fn run_paused(runnable: Runnable, clock: ClockRef) {
    let outer = HELD.with(|held| held.replace(Some(clock)));
    run_caught(runnable);
    if let Some(clock) = HELD.with(|held| held.replace(outer)) {
        give_back(&clock);
    }
}

/// Gives back the unit the run on this thread holds, if it holds one, until the guard drops:
/// for a task that waits with its thread blocked (see the module docs). Call it after the core
/// is handed off.
pub(crate) fn release_while_blocked() -> Released {
    let clock = HELD.try_with(Cell::take).ok().flatten();
    if let Some(clock) = &clock {
        give_back(clock);
    }
    Released(clock)
}

/// For a `block_on` whose future counts as work of `counted_on`'s pool, if any: the unit the
/// run on this thread holds, if it holds one, is handed to the future's first poll when it is
/// `counted_on`'s (`handed` is true, and the caller must make that poll the unit's end: the
/// clock's `CountPolls::with_unit`), else given back. Either way the guard takes one again when
/// it drops (see the module docs). Call it after the core is handed off.
pub(crate) fn block_while_held(counted_on: Option<&ClockRef>) -> Blocked {
    let clock = HELD.try_with(Cell::take).ok().flatten();
    let handed = match (&clock, counted_on) {
        (Some(held), Some(counted)) if std::sync::Arc::ptr_eq(held, counted) => true,
        (Some(held), _) => {
            give_back(held);
            false
        }
        (None, _) => false,
    };
    Blocked { _released: Released(clock), handed }
}

/// What [`block_while_held`] did with the run's unit.
#[derive(Debug)]
pub(crate) struct Blocked {
    /// Takes a unit back when dropped.
    _released: Released,
    /// The unit went to the future's first poll.
    pub(crate) handed: bool,
}

/// Takes the unit back when dropped (see [`release_while_blocked`]).
#[derive(Debug)]
pub(crate) struct Released(Option<ClockRef>);

impl Drop for Released {
    fn drop(&mut self) {
        if let Some(clock) = self.0.take() {
            clock.begin_work();
            let _ = HELD.try_with(|held| held.set(Some(clock)));
        }
    }
}

fn give_back(clock: &PausedClock) {
    context::without_core(|| clock.end_work());
}
