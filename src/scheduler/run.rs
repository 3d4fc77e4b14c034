//! The body of a worker thread: its loop, from the first task to shutdown, hand-off or takeover.
//!
//! Invariants:
//! - A worker thread runs its core's loop until the pool shuts down (then it retires the core,
//!   dropping its queued tasks with the thread's context cleared, so that whatever their drops
//!   schedule goes to the injector), until its core is handed to another thread (`block_on` on
//!   this thread), or until a poll ends and finds the core taken over by the monitor (then it
//!   gives the core up: its queued tasks go to the injector, the core becomes a spare). In the
//!   last two cases it runs no more loop and exits once its current poll returns.
//! - Every poll is bracketed in the core's progress word (`progress.rs`) by the thread that
//!   owns the core: begun as the loop hands out the task, ended as the loop comes back for the
//!   next (before it picks, parks or lets the reactor turn), in the same borrow of the context.
//!   A `block_on` inside the poll, which hands the core to another thread, ends it there.
//! - Nothing a task does kills a worker: a panic is caught inside the task (`task/spawn.rs`),
//!   and [`run_task`] catches anything that would still unwind.

use std::panic::{self, AssertUnwindSafe};

use super::context;
use super::shared::Shared;
use super::worker::Core;
use crate::policy::drop_payload;
use crate::sync::{Arc, Ordering};
use crate::task::Runnable;

/// The body of a worker thread: runs `core`'s loop until shutdown, hand-off or takeover.
pub(super) fn run(shared: Arc<Shared>, core: Box<Core>) {
    // A no-op for a core handed over busy (`block_on`).
    shared.counters[core.index].busy.begin(shared.clock.now());
    context::enter(shared.clone(), core);
    if shared.drives_reactor() {
        #[cfg(not(loom))] // async-io does not build under loom, whose configs never drive it
        super::reactor::run_loop(&shared);
    } else {
        blocking_loop(&shared);
    }
    // Dropped with the context cleared, so that anything the tasks' drops schedule goes to the
    // injector. `None`: the core went to another thread.
    if let Some(core) = context::leave() {
        shared.counters[core.index].busy.end(shared.clock.now());
        // Relaxed: read by the monitor's heuristics (is some worker free to take work?) and by
        // loom's checks once the pool is idle.
        shared.slot_states[core.index].active.store(false, Ordering::Relaxed);
        if core.taken_over {
            shared.give_up_core(core);
        } else {
            shared.retire_core(core);
        }
    }
}

/// The worker loop on a thread that blocks to park. Returns at shutdown, once the core went to
/// another thread, or once it was taken over.
fn blocking_loop(shared: &Shared) {
    loop {
        let step = context::with_core(|_, core| match core.finish_poll(shared) {
            Some(flagged) => Err(flagged),
            None => {
                let next = core.next_task(shared);
                if let Some(runnable) = &next {
                    core.begin_poll(shared, runnable);
                }
                Ok(next)
            }
        });
        match step {
            // Shutdown.
            Some(Ok(None)) => return,
            Some(Ok(Some(runnable))) => run_task(runnable),
            Some(Err(flagged)) => {
                shared.report_returned(flagged.index);
                if flagged.taken {
                    return;
                }
            }
            // The core went to another thread (`block_on` in the last task).
            None => return,
        }
    }
}

/// Runs one task, whose poll the loop recorded (`Core::begin_poll`). A panic is already caught
/// inside the task; this guard only keeps the worker alive should `run` unwind anyway (it never
/// does for crew's own tasks).
#[inline]
pub(super) fn run_task(runnable: Runnable) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| runnable.run())) {
        drop_payload(payload);
    }
}
