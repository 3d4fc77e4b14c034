//! A pool: its shared state, where scheduled tasks go, and how it shuts down.
//!
//! Invariants:
//! - A pool has a fixed number of *cores* (worker slots), each with a FIFO deque whose
//!   [`Stealer`] is in `stealers`, and in its [`Remote`] a LIFO [`Slot`] and a list of yielded
//!   tasks, plus one [`Injector`] for tasks scheduled from outside. The deques, the injector and
//!   the yielded lists are *shared* queues: any searcher steals from them. The LIFO slot is
//!   *private*: taken from by its owner, and by the watcher only when the owner is stuck inside
//!   one poll (see `watch`). A core is owned by exactly one thread at a time (see `worker`);
//!   threads may outnumber cores while some are blocked in `block_on`, never the other way round.
//! - `schedule` puts a task in the scheduling worker's own core when that thread runs a worker of
//!   this pool, else in the injector; a push onto a shared queue ends with
//!   `Sleepers::notify_one`, a push into a LIFO slot with `Sleepers::notify_private` (see
//!   `sleep` for why no wakeup is lost).
//! - No task is ever dropped inside `schedule`, that is inside someone's `wake()`: dropping a
//!   task drops its future, whose destructor may wake other tasks or take locks that the waker's
//!   caller holds (event-listener wakes under its list lock), so a drop there can deadlock the
//!   thread on itself. A task scheduled after shutdown began goes into the injector like any
//!   outside wake, and is dropped later by the thread that shuts the pool down, outside every
//!   lock (or, if it arrives after that thread's last look, by a short-lived reaper thread).
//! - Shutdown (dropping a [`Pool`]) happens once: set `shutdown`, wake every sleeper, wait until
//!   every core's worker loop has exited and dropped its queued tasks, wake every registered
//!   (pending) task so that it is scheduled into the injector, drop the injector's tasks and
//!   mark the pool `reaped`, then join every thread. A push that races the last drain is dropped
//!   by either side (a SeqCst fence on each side); after it, by the pusher's reaper thread (a
//!   wake that was on its way, or a task whose poll on a thread blocked in `block_on` ends). So
//!   every task ends exactly once: run to completion, cancelled, or dropped here.

use std::fmt;
use std::future::Future;
use std::io;

use async_task::Runnable;

use crate::config::{BuildError, Config};
use crate::join::JoinHandle;
use crate::policy::{Policy, Propagate};
use crate::registry::Registry;
use crate::sleep::Sleepers;
#[cfg(not(loom))]
use crate::sync::Listener;
use crate::sync::{
    fence, lock, planted_bug, retry, thread, Arc, AtomicBool, AtomicUsize, CachePadded, Event, Injector, Mutex,
    Ordering, Slot, Stealer, Worker,
};
use crate::worker::Pushed;
use crate::worker::{self, Core};

/// A private thread pool with its own workers; dropping it stops them.
///
/// Dropping a `Pool` stops its workers, drops every task still queued or waiting for a wake
/// exactly once (their [`JoinHandle`]s then report the task as cancelled), and joins its threads.
///
/// [`crew::spawn`](crate::spawn) always targets the global pool, also inside this pool's tasks;
/// to spawn onto a private pool from its own tasks, share it (for example as an `Arc<Pool>`).
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

/// The part of a core that other threads may touch besides its deque: its LIFO slot and
/// deferred list, and the sign of its progress that the watcher reads. Filled and emptied by its owner; its mutexes
/// are uncontended but for the watcher's rare looks.
pub(crate) struct Remote {
    /// The task woken last on this core (by a task it ran), run next. Private (see `watch`).
    pub(crate) lifo: Slot<Runnable>,
    /// Tasks that woke themselves while running (yields), held back until the owner runs out
    /// of other work or reaches its fairness tick. Searchers take from it as a last resort.
    pub(crate) deferred: Mutex<Vec<Runnable>>,
    /// How many times the owner took from its LIFO slot, wrapping. While the slot holds a
    /// task, a count that does not move means the owner is stuck inside a poll.
    taken: AtomicUsize,
}

impl Remote {
    fn new() -> Remote {
        Remote { lifo: Slot::new(), deferred: Mutex::new(Vec::new()), taken: AtomicUsize::new(0) }
    }

    /// Called by the owner each time it takes from its LIFO slot.
    pub(crate) fn count_take(&self) {
        // Relaxed: a hint for the watcher. Only the owner writes it, so a load and a store do;
        // a stale value read by the watcher delays a rescue by one interval or makes it steal
        // early from a live owner, and either way the task runs exactly once (the queues are
        // mutex-guarded).
        let taken = self.taken.load(Ordering::Relaxed);
        self.taken.store(taken.wrapping_add(1), Ordering::Relaxed);
    }

