//! [`Pool`]: a private pool, the public handle on the scheduler's shared state.
//!
//! Invariants:
//! - A `Pool` owns its workers: dropping it shuts the pool down (`scheduler/cores/shutdown.rs`),
//!   dropping every task still queued or waiting for a wake exactly once, and joins its threads;
//!   it returns once every future of its tasks is gone, but the one the dropping thread may be
//!   inside of.
//! - A private pool's tasks are registered (`scheduler/cores/registry.rs`) so that its drop reaches
//!   the ones waiting for a wake; the global pool (`global.rs`) is never dropped and keeps no
//!   registry.

use std::convert;
use std::fmt;
use std::future::Future;
use std::panic::Location;
use std::time::Duration;

use crate::config::{BuildError, Builder, Config, Env};
use crate::dump::TaskDump;
use crate::handle::JoinHandle;
use crate::identity::TaskInfo;
use crate::metrics::Metrics;
use crate::policy::{Policy, Propagate};
use crate::scheduler::{self, PoolKind, Shared};
use crate::spawning::Spawnable;
use crate::sync::Arc;

/// A private thread pool with its own workers; dropping it stops them.
///
/// Dropping a `Pool` stops its workers, drops every task still queued or waiting for a wake
/// exactly once (their [`JoinHandle`]s then report the task as cancelled), and joins its threads.
/// When the drop returns, every future of the pool's tasks has been dropped, even one whose
/// wake (from another thread) raced the shutdown and which a short-lived `crew-reaper` thread
/// drops: the drop waits for it. Two exceptions: a task the dropping thread is itself inside of
/// (a task that drops its own pool ends after the drop returns), and local tasks
/// ([`spawn_local`](crate::spawn_local)), which belong to their thread, not to the pool. So a
/// future whose destructor takes a lock that the dropping thread holds blocks the drop for as
/// long as that thread holds it: drop a pool outside the locks its tasks' destructors take.
///
/// [`crew::spawn`](crate::spawn) called on one of this pool's threads (inside its tasks) or
/// inside [`Pool::block_on`] (or in a `spawn_blocking` job started there) spawns onto this
/// pool; elsewhere it spawns onto the global pool.
/// A task spawned onto a pool that is shutting down (through a [`Spawner`](crate::Spawner) or
/// a `&Pool`, from a task's `Drop` during the pool's drop, say) is dropped at once, and its
/// handle reports it cancelled, as tokio does. Shutdown drops tasks with no pool current, so
/// `crew::spawn` in such a `Drop` spawns onto the global pool (or the dropping thread's own
/// current pool), where the task runs.
///
/// # Examples
///
/// ```
/// let pool = crew::Pool::builder().workers(2).build().unwrap();
/// let handles: Vec<_> = (0..10u64).map(|i| pool.spawn(async move { i * i })).collect();
/// let sum: u64 = handles.into_iter().map(crew::block_on).sum();
/// assert_eq!(sum, 285);
/// drop(pool); // stops and joins the two workers
/// ```
pub struct Pool {
    shared: Arc<Shared>,
}

impl Pool {
    /// A [`Builder`] for a private pool.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// assert_eq!(pool.workers(), 1);
    /// ```
    pub fn builder() -> crate::Builder {
        crate::Builder::new()
    }

    /// A private pool with `num_cpus::get()` workers.
    ///
    /// # Errors
    ///
    /// If a worker thread could not be started.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::new().unwrap();
    /// assert_eq!(pool.workers(), num_cpus::get());
    /// ```
    pub fn new() -> Result<Pool, BuildError> {
        crate::Builder::new().build()
    }

