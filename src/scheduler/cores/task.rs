//! What the scheduler queues: a task's metadata in async-task's header ([`TaskMeta`]: its
//! identity and, for a private pool's task, its pool), and crew's [`Runnable`], async-task's
//! `Runnable` with one duty added: a task whose end must wait until no `Runnable` of it exists
//! (a borrowing scope's task, `scope/task.rs`) hears that its `Runnable` is gone right after
//! each run and each drop.
//!
//! Invariants:
//! - Every `Runnable` crew makes passes through [`Runnable::new`] (the schedule functions wrap
//!   async-task's at once), and leaves only through [`run`](Runnable::run), a drop, or
//!   [`into_raw`](Runnable::into_raw) (only into a core's LIFO slot, `lifo.rs`, whose every way
//!   out, its halves' drops included, gives it back through [`Runnable::new`]). So async-task's
//!   raw `Runnable` is seen only by the schedule functions, which wrap it at once, and inside
//!   `lifo.rs`. So a run or a drop of a task's
//!   `Runnable` anywhere (a worker's run, a queue emptied at shutdown, an injector dropped with
//!   its pool, a schedule function that finds its pool closed) is followed by
//!   [`DeferredEnd::runnable_gone`] for a task that has one.
//! - The hook is called after async-task's `run` or drop returned, in a frame that holds nothing
//!   of the task but the hook's own `Arc` (cloned from the metadata before, since the task may be
//!   freed by then). A run that unwinds (crew's tasks never do: their polls are caught) still
//!   calls it, from a guard.
//! - A task without a deferred end (every task but a scoped one) pays one load and a branch on
//!   its metadata's out-of-line pointer, which its poll reads anyway.
//!
//! # The metadata: a task's `TaskMeta`, in async-task's header
//!
//! Every task's allocation starts with async-task's header: its state word (8 bytes), the
//! awaiter's `Option<Waker>` (16), its vtable pointer (8), crew's metadata, and async-task's
//! panic flag (1, padded to 8); the schedule function and the future follow. The metadata is
//! laid out once, here, for what the next features add; `identity/info.rs` and this file assert each
//! part's size when the crate compiles (64-bit targets):
//!
//! | part | bytes | who pays |
//! |---|---|---|
//! | `id`: [`TaskId`](crate::identity::TaskId), a `NonZeroU64` | 8 | every task |
//! | `location`: `&'static Location` of the spawn | 8 | every task |
//! | `extra`: `Option<Arc<Extra>>`, what only some tasks have (a name, the dump's record) | 8 | every task the pointer; the allocation only named tasks and tasks of a pool with the dump on |
//! | `pool`: `Option<sync::Arc<Shared>>`, a private pool's task's pool | 8 | every task the word; a private pool's tasks the reference, taken at spawn as its schedule function's was |
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
//! - **A local (`!Send`) task's owner**: its thread's home (`scheduler/cores/local.rs`), captured by
//!   the local task's schedule function (8 bytes after the header, one reference count per
//!   wake), so paid by local tasks only; their metadata's `pool` is `None`.

use std::fmt;

use crate::identity::{DeferredEnd, TaskInfo};
use crate::sync;
use std::sync::Arc;

/// async-task's metadata: the task's identity and, for a private pool's task, its pool `P`
/// (the scheduler's `Shared`: `shared.rs` names the types it queues; see
/// "The metadata" in the module docs). Not `Clone`: copies of the identity (the dump's, the reports') take
/// the [`TaskInfo`] alone, so that none keeps a pool alive.
pub(crate) struct TaskMeta<P> {
    info: TaskInfo,
    /// The private pool the task belongs to, which its schedule function reaches through this
    /// (it captures nothing); `None` on the global pool, whose schedule function names it, and
    /// on the blocking pool.
    pool: Option<sync::Arc<P>>,
}

// `TaskMeta`'s size (see "The metadata" in the module docs).
#[cfg(all(target_pointer_width = "64", not(loom)))]
const _: () = assert!(std::mem::size_of::<TaskMeta<()>>() == 32);

impl<P> std::fmt::Debug for TaskMeta<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The identity only: the pool's state is not the task's to print.
        self.info.fmt(f)
    }
}

