//! [`Metrics`]: a snapshot of a pool's counters, from [`crate::metrics()`](fn@crate::metrics) (the global pool) or
//! [`Pool::metrics`](crate::Pool::metrics).
//!
//! Invariants:
//! - Counting costs the workers a load and a store on lines only they write (see
//!   `scheduler/cores/counters.rs`), never a lock or a read-modify-write on a shared line; what
//!   happens outside the workers (spawns and wakes from other threads) is counted with one
//!   shared counter each, on paths that already write the injector's lines.
//! - Taking a snapshot never blocks a worker and takes no lock a worker takes, but each core's
//!   local-home slot, which its worker locks only as its thread's local tasks' home attaches or
//!   leaves: it reads the counters, the queues' lengths and the lengths mirrored next to the
//!   locked queues.
//! - A snapshot is not atomic as a whole: counters read one after the other may be a little
//!   apart. Each counter alone never goes backwards between two snapshots of the same pool.

use std::fmt;
use std::time::Duration;

/// A snapshot of a pool's counters: per worker and in total, plus what happens outside the
/// workers. Read with [`crew::metrics()`](fn@crate::metrics) for the global pool and
/// [`Pool::metrics`](crate::Pool::metrics) for a private one.
///
/// Counters count from the pool's start and never go backwards; compare two snapshots to get
/// rates. Depths are the lengths of the queues at the time of reading.
///
/// How to read them:
/// - [`WorkerMetrics::stolen`] high and [`WorkerMetrics::lifo_runs`] low: work spreads over
///   the workers by stealing (many independent tasks). LIFO runs high: tasks mostly wake each
///   other on one worker (message passing), which is the fast path.
/// - [`WorkerMetrics::parks`] high while the pool is loaded: more workers than the work keeps
///   busy; [`WorkerMetrics::busy`] against [`Metrics::elapsed`] says how busy each one is.
/// - [`WorkerMetrics::takeovers`] or [`WorkerMetrics::rescues`] above zero: some poll blocked
///   its thread (see [`Builder::on_slow_poll`](crate::Builder::on_slow_poll) for which task).
/// - [`Metrics::injector_depth`] growing: tasks come from outside the pool faster than the
///   workers take them.
///
/// # Examples
///
/// ```
/// let pool = crew::Pool::builder().workers(2).build().unwrap();
/// let handles: Vec<_> = (0..100).map(|i| pool.spawn(async move { i })).collect();
/// for handle in handles {
///     crew::block_on(handle);
/// }
/// let metrics = pool.metrics();
/// assert_eq!(metrics.spawned_outside, 100);
/// assert!(metrics.total.polls >= 100);
/// assert_eq!(metrics.workers.len(), 2);
/// println!("{metrics}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metrics {
    /// One entry per core (a worker's queues and counters): entry N is worker N's as the pool
    /// started. A core that took over a stuck worker's work is added after them, the first time
    /// one runs, and runs as that worker's number ([`WorkerMetrics::worker`]); the stuck core
    /// stays in the list, with the counts it had. Entries are never removed or reordered, so
    /// two snapshots compare entry by entry.
    pub workers: Vec<WorkerMetrics>,
    /// The sum over every core of the pool, including cores given up after a takeover.
    pub total: WorkerMetrics,
    /// Tasks spawned from threads that are not this pool's workers (the rest are in each
    /// worker's [`WorkerMetrics::spawned`]).
    pub spawned_outside: u64,
    /// Tasks spawned and not yet ended (finished, panicked, or dropped unfinished).
    pub live_tasks: u64,
    /// Wakes of a parked worker sent from threads that are not this pool's workers.
    pub notifies_outside: u64,
    /// Wakes that threads outside the pool skipped because a worker was already searching.
    pub notifies_skipped_outside: u64,
    /// Tasks in the injector, the queue of tasks scheduled from outside the workers.
    pub injector_depth: usize,
    /// Threads whose core was taken over while they were stuck in a poll, and whose poll has
    /// not returned yet.
    pub stuck_threads: usize,
    /// Worker threads the pool started: its first workers', and those a takeover or a hand-off
    /// (`block_on`, `scope`, `block_in_place` on a worker) needed when no spare thread waited.
    pub threads_started: u64,
    /// Spare threads waiting now: threads whose worker life ended early (their stuck poll
    /// returned after a takeover, or their core was handed off) that wait a while (10 s) to run
    /// the next core a takeover or hand-off starts, instead of a new thread. At most
    /// [`Builder::max_stuck_threads`](crate::Builder::max_stuck_threads), or the pool's worker
    /// count if that is more.
    pub spare_threads: usize,
    /// Slow-poll reports dropped because [`Builder::on_slow_poll`](crate::Builder::on_slow_poll)'s
    /// hook fell behind: 1,024 reports were already waiting for it. Zero without a hook.
    pub slow_poll_reports_dropped: u64,
    /// The blocking pool behind [`spawn_blocking`](crate::spawn_blocking), which every pool
    /// shares.
    pub blocking: BlockingMetrics,
    /// Time since the pool started: the span that [`WorkerMetrics::busy`] is part of.
    pub elapsed: Duration,
}

