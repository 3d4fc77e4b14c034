//! The body of a worker thread: its loop, from the first task to shutdown or hand-off.
//!
//! Invariants:
//! - A worker thread runs its core's loop until the pool shuts down (then it retires the core,
//!   dropping its queued tasks with the thread's context cleared, so that whatever their drops
//!   schedule goes to the injector) or until its core is handed to another thread (`block_on`
//!   on this thread); then it runs no more loop and exits once its current task's poll returns.
//! - Nothing a task does kills a worker: a panic is caught inside the task (`task.rs`), and
//!   [`run_task`] catches anything that would still unwind.

use std::panic::{self, AssertUnwindSafe};

use crate::task::Runnable;

use super::context;
use super::shared::Shared;
use super::worker::Core;
use crate::policy::drop_payload;
use crate::sync::Arc;

/// The body of a worker thread: runs `core`'s loop until shutdown or until the core is handed
/// to another thread.
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
        shared.retire_core(core);
    }
}

/// The worker loop on a thread that blocks to park. Returns at shutdown, or once the core went
/// to another thread.
fn blocking_loop(shared: &Shared) {
    while let Some(Some(runnable)) = context::with_core(|_, core| core.next_task(shared)) {
        run_task(runnable);
    }
}

/// Runs one task. A panic is already caught inside the task; this guard only keeps the worker
/// alive should `run` unwind anyway (it never does for crew's own tasks).
pub(super) fn run_task(runnable: Runnable) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| runnable.run())) {
        drop_payload(payload);
    }
}
