//! How a task is made: the user's future wrapped so that it never unwinds into a worker
//! (`build.rs`'s `TaskFuture`), handed to async-task for one allocation, a `Runnable` for the
//! scheduler and a typed handle for the caller; and a pool's spawn (`pool.rs`), which registers
//! the task and schedules its first run.
//!
//! Invariants:
//! - Every task of every pool, the blocking pool's jobs and `crew::scope`'s borrowing tasks are
//!   built here (`crew::scope`'s through its own [`Build`], `scope/unchecked.rs`).
//! - This layer sits above the scheduler and the handles: it names both, neither names it (the
//!   scheduler's local spawn reaches it through the `MakeLocal` trait it defines).
//!
//! Files: `pool.rs` imports `build.rs`.

mod build;
mod pool;

// `TaskFuture`: also the blocking pool's and `crew::scope`'s.
pub(crate) use build::{Build, LocalHandles, Spawnable, TaskFuture};
