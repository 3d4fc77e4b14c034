//! A pool's cores: the shared state, each worker's own core and its thread's context, the
//! queues, the pick order, stealing, parking, a worker thread's body, and shutdown.
//!
//! Invariants: those of `scheduler/mod.rs`, whose table lists these files. One import loop of
//! three files is the core of the scheduler: `shared.rs` (a pool's state holds its cores'
//! shared parts and schedules onto the current thread's core), `worker.rs` (a core's own state,
//! which pushes through the pool's state) and `context.rs` (the thread-local that holds a
//! thread's core and its home of local tasks, and hands the core off). Every other file here
//! is below them (`local.rs`, `task.rs`, generic over the pool, name none of them) or above.

pub(in crate::scheduler) mod context;
pub(in crate::scheduler) mod counters;
pub(in crate::scheduler) mod lifo;
pub(in crate::scheduler) mod local;
pub(in crate::scheduler) mod park;
pub(in crate::scheduler) mod pick;
pub(in crate::scheduler) mod pinned;
pub(in crate::scheduler) mod rand;
pub(in crate::scheduler) mod registry;
pub(in crate::scheduler) mod run;
pub(in crate::scheduler) mod schedule;
pub(in crate::scheduler) mod search;
pub(in crate::scheduler) mod seeded;
pub(in crate::scheduler) mod shared;
pub(in crate::scheduler) mod shutdown;
pub(in crate::scheduler) mod task;
pub(in crate::scheduler) mod task_run;
pub(in crate::scheduler) mod unhandled;
pub(in crate::scheduler) mod worker;
