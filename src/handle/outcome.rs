//! What the handles of a task receive: the task's output as async-task stores it
//! ([`TaskOutput`]), async-task's handle on it ([`Fallible`]), and how it ended ([`outcome`]).
//!
//! Invariants:
//! - A task's output never unwinds out of its `Drop` (async-task drops an output nobody takes
//!   under its abort-on-unwind guard): [`TaskOutput`] catches the panic of a value or payload
//!   whose `Drop` panics.
//! - The join handle and the abort handles (`join.rs`, `abort.rs`) read an output only through
//!   [`outcome`], so both say the same of one ending.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::task::{Wake, Waker};

use async_task::FallibleTask;

use crate::policy::{drop_payload, Outcome, Payload};
use crate::scheduler::TaskMeta;

/// What a task's future resolves to inside async-task: the value, or the panic payload
/// (`None` once the `Ignore` policy has dropped it), behind a guard whose `Drop` never unwinds.
///
/// async-task drops an output that nobody takes (a detached task's, or that of a task cancelled
/// while it ran) under its abort-on-unwind guard, so a value or payload whose `Drop` panics must
/// not reach it: the guard catches that panic (the panic hook has reported it).
pub(crate) struct TaskOutput<T>(Option<Result<T, Option<Payload>>>);

impl<T> TaskOutput<T> {
    pub(crate) fn new(output: Result<T, Option<Payload>>) -> TaskOutput<T> {
        TaskOutput(Some(output))
    }

    /// The output, for the awaiter, who drops it as any value it owns.
    pub(crate) fn into_inner(mut self) -> Result<T, Option<Payload>> {
        self.0.take().expect("a task's output is taken once")
    }
}

impl<T> Drop for TaskOutput<T> {
    fn drop(&mut self) {
        if let Some(output) = self.0.take() {
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(output))) {
                drop_payload(payload);
            }
        }
    }
}

/// async-task's handle on a task, as crew's tasks carry it.
pub(crate) type Fallible<T> = FallibleTask<TaskOutput<T>, TaskMeta>;

/// How the task ended, from what async-task gave back (`None`: dropped before finishing).
pub(crate) fn outcome<T>(output: Option<TaskOutput<T>>) -> Outcome<T> {
    match output.map(TaskOutput::into_inner) {
        Some(Ok(value)) => Outcome::Finished(value),
        Some(Err(Some(payload))) => Outcome::Panicked(super::watched::unwatch(payload)),
        Some(Err(None)) => Outcome::Swallowed,
        None => Outcome::Cancelled,
    }
}

/// A waker that does nothing, for a poll whose wake nobody needs: the aborter's own poll only
/// closes the task, and a set's poll of a finished member's handle is ready at once.
pub(crate) fn noop_waker() -> Waker {
    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    Waker::from(Arc::new(Noop))
}
