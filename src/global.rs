//! The global pool behind [`spawn`] and [`spawn_with`].
//!
//! Invariants:
//! - `spawn` targets the current private pool if the thread has one (its worker, or inside
//!   `Pool::block_on`: `scheduler/context.rs`), else the global pool.
//! - Started at most once per process, lazily by the first use that targets it (a `spawn` off
//!   every private pool, `metrics`, `dump`, a `Spawner::global`; sized by `CREW_WORKERS`, else
//!   `num_cpus::get()`), or explicitly by `Builder::build_global` before that.
//! - Never dropped: its tasks hold no reference to it, and it keeps a registry of them only
//!   with the task dump on.
//! - A bad `CREW_WORKERS` makes every `spawn` panic with the error naming the variable, the
//!   value and the accepted range, and `build_global` return that error; nothing starts.

use std::future::Future;

use std::panic::Location;

use async_task::{ScheduleInfo, WithInfo};
use once_cell::sync::OnceCell;

use crate::config::{BuildError, Builder, Env};
use crate::dump::TaskDump;
use crate::join::JoinHandle;
use crate::metrics::Metrics;
use crate::policy::{Policy, Propagate};
use crate::pool::Pool;
use crate::scheduler::{PoolKind, Shared};
use crate::sync::Arc;
use crate::task::{Home, Runnable, TaskInfo};

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
    Pool::start(builder.check(Env::from_process())?, PoolKind::Global)
}

/// `Builder::build_global`.
pub(crate) fn init(builder: Builder) -> Result<(), BuildError> {
    let mut started_here = false;
    GLOBAL.get_or_try_init(|| {
        started_here = true;
        start(builder)
    })?;
    if started_here {
        Ok(())
    } else {
        Err(BuildError::global_already_started())
    }
}

/// Spawns `future` on the current pool with the default [`Propagate`] policy: the global pool,
/// except on a private [`Pool`]'s threads (inside its tasks) and inside [`Pool::block_on`],
/// where it spawns onto that pool, as `tokio::spawn` spawns onto the runtime it is called in.
///
/// Callable from any thread — `main`, a crew worker, a foreign thread, a `Drop` impl — with no
/// runtime context. The first call that targets the global pool starts it. A `spawn_blocking`
/// job runs on no pool's thread: it spawns onto the global pool.
///
/// # Panics
///
/// If the global pool cannot start: `CREW_WORKERS` is set to something other than a whole
/// number in `1..=1024`, or the OS refuses a thread. The panic names the caller's location.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn(async { 2 + 2 });
/// assert_eq!(crew::block_on(handle), 4);
/// ```
#[track_caller]
#[inline]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn_with(Propagate, future)
}

/// Spawns `future` on the current pool (as [`spawn`] picks it) with the panic policy `policy`:
/// [`Propagate`], [`Catch`](crate::Catch) or [`Ignore`](crate::Ignore).
///
/// # Panics
///
/// As [`spawn`].
///
/// # Examples
///
/// ```
/// let result = crew::block_on(crew::spawn_with(crew::Catch, async { panic!("oops") }));
/// let err = result.unwrap_err();
/// assert!(err.is_panic());
/// assert_eq!(err.panic_message(), Some("oops"));
/// ```
#[track_caller]
#[inline]
pub fn spawn_with<P, F>(policy: P, future: F) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let _ = policy;
    spawn_with_info(TaskInfo::new(None, Location::caller()), future)
}

/// Spawns `future` as the task `info` on the current pool (as [`spawn`] picks it).
#[track_caller]
#[inline]
pub(crate) fn spawn_with_info<P, F>(info: TaskInfo, future: F) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // On a private pool's thread, or inside its `block_on`: that pool.
    if let Some(private) = crate::scheduler::current_private_pool() {
        return spawn_on_current_private(&private, info, future);
    }
    spawn_on_global(info, future)
}

/// Spawns `future` as the task `info` on the global pool, from any thread.
#[track_caller]
#[inline]
pub(crate) fn spawn_on_global<P, F>(info: TaskInfo, future: F) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // A zero-sized schedule function: async-task then needs no extra reference count bump per
    // schedule, and the task holds no reference to the (never dropped) global pool.
    let schedule = WithInfo(|runnable: Runnable, info: ScheduleInfo| {
        shared().schedule(runnable, info.woken_while_running);
    });
    let shared = shared();
    if shared.registry().is_some() {
        // The task dump is on: the global pool registers its tasks, as a private pool does.
        return crate::task::spawn_registered(shared, crate::scheduler::spawn_hint(), info, future, schedule);
    }
    crate::task::spawn_unregistered(shared, info, Global, future, schedule)
}

/// [`spawn_on_private`](crate::pool::spawn_on_private), kept out of line so that the global
/// pool's spawn path stays small enough to inline where it is called.
#[inline(never)]
fn spawn_on_current_private<P, F>(shared: &Arc<Shared>, info: TaskInfo, future: F) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    crate::pool::spawn_on_private(shared, info, future)
}

/// A snapshot of the global pool's counters (starting the pool if it has not started): polls,
/// spawns, steals, parks and queue depths per worker, live tasks, the blocking pool. Cheap
/// enough to call every second in production: it never blocks a worker. See [`Metrics`] for
/// what each number tells.
///
/// # Panics
///
/// If the global pool cannot start (a bad `CREW_WORKERS`, say), as [`spawn`] does.
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
#[track_caller]
pub fn metrics() -> Metrics {
    shared().metrics()
}

/// Every live task of the global pool, with what it is doing and for how long (starting the
/// pool if it has not started). Empty unless the task dump is on (`CREW_TASK_DUMP=on`, or
/// [`Builder::task_dump`] before the pool starts). Never pauses the pool; see [`TaskDump`].
///
/// # Panics
///
/// If the global pool cannot start (a bad `CREW_WORKERS`, say), as [`spawn`] does.
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
#[track_caller]
pub fn dump() -> TaskDump {
    shared().dump()
}

/// The global pool as a task's home: a task's end is counted on the worker that ends it, or
/// as outside the workers.
struct Global;

impl Home for Global {
    #[inline]
    fn task_ended(&mut self) {
        crate::scheduler::count_task_end(shared());
    }
}
