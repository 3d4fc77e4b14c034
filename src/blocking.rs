//! The blocking pool behind [`spawn_blocking`]: separate threads for closures that block.
//!
//! Invariants:
//! - A queued job is always taken, and never waits behind another job while a thread could take
//!   it. [`BlockingPool::submit`] queues it under the lock, then calls a taker: the spinning
//!   thread if it is not claimed yet; else none if a woken or starting thread is on its way; else
//!   it wakes a waiting thread, or starts one if fewer than `max_threads` exist, or leaves the job
//!   to the busy threads. A thread that takes a job and sees more queued calls the next taker the
//!   same way before it runs its job: one thread on its way at a time, so a burst of short jobs
//!   wakes a thread only as fast as the taken ones leave more behind (`blocking`'s pool lets up
//!   to five queue per idle thread instead, at the cost of a job held behind a long one). A
//!   thread checks the queue under the lock after every job, after its spin and after every
//!   wake, before it waits again.
//! - At most one thread spins at a time, for [`SPIN_BEFORE_WAIT`] before it waits, and only if
//!   its last wait was shorter than that (jobs come in a stream): the job submitted right after
//!   it finished then takes no system call to wake a thread, and the pool's threads in use stay
//!   few. A spinner does not spin while its submitter's round trip is longer than a spin, so it
//!   never takes the CPU from the task that will submit the next job.
//! - At most `max_threads` threads exist (`Builder::max_blocking_threads`, 512 by default); a
//!   thread that waited `keep_alive` (`Builder::thread_keep_alive`, 10 s by default) with no job
//!   exits, so an unused pool shrinks back to no thread at all. Both are read under the lock:
//!   the global pool's start may set them after the first jobs ran.
//! - A job is the closure inside the same `catch_unwind` wrapper as an async task: a panic
//!   never kills a blocking thread, and the [`JoinHandle`]'s policy decides what its awaiter
//!   sees. Dropping the handle before the job starts cancels it (the closure is dropped unrun).
//! - Blocking threads are not crew workers: they never run async tasks, and `block_on` on one
//!   blocks only that thread. A `spawn` inside a job goes to the pool whose task or `block_on`
//!   started the job (`Spawner::current` names it), else to the global pool.

use std::collections::VecDeque;
use std::future::Future;
use std::panic::Location;
use std::time::Duration;

use once_cell::sync::{Lazy, OnceCell};

use crate::config::{Env, ThreadHooks};
use crate::handle::JoinHandle;
use crate::identity::{Kind, OnTaskEnd, TaskInfo};
use crate::metrics::BlockingMetrics;
use crate::policy::{Policy, Propagate};
use crate::scheduler::{RawRunnable, Runnable, TaskMeta};
use crate::spawning::TaskFuture;
use crate::sync::{lock, thread, Arc, Condvar, Mutex, MutexGuard, SingleWriterCounter};

/// The process's blocking pool, with the limits of `CREW_MAX_BLOCKING_THREADS` and
/// `CREW_THREAD_KEEP_ALIVE_MS` (else the defaults) until the global pool's start sets those of
/// its builder (`set_limits`).
static GLOBAL: Lazy<Arc<BlockingPool>> = Lazy::new(|| match crate::config::blocking_limits(None, None, &Env::from_process()) {
    Ok((max_threads, keep_alive)) => BlockingPool::new(max_threads, keep_alive),
    Err(err) => panic!("crew::spawn_blocking: the blocking pool cannot start: {err}"),
});

/// Sets the process's blocking pool's limits: the global pool's start, with its builder's.
pub(crate) fn set_limits(max_threads: usize, keep_alive: Duration) {
    GLOBAL.set_limits(max_threads, keep_alive);
}

/// The start and stop hooks of the process's blocking threads: the global pool's, given to
/// `build_global` (`config/hooks.rs`).
static THREAD_HOOKS: OnceCell<ThreadHooks> = OnceCell::new();

/// Sets the blocking threads' start and stop hooks (see [`THREAD_HOOKS`]): once, by the global
/// pool's start.
pub(crate) fn set_thread_hooks(hooks: &ThreadHooks) {
    if hooks.has_start_or_stop() {
        let _ = THREAD_HOOKS.set(hooks.clone());
    }
}

