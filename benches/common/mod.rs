//! Shared by the criterion benches (`spawn`, `executor`, `messaging`; `blocking` and `stuck`
//! use the executors only), one concept a file, re-exported here under the names the bench
//! files use (`common::workers`, `common::Exec`, `common::main`, ...):
//!
//! - `executors.rs`: the worker count, the [`Exec`] trait implemented by crew, tokio's
//!   multi-thread runtime and async-executor (each started with the same number of worker
//!   threads), and [`with_executor`], which runs a job on one of them; the `CREW_BENCH_*`
//!   variables that change crew's set-up.
//! - `harness.rs`: a [`Workload`] as one criterion group with members `crew`, `tokio` and
//!   `async_executor`, and the bench files' [`main`], which runs either those groups or, with
//!   `CREW_BENCH_MODES=<workload>`, the modes probe of one workload.
//! - `cache_line.rs`: the probe of the machine's cross-core hand-off (one cache line's round
//!   trip between two cores), printed around each group and each modes round.
//! - `modes.rs`: the modes probe, one workload's rounds on each executor in turn.
//! - `workload.rs`: the [`Workload`] trait both of them run.
//! - `local_pair.rs`: `local_ping_pong`'s pair of local tasks (`local.rs`, `round_trips.rs`).
//!
//! Each bench file compiles this module on its own, and some use only part of it (those allow
//! `dead_code` on their `mod common;`): so the re-exports allow `unused_imports`.

mod cache_line;
mod executors;
mod harness;
// Used by `local.rs` and `round_trips.rs` only.
#[allow(dead_code)]
mod local_pair;
mod modes;
mod workload;

#[allow(unused_imports)]
pub use cache_line::{cache_line_round_trip_ns, cache_line_round_trips};
#[allow(unused_imports)]
pub use executors::{
    start_async_executor, start_crew, start_tokio, with_executor, workers, AsyncExecutor, AsyncExecutorOwner, Crew,
    CrewOwner, Exec, ExecJob, Tokio, TokioJoin, YieldNow, EXECUTORS,
};
#[allow(unused_imports)]
pub use harness::{bench, group, main, member, stall, Bench};
#[allow(unused_imports)]
pub use local_pair::{local_pair, LocalChannel};
#[allow(unused_imports)]
pub use workload::Workload;
