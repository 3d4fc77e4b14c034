//! Tasks: their identity ([`TaskId`], [`TaskInfo`]: id, name, spawn location), the task
//! [`Builder`] that names them, and the spawning machinery every pool shares.
//!
//! Invariants:
//! - Every task, on any pool or the blocking pool, carries a [`TaskInfo`] as async-task's
//!   metadata, in its single allocation: a process-unique id, the name given to the builder if
//!   any, and the caller's location of the public function that spawned it.
//! - This module knows no pool (nothing here imports the scheduler): spawning code builds the
//!   `Runnable`/handle pair from what a pool gives it, and the pool schedules it (`spawn.rs`).

//!
//! # The metadata: a task's [`TaskInfo`], in async-task's header
//!
//! Every task's allocation starts with async-task's header: its state word (8 bytes), the
//! awaiter's `Option<Waker>` (16), its vtable pointer (8), crew's metadata, and async-task's
//! panic flag (1, padded to 8); the schedule function and the future follow. The metadata is
//! laid out once, here, for what the next features add; `info.rs` asserts each part's size when
//! the crate compiles (64-bit targets):
//!
//! | part | bytes | who pays |
//! |---|---|---|
//! | `id`: [`TaskId`], a `NonZeroU64` | 8 | every task |
//! | `location`: `&'static Location` of the spawn | 8 | every task |
//! | `extra`: `Option<Arc<Extra>>`, what only some tasks have (a name, the dump's record) | 8 | every task the pointer; the allocation only named tasks and tasks of a pool with the dump on |
//!
//! 24 bytes: the header is 64 bytes, one cache line. The rule for later parts: one more word in
//! line at most, and only where it replaces a word after the header, so that a task's
//! allocation does not grow; everything that only some tasks have goes out of line, behind
//! `extra`.
//! - **The pool** (so that a private pool's schedule function captures nothing): the one word
//!   in line, a pointer to the pool's shared state. The schedule function's own `Arc` (the 8
//!   bytes after the header today) goes, so the allocation stays the same size.
//! - **A task set's membership**: the set's label out of line, in `Extra`, written only in a
//!   pool that shows it (the dump, slow-poll reports); the set hears of a member's end through
//!   the member's `OnTaskEnd`, in the future's part of the allocation (a pointer to the set
//!   and the id). **Abort state** needs no bit in the task: an abort closes the task through
//!   async-task, via the task the join handle shares with its abort handles (`abort.rs`).
//! - **A local (`!Send`) task's owner**: out of line too (the owning worker or thread), paid by
//!   local tasks only.

mod builder;
pub(crate) mod info;
mod record;
mod spawn;
mod trace;

pub use crate::abort::AbortHandle;
pub use crate::join_set::{JoinSet, TaskGroup};
pub use builder::Builder;
pub use info::{TaskId, TaskInfo};
pub(crate) use record::Activity;
// `Kind` is the blocking pool's too, which loom builds leave out.
#[cfg(not(loom))]
pub(crate) use trace::Kind;
pub(crate) use trace::Trace;
// `TaskFuture`: also the blocking pool's and `crew::scope`'s.
pub(crate) use spawn::TaskFuture;
pub(crate) use spawn::{refused, Build, OnTaskEnd, Spawnable, TaskOutput};

/// What crew's queues hold: async-task's handle to run a task, with the task's [`TaskInfo`].
pub(crate) type Runnable = async_task::Runnable<TaskInfo>;
