//! [`id`] and [`try_id`]: the id of the task running the caller, as tokio's `task::id` and
//! `task::try_id`.
//!
//! Invariants: both read `identity/current.rs`, set by each poll of a task (ordinary, local, or
//! a blocking job) and each drop of one dropped unfinished; nothing else sets it, so a
//! `block_on`'s own future, which is no task, has none.

use crate::identity::{current, TaskId};

/// The id of the task whose poll is running this code: an ordinary task's, a local task's, or
/// a [`spawn_blocking`](crate::spawn_blocking) job's (also while a future dropped unfinished
/// is being dropped). The same id its [`JoinHandle::id`](crate::JoinHandle::id), the task
/// dump and slow-poll reports give.
///
/// # Panics
///
/// Outside every task: on a thread of no pool, or in the future a `block_on` drives itself
/// (which is no task). [`try_id`] returns `None` there instead.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn(async { crew::task::id() });
/// let id = handle.id();
/// assert_eq!(crew::block_on(handle), id);
/// ```
#[track_caller]
pub fn id() -> TaskId {
    match current::current() {
        Some(id) => id,
        None => panic!(
            "crew::task::id called outside a task: it is only known inside a task's poll (a spawned or local task, or \
             a spawn_blocking job), not in a block_on's own future or on a thread of no pool; use crew::task::try_id"
        ),
    }
}

/// The id of the task whose poll is running this code, as [`id`], or `None` outside every task.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::task::try_id(), None, "main is no task");
/// let id = crew::block_on(crew::spawn(async { crew::task::try_id() }));
/// assert!(id.is_some());
/// ```
pub fn try_id() -> Option<TaskId> {
    current::current()
}
