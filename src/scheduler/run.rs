//! The body of a worker thread: its loop, from the first task to shutdown, hand-off or takeover.
//!
//! Invariants:
//! - A worker thread runs its core's loop until the pool shuts down (then it retires the core,
//!   dropping its queued tasks with the thread's context cleared, so that whatever their drops
//!   schedule goes to the injector), until its core is handed to another thread (`block_on` on
//!   this thread), or until a poll ends and finds the core taken over by the monitor (then it
//!   gives the core up: its queued tasks go to the injector, the core becomes a spare). In the
//!   last two cases it runs no more loop and exits once its current poll returns.
//! - Every poll is bracketed by the core's progress word (`progress.rs`): begun right before,
//!   ended right after, by the thread that owns the core.
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
    while let Some(Some((index, runnable))) =
        context::with_core(|_, core| core.next_task(shared).map(|runnable| (core.index, runnable)))
    {
        if !run_task(shared, index, runnable) {
            return;
        }
    }
}

/// Runs one task on core `index`, recording the poll in the core's progress word (and, with a
/// slow-poll hook, its task). Returns whether this thread still runs the core's loop: false if
/// the core went to another thread during the poll (`block_on` inside it) or was taken over.
pub(super) fn run_task(shared: &Shared, index: usize, runnable: Runnable) -> bool {
    let remote = &shared.remotes[index];
    if shared.records_polls() {
        remote.record_poll(runnable.metadata());
    }
    remote.progress.begin_poll();
    // A panic is already caught inside the task; this only keeps the worker alive should `run`
    // unwind anyway (it never does for crew's own tasks).
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| runnable.run())) {
        drop_payload(payload);
    }
    // `None`: the core was handed to a fresh thread during the poll, which ended the record.
    let ended = context::with_core(|_, core| {
        let seen = remote.progress.end_poll();
        core.taken_over = seen.taken();
        seen
    });
    let Some(seen) = ended else { return false };
    if seen.reported() || seen.taken() {
        shared.report_returned(index);
    }
    !seen.taken()
}
