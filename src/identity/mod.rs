//! A task's identity, which knows no pool: [`TaskId`] and [`TaskInfo`] (id, name, spawn
//! location, and the out-of-line part only some tasks have: a set's label, the dump's record, a
//! scoped task's deferred end), its trace span (`trace.rs`), its activity record (`record.rs`),
//! and what it tells when it ends ([`OnTaskEnd`], `end.rs`). The public face is `crew::task`
//! (`task/mod.rs`), which re-exports the two public types.
//!
//! Invariants:
//! - Every task, on any pool or the blocking pool, carries a [`TaskInfo`] in async-task's
//!   metadata (`scheduler/cores/task.rs`), in its single allocation: a process-unique id, the name
//!   given to the builder if any, and the caller's location of the public function that spawned
//!   it.
//! - Nothing here names a pool, a handle or a queue: every layer above builds on it.

pub(crate) mod current;
mod end;
pub(crate) mod info;
mod record;
mod trace;

pub use info::{TaskId, TaskInfo};
pub(crate) use info::{TaskLabel, TaskNameRef};
pub(crate) use record::Activity;
// `Kind` is the blocking pool's too, which loom builds leave out.
#[cfg(not(loom))]
pub(crate) use trace::Kind;
pub(crate) use trace::Trace;

pub(crate) use end::OnTaskEnd;
pub(crate) use info::DeferredEnd;
