//! The task whose poll this thread is running: what [`crew::task::id`](crate::task::id) and
//! [`crew::task::try_id`](crate::task::try_id) read.
//!
//! Invariants:
//! - Set by every poll of a task's future and every drop of a future dropped unfinished
//!   (`spawning/build.rs`, for ordinary and local tasks and blocking jobs alike), and put back
//!   as it was when that poll or drop ends, unwinding included: a `block_on` inside a task's
//!   poll that runs another task's poll (a local task) sees that task, then its own again.
//! - A thread's value is `None` outside every task's poll: on a thread of no pool, in a
//!   `block_on`'s own future, in a worker between two runs.
//! - A `const` thread-local: one load and one store each way per poll.

use std::cell::Cell;

use super::TaskId;
use crate::sync::const_thread_local;

const_thread_local! {
    static CURRENT: Cell<Option<TaskId>> = Cell::new(None);
}

/// The task being polled on this thread, if any.
#[inline]
pub(crate) fn current() -> Option<TaskId> {
    CURRENT.try_with(Cell::get).ok().flatten()
}

/// Marks `id` as the task being polled on this thread until the guard drops.
#[inline]
pub(crate) fn enter(id: TaskId) -> Polling {
    Polling(CURRENT.try_with(|current| current.replace(Some(id))).ok().flatten())
}

/// What [`enter`] returns: puts back the task polled before, when dropped.
#[derive(Debug)]
#[must_use]
pub(crate) struct Polling(Option<TaskId>);

impl Drop for Polling {
    #[inline]
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|current| current.set(self.0));
    }
}
