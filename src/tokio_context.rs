//! The `tokio` feature: every thread that polls crew tasks holds a tokio runtime context, so
//! that tokio's own crates (reqwest, tonic, sqlx, hyper-util's client) run inside crew tasks
//! with no wrapper: `tokio::time`, `tokio::net`, `tokio::spawn`, `spawn_blocking`,
//! `block_in_place` and `task_local!` all find a runtime.
//!
//! Invariants:
//! - Which threads: a pool's workers (from their start to their exit, so also the threads that
//!   take over a stuck worker and those that replace a worker blocked in `block_on`) and its
//!   reporter thread enter the pool's handle for their whole life; the blocking pool's threads
//!   and the caller of [`crew::block_on`](fn@crate::block_on) while it blocks (unless it already
//!   has a tokio context) enter the handle of threads that belong to no pool ([`no_pool`]).
//!   The context is entered once per thread (or per `block_on`), never per poll: polls cost
//!   nothing more.
//! - Which runtime: a pool's handle is the one given to
//!   [`Builder::tokio_handle`](crate::Builder::tokio_handle), else crew's own runtime. Threads
//!   of no pool use the global pool's given handle, else crew's own runtime.
//! - crew's own runtime is started lazily, by the first crew thread that needs a context, and
//!   never without the feature: a multi-thread runtime with one worker thread (`crew-tokio`)
//!   and its I/O and time drivers. That thread drives the sockets and timers of tokio's types
//!   used inside crew tasks (a crew task woken by them is scheduled onto its crew pool from
//!   there), and runs what libraries hand to `tokio::spawn`. A multi-thread runtime rather than
//!   a current-thread one: its worker drives the drivers whenever it has nothing to run, with no
//!   thread of crew's blocked in its `block_on`, and `tokio::task::block_in_place` is allowed.
//!   It is never shut down (a process-wide static, as the global pool).
//! - `tokio::spawn` inside a crew task spawns onto the tokio runtime of the thread's context,
//!   not onto crew: a user keeps their own tasks on crew with `crew::spawn` (and hyper's
//!   executor with `crew::hyper::Executor`).

use once_cell::sync::OnceCell;
use tokio::runtime::{Handle, Runtime};

/// crew's own runtime, started by the first thread that needs it.
static OWN: OnceCell<Runtime> = OnceCell::new();

/// The handle the global pool was given ([`Builder::tokio_handle`](crate::Builder::tokio_handle)
/// with `build_global`), for the threads of no pool.
static GLOBAL: OnceCell<Handle> = OnceCell::new();

/// crew's own runtime's handle, starting the runtime if it has not started.
///
/// # Panics
///
/// If the runtime's thread cannot start (the OS refuses a thread).
pub(crate) fn own() -> Handle {
    OWN.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("crew-tokio")
            .enable_all()
            .build()
            .unwrap_or_else(|err| panic!("crew: the `tokio` feature's runtime cannot start: {err}"))
    })
    .handle()
    .clone()
}

/// Records the handle the global pool was given, for the threads of no pool. Called once, when
/// the global pool starts.
pub(crate) fn set_global(handle: &Handle) {
    let _ = GLOBAL.set(handle.clone());
}

/// The handle that threads of no pool enter: the global pool's, else crew's own.
pub(crate) fn no_pool() -> Handle {
    GLOBAL.get().cloned().unwrap_or_else(own)
}

/// Runs `body` inside a tokio context: the thread's own if it has one, else `handle()`'s.
pub(crate) fn within_unless_entered<R>(handle: impl FnOnce() -> Handle, body: impl FnOnce() -> R) -> R {
    if Handle::try_current().is_ok() {
        return body();
    }
    let handle = handle();
    let _entered = handle.enter();
    body()
}
