//! Running one task: the guard around its run, and the unit of work a paused pool's run holds
//! (`clock.rs`), given back once the run is over or while the task blocks its thread.
//!
//! Invariants:
//! - `HELD` names the clock whose unit this thread's current run holds; a run nested in it (a
//!   local task run by `block_on` inside the task) saves and puts back the outer one.
//! - A task that blocks its thread ([`crew::block_on`](crate::block_on()), `Pool::block_on`,
//!   `crew::scope`, `crew::block_in_place`, after handing its core off) gives its unit back for
//!   as long as it blocks ([`release_while_blocked`]), and takes one again before its poll goes
//!   on: otherwise the clock could never move while it waits, and a wait on one of the pool's
//!   timers would never end.
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
/// for a task that blocks its thread (see the module docs). Call it after the core is handed
/// off.
pub(crate) fn release_while_blocked() -> Released {
    let clock = HELD.try_with(Cell::take).ok().flatten();
    if let Some(clock) = &clock {
        give_back(clock);
    }
    Released(clock)
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