    /// Spawns `future` on this pool with the default [`Propagate`] policy.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(2).build().unwrap();
    /// assert_eq!(crew::block_on(pool.spawn(async { "ran on the pool" })), "ran on the pool");
    /// ```
    #[track_caller]
    #[inline]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_with(Propagate, future)
    }

    /// Spawns `future` on this pool with the panic policy `policy`.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let result = crew::block_on(pool.spawn_with(crew::Catch, async { panic!("nope") }));
    /// assert_eq!(result.unwrap_err().panic_message(), Some("nope"));
    /// ```
    #[track_caller]
    #[inline]
    pub fn spawn_with<P, F>(&self, policy: P, future: F) -> JoinHandle<F::Output, P>
    where
        P: Policy,
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let _ = policy;
        spawn(&self.shared, TaskInfo::new(None, Location::caller()), Spawnable(future), (), convert::identity)
    }

    /// [`crew::spawn_pinned`](crate::spawn_pinned) on this pool: `make` builds the `!Send`
    /// future on a lightly loaded worker of this pool (the less loaded of two), where it runs as
    /// a local task.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::cell::Cell;
    ///
    /// let pool = crew::Pool::builder().workers(2).build().unwrap();
    /// let handle = pool.spawn_pinned(|| async {
    ///     let count = Cell::new(1);
    ///     count.set(count.get() + 1);
    ///     count.get()
    /// });
    /// assert_eq!(crew::block_on(handle), 2);
    /// ```
    #[track_caller]
    pub fn spawn_pinned<M, F>(&self, make: M) -> JoinHandle<F::Output>
    where
        M: FnOnce() -> F + Send + 'static,
        F: Future + 'static,
        F::Output: Send + 'static,
    {
        let location = std::panic::Location::caller();
        let task = crate::spawning::Spawnable(pinned(make, location));
        spawn_pinned(&self.shared, TaskInfo::new(None, location), task)
    }

    /// Runs `future` to completion on the current thread, as [`crew::block_on`](fn@crate::block_on)
    /// does, with this pool as the current pool: [`crew::spawn`](crate::spawn) inside `future`
    /// (and on this thread until it returns) spawns onto this pool.
    ///
    /// This is how code that calls `crew::spawn`, a library's say, runs on a private pool from
    /// a thread of your own (`#[crew::test]` runs each test this way).
    ///
    /// # Panics
    ///
    /// As [`crew::block_on`](fn@crate::block_on); a panic of `future` passes through, and the
    /// thread's previous current pool is put back all the same.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(2).build().unwrap();
    /// let sum = pool.block_on(async {
    ///     // Both land on `pool`, as their children do.
    ///     let a = crew::spawn(async { crew::spawn(async { 1 }).await });
    ///     let b = crew::spawn(async { 2 });
    ///     a.await + b.await
    /// });
    /// assert_eq!(sum, 3);
    /// assert_eq!(pool.metrics().spawned_outside + pool.metrics().total.spawned, 3);
    /// ```
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        // With `unhandled_panic(ShutdownPool)`: panics once the pool shut down on such a panic.
        if self.shared.shuts_down_on_unhandled_panic() {
            return self.block_on_watched(future);
        }
        self.block_on_here(future)
    }

    /// [`block_on`](Pool::block_on) of a pool that shuts down on an unhandled panic: `future`,
    /// until the note of such a panic comes, which it panics with.
    #[track_caller]
    fn block_on_watched<F: Future>(&self, future: F) -> F::Output {
        let noted = |note: String| -> ! { panic!("crew: Pool::block_on: {note}") };
        if let Some(note) = self.shared.unhandled_note() {
            noted(note);
        }
        let mut future = std::pin::pin!(future);
        let mut listener = None;
        self.block_on_here(std::future::poll_fn(|cx| {
            loop {
                if let Some(note) = self.shared.unhandled_note() {
                    noted(note);
                }
                match listener.as_mut() {
                    // Registered, then look again (the loop): a note before it woke nobody.
                    None => listener = self.shared.listen_unhandled(),
                    Some(registered) => match std::pin::Pin::new(registered).poll(cx) {
                        std::task::Poll::Ready(()) => listener = None,
                        std::task::Poll::Pending => break,
                    },
                }
            }
            future.as_mut().poll(cx)
        }))
    }

    #[track_caller]
    fn block_on_here<F: Future>(&self, future: F) -> F::Output {
        // In a paused pool, `crew::block_on` counts this future's polls as the pool's work.
        let _entered = scheduler::enter_pool(&self.shared);
        // The `tokio` feature: this pool's tokio context, unless the thread has one.
        #[cfg(feature = "tokio")]
        return crate::tokio_context::within_unless_entered(
            || self.shared.tokio_handle().cloned().unwrap_or_else(crate::tokio_context::own),
            || crate::block_on(future),
        );
        #[cfg(not(feature = "tokio"))]
        crate::block_on(future)
    }

    /// A snapshot of this pool's counters: polls, spawns, steals, parks and queue depths per
    /// worker, live tasks, the blocking pool. Cheap enough to call every second in production:
    /// it never blocks a worker. See [`Metrics`] for what each number tells.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let handles: Vec<_> = (0..10).map(|_| pool.spawn(async {})).collect();
    /// for handle in handles {
    ///     crew::block_on(handle);
    /// }
    /// let metrics = pool.metrics();
    /// assert_eq!(metrics.spawned_outside, 10);
    /// assert_eq!(metrics.live_tasks, 0);
    /// ```
    pub fn metrics(&self) -> Metrics {
        metrics_of(&self.shared)
    }

    /// Every live task of this pool, with what it is doing and for how long: empty unless the
    /// pool was built with [`Builder::task_dump`](crate::Builder::task_dump). Never pauses the
    /// pool; see [`TaskDump`].
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).task_dump(true).build().unwrap();
    /// let (tx, rx) = futures::channel::oneshot::channel::<()>();
    /// let handle = crew::task::Builder::new().name("waiter").spawn_on(&pool, rx);
    /// let dump = pool.dump();
    /// assert_eq!(dump.tasks().len(), 1);
    /// assert_eq!(dump.tasks()[0].name(), Some("waiter"));
    /// drop(tx);
    /// # let _ = crew::block_on(handle);
    /// ```
    pub fn dump(&self) -> TaskDump {
        self.shared.dump()
    }

    /// The number of workers (cores) this pool runs.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(crew::Pool::builder().workers(3).build().unwrap().workers(), 3);
    /// ```
    pub fn workers(&self) -> usize {
        self.shared.workers()
    }

    /// A seeded pool's poll trace ([`Builder::seed`](crate::Builder::seed)): for each task its
    /// one worker picked, in pick order, the task's spawn ordinal in this pool (its first
    /// spawn is 0). Two runs of the same seed and program give the same trace; a thread's
    /// local tasks, which the seed does not order, are not listed. Empty for a pool that is not
    /// seeded.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().seed(1).build().unwrap();
    /// crew::block_on(pool.spawn(async { crew::spawn(async {}).await }));
    /// // The outer task (0), its child (1), and the outer task again once the child ended.
    /// assert_eq!(pool.poll_trace(), [0, 1, 0]);
    /// ```
    pub fn poll_trace(&self) -> Vec<u64> {
        self.shared.poll_trace().unwrap_or_default()
    }

    /// Shuts the pool down as dropping it does, but waits for its threads, and for its tasks'
    /// futures to be dropped, only up to `timeout`: returns true if every thread finished and
    /// every future was dropped in time. Past the timeout, every task the shutdown can reach is
    /// dropped all the same (its [`JoinHandle`] reports it cancelled), and a thread still stuck
    /// inside a poll is left to finish it; it then drops the tasks queued on its worker and
    /// exits.
    ///
    /// Dropping a `Pool` instead waits for every thread, however long: a task whose poll never
    /// returns (an endless loop, a lock never released) makes the drop wait forever.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let (started, running) = std::sync::mpsc::channel();
    /// let (_keep, never) = std::sync::mpsc::channel::<()>();
    /// pool.spawn(async move {
    ///     started.send(()).unwrap();
    ///     let _ = never.recv(); // blocks its thread until the end of this example
    /// })
    /// .detach();
    /// running.recv().unwrap();
    /// assert!(!pool.shutdown_timeout(Duration::from_millis(50)), "the stuck thread did not finish");
    /// ```
    pub fn shutdown_timeout(self, timeout: Duration) -> bool {
        self.shared.shutdown_within(Some(crate::sync::Deadline::after(timeout)))
    }

    /// Starts the workers of a pool with a checked configuration.
    pub(crate) fn start(config: Config, kind: PoolKind) -> Result<Pool, BuildError> {
        Ok(Pool { shared: Shared::start(config, kind)? })
    }

    /// The shared state, for the global pool's `&'static` access.
    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The shared state's `Arc`, for [`Pool::spawner`] and loom's takeover hook.
    pub(crate) fn shared_arc(&self) -> &Arc<Shared> {
        &self.shared
    }
}