impl Metrics {
    /// A pool's metrics before it started: no worker, every count zero.
    pub(crate) fn not_started() -> Metrics {
        Metrics {
            workers: Vec::new(),
            total: WorkerMetrics::default(),
            spawned_outside: 0,
            live_tasks: 0,
            notifies_outside: 0,
            notifies_skipped_outside: 0,
            injector_depth: 0,
            stuck_threads: 0,
            threads_started: 0,
            spare_threads: 0,
            slow_poll_reports_dropped: 0,
            blocking: BlockingMetrics::default(),
            elapsed: Duration::ZERO,
        }
    }
}

/// One worker's counters (or their sum, in [`Metrics::total`]).
///
/// # Examples
///
/// ```
/// let pool = crew::Pool::builder().workers(1).build().unwrap();
/// crew::block_on(pool.spawn(async {}));
/// let worker = &pool.metrics().workers[0];
/// assert!(worker.polls >= 1);
/// assert_eq!(worker.stolen, 0, "a single worker has no one to steal from");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerMetrics {
    /// The worker number this core runs as now (its thread is named `crew-N`, or the pool's
    /// prefix); `None` for a core no thread runs now (given up after a takeover), and in
    /// [`Metrics::total`].
    pub worker: Option<usize>,
    /// Polls of tasks run on this worker.
    pub polls: u64,
    /// Tasks spawned by tasks running on this worker: they start in its own queues.
    pub spawned: u64,
    /// Tasks this worker took from other workers' queues (in batches of up to half a queue):
    /// high when work must spread because it is created unevenly.
    pub stolen: u64,
    /// Searches this worker made of the other workers' queues and the injector, each a sweep
    /// over all of them (a spin before parking, `Builder::spin_before_park`, sweeps about once
    /// a microsecond); many attempts for few steals means searching workers find little.
    pub steal_attempts: u64,
    /// Tasks run from the LIFO slot: a task woken by the task this worker ran just before, run
    /// next while its data is in cache. High under message passing.
    pub lifo_runs: u64,
    /// Tasks this worker, idle as the watcher, took from the LIFO slot of a worker that stayed
    /// inside one poll for 250 µs.
    pub rescues: u64,
    /// Times this worker was stuck in one poll past the takeover threshold while tasks waited,
    /// and a new thread took its queues over.
    pub takeovers: u64,
    /// Batches of tasks this worker took from the injector.
    pub injector_batches: u64,
    /// Times this worker parked (found no task anywhere and went to sleep).
    pub parks: u64,
    /// Times it was woken from a park.
    pub unparks: u64,
    /// Wakes of a parked worker that this worker sent after queueing work.
    pub notifies: u64,
    /// Wakes this worker skipped because another worker was already searching, which will
    /// find the work: the cheap path that keeps a message-passing pool from waking everyone.
    pub notifies_skipped: u64,
    /// Time spent out of park (running tasks, searching, driving the reactor).
    pub busy: Duration,
    /// Tasks in its LIFO slot now (0 or 1).
    pub lifo_depth: usize,
    /// Tasks in its deque now.
    pub deque_depth: usize,
    /// Tasks in its deferred list now: tasks that yielded or were woken while they ran.
    pub deferred_depth: usize,
    /// Local tasks ([`spawn_local`](crate::spawn_local)) spawned by tasks running on this worker.
    pub local_spawned: u64,
    /// Polls of local tasks this worker ran: its thread's own, which no other worker runs.
    pub local_runs: u64,
    /// Local tasks alive now on the thread that runs this worker (queued or waiting).
    pub local_tasks: u64,
    /// Of those, the ones queued now, ready to run.
    pub local_depth: usize,
}