/// Runs the stop hook when dropped: as a blocking thread's loop returns.
struct StopHook(&'static ThreadHooks);

impl Drop for StopHook {
    fn drop(&mut self) {
        self.0.stopping();
    }
}

/// The blocking pool's counts, for [`crate::Metrics`] (all zero before its first job).
pub(crate) fn metrics() -> BlockingMetrics {
    Lazy::get(&GLOBAL).map(|pool| pool.metrics()).unwrap_or_default()
}

/// Runs the blocking closure `f` on crew's blocking pool, off the async workers, and returns a
/// [`JoinHandle`] for its result, with the default [`Propagate`] panic policy.
///
/// Use it for work that blocks a thread — a `std::fs` call, a synchronous database client, a
/// long computation — so that async tasks keep running on the workers meanwhile. The pool
/// starts threads on demand, at most
/// [`DEFAULT_MAX_BLOCKING_THREADS`](crate::config::DEFAULT_MAX_BLOCKING_THREADS) unless
/// [`Builder::max_blocking_threads`](crate::Builder::max_blocking_threads) says otherwise; past
/// that, jobs queue. A thread idle for 10 seconds
/// ([`Builder::thread_keep_alive`](crate::Builder::thread_keep_alive)) exits.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn_blocking(|| {
///     std::thread::sleep(std::time::Duration::from_millis(1)); // blocks this thread only
///     std::thread::current().name().map(str::to_owned)
/// });
/// let name = crew::block_on(handle).unwrap();
/// assert!(name.starts_with("crew-blocking-"));
/// ```
#[track_caller]
pub fn spawn_blocking<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    spawn_blocking_with(Propagate, f)
}

/// As [`spawn_blocking`], with the panic policy `policy`: [`Propagate`],
/// [`Catch`](crate::Catch) or [`Ignore`](crate::Ignore).
///
/// # Examples
///
/// ```
/// let result = crew::block_on(crew::spawn_blocking_with(crew::Catch, || -> u8 { panic!("disk on fire") }));
/// assert_eq!(result.unwrap_err().panic_message(), Some("disk on fire"));
/// // The blocking thread survived its panic and takes the next job.
/// assert_eq!(crew::block_on(crew::spawn_blocking(|| 1)), 1);
/// ```
#[track_caller]
pub fn spawn_blocking_with<P, F, T>(policy: P, f: F) -> JoinHandle<T, P>
where
    P: Policy,
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _ = policy;
    spawn_told(TaskInfo::new(None, Location::caller()), f, (), |handle| handle)
}

/// Spawns `f` as the job `info` on the process's blocking pool, which also tells `told` when it
/// ends, and hands its handle to `place` before it can run (a set's member: its set files the
/// handle, then hears of the end). Returns what `place` returns.
pub(crate) fn spawn_told<P, F, T, E, R>(info: TaskInfo, f: F, told: E, place: impl FnOnce(JoinHandle<T, P>) -> R) -> R
where
    P: Policy,
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
    E: OnTaskEnd,
{
    // Spawned from a paused pool's task or `block_on`: the job carries the pool's clock.
    let info = crate::scheduler::with_current_clock(info);
    // Spawned from a private pool's task or `block_on`: the job's own spawns go to that pool.
    let home = crate::scheduler::current_private_pool();
    let f = move || {
        let _home = crate::scheduler::enter_job_home(home);
        f()
    };
    // A zero-sized schedule function over the never-dropped global pool.
    spawn_on(info, |runnable| GLOBAL.submit(runnable), f, told, place)
}

/// Spawns `f` as a job whose `Runnable` goes to `schedule` (see [`spawn_told`]).
fn spawn_on<P, F, T, E, R>(
    info: TaskInfo,
    schedule: impl Fn(Runnable) + Send + Sync + 'static,
    f: F,
    told: E,
    place: impl FnOnce(JoinHandle<T, P>) -> R,
) -> R
where
    P: Policy,
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
    E: OnTaskEnd,
{
    let task = TaskFuture::<_, P, _>::new(job(f), Blocking(told), &info);
    let schedule = move |runnable: RawRunnable| schedule(Runnable::new(runnable));
    let (runnable, task) =
        async_task::Builder::new().metadata(TaskMeta::new(info, None)).spawn(move |_| task, schedule);
    // A paused pool's job counts as its work until its run is over (`clock.rs`): taken here,
    // given back in `BlockingPool::run`.
    crate::scheduler::count_scheduled(runnable.metadata());
    let placed = place(JoinHandle::new(task));
    runnable.schedule();
    placed
}

