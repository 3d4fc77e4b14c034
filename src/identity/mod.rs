//! Tasks inside crew: their identity ([`TaskId`], [`TaskInfo`]: id, name, spawn location), the
//! metadata async-task carries for them, crew's `Runnable`, and the spawning machinery every
//! pool shares. The public face is `crew::task` (`task/mod.rs`), which re-exports the identity's
//! two public types beside the handles and sets of the layers above.
//!
//! Invariants:
//! - Every task, on any pool or the blocking pool, carries a [`TaskInfo`] as async-task's
//!   metadata, in its single allocation: a process-unique id, the name given to the builder if
//!   any, and the caller's location of the public function that spawned it.
//! - This module calls no pool: spawning code builds the `Runnable`/handle pair from what a pool
//!   gives it, and the pool schedules it (`spawn.rs`). It names one scheduler type, as data: a
//!   private pool's task carries a reference to the pool's shared state in its metadata.

//!
//! # The metadata: a task's `TaskMeta`, in async-task's header
//!
//! Every task's allocation starts with async-task's header: its state word (8 bytes), the
//! awaiter's `Option<Waker>` (16), its vtable pointer (8), crew's metadata, and async-task's
//! panic flag (1, padded to 8); the schedule function and the future follow. The metadata is
//! laid out once, here, for what the next features add; `info.rs` and this file assert each
//! part's size when the crate compiles (64-bit targets):
//!
//! | part | bytes | who pays |
//! |---|---|---|
//! | `id`: [`TaskId`], a `NonZeroU64` | 8 | every task |
//! | `location`: `&'static Location` of the spawn | 8 | every task |
//! | `extra`: `Option<Arc<Extra>>`, what only some tasks have (a name, the dump's record) | 8 | every task the pointer; the allocation only named tasks and tasks of a pool with the dump on |
//! | `pool`: `Option<Arc<Shared>>`, a private pool's task's pool | 8 | every task the word; a private pool's tasks the reference, taken at spawn as its schedule function's was |
//!
//! The first three are the task's identity, [`TaskInfo`] (24 bytes, `Clone`, what the dump and
//! the reports copy); with the pool, 32 bytes: the header is 72 bytes. A private pool's schedule
//! function captures nothing since the pool moved in (its `Arc` was the 8 bytes after the
//! header), so that its tasks' allocations kept their size and each wake lost a reference
//! count round trip on the task; a global pool's task pays the word (its allocation grows by 8
//! bytes, or not at all where the allocator's size class absorbs it). The rule for later
//! parts: everything that only some tasks have goes out of line, behind `extra`.
//! - **A task set's membership**: the set's label out of line, in `Extra`, written only in a
//!   pool that shows it (the dump, slow-poll reports); the set hears of a member's end through
//!   the member's `OnTaskEnd`, in the future's part of the allocation (a pointer to the set
//!   and the id). **Abort state** needs no bit in the task: an abort closes the task through
//!   async-task, via the task the join handle shares with its abort handles (`abort.rs`).
//! - **A local (`!Send`) task's owner**: its thread's home (`scheduler/local.rs`), captured by
//!   the local task's schedule function (8 bytes after the header, one reference count per
//!   wake), so paid by local tasks only; their metadata's `pool` is `None`.

pub(crate) mod info;
mod record;
mod runnable;
mod spawn;
mod trace;

pub use info::{TaskId, TaskInfo};
pub(crate) use record::Activity;
// `Kind` is the blocking pool's too, which loom builds leave out.
#[cfg(not(loom))]
pub(crate) use trace::Kind;
pub(crate) use trace::Trace;
// `TaskFuture`: also the blocking pool's and `crew::scope`'s.
pub(crate) use spawn::TaskFuture;
pub(crate) use spawn::{build_local, refused, Build, OnTaskEnd, Spawnable, TaskOutput};

use crate::scheduler::Shared;
use crate::sync::Arc;

pub(crate) use runnable::{DeferredEnd, RawRunnable, Runnable};

/// async-task's metadata: the task's identity and, for a private pool's task, its pool (see
/// "The metadata" above). Not `Clone`: copies of the identity (the dump's, the reports') take
/// the [`TaskInfo`] alone, so that none keeps a pool alive.
pub(crate) struct TaskMeta {
    info: TaskInfo,
    /// The private pool the task belongs to, which its schedule function reaches through this
    /// (it captures nothing); `None` on the global pool, whose schedule function names it, and
    /// on the blocking pool.
    pool: Option<Arc<Shared>>,
}

// `TaskMeta`'s size (see "The metadata" above).
#[cfg(all(target_pointer_width = "64", not(loom)))]
const _: () = assert!(std::mem::size_of::<TaskMeta>() == 32);

impl std::fmt::Debug for TaskMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The identity only: the pool's state is not the task's to print.
        self.info.fmt(f)
    }
}

impl TaskMeta {
    /// The metadata of the task `info`, of the private pool `pool` if any.
    pub(crate) fn new(info: TaskInfo, pool: Option<Arc<Shared>>) -> TaskMeta {
        TaskMeta { info, pool }
    }

    /// This metadata, whose task tells `end` once its `Runnable` is gone (`runnable.rs`).
    pub(crate) fn with_deferred_end(self, end: std::sync::Arc<dyn DeferredEnd>) -> TaskMeta {
        TaskMeta { info: self.info.with_deferred_end(end), pool: self.pool }
    }

    /// The task's identity.
    #[inline]
    pub(crate) fn info(&self) -> &TaskInfo {
        &self.info
    }

    /// The private pool the task belongs to, if any.
    #[inline]
    pub(crate) fn pool(&self) -> Option<&Arc<Shared>> {
        self.pool.as_ref()
    }
}
