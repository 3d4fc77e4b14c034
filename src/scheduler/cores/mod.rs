//! A pool's cores: the shared state, each worker's own core and its thread's context, the
//! queues, the pick order, stealing, parking, a worker thread's body, and shutdown.
//!
//! Invariants: those of `scheduler/mod.rs`, whose table lists these files. One import loop is
//! left here, of four files: `shared.rs`, `worker.rs`, `context.rs` and `local.rs` (a pool's
//! state holds its cores and their threads' homes of local tasks, whose queues hold the pool's
//! `Runnable`s and whose wakes reach the pool's cores; `scripts/import-loops.allowed`).

pub(in crate::scheduler) mod context;
pub(in crate::scheduler) mod counters;
pub(in crate::scheduler) mod local;
pub(in crate::scheduler) mod park;
pub(in crate::scheduler) mod pick;
pub(in crate::scheduler) mod pinned;
pub(in crate::scheduler) mod rand;
pub(in crate::scheduler) mod registry;
pub(in crate::scheduler) mod run;
pub(in crate::scheduler) mod schedule;
pub(in crate::scheduler) mod search;
pub(in crate::scheduler) mod shared;
pub(in crate::scheduler) mod shutdown;
pub(in crate::scheduler) mod task;
pub(in crate::scheduler) mod worker;