/// The blocking pool as a task's home: it keeps no count of its tasks, and tells `E` (a set's
/// member's end, or nothing).
struct Blocking<E>(E);

impl<E: OnTaskEnd> OnTaskEnd for Blocking<E> {
    const KIND: Kind = Kind::Blocking;

    fn task_ended(&mut self) {
        self.0.task_ended();
    }
}

/// The closure as a future that runs it in its first poll.
fn job<F: FnOnce() -> T, T>(f: F) -> impl Future<Output = T> {
    let mut f = Some(f);
    std::future::poll_fn(move |_| std::task::Poll::Ready(f.take().expect("a blocking job is polled once")()))
}

/// How long a blocking thread with no job spins before it waits (crew's workers spin as long).
const SPIN_BEFORE_WAIT: Duration = Duration::from_micros(20);

/// The most blocking threads spinning at once.
const MAX_SPINNING: usize = 1;

/// A pool of threads that run blocking jobs.
#[derive(Debug)]
pub(crate) struct BlockingPool {
    state: Mutex<State>,
    /// `state`'s counts, mirrored under its lock for [`metrics`] to read without locking:
    /// threads, idle threads, queued jobs.
    published: [SingleWriterCounter; 3],
    work: Condvar,
}

#[derive(Debug, Default)]
struct State {
    queue: VecDeque<Runnable>,
    /// Threads alive.
    threads: usize,
    /// Threads waiting on `work` (or woken but not yet holding the lock again).
    idle: usize,
    /// `notify_one`s not yet consumed by a woken thread.
    woken: usize,
    /// Threads started that have not taken the lock yet.
    starting: usize,
    /// Threads spinning (see the module docs), at most [`MAX_SPINNING`].
    spinning: usize,
    /// Jobs queued for the spinning threads to take, at most one each.
    claimed: usize,
    /// For thread names.
    next_id: usize,
    /// The most threads at once; lowered below the threads alive, none starts until fewer run.
    max_threads: usize,
    /// How long an idle thread waits for a job before it exits.
    keep_alive: Duration,
}

impl BlockingPool {
    pub(crate) fn new(max_threads: usize, keep_alive: Duration) -> Arc<BlockingPool> {
        Arc::new(BlockingPool {
            state: Mutex::new(State { max_threads, keep_alive, ..State::default() }),
            published: Default::default(),
            work: Condvar::new(),
        })
    }

    /// Sets the limits (`Builder::max_blocking_threads`, `thread_keep_alive`), for the jobs
    /// and the waits to come.
    pub(crate) fn set_limits(&self, max_threads: usize, keep_alive: Duration) {
        let mut state = lock(&self.state);
        state.max_threads = max_threads;
        state.keep_alive = keep_alive;
    }

    /// Mirrors `state`'s counts (see `published`). Called under the lock.
    fn publish(&self, state: &State) {
        let [threads, idle, queued] = &self.published;
        threads.set(state.threads as u64);
        idle.set((state.idle - state.woken.min(state.idle)) as u64);
        queued.set(state.queue.len() as u64);
    }

    /// The mirrored counts.
    fn metrics(&self) -> BlockingMetrics {
        let [threads, idle, queued] = &self.published;
        let count = |counter: &SingleWriterCounter| usize::try_from(counter.get()).unwrap_or(usize::MAX);
        BlockingMetrics { threads: count(threads), idle_threads: count(idle), queued: count(queued) }
    }

    /// Queues `runnable` and makes sure a thread will take it (see the module invariants).
    pub(crate) fn submit(self: &Arc<Self>, runnable: Runnable) {
        let mut state = lock(&self.state);
        state.queue.push_back(runnable);
        self.call_taker(state);
    }

