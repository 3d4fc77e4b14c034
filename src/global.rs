//! The global pool behind [`spawn`](fn@crate::spawn) and [`spawn_with`](crate::spawn_with).
//!
//! Invariants:
//! - `spawn` targets the current private pool if the thread has one (its worker, or inside
//!   `Pool::block_on`: `scheduler/cores/context.rs`), else the global pool.
//! - Started at most once per process, lazily by the first spawn that targets it (a `spawn`
//!   off every private pool, a `Spawner::global`'s; sized by `CREW_WORKERS`, else
//!   `num_cpus::get()`), or explicitly by `Builder::build_global` before that. `metrics` and
//!   `dump` never start it: before it runs they give zeroes and an empty dump.
//! - Never dropped: its tasks hold no reference to it, and it keeps a registry of them only
//!   with the task dump on.
//! - A bad `CREW_WORKERS` makes every `spawn` panic with the error naming the variable, the
//!   value and the accepted range, and `build_global` return that error; nothing starts.

use async_task::{ScheduleInfo, WithInfo};
use once_cell::sync::OnceCell;

use crate::config::{BuildError, Builder, Env};
use crate::dump::TaskDump;
use crate::handle::JoinHandle;
use crate::identity::{OnTaskEnd, TaskInfo};
use crate::metrics::Metrics;
use crate::policy::Policy;
use crate::pool::Pool;
use crate::scheduler::{PoolKind, Shared};
use crate::scheduler::{RawRunnable, Runnable};
use crate::spawning::Build;

static GLOBAL: OnceCell<Pool> = OnceCell::new();

/// The global pool's shared state, starting the pool on first use. A pool that cannot start
/// panics at the caller of the public function that got here (`#[track_caller]` down to here).
#[track_caller]
pub(crate) fn shared() -> &'static Shared {
    match GLOBAL.get_or_try_init(|| start(Builder::new())) {
        Ok(pool) => pool.shared(),
        Err(err) => panic!("crew: the global pool cannot start: {err}"),
    }
}

fn start(builder: Builder) -> Result<Pool, BuildError> {
    let env = Env::from_process();
    // Checked in loom builds too, which leave the blocking pool out.
    #[cfg_attr(loom, allow(unused_variables))]
    let (max_blocking_threads, keep_alive) = builder.blocking_limits(&env)?;
    let config = builder.check(env)?;
    // The process's blocking pool takes the global pool's limits.
    #[cfg(not(loom))]
    crate::blocking::set_limits(max_blocking_threads, keep_alive);
    // The `tokio` feature: the threads of no pool enter the global pool's tokio runtime.
    #[cfg(feature = "tokio")]
    if let Some(handle) = &config.tokio_handle {
        crate::tokio_context::set_global(handle);
    }
    // The process's blocking threads take the global pool's start and stop hooks.
    #[cfg(not(loom))]
    crate::blocking::set_thread_hooks(&config.hooks);
    Pool::start(config, PoolKind::Global)
}

/// Building the global pool: here, beside the pool it builds, so that `config/` stays a leaf.
impl Builder {
    /// Configures and starts the global pool used by [`spawn`](fn@crate::spawn).
    ///
    /// Without [`workers`](Builder::workers), the size comes from `CREW_WORKERS`, else
    /// `num_cpus::get()`.
    ///
    /// # Errors
    ///
    /// [`BuildError::is_global_already_started`] if the global pool already runs (started by an
    /// earlier call or by a first `spawn`); otherwise as [`build`](Builder::build).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::Builder::new().workers(2).build_global().expect("first configuration");
    /// assert!(crew::Builder::new().build_global().unwrap_err().is_global_already_started());
    /// assert_eq!(crew::block_on(crew::spawn(async { 1 })), 1);
    /// ```
    pub fn build_global(self) -> Result<(), BuildError> {
        self.refuse_for_global()?;
        let mut started_here = false;
        GLOBAL.get_or_try_init(|| {
            started_here = true;
            start(self)
        })?;
        if started_here {
            Ok(())
        } else {
            Err(BuildError::global_already_started())
        }
    }
}

/// Spawns `future` as the task `info` on the global pool, from any thread (see `target.rs`).
#[track_caller]
#[inline]
pub(crate) fn spawn_on_global<P, B, E, R>(
    info: TaskInfo,
    task: B,
    end: E,
    place: impl FnOnce(JoinHandle<B::Output, P>) -> R,
) -> R
where
    P: Policy,
    B: Build,
    E: OnTaskEnd,
{
    // A zero-sized schedule function: async-task then needs no extra reference count bump per
    // schedule, and the task holds no reference to the (never dropped) global pool.
    let schedule = WithInfo(|runnable: RawRunnable, info: ScheduleInfo| {
        shared().schedule(Runnable::new(runnable), info.woken_while_running);
    });
    shared().spawn(info, None, None, task, schedule, (Global, end), place)
}

/// Spawns `task` as the task `info` on the global pool, its first run on the least loaded
/// worker's inbox (`spawn_pinned`, `scheduler/cores/pinned.rs`).
#[track_caller]
pub(crate) fn spawn_pinned_on_global<B: Build>(info: TaskInfo, task: B) -> JoinHandle<B::Output> {
    let schedule = WithInfo(|runnable: RawRunnable, info: ScheduleInfo| {
        shared().schedule(Runnable::new(runnable), info.woken_while_running);
    });
    let pinned = shared().pinned_core();
    shared().spawn(info, None, Some(pinned), task, schedule, (Global, ()), |handle| handle)
}

/// A snapshot of the global pool's counters: polls, spawns, steals, parks and queue depths per
/// worker, live tasks, the blocking pool. Cheap enough to call every second in production: it
/// never blocks a worker. See [`Metrics`] for what each number tells. Before the global pool
/// has started, it does not start it: the counters are zero and `workers` is empty (the
/// blocking pool's counts are still read; every pool shares it), so a later
/// [`Builder::build_global`] still configures the pool.
///
/// # Examples
///
/// ```
/// let before = crew::metrics();
/// crew::block_on(crew::spawn(async {}));
/// let after = crew::metrics();
/// assert!(after.spawned_outside > before.spawned_outside);
/// assert!(after.total.polls > before.total.polls);
/// ```
pub fn metrics() -> Metrics {
    match GLOBAL.get() {
        Some(pool) => crate::pool::metrics_of(pool.shared()),
        None => crate::pool::metrics_before_start(),
    }
}

/// Every live task of the global pool, with what it is doing and for how long. Empty unless
/// the task dump is on (`CREW_TASK_DUMP=on`, or [`Builder::task_dump`] before the pool starts).
/// Never pauses the pool; see [`TaskDump`]. Before the global pool has started, it does not
/// start it: the dump is empty (and says whether the pool will keep records, as
/// `CREW_TASK_DUMP` says), so a later [`Builder::build_global`] still configures the pool.
///
/// # Examples
///
/// ```
/// let dump = crew::dump();
/// if !dump.is_enabled() {
///     println!("{dump}"); // says how to turn it on
/// }
/// for task in dump.tasks() {
///     println!("{}: {}", task.info(), task.state());
/// }
/// ```
pub fn dump() -> TaskDump {
    match GLOBAL.get() {
        Some(pool) => pool.shared().dump(),
        None => TaskDump::new(Vec::new(), crate::config::task_dump_from_env()),
    }
}

/// The global pool as a task's home: a task's end is counted on the worker that ends it, or
/// as outside the workers.
struct Global;

impl OnTaskEnd for Global {
    #[inline]
    fn task_ended(&mut self) {
        crate::scheduler::count_task_end(shared());
    }
}