impl WorkerMetrics {
    /// Adds `other`'s counters and depths to these (not its worker number).
    pub(crate) fn add(&mut self, other: &WorkerMetrics) {
        self.polls += other.polls;
        self.spawned += other.spawned;
        self.stolen += other.stolen;
        self.steal_attempts += other.steal_attempts;
        self.lifo_runs += other.lifo_runs;
        self.rescues += other.rescues;
        self.takeovers += other.takeovers;
        self.injector_batches += other.injector_batches;
        self.parks += other.parks;
        self.unparks += other.unparks;
        self.notifies += other.notifies;
        self.notifies_skipped += other.notifies_skipped;
        self.busy += other.busy;
        self.lifo_depth += other.lifo_depth;
        self.deque_depth += other.deque_depth;
        self.deferred_depth += other.deferred_depth;
        self.local_spawned += other.local_spawned;
        self.local_runs += other.local_runs;
        self.local_tasks += other.local_tasks;
        self.local_depth += other.local_depth;
    }
}

/// The blocking pool's state.
///
/// # Examples
///
/// ```
/// crew::block_on(crew::spawn_blocking(|| ()));
/// let blocking = crew::metrics().blocking;
/// assert!(blocking.threads >= blocking.idle_threads);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockingMetrics {
    /// Blocking threads alive (each exits after 10 s without a job).
    pub threads: usize,
    /// Of those, the ones waiting for a job.
    pub idle_threads: usize,
    /// Jobs queued, waiting for a thread (all threads busy, at the cap of 512).
    pub queued: usize,
}

/// A table: one line per worker, then the total and the pool-wide numbers.
impl fmt::Display for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>7} {:>10} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>6} {:>10} {:>6} {:>7}",
            "worker",
            "polls",
            "spawned",
            "stolen",
            "lifo",
            "parks",
            "rescue",
            "takeov",
            "busy%",
            "queued",
            "defer",
            "local"
        )?;
        let elapsed = self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        let line = |f: &mut fmt::Formatter<'_>, name: &str, w: &WorkerMetrics| {
            writeln!(
                f,
                "{name:>7} {:>10} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>6.1} {:>10} {:>6} {:>7}",
                w.polls,
                w.spawned,
                w.stolen,
                w.lifo_runs,
                w.parks,
                w.rescues,
                w.takeovers,
                100.0 * w.busy.as_secs_f64() / elapsed,
                w.lifo_depth + w.deque_depth,
                w.deferred_depth,
                w.local_tasks
            )
        };
        for worker in &self.workers {
            line(f, &worker.worker.map_or_else(|| "-".to_owned(), |number| number.to_string()), worker)?;
        }
        line(f, "total", &self.total)?;
        write!(
            f,
            "live tasks {}, spawned from outside {}, injector {}, stuck threads {}, threads started {} ({} spare), blocking threads {} ({} idle, {} jobs queued), up {:.1?}",
            self.live_tasks,
            self.spawned_outside,
            self.injector_depth,
            self.stuck_threads,
            self.threads_started,
            self.spare_threads,
            self.blocking.threads,
            self.blocking.idle_threads,
            self.blocking.queued,
            self.elapsed
        )?;
        if self.slow_poll_reports_dropped > 0 {
            write!(f, ", slow-poll reports dropped {}", self.slow_poll_reports_dropped)?;
        }
        Ok(())
    }
}