    /// The owner's take count (see `count_take`).
    pub(crate) fn taken(&self) -> usize {
        // Relaxed: as in `count_take`.
        self.taken.load(Ordering::Relaxed)
    }

    /// True if the LIFO slot holds a task.
    pub(crate) fn has_private_work(&self) -> bool {
        self.lifo.is_occupied()
    }
}

/// What a parking worker's re-scan found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Queued {
    /// A task in the injector, a deque or a deferred list.
    Shared,
    /// No shared task, but one in another core's LIFO slot.
    Private,
    /// Nothing.
    Nothing,
}

/// The state every worker, schedule function and handle of one pool shares.
pub(crate) struct Shared {
    injector: CachePadded<Injector<Runnable>>,
    stealers: Box<[Stealer<Runnable>]>,
    /// Each core's LIFO slot and deferred list. Apart from `stealers`: thieves read the stealers all the
    /// time, and the owner writes here at every task it takes from its LIFO slot.
    remotes: Box<[CachePadded<Remote>]>,
    pub(crate) sleepers: Sleepers,
    /// The live tasks of a private pool; `None` for the global pool, which is never dropped.
    /// Its own `Arc`, so that each task's reference to it does not share a cache line with the
    /// references its schedule function holds to `Shared`.
    registry: Option<Arc<Registry>>,
    shutdown: AtomicBool,
    /// Set by shutdown before its last drain of the injector: from then on, whoever pushes a
    /// task into the injector also drops it (through a reaper thread, never inside a wake).
    reaped: AtomicBool,
    /// Cores whose worker loop has not exited yet.
    cores_running: AtomicUsize,
    cores_exited: Event,
    threads: Mutex<Vec<thread::JoinHandle<()>>>,
    config: Config,
}

