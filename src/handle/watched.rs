//! A panic payload watched for a pool built with `unhandled_panic(ShutdownPool)`: if nobody
//! takes it (the task was detached, its set dropped, its handle dropped unawaited after its
//! end), its drop notes the panic, which shuts the pool down (`scheduler/cores/unhandled.rs`).
//!
//! Invariants:
//! - Made only on a panic's path (`spawning/build.rs`), for such a pool's tasks: no other task
//!   pays anything.
//! - Every path that takes a task's output unwraps it first ([`unwatch`], in
//!   `outcome.rs`), so an awaiter gets the original payload, and a taken payload notes nothing.
//! - An `Ignore` task's panic is noted at once, where it is caught: nobody ever awaits it.

use std::any::Any;

use crate::identity::TaskLabel;
use crate::policy::{drop_payload, payload_message, Payload};
use crate::scheduler::Shared;
use crate::sync::Arc;

/// The payload, and whom to tell if it is dropped untaken.
struct Watched {
    payload: Option<Payload>,
    pool: Arc<Shared>,
    task: TaskLabel,
}

/// `payload`, of the task `task`, watched for `pool`.
pub(crate) fn watch(payload: Payload, pool: Arc<Shared>, task: TaskLabel) -> Payload {
    Box::new(Watched { payload: Some(payload), pool, task })
}

/// The original payload, if `payload` was watched (taken: nothing is noted).
pub(crate) fn unwatch(payload: Payload) -> Payload {
    match payload.downcast::<Watched>() {
        Ok(mut watched) => watched.payload.take().expect("a watched payload is taken once"),
        Err(payload) => payload,
    }
}

/// The note of task `task`'s panic with `payload`, which no awaiter will see.
pub(crate) fn unhandled_note(task: &TaskLabel, payload: &(dyn Any + Send)) -> String {
    let message = payload_message(payload).unwrap_or("a non-string payload");
    format!(
        "{task} panicked and no awaiter will see it, so the pool shut down \
         (Builder::unhandled_panic(UnhandledPanic::ShutdownPool)): {message}"
    )
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(payload) = self.payload.take() {
            crate::scheduler::note_unhandled_panic(&self.pool, unhandled_note(&self.task, payload.as_ref()));
            drop_payload(payload);
        }
    }
}
