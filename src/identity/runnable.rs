//! [`Runnable`]: what crew's queues hold, async-task's `Runnable` with one duty added: a task
//! whose end must wait until no `Runnable` of it exists (a borrowing scope's task,
//! `scope/task.rs`) hears that its `Runnable` is gone right after each run and each drop.
//!
//! Invariants:
//! - Every `Runnable` crew makes passes through [`Runnable::new`] (the schedule functions wrap
//!   async-task's at once), and leaves only through [`run`](Runnable::run), a drop, or
//!   [`into_raw`](Runnable::into_raw) (crew-slot's slot, which gives it back through
//!   [`Runnable::new`] before anything else is done with it). So a run or a drop of a task's
//!   `Runnable` anywhere (a worker's run, a queue emptied at shutdown, an injector dropped with
//!   its pool, a schedule function that finds its pool closed) is followed by
//!   [`DeferredEnd::runnable_gone`] for a task that has one.
//! - The hook is called after async-task's `run` or drop returned, in a frame that holds nothing
//!   of the task but the hook's own `Arc` (cloned from the metadata before, since the task may be
//!   freed by then). A run that unwinds (crew's tasks never do: their polls are caught) still
//!   calls it, from a guard.
//! - A task without a deferred end (every task but a scoped one) pays one load and a branch on
//!   its metadata's out-of-line pointer, which its poll reads anyway.

use std::fmt;
use std::sync::Arc;

use super::TaskMeta;

/// async-task's `Runnable` of a crew task.
pub(crate) type RawRunnable = async_task::Runnable<TaskMeta>;

/// What a task whose end waits for its `Runnable` to be gone carries in its identity
/// (`TaskInfo`'s out-of-line part): told after each run and each drop of the task's `Runnable`.
pub(crate) trait DeferredEnd: Send + Sync + 'static {
    /// A `Runnable` of the task was run or dropped, and is gone: if that was the last one (the
    /// task's future was dropped meanwhile), the end may now be delivered.
    fn runnable_gone(&self);
}

/// A crew task's `Runnable` (see the module docs). `None` only once run or converted.
pub(crate) struct Runnable(Option<RawRunnable>);

impl Runnable {
    /// Wraps async-task's `Runnable`, as every schedule function does first.
    #[inline(always)]
    pub(crate) fn new(raw: RawRunnable) -> Runnable {
        Runnable(Some(raw))
    }

    #[inline(always)]
    fn raw(&self) -> &RawRunnable {
        match &self.0 {
            Some(raw) => raw,
            None => unreachable!("a Runnable is consumed by value"),
        }
    }

    #[inline(always)]
    fn take(&mut self) -> RawRunnable {
        match self.0.take() {
            Some(raw) => raw,
            None => unreachable!("a Runnable is consumed by value"),
        }
    }

    /// The task's metadata.
    #[inline(always)]
    pub(crate) fn metadata(&self) -> &TaskMeta {
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

    /// async-task's `Runnable`, for a container that stores it as a pointer (crew-slot's
    /// slot), which gives it back through [`Runnable::new`].
    #[inline(always)]
    pub(crate) fn into_raw(mut self) -> RawRunnable {
        self.take()
    }
}

/// `run` for a task with a deferred end, out of the common path.
#[cold]
#[inline(never)]
fn run_then_tell(raw: RawRunnable, end: Arc<dyn DeferredEnd>) -> bool {
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

impl Drop for Runnable {
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
fn drop_then_tell(raw: RawRunnable, end: Arc<dyn DeferredEnd>) {
    let _tell = Tell(end);
    drop(raw);
}

impl fmt::Debug for Runnable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(raw) => raw.fmt(f),
            None => f.write_str("Runnable(consumed)"),
        }
    }
}
