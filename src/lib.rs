//! crew: a global, work-stealing thread-pool executor for async Rust, built on
//! [async-task](https://docs.rs/async-task).
//!
//! [`spawn`] hands a future to the global pool from any thread (to a private [`Pool`] when
//! called inside one: its tasks, or [`Pool::block_on`]); [`block_on`](fn@block_on) drives a future on
//! the calling thread; [`yield_now`](fn@yield_now) lets other tasks run. Each task is one async-task
//! allocation whose [`JoinHandle`] is typed by a panic policy: [`Propagate`] (the default: the
//! awaiter re-panics with the original payload), [`Catch`] (the awaiter gets
//! `Result<T, JoinError>`), or [`Ignore`] (the pool swallows the panic). No panic ever kills a
//! worker.
//!
//! # How it runs
//!
//! Every worker owns a FIFO deque (crossbeam-deque) and a LIFO slot for the task it woke last;
//! tasks scheduled from outside the pool go to a shared injector. An idle worker takes a batch
//! from the injector or steals half of a random victim's deque (at most 32 tasks a steal), and
//! parks on an event-listener when there is nothing to do, under a protocol that never loses a
//! wakeup.
//!
//! ```
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//!
//! let ran = Arc::new(AtomicUsize::new(0));
//! // A task on the global pool fans out 100 children: spawned on a worker, they go to that
//! // worker's own LIFO slot and deque; idle workers steal half of the deque at a time (at most 32).
//! let parent = {
//!     let ran = ran.clone();
//!     crew::spawn(async move {
//!         let children: Vec<_> = (0..100)
//!             .map(|_| {
//!                 let ran = ran.clone();
//!                 crew::spawn(async move { ran.fetch_add(1, Ordering::Relaxed); })
//!             })
//!             .collect();
//!         for child in children {
//!             child.await;
//!         }
//!     })
//! };
//! crew::block_on(parent);
//! assert_eq!(ran.load(Ordering::Relaxed), 100);
//!
//! // Panic policies, chosen per task:
//! let caught = crew::block_on(crew::spawn_with(crew::Catch, async { panic!("boom") }));
//! assert_eq!(caught.unwrap_err().panic_message(), Some("boom"));
//! ```
//!
//! # Timers, sockets and blocking work
//!
//! crew is a complete runtime for services: [`time`] (sleep, timeout, interval), [`net`] (TCP,
//! UDP, Unix sockets) and [`io::AsyncFd`] wait on crew's own I/O driver (on mio), which idle
//! workers turn while they park, with no thread of its own; [`spawn_blocking`] runs blocking
//! closures on a separate, bounded pool that shrinks when idle.
//!
//! ```
//! use std::time::Duration;
//!
//! let answer = crew::block_on(crew::spawn(async {
//!     let file_len = crew::spawn_blocking(|| std::fs::read("Cargo.toml").map(|b| b.len()));
//!     crew::time::sleep(Duration::from_millis(1)).await;
//!     crew::time::timeout(Duration::from_secs(10), file_len).await
//! }));
//! assert!(answer.unwrap().unwrap() > 0);
//! ```
//!
//! # Blocking inside a poll
//!
//! A task that blocks its thread inside a poll holds up only itself: when a worker has been in
//! one poll for [`Builder::takeover_after`] (10 ms by default) while tasks wait behind it, the
//! pool's monitor hands that worker's queues to a new thread ([`Builder::takeover`]). Code that
//! knows it will block can say so with [`block_in_place`](fn@block_in_place); [`Builder::on_slow_poll`] reports slow
//! polls and takeovers, naming the task ([`task::Builder`] names it; every spawn records its
//! caller's location).
//!
//! ```
//! let pool = crew::Pool::builder().workers(1).build().unwrap();
//! let (tx, rx) = std::sync::mpsc::channel::<()>();
//! // Blocks its worker until the task queued behind it has run: without the takeover, never.
//! let blocked = pool.spawn(async move { rx.recv().unwrap() });
//! let behind = pool.spawn(async move { tx.send(()).unwrap() });
//! crew::block_on(behind);
//! crew::block_on(blocked);
//! ```
//!
//! # Seeing inside the pool
//!
//! [`metrics`](fn@metrics) (the global pool) and [`Pool::metrics`] return a [`Metrics`] snapshot, always
//! available and cheap enough to take every second in production: per worker, polls, spawns,
//! steals, LIFO runs, parks and wakes, busy time and queue depths; for the pool, live tasks, the
//! injector and the blocking pool. With [`Builder::task_dump`] on, [`dump`](fn@dump) and [`Pool::dump`]
//! list every live task with what it is doing and for how long. With the `tracing` feature, each
//! task's polls run inside a `tracing` span naming the task (id, name, spawn location); with the
//! `console` feature, tokio-console shows crew's tasks live (`docs/tracing-and-console.md`).
//!
//! ```
//! let pool = crew::Pool::builder().workers(2).build().unwrap();
//! crew::block_on(pool.spawn(async {}));
//! let metrics = pool.metrics();
//! assert_eq!((metrics.spawned_outside, metrics.live_tasks), (1, 0));
//! assert!(metrics.total.polls >= 1);
//! ```
//!
//! # Configuration
//!
//! The global pool starts on the first [`spawn`] with `CREW_WORKERS` workers (a whole number in
//! `1..=1024`, decimal digits only, no spaces; a bad value is an error naming it), else
//! `num_cpus::get()`. Configure it explicitly with [`Builder::build_global`] before that, or run
//! private [`Pool`]s.