    /// Makes sure a thread comes for the queue's jobs (some are queued), under the lock it is
    /// given and releases: the spinning thread if unclaimed; else none if a woken or starting
    /// thread is on its way (it takes a job, then calls the next taker if jobs are left, before
    /// it runs its job); else an idle thread woken, or a thread started if fewer than
    /// `max_threads` run; else the busy threads, as they finish.
    fn call_taker(self: &Arc<Self>, mut state: MutexGuard<'_, State>) {
        if state.spinning > state.claimed {
            state.claimed += 1;
            self.publish(&state);
            return;
        }
        if state.woken + state.starting > 0 {
            self.publish(&state);
            return;
        }
        if state.idle > state.woken {
            state.woken += 1;
            self.publish(&state);
            drop(state);
            self.work.notify_one();
            return;
        }
        if state.threads >= state.max_threads {
            // Every thread is busy; the first to finish its job takes this one.
            self.publish(&state);
            return;
        }
        state.threads += 1;
        state.starting += 1;
        let id = state.next_id;
        state.next_id += 1;
        self.publish(&state);
        drop(state);
        let pool = self.clone();
        let started = thread::Builder::new().name(format!("crew-blocking-{id}")).spawn(move || pool.run());
        if let Err(err) = started {
            let mut state = lock(&self.state);
            state.threads -= 1;
            state.starting -= 1;
            self.publish(&state);
            if state.threads > 0 {
                // A running thread takes the job after its current one.
                return;
            }
            // No thread can run the queued jobs: cancel them (their closures are dropped) and say why.
            let stranded: Vec<Runnable> = state.queue.drain(..).collect();
            self.publish(&state);
            drop(state);
            drop(stranded);
            panic!("crew::spawn_blocking: could not start a blocking thread: {err}");
        }
    }

    /// A blocking thread's loop: jobs until none came for `keep_alive`.
    fn run(self: Arc<Self>) {
        // The `tokio` feature: a blocking thread belongs to no pool; it holds the context of the
        // threads of no pool for its whole life (`tokio_context.rs`).
        #[cfg(feature = "tokio")]
        let tokio = crate::tokio_context::no_pool();
        #[cfg(feature = "tokio")]
        let _tokio = tokio.enter();
        // The global pool's `on_thread_start` and `on_thread_stop`, if `build_global` set them
        // before this thread started: the same hooks for both ends of its life.
        let hooks = THREAD_HOOKS.get();
        if let Some(hooks) = hooks {
            hooks.started();
        }
        let _stop = hooks.map(StopHook);
        // Whether this thread's last wait was short enough for a spin to have caught it.
        let mut spin = true;
        let mut state = lock(&self.state);
        // Started by `call_taker`: on its way until now.
        state.starting -= 1;
        loop {
            if let Some(runnable) = state.queue.pop_front() {
                if state.queue.is_empty() {
                    self.publish(&state);
                    drop(state);
                } else {
                    // Before this job, which may block for long: the next job's taker.
                    self.call_taker(state);
                }
                // The job's panics are caught inside the task; `run` itself does not unwind.
                let paused = runnable.metadata().info().paused_clock().cloned();
                runnable.run();
                if let Some(clock) = paused {
                    clock.end_work();
                }
                state = lock(&self.state);
                continue;
            }
            if spin && state.spinning < MAX_SPINNING {
                state.spinning += 1;
                drop(state);
                let caught = self.spin();
                state = lock(&self.state);
                state.spinning -= 1;
                // A claim is one spinner's: this one takes it (the queue holds its job), and
                // the claims stay at most the spinners.
                state.claimed = state.claimed.saturating_sub(1);
                spin = caught;
                continue;
            }
            state.idle += 1;
            self.publish(&state);
            let keep_alive = state.keep_alive;
            let waiting = std::time::Instant::now();
            let (guard, wait) = self.work.wait_timeout(state, keep_alive).unwrap_or_else(|poisoned| {
                // crew's critical sections never panic halfway; take the guard as it is.
                poisoned.into_inner()
            });
            state = guard;
            state.idle -= 1;
            self.publish(&state);
            spin = waiting.elapsed() < SPIN_BEFORE_WAIT;
            if state.woken > 0 {
                state.woken -= 1;
                continue;
            }
            if wait.timed_out() && state.queue.is_empty() {
                state.threads -= 1;
                self.publish(&state);
                return;
            }
        }
    }