impl<P> TaskMeta<P> {
    /// The metadata of the task `info`, of the private pool `pool` if any.
    pub(crate) fn new(info: TaskInfo, pool: Option<sync::Arc<P>>) -> TaskMeta<P> {
        TaskMeta { info, pool }
    }

    /// This metadata, whose task tells `end` once its `Runnable` is gone ([`Runnable`]).
    pub(crate) fn with_deferred_end(self, end: Arc<dyn DeferredEnd>) -> TaskMeta<P> {
        TaskMeta { info: self.info.with_deferred_end(end), pool: self.pool }
    }

    /// The task's identity.
    #[inline]
    pub(crate) fn info(&self) -> &TaskInfo {
        &self.info
    }

    /// The private pool the task belongs to, if any.
    #[inline]
    pub(crate) fn pool(&self) -> Option<&sync::Arc<P>> {
        self.pool.as_ref()
    }
}

/// async-task's `Runnable` of a crew task.
pub(crate) type RawRunnable<P> = async_task::Runnable<TaskMeta<P>>;

/// A crew task's `Runnable` (see the module docs). `None` only once run or converted.
pub(crate) struct Runnable<P>(Option<RawRunnable<P>>);

impl<P> Runnable<P> {
    /// Wraps async-task's `Runnable`, as every schedule function does first.
    #[inline(always)]
    pub(crate) fn new(raw: RawRunnable<P>) -> Runnable<P> {
        Runnable(Some(raw))
    }

    #[inline(always)]
    fn raw(&self) -> &RawRunnable<P> {
        match &self.0 {
            Some(raw) => raw,
            None => unreachable!("a Runnable is consumed by value"),
        }
    }

    #[inline(always)]
    fn take(&mut self) -> RawRunnable<P> {
        match self.0.take() {
            Some(raw) => raw,
            None => unreachable!("a Runnable is consumed by value"),
        }
    }

    /// The task's metadata.
    #[inline(always)]
    pub(crate) fn metadata(&self) -> &TaskMeta<P> {
        self.raw().metadata()
    }

    /// A waker of the task.
    #[inline]
    pub(crate) fn waker(&self) -> std::task::Waker {
        self.raw().waker()
    }

    /// Polls the task once, as async-task's `run`: true if it woke itself meanwhile.
    #[inline(always)]
    pub(crate) fn run(mut self) -> bool {
        let raw = self.take();
        match raw.metadata().info().deferred_end().cloned() {
            None => raw.run(),
            Some(end) => run_then_tell(raw, end),
        }
    }

    /// Hands the task to its schedule function, as async-task's `schedule`.
    #[inline]
    pub(crate) fn schedule(mut self) {
        self.take().schedule();
    }

    /// async-task's `Runnable`, for the one container that stores it as a pointer (crew-slot's
    /// slot, behind `lifo.rs`'s types), which gives it back through [`Runnable::new`].
    #[inline(always)]
    pub(in crate::scheduler::cores) fn into_raw(mut self) -> RawRunnable<P> {
        self.take()
    }
}

/// `run` for a task with a deferred end, out of the common path.
#[cold]
#[inline(never)]
fn run_then_tell<P>(raw: RawRunnable<P>, end: Arc<dyn DeferredEnd>) -> bool {
    let _tell = Tell(end);
    raw.run()
}

/// Tells its end that the `Runnable` is gone, when dropped: after the run or the drop
/// returned, or while unwinding from it.
struct Tell(Arc<dyn DeferredEnd>);

impl Drop for Tell {
    fn drop(&mut self) {
        self.0.runnable_gone();
    }
}

impl<P> Drop for Runnable<P> {
    #[inline]
    fn drop(&mut self) {
        if let Some(raw) = self.0.take() {
            match raw.metadata().info().deferred_end().cloned() {
                None => drop(raw),
                Some(end) => drop_then_tell(raw, end),
            }
        }
    }
}

/// A drop of a task with a deferred end, out of the common path.
#[cold]
#[inline(never)]
fn drop_then_tell<P>(raw: RawRunnable<P>, end: Arc<dyn DeferredEnd>) {
    let _tell = Tell(end);
    drop(raw);
}

impl<P> fmt::Debug for Runnable<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(raw) => raw.fmt(f),
            None => f.write_str("Runnable(consumed)"),
        }
    }
}