// One module alone may use `unsafe`: `scope/unchecked.rs`, the borrowing tasks' allocation.
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub, rust_2018_idioms)]

// Layers, top to bottom. A module imports from its own layer and the layers below it, never
// above (`scheduler/loom_hook.rs`, the loom models' window, names `Pool`); no file is in an
// import loop with a file of another folder; the one loop left, of three files, is the
// scheduler's core, named in `scheduler/cores/mod.rs` (CI runs `scripts/import-loops.rs`, which
// fails on any other loop and on files over 650 lines).
//
// - Features: `http`, `signal`, `process`, `fs`, `interop` (hyper, futures).
// - I/O: `time`, `net` (none of them, nor `blocking`, in loom builds: `outside_loom!`).
// - Front, what users call: `target` (where a spawn goes; `crew::spawn`), `global` (the global
//   pool), `pool` (`Pool`), `local` (`spawn_local`, `spawn_pinned`), `spawner`, `block_on`,
//   `block_in_place`, `blocking` (the blocking pool), `yield_now`, `task` (the public face of
//   tasks: the task `Builder` and re-exports), `join_set` (sets and groups), `scope`,
//   `__private` (what the macros call).
// - Tasks: `spawning` (how a task is made: its future's wrapper, its allocation, a pool's
//   spawn) and `handle` (a task's join and abort handles, and what they receive).
// - The scheduler: `scheduler/` (its own table in `scheduler/mod.rs`), including what its queues
//   hold (`scheduler/cores/task.rs`: a task's metadata and crew's `Runnable`).
// - Observation, as data: `metrics`, `dump`, `report`; and `config` (the `Builder`'s values).
// - Identity: `identity` (a task's id, name, location, trace span and record, and what it tells
//   at its end), `policy` (panic policies and payloads), `escape` (names as printed); none names
//   a pool, a handle or a queue. `clock` (a paused pool's virtual clock and its count of work
//   in flight), which the scheduler feeds and `time` reads.
// - At the bottom: `sync` (every concurrency primitive, and the loom switch: `sync/mod.rs`) and
//   `tokio_context` (the `tokio` feature's runtime context, which every crew thread enters).