/// Building a private pool: here, beside what it builds, so that `config/` stays a leaf that
/// only checks settings.
impl Builder {
    /// Starts a private pool with this configuration.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] naming the bad setting and its accepted range, or the OS error if a worker
    /// thread could not be started.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(3).build()?;
    /// assert_eq!(pool.workers(), 3);
    /// # Ok::<(), crew::BuildError>(())
    /// ```
    pub fn build(self) -> Result<Pool, BuildError> {
        self.refuse_for_private()?;
        Pool::start(self.check(Env::none())?, PoolKind::Private)
    }
}

/// Spawns `future` as the task `info` on the private pool `shared` (see `target.rs`).
#[inline]
pub(crate) fn spawn<P, B, E, R>(
    shared: &Arc<Shared>,
    info: TaskInfo,
    task: B,
    end: E,
    place: impl FnOnce(JoinHandle<B::Output, P>) -> R,
) -> R
where
    P: Policy,
    B: crate::spawning::Build,
    E: crate::identity::OnTaskEnd,
{
    shared.spawn(info, Some(shared.clone()), None, task, scheduler::schedule_private(), end, place)
}

/// Spawns `task` as the task `info` on the private pool `shared`, its first run on the least
/// loaded worker's inbox (`spawn_pinned`, `scheduler/cores/pinned.rs`).
pub(crate) fn spawn_pinned<B: crate::spawning::Build>(
    shared: &Arc<Shared>,
    info: TaskInfo,
    task: B,
) -> JoinHandle<B::Output> {
    let pinned = shared.pinned_core();
    shared.spawn(info, Some(shared.clone()), Some(pinned), task, scheduler::schedule_private(), (), |handle| handle)
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.shutdown();
        // A shutdown an unhandled panic began runs on a thread of its own: wait for it too.
        self.shared.join_unhandled_shutdown();
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("workers", &self.workers())
            .field("thread_name", &self.shared.thread_name())
            .finish_non_exhaustive()
    }
}

