//! What a task tells when it ends ([`OnTaskEnd`]): a pool's registry entry, its counters, a
//! set, a thread's home of local tasks, the blocking pool.
//!
//! Invariants:
//! - A task tells its `OnTaskEnd` exactly once, when its future is dropped, finished or not
//!   (`spawning/build.rs`'s `TaskFuture`), however that happens.
//! - An implementation never unwinds: it runs inside async-task's abort-on-unwind guard.

use super::info::SetLabel;
use super::trace::Kind;

/// What a task carries to tell its owner (a pool's registry or counters, the blocking pool)
/// that it ended: its future was dropped, finished or not (async-task drops a finished task's
/// future as soon as it returned).
pub(crate) trait OnTaskEnd: Send + 'static {
    /// What kind of work these tasks are, for their `tracing` span.
    const KIND: Kind = Kind::Task;

    /// The task ended. Called once, from the task's `Drop`, on whatever thread drops it.
    fn task_ended(&mut self);

    /// The set the task is spawned into, for the task dump and slow-poll reports: a pool that
    /// keeps either writes it into the task's identity (`spawning/pool.rs`).
    fn set_label(&self) -> Option<&SetLabel> {
        None
    }
}

/// Nothing to tell.
impl OnTaskEnd for () {
    fn task_ended(&mut self) {}
}

/// Something to tell, or nothing.
impl<E: OnTaskEnd> OnTaskEnd for Option<E> {
    fn task_ended(&mut self) {
        if let Some(end) = self {
            end.task_ended();
        }
    }

    fn set_label(&self) -> Option<&SetLabel> {
        self.as_ref().and_then(E::set_label)
    }
}

/// Both, in order.
impl<A: OnTaskEnd, B: OnTaskEnd> OnTaskEnd for (A, B) {
    const KIND: Kind = B::KIND;

    fn task_ended(&mut self) {
        self.0.task_ended();
        self.1.task_ended();
    }

    fn set_label(&self) -> Option<&SetLabel> {
        self.0.set_label().or_else(|| self.1.set_label())
    }
}