/// Each item inside it, built outside loom only (`#[cfg(not(loom))]` on each): the one switch
/// for the modules that loom builds leave out.
macro_rules! outside_loom {
    ($($item:item)*) => {
        $( #[cfg(not(loom))] $item )*
    };
}

/// What the expansions of `#[crew::main]` and `#[crew::test]` call: not a public interface.
#[doc(hidden)]
#[path = "macro_support.rs"]
pub mod __private;
mod block_in_place;
mod block_on;
mod clock;
pub mod config;
mod driver;
mod dump;
mod escape;
mod global;
mod handle;
#[cfg(feature = "http")]
pub mod http;
mod identity;
mod interop;
mod join_set;
mod local;
mod metrics;
mod policy;
mod pool;
mod report;
mod scheduler;
mod scope;
#[cfg(all(feature = "signal", unix))]
pub mod signal;
mod spawner;
mod spawning;
mod sync;
mod target;
pub mod task;
#[cfg(feature = "tokio")]
mod tokio_context;
mod yield_now;

// The I/O layer, left out of loom builds: mio, futures-lite and concurrent-queue do not
// build under `--cfg loom` (`sync/mod.rs`).
outside_loom! {
    mod blocking;
    pub mod net;
    pub mod time;
    pub use blocking::{spawn_blocking, spawn_blocking_with};

    pub mod io;
    #[cfg(feature = "fs")]
    pub mod fs;
    #[cfg(all(feature = "process", unix))]
    pub mod process;
}

/// Internals exposed to `loom-tests/` only: built under `--cfg loom`, never in normal builds.
#[cfg(loom)]
#[doc(hidden)]
pub use scheduler::loom_hook as __loom;

pub use block_in_place::block_in_place;
pub use block_on::block_on;
pub use config::{BuildError, Builder, UnhandledPanic};
pub use dump::{QueuedIn, TaskDump, TaskSnapshot, TaskState};
pub use global::{dump, metrics};
pub use handle::JoinHandle;
pub use local::{spawn_local, spawn_pinned};
pub use metrics::{BlockingMetrics, Metrics, WorkerMetrics};
pub use policy::{
    Catch, Ignore, JoinError, Policy, Propagate, ABORTED_MESSAGE, CANCELLED_MESSAGE, IGNORED_PANIC_MESSAGE,
};
pub use pool::Pool;
pub use report::{SlowPoll, SlowPollKind};
pub use scope::{scope, Scope, ScopedJoinHandle, SCOPED_TASK_PANICKED_MESSAGE};
// The old name of `SCOPED_TASK_PANICKED_MESSAGE`, deprecated (its own attribute says so).
#[allow(deprecated)]
pub use scope::SCOPED_TASK_PANICKED;
pub use spawner::Spawner;
pub use target::{spawn, spawn_with};

/// hyper 1.x on crew (the `hyper` feature): its executor, timer and I/O traits.
#[cfg(feature = "hyper")]
pub use interop::hyper;

#[cfg(feature = "macros")]
pub use crew_macros::{main, test};
pub use yield_now::{yield_now, YieldNow};

/// README.md's code blocks, compiled and run as doc tests: every block there stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The code blocks of every guide in `docs/` but `http.md`, compiled and run as doc tests
/// (`cargo test --doc GuideDoctests`). `interop.md`, `tracing-and-console.md` and
/// `performance-notes.md` hold no Rust block today; they are here so that one added later runs.
#[cfg(doctest)]
#[doc = include_str!("../docs/coming-from-tokio.md")]
#[doc = include_str!("../docs/macros.md")]
#[doc = include_str!("../docs/metrics.md")]
#[doc = include_str!("../docs/takeover.md")]
#[doc = include_str!("../docs/task-dump.md")]
#[doc = include_str!("../docs/timers-net-blocking.md")]
#[doc = include_str!("../docs/tokio.md")]
#[doc = include_str!("../docs/join-set.md")]
#[doc = include_str!("../docs/scope.md")]
#[doc = include_str!("../docs/testing.md")]
#[doc = include_str!("../docs/local-tasks.md")]
#[doc = include_str!("../docs/interop.md")]
#[doc = include_str!("../docs/tracing-and-console.md")]
#[doc = include_str!("../docs/performance-notes.md")]
struct GuideDoctests;

/// `docs/http.md`'s code blocks, which need the `http` and `signal` features
/// (`cargo test --features http,signal --doc HttpGuideDoctests`). Its axum and tonic blocks are
/// `ignore`d: crew's own build has neither crate (`ecosystem/tests/` runs that code).
#[cfg(all(doctest, unix, feature = "http", feature = "signal"))]
#[doc = include_str!("../docs/http.md")]
struct HttpGuideDoctests;

/// `docs/fs-process.md`'s code blocks, which need the `fs` and `process` features
/// (`cargo test --features fs,process --doc FsProcessGuideDoctests`).
#[cfg(all(doctest, unix, feature = "fs", feature = "process"))]
#[doc = include_str!("../docs/fs-process.md")]
struct FsProcessGuideDoctests;