    /// Spins for [`SPIN_BEFORE_WAIT`] at most, until a job is queued (true) or not (false).
    fn spin(&self) -> bool {
        let start = std::time::Instant::now();
        let mut spins = 0u32;
        while start.elapsed() < SPIN_BEFORE_WAIT {
            // The queue's length as `publish` mirrors it under the lock: a look without it.
            if self.published[2].get() > 0 {
                return true;
            }
            spins += 1;
            if spins % 64 == 0 {
                thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        false
    }

    /// `(threads alive, jobs queued)`.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let state = lock(&self.state);
        (state.threads, state.queue.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{AtomicUsize, Ordering};
    use std::sync::Barrier;
    use std::time::Instant;

    fn spawn<T: Send + 'static>(pool: &Arc<BlockingPool>, f: impl FnOnce() -> T + Send + 'static) -> JoinHandle<T> {
        let pool = pool.clone();
        spawn_on(TaskInfo::new(None, Location::caller()), move |runnable| pool.submit(runnable), f, (), |handle| handle)
    }

    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(60), "timed out waiting until {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn never_more_threads_than_the_bound_and_every_job_runs() {
        let pool = BlockingPool::new(2, Duration::from_secs(60));
        let gate = Arc::new(Barrier::new(3));
        let ran = Arc::new(AtomicUsize::new(0));
        // Two jobs hold both threads at the gate; the other eight must queue.
        let mut handles = Vec::new();
        for _ in 0..2 {
            let (gate, ran) = (gate.clone(), ran.clone());
            handles.push(spawn(&pool, move || {
                gate.wait();
                ran.fetch_add(1, Ordering::SeqCst);
            }));
        }
        for _ in 0..8 {
            let ran = ran.clone();
            handles.push(spawn(&pool, move || {
                ran.fetch_add(1, Ordering::SeqCst);
            }));
        }
        // Both threads take a gated job; the rest stays queued, with no third thread.
        wait_until("both threads hold a gated job", || pool.counts().1 == 8);
        assert_eq!(pool.counts(), (2, 8), "two threads at most; the rest queue");
        gate.wait();
        for handle in handles {
            crate::block_on(handle);
        }
        assert_eq!(ran.load(Ordering::SeqCst), 10);
        assert_eq!(pool.counts().0, 2);
    }

    #[test]
    fn idle_threads_exit_after_the_keep_alive() {
        let pool = BlockingPool::new(4, Duration::from_millis(20));
        let gate = Arc::new(Barrier::new(4));
        let started = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let (gate, started) = (gate.clone(), started.clone());
                spawn(&pool, move || {
                    started.fetch_add(1, Ordering::SeqCst);
                    gate.wait();
                })
            })
            .collect();
        // Held at the gate, the three threads cannot have exited yet.
        wait_until("three jobs run at once", || started.load(Ordering::SeqCst) == 3);
        assert_eq!(pool.counts().0, 3);
        gate.wait();
        for handle in handles {
            crate::block_on(handle);
        }
        wait_until("the idle threads exit", || pool.counts().0 == 0);
        // And the pool grows again on demand.
        assert_eq!(crate::block_on(spawn(&pool, || 5)), 5);
    }

    #[test]
    fn jobs_that_block_each_get_a_thread_of_their_own() {
        // Submitted at once, each job waits until all run: they meet only if none waits behind
        // another (a thread that takes a job calls the next taker before it runs it).
        const JOBS: usize = 8;
        let pool = BlockingPool::new(16, Duration::from_secs(60));
        let running = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..JOBS)
            .map(|_| {
                let running = running.clone();
                spawn(&pool, move || {
                    running.fetch_add(1, Ordering::SeqCst);
                    let start = Instant::now();
                    while running.load(Ordering::SeqCst) < JOBS {
                        if start.elapsed() > Duration::from_secs(30) {
                            return false;
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    true
                })
            })
            .collect();
        for handle in handles {
            assert!(crate::block_on(handle), "a job waited behind another while the pool could start threads");
        }
    }

    #[test]
    fn an_idle_thread_is_reused_rather_than_a_new_one_started() {
        let pool = BlockingPool::new(8, Duration::from_secs(60));
        for i in 0..20 {
            assert_eq!(crate::block_on(spawn(&pool, move || i)), i);
            // The job's thread counts itself idle only once it waits again.
            wait_until("the thread waits again", || lock(&pool.state).idle == 1);
        }
        assert_eq!(pool.counts().0, 1, "sequential jobs share one thread");
    }
}
