//! Tasks: their identity ([`TaskId`], [`TaskInfo`]: id, name, spawn location), the task
//! [`Builder`] that names them, and the spawning machinery every pool shares.
//!
//! Invariants:
//! - Every task, on any pool or the blocking pool, carries a [`TaskInfo`] as async-task's
//!   metadata, in its single allocation: a process-unique id, the name given to the builder if
//!   any, and the caller's location of the public function that spawned it.
//! - Spawning never looks up a pool: the caller passes the pool's state, its schedule function
//!   and, for a private pool, the registry shard hint (`spawn.rs`).

mod builder;
mod info;
mod record;
mod spawn;
mod trace;

pub use builder::Builder;
pub use info::{TaskId, TaskInfo};
pub(crate) use record::Doing;
// `Kind` is the blocking pool's too, which loom builds leave out.
#[cfg(not(loom))]
pub(crate) use trace::Kind;
pub(crate) use trace::Trace;
// `TaskFuture` is also the blocking pool's, which loom builds leave out.
#[cfg(not(loom))]
pub(crate) use spawn::TaskFuture;
pub(crate) use spawn::{schedule_on, spawn_registered, spawn_unregistered, Home, TaskOutput};

/// What crew's queues hold: async-task's handle to run a task, with the task's [`TaskInfo`].
pub(crate) type Runnable = async_task::Runnable<TaskInfo>;
