//! A task's handles: the typed [`JoinHandle`] that awaits it, the [`AbortHandle`]s that cancel
//! it from anywhere, and what both receive of its end.
//!
//! Invariants:
//! - One task, one output: async-task hands it to whichever handle holds its `Task` (the join
//!   handle, or the `Aborter` the join handle and its abort handles share once an abort
//!   handle exists), and both read it through [`outcome`] (`outcome.rs`).
//! - Nothing here depends on crew's thread-locals or pools: the handles are plain futures and
//!   values, usable from any executor or thread.
//!
//! Files, each importing only those after it: `join.rs` (the join handle), `abort.rs` (the abort
//! handle and the aborter), `outcome.rs` (the output, async-task's handle type, the no-op waker).

mod abort;
mod join;
mod outcome;
mod watched;

pub use abort::AbortHandle;
pub use join::JoinHandle;

pub(crate) use abort::Abort;
pub(crate) use outcome::{noop_waker, TaskOutput};
pub(crate) use watched::{unhandled_note, watch};