impl Pool {
    /// A [`Builder`](crate::Builder) for a private pool.
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
    pub fn spawn_with<P, F>(&self, policy: P, future: F) -> JoinHandle<F::Output, P>
    where
        P: Policy,
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let _ = policy;
        crate::task::spawn_private(&self.shared, future)
    }

    /// The number of workers (cores) this pool runs.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(crew::Pool::builder().workers(3).build().unwrap().workers(), 3);
    /// ```
    pub fn workers(&self) -> usize {
        self.shared.stealers.len()
    }

    /// Starts the workers of a pool with a checked configuration.
    pub(crate) fn start(config: Config, global: bool) -> Result<Pool, BuildError> {
        let workers = config.workers;
        let (shared, cores) = Shared::new(config, global);
        for (index, core) in cores.into_iter().enumerate() {
            if let Err((_, err)) = Shared::start_worker(&shared, Box::new(core)) {
                // This core and the ones after it never ran.
                shared.cores_running.fetch_sub(workers - index, Ordering::SeqCst);
                shared.shutdown();
                return Err(BuildError::spawn(err));
            }
        }
        Ok(Pool { shared })
    }

    /// The shared state, for the global pool's `&'static` access.
    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.shutdown();
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("workers", &self.workers())
            .field("thread_name", &self.shared.config.thread_name)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// The state of a pool of `config.workers` cores, and the cores, whose loops are yet to start
    /// (counted as running from here on).
    pub(crate) fn new(config: Config, global: bool) -> (Arc<Shared>, Vec<Core>) {
        let (workers, in_reactor) = (config.workers, config.drive_reactor);
        let locals: Vec<Worker<Runnable>> = (0..workers).map(|_| Worker::new_fifo()).collect();
        let shared = Arc::new(Shared {
            injector: CachePadded::new(Injector::new()),
            stealers: locals.iter().map(Worker::stealer).collect(),
            remotes: (0..workers).map(|_| CachePadded::new(Remote::new())).collect(),
            sleepers: Sleepers::new(workers),
            registry: if global { None } else { Some(Arc::new(Registry::new(workers))) },
            shutdown: AtomicBool::new(false),
            reaped: AtomicBool::new(false),
            cores_running: AtomicUsize::new(workers),
            cores_exited: Event::new(),
            threads: Mutex::new(Vec::with_capacity(workers)),
            config,
        });
        let cores = locals.into_iter().enumerate().map(|(index, local)| Core::new(index, local, in_reactor)).collect();
        (shared, cores)
    }

    pub(crate) fn registry(&self) -> Option<&Arc<Registry>> {
        self.registry.as_ref()
    }

    pub(crate) fn stealers(&self) -> &[Stealer<Runnable>] {
        &self.stealers
    }

    pub(crate) fn injector(&self) -> &Injector<Runnable> {
        &self.injector
    }

    /// Core `index`'s LIFO slot and deferred list.
    pub(crate) fn remote(&self, index: usize) -> &Remote {
        &self.remotes[index]
    }

    /// Every core's LIFO slot and deferred list, by index.
    pub(crate) fn remotes(&self) -> impl Iterator<Item = &Remote> {
        self.remotes.iter().map(|remote| &**remote)
    }

    /// Whether the worker loops run inside `async_io::block_on`, driving the reactor.
    #[cfg(not(loom))]
    pub(crate) fn drives_reactor(&self) -> bool {
        self.config.drive_reactor
    }

    /// True once shutdown has begun.
    pub(crate) fn is_shutdown(&self) -> bool {
        // Acquire pairs with the SeqCst swap in `shutdown`; a late `false` only delays a
        // worker's exit until `notify_all` wakes it, and pushes re-check after a fence.
        self.shutdown.load(Ordering::Acquire)
    }

    /// Where a task is queued, for the re-scan of worker `me` before it parks: a shared queue
    /// first, else another core's LIFO slot. Takes nothing.
    pub(crate) fn queued(&self, me: usize) -> Queued {
        if !self.injector.is_empty() || self.stealers.iter().any(|s| !s.is_empty()) {
            return Queued::Shared;
        }
        if self.remotes().any(|remote| !lock(&remote.deferred).is_empty()) {
            return Queued::Shared;
        }
        let mut others = self.remotes().enumerate().filter(|&(index, _)| index != me);
        if others.any(|(_, remote)| remote.has_private_work()) {
            return Queued::Private;
        }
        Queued::Nothing
    }

    /// Where a woken or newly spawned task goes. `is_yield`: the task woke itself while running,
    /// so it goes to the back of the queue rather than the LIFO slot.
    pub(crate) fn schedule(&self, runnable: Runnable, is_yield: bool) {
        match worker::schedule_local(self, runnable, is_yield) {
            Ok(Pushed::Shared) => {
                if !planted_bug!("no_local_notify") {
                    self.sleepers.notify_one();
                }
            }
            // Into this worker's LIFO slot: this worker will take it, unless it is stuck inside a
            // poll, in which case the watcher will (see `watch`).
            Ok(Pushed::Private) => {
                if !planted_bug!("no_local_notify") {
                    self.sleepers.notify_private();
                }
            }
            // Pushed from inside the reactor onto this thread's own parked core: it wakes itself
            // and runs the task, rather than wake another worker. If it was already picked, its
            // token is on the way and the task is in its queues all the same.
            Ok(Pushed::Parked(index)) => {
                self.sleepers.wake_self(index);
            }
            Err(runnable) => self.push_remote(runnable),
        }
    }

    /// Pushes a task woken outside this pool's workers into the injector. After shutdown the
    /// task stays there to be dropped by shutdown's drains, never here (see the module docs).
    fn push_remote(&self, runnable: Runnable) {
        self.injector.push(runnable);
        // Pairs with the fence in `shutdown`: either this load sees the flag, or shutdown's
        // drain sees the push. (`notify_one` has its own fence for the sleepers.)
        fence(Ordering::SeqCst);
        if !planted_bug!("no_shutdown_recheck") && self.shutdown.load(Ordering::SeqCst) {
            // Pairs with the store + fence in `reap`: either this load sees `reaped`, or
            // shutdown's last drain sees the push.
            if !planted_bug!("no_late_reap") && self.reaped.load(Ordering::SeqCst) {
                self.reap_late();
            }
            return;
        }
        self.sleepers.notify_one();
    }

    /// Takes every task out of the injector. The caller drops them, outside every lock.
    fn take_injector(&self) -> Vec<Runnable> {
        std::iter::from_fn(|| retry(|| self.injector.steal())).collect()
    }

    /// Drops the injector's tasks until it stays empty: a dropped future may wake other tasks
    /// of this pool, which land in the injector in turn.
    fn drain_injector(&self) {
        loop {
            let taken = self.take_injector();
            if taken.is_empty() {
                return;
            }
            drop(taken);
        }
    }

    /// Shutdown's last drain: drops what the injector holds, marks the pool reaped, and drops
    /// what was pushed meanwhile. A push after this is dropped by its pusher (`reap_late`).
    fn reap(&self) {
        self.drain_injector();
        self.reaped.store(true, Ordering::SeqCst);
        // Pairs with the fence in `push_remote`.
        fence(Ordering::SeqCst);
        self.drain_injector();
    }

    /// A task was pushed after shutdown's last drain (a wake from another thread racing it, or
    /// a task whose poll on a thread blocked in `block_on` just ended): hands it to a fresh
    /// thread to drop, since this thread may be inside a `wake()` whose caller holds a lock the
    /// future's destructor needs. Rare: only tasks that were scheduled or running when the
    /// drain ran can come here, and each does once.
    #[cold]
    fn reap_late(&self) {
        let late = self.take_injector();
        if late.is_empty() {
            return;
        }
        // If no thread can be had, the closure, and the tasks with it, are dropped here: that
        // may deadlock only if a caller up the stack holds a lock the destructors take, where
        // leaking them would lose their drops for sure.
        let _ = thread::Builder::new().name("crew-reaper".into()).spawn(move || drop(late));
    }

    /// Starts a thread running the worker loop of `core`. On failure gives `core` back.
    pub(crate) fn start_worker(this: &Arc<Self>, core: Box<Core>) -> Result<(), (Box<Core>, io::Error)> {
        let mut builder = thread::Builder::new().name(format!("{}-{}", this.config.thread_name, core.index()));
        if let Some(bytes) = this.config.stack_size {
            builder = builder.stack_size(bytes);
        }
        // The core travels through a slot so that a failed spawn can give it back.
        let slot = Arc::new(Mutex::new(Some(core)));
        let (for_thread, shared) = (slot.clone(), this.clone());
        let spawned = builder.spawn(move || {
            let core = lock(&for_thread).take();
            if let Some(core) = core {
                worker::run(shared, core);
            }
        });
        match spawned {
            Ok(handle) => {
                let finished = {
                    let mut threads = lock(&this.threads);
                    // Threads that gave their core away and returned are joined here, so that a
                    // long-lived pool (the global one is never dropped) does not pile up
                    // exited-but-unjoined threads, each holding its stack until joined.
                    let (finished, running) =
                        std::mem::take(&mut *threads).into_iter().partition(crate::sync::is_finished);
                    *threads = running;
                    threads.push(handle);
                    finished
                };
                for thread in finished {
                    // It has returned: joining does not block. A panic there is a crew bug.
                    let _ = thread.join();
                }
                Ok(())
            }
            Err(err) => {
                let core = lock(&slot).take().expect("a thread that failed to start cannot have taken its core");
                Err((core, err))
            }
        }
    }

    /// Called by a worker loop that exits for shutdown: drops its queued tasks, then counts
    /// the core out.
    pub(crate) fn retire_core(&self, core: Box<Core>) {
        let remote = self.remote(core.index());
        // Each taken out under its lock and dropped after it: a future's drop may schedule
        // other tasks, and user code never runs under crew's locks.
        let lifo = remote.lifo.take();
        drop(lifo);
        let deferred = std::mem::take(&mut *lock(&remote.deferred));
        drop(deferred);
        drop(core);
        // SeqCst pairs with the loads in `wait_for_cores`.
        if self.cores_running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.cores_exited.notify(usize::MAX);
        }
    }

    fn wait_for_cores(&self) {
        loop {
            if self.cores_running.load(Ordering::SeqCst) == 0 {
                return;
            }
            let listener = self.cores_exited.listen();
            // Pairs with `notify`'s fence: the listener is registered before the re-check.
            fence(Ordering::SeqCst);
            if self.cores_running.load(Ordering::SeqCst) == 0 {
                return;
            }
            listener.wait();
        }
    }

    /// Stops the pool: see the module docs for the order of steps.
    fn shutdown(&self) {
        if self.shutdown.swap(true, Ordering::SeqCst) {
            return;
        }
        // Shutdown blocks this thread. If it runs a worker (of this pool or another), its core
        // goes to a fresh thread first: nothing waits behind us, and a pool dropped from one of
        // its own workers does not wait for itself (the fresh thread sees the flag and exits).
        worker::hand_off_core();
        self.sleepers.notify_all();
        self.wait_for_cores();
        // Pairs with the fence in `push_remote`: from here on every push is seen by a drain.
        fence(Ordering::SeqCst);
        if let Some(registry) = &self.registry {
            // Each pending task is scheduled into the injector (not dropped inside `wake`).
            for waker in registry.close() {
                waker.wake();
            }
        }
        // Before joining: a thread blocked in `block_on` inside a task may be waiting for one
        // of these tasks to end, or for one whose wake is still on its way (dropped by its
        // pusher once the pool is reaped).
        self.reap();
        let me = thread::current().id();
        loop {
            let handles = std::mem::take(&mut *lock(&self.threads));
            if handles.is_empty() {
                break;
            }
            for handle in handles {
                if handle.thread().id() != me {
                    // A worker thread only panics on a bug in crew; shutdown goes on regardless.
                    let _ = handle.join();
                }
            }
        }
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared").field("workers", &self.stealers.len()).finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn threads_that_gave_their_core_away_are_reaped() {
        let pool = crate::Builder::new().workers(1).build().unwrap();
        let handles = || lock(&pool.shared.threads).len();
        // Each block_on on the worker starts a replacement thread; the old one returns after
        // its task's poll. Without reaping, the list only grows.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        for round in 0.. {
            crate::block_on(pool.spawn(async { crate::block_on(async {}) }));
            if round >= 20 && handles() <= 2 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{} thread handles kept after {round} hand-offs", handles());
            std::thread::yield_now();
        }
    }
}