/// A pool's snapshot with the blocking pool's part filled in: the scheduler counts its own pool
/// (`scheduler/observe/snapshot.rs`), the blocking pool, which every pool shares, counts itself.
pub(crate) fn metrics_of(shared: &crate::scheduler::Shared) -> Metrics {
    #[allow(unused_mut)] // loom builds have no blocking pool to read.
    let mut metrics = shared.metrics();
    #[cfg(not(loom))]
    {
        metrics.blocking = crate::blocking::metrics();
    }
    metrics
}

/// The global pool's metrics before it started (`crew::metrics`): no worker, every counter zero,
/// the blocking pool's counts as they are.
pub(crate) fn metrics_before_start() -> Metrics {
    #[allow(unused_mut)] // loom builds have no blocking pool to read.
    let mut metrics = Metrics::not_started();
    #[cfg(not(loom))]
    {
        metrics.blocking = crate::blocking::metrics();
    }
    metrics
}

/// The ordinary task behind [`spawn_pinned`](crate::spawn_pinned): on its first run, which is on the chosen worker's
/// thread, it spawns `make()` there as a local task, then awaits it.
pub(crate) async fn pinned<M, F>(make: M, location: &'static Location<'static>) -> F::Output
where
    M: FnOnce() -> F + Send + 'static,
    F: Future + 'static,
    F::Output: Send + 'static,
{
    crate::scheduler::spawn_local::<crate::spawning::LocalHandles<Propagate>, F>(TaskInfo::new(None, location), make())
        .await
}
