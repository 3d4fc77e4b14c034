//! Pool configuration: the [`Builder`], its limits and defaults (`MAX_WORKERS`,
//! `DEFAULT_TAKEOVER_AFTER`, ...), the names of the `CREW_` variables, and [`BuildError`].
//! `crew::Builder` and `crew::BuildError` are these, re-exported at the crate root.
//!
//! ```
//! let too_many = crew::config::MAX_WORKERS + 1;
//! let err = crew::Pool::builder().workers(too_many).build().unwrap_err();
//! assert!(err.to_string().contains("1..=1024"));
//! ```
//!
//! Invariants (the limits are in `limits.rs`, the variables in `env.rs`, the error in
//! `error.rs`):
//! - Every value is validated before a thread starts: a pool either starts with exactly the
//!   configuration asked for, or `build` returns a [`BuildError`] that names the bad value, where
//!   it came from, and what is accepted. There is no silent fallback to a default.
//! - `CREW_WORKERS`, `CREW_TAKEOVER_MS`, `CREW_MAX_STUCK_THREADS` and `CREW_TASK_DUMP` apply to
//!   the global pool only, and each only where the `Builder` left its setting unset; they are
//!   read once, when the global pool starts. A variable that applies and holds a bad value is
//!   always an error; one whose setting the `Builder` made is not read (its value, good or bad,
//!   is ignored). Two others are not the global pool's: `CREW_MEMBARRIER` is process-wide, and
//!   every pool's build, private ones too, rejects a bad value; `CREW_TEST_SEED` is read by
//!   seeded tests (`#[crew::test(seed = ..)]`, `(seeds = ..)`) only, never by a build. `CREW_TAKEOVER_MS` sets two things, whether takeover
//!   is on and its threshold: [`Builder::takeover`]`(true)` leaves it the threshold,
//!   `takeover(false)` and [`Builder::takeover_after`] leave it nothing.
//! - The global pool is configured at most once per process: [`Builder::build_global`] fails once
//!   it has started, whether it was started by an earlier `build_global` or by a first `spawn`.

mod blocking;
mod env;
mod error;
mod hooks;
mod limits;
mod unhandled;

use std::time::Duration;

#[cfg(not(loom))] // the blocking pool's own read of its variables; loom builds leave it out
pub(crate) use blocking::blocking_limits;
pub(crate) use env::{task_dump_from_env, Env};
pub use env::{
    MAX_BLOCKING_THREADS_ENV, MAX_STUCK_THREADS_ENV, MEMBARRIER_ENV, TAKEOVER_ENV, TASK_DUMP_ENV, TEST_SEED_ENV,
    THREAD_KEEP_ALIVE_ENV, WORKERS_ENV,
};
pub use error::BuildError;
pub(crate) use hooks::{ThreadHooks, ThreadNameFn};
#[allow(deprecated)]
pub use limits::MAX_BLOCKING_THREADS;
pub use limits::{
    DEFAULT_MAX_BLOCKING_THREADS, DEFAULT_SLOW_POLL_THRESHOLD, DEFAULT_SPIN_BEFORE_PARK, DEFAULT_TAKEOVER_AFTER,
    DEFAULT_THREAD_KEEP_ALIVE, MAX_MAX_BLOCKING_THREADS, MAX_SPIN_BEFORE_PARK, MAX_STACK_SIZE, MAX_STUCK_THREADS,
    MAX_TAKEOVER_AFTER, MAX_THREAD_KEEP_ALIVE, MAX_WORKERS, MIN_STACK_SIZE, MIN_TAKEOVER_AFTER,
};
pub use unhandled::UnhandledPanic;

use crate::escape::Escaped;
use crate::report::{Hook, SlowPoll};

/// The cap on stuck threads when none is set: the number of workers, and at least 16.
/// `BENCHMARKS.md` ("Blocking inside a poll") compares 2, 8 and 64 on 2 workers.
fn default_stuck_threads(workers: usize) -> usize {
    workers.max(16)
}

const WORKERS_EXPECTED: &str = "expected a number of worker threads in 1..=1024";
const STACK_EXPECTED: &str = "expected a size in bytes in 65536..=1073741824";
const THRESHOLD_EXPECTED: &str = "expected a duration in 1ms..=3600s";
const STUCK_EXPECTED: &str = "expected a number of threads in 0..=1024";
const SPIN_EXPECTED: &str = "expected a duration in 0s..=1ms";
const THREAD_NAME_EXPECTED: &str =
    "expected printable text: no control character (newline, NUL, escape), line separator, invisible format character, `\\` or `\"`";

const SEED_EXPECTED: &str =
    "a seeded pool runs on one worker, with no takeover and its clock paused: leave the setting unset";

const GLOBAL_CLOCK_EXPECTED: &str =
    "the global pool keeps real time and its own order: build a private Pool with start_paused or seed";

const DEFAULT_THREAD_NAME: &str = "crew-worker";

/// Configures a [`Pool`](crate::Pool), or the global pool behind [`spawn`](crate::spawn).
///
/// # Examples
///
/// ```
/// let pool = crew::Pool::builder()
///     .workers(2)
///     .thread_name("my-pool")
///     .stack_size(1 << 20)
///     .build()
///     .expect("a valid configuration");
/// assert_eq!(pool.workers(), 2);
/// assert_eq!(crew::block_on(pool.spawn(async { 6 * 7 })), 42);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Builder {
    workers: Option<usize>,
    thread_name: Option<String>,
    stack_size: Option<usize>,
    takeover: Option<bool>,
    takeover_after: Option<Duration>,
    max_stuck_threads: Option<usize>,
    slow_poll_threshold: Option<Duration>,
    on_slow_poll: Option<Hook>,
    task_dump: Option<bool>,
    spin_before_park: Option<Duration>,
    start_paused: Option<bool>,
    seed: Option<u64>,
    hooks: ThreadHooks,
    thread_name_fn: Option<ThreadNameFn>,
    max_blocking_threads: Option<usize>,
    thread_keep_alive: Option<Duration>,
    unhandled_panic: Option<UnhandledPanic>,
    #[cfg(feature = "tokio")]
    tokio_handle: Option<tokio::runtime::Handle>,
}

/// The checked configuration a pool starts with.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) workers: usize,
    pub(crate) thread_name: String,
    pub(crate) stack_size: Option<usize>,
    /// Whether worker loops run as futures that turn crew's driver (`driver::run`): all but a
    /// seeded pool's, and every loom build's.
    pub(crate) drive_reactor: bool,
    /// How long a worker may sit in one poll while tasks wait before it is taken over; `None`:
    /// never.
    pub(crate) takeover_after: Option<Duration>,
    /// The most threads stuck in a poll after a takeover at once: spare cores.
    pub(crate) max_stuck_threads: usize,
    pub(crate) slow_poll_threshold: Duration,
    pub(crate) on_slow_poll: Option<Hook>,
    /// Whether a monitor thread samples the workers (takeover on, or a hook set; never under
    /// loom, which has no clock: its models drive the monitor by hand).
    pub(crate) monitor: bool,
    /// Whether each task keeps a record for the task dump (`Pool::dump`).
    pub(crate) task_dump: bool,
    /// How long a searcher that found nothing sweeps again before it parks (zero under loom,
    /// which has no clock, and by default under miri).
    pub(crate) spin_before_park: Duration,
    /// The spin was set on the builder: it applies while the driver has sources registered too
    /// (a default one does not: `scheduler/cores/search.rs`).
    pub(crate) spin_despite_io: bool,
    /// Whether the pool's timers read a paused clock (`clock.rs`); always true with a seed.
    pub(crate) start_paused: bool,
    /// The seed of a seeded pool's picks: one worker, no monitor, no reactor (`Builder::seed`).
    pub(crate) seed: Option<u64>,
    /// `on_thread_start`, `_stop`, `_park` and `_unpark` (`hooks.rs`).
    pub(crate) hooks: ThreadHooks,
    /// Names the worker threads, instead of `{thread_name}-N`.
    pub(crate) thread_name_fn: Option<ThreadNameFn>,
    /// What a panic no awaiter will see does (`unhandled.rs`).
    pub(crate) unhandled_panic: UnhandledPanic,
    /// The tokio runtime whose context the pool's threads enter (`tokio_context.rs`); `None`:
    /// crew's own.
    #[cfg(feature = "tokio")]
    pub(crate) tokio_handle: Option<tokio::runtime::Handle>,
}

impl Builder {
    /// A builder with every setting at its default: `num_cpus::get()` workers (or
    /// `CREW_WORKERS` for the global pool), threads named `crew-worker-N`, the platform's stack size.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Builder::new().workers(1).build().unwrap();
    /// assert_eq!(pool.workers(), 1);
    /// ```
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Sets the number of worker threads, in `1..=`[`MAX_WORKERS`]. Checked by `build`.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = crew::Pool::builder().workers(0).build().unwrap_err();
    /// assert!(err.to_string().contains("1..=1024"));
    /// ```
    pub fn workers(mut self, workers: usize) -> Builder {
        self.workers = Some(workers);
        self
    }

    /// Sets the worker thread name prefix; worker `i` is named `"{prefix}-{i}"`. The prefix is
    /// printable text (it appears in slow-poll reports and panic messages, one line each): `build`
    /// refuses control characters (newline, NUL, escape), line separators, invisible format
    /// characters, `\` and `"`.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).thread_name("io").build().unwrap();
    /// let name = crew::block_on(pool.spawn(async {
    ///     std::thread::current().name().map(str::to_owned)
    /// }));
    /// assert_eq!(name.as_deref(), Some("io-0"));
    /// assert!(crew::Pool::builder().thread_name("two\nlines").build().is_err());
    /// ```
    pub fn thread_name(mut self, prefix: impl Into<String>) -> Builder {
        self.thread_name = Some(prefix.into());
        self.thread_name_fn = None;
        self
    }

    /// Sets each worker's stack size in bytes, in [`MIN_STACK_SIZE`]`..=`[`MAX_STACK_SIZE`].
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).stack_size(4 << 20).build().unwrap();
    /// crew::block_on(pool.spawn(async { let big = [0u8; 1 << 20]; big.len() }));
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Builder {
        self.stack_size = Some(bytes);
        self
    }

    /// Does nothing: every pool's idle workers turn crew's own I/O driver as they park, and a
    /// busy worker turns it without blocking at its fairness tick (`docs/timers-net-blocking.md`).
    /// It chose between parking inside async-io's reactor and parking plainly, when crew's
    /// sockets and timers were async-io's; there is no other way to park now.
    ///
    /// # Examples
    ///
    /// ```
    /// # #![allow(deprecated)]
    /// let pool = crew::Pool::builder().workers(1).drive_reactor(false).build().unwrap();
    /// crew::block_on(pool.spawn(crew::time::sleep(std::time::Duration::from_millis(1))));
    /// ```
    #[deprecated(since = "0.2.0", note = "a no-op: idle workers always turn crew's own I/O driver")]
    pub fn drive_reactor(self, _drive: bool) -> Builder {
        self
    }

    /// Sets whether a worker stuck inside one poll is taken over (on by default; off under miri,
    /// which cannot afford an interpreted monitor thread in every pool): when it has
    /// been in one poll for [`takeover_after`](Builder::takeover_after) while tasks wait that no
    /// idle worker can take, its queues are handed to a new thread, which carries on as that
    /// worker; the stuck thread finishes its poll and then exits. `docs/takeover.md` explains
    /// it; `BENCHMARKS.md` ("Blocking inside a poll") measures what it buys.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(2).takeover(false).build().unwrap();
    /// # drop(pool);
    /// ```
    pub fn takeover(mut self, on: bool) -> Builder {
        self.takeover = Some(on);
        self
    }

    /// Sets how long a worker may sit in one poll, while tasks wait behind it, before it is taken
    /// over: in [`MIN_TAKEOVER_AFTER`]`..=`[`MAX_TAKEOVER_AFTER`], [`DEFAULT_TAKEOVER_AFTER`]
    /// if unset (`CREW_TAKEOVER_MS` for the global pool).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = crew::Pool::builder().workers(1).takeover_after(Duration::from_millis(50)).build().unwrap();
    /// # drop(pool);
    /// ```
    pub fn takeover_after(mut self, threshold: Duration) -> Builder {
        self.takeover_after = Some(threshold);
        self
    }

    /// Caps the threads that hold no worker because they are stuck in a poll after a takeover,
    /// in `0..=`[`MAX_STUCK_THREADS`] (if unset: the number of workers, and at least 16;
    /// `CREW_MAX_STUCK_THREADS` for the global pool). At the cap, takeovers stop (a [`SlowPoll`] with
    /// [`SlowPollKind::CapReached`](crate::SlowPollKind::CapReached) says so) until a stuck
    /// poll returns, so CPU-bound polls on every worker cannot grow the thread count without
    /// bound.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(4).max_stuck_threads(16).build().unwrap();
    /// # drop(pool);
    /// ```
    pub fn max_stuck_threads(mut self, threads: usize) -> Builder {
        self.max_stuck_threads = Some(threads);
        self
    }

    /// Sets how long a poll runs before the slow-poll hook hears of it
    /// ([`on_slow_poll`](Builder::on_slow_poll)): in [`MIN_TAKEOVER_AFTER`]`..=`
    /// [`MAX_TAKEOVER_AFTER`], [`DEFAULT_SLOW_POLL_THRESHOLD`] if unset.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = crew::Pool::builder()
    ///     .workers(1)
    ///     .slow_poll_threshold(Duration::from_millis(2))
    ///     .on_slow_poll(|report| eprintln!("{report}"))
    ///     .build()
    ///     .unwrap();
    /// # drop(pool);
    /// ```
    pub fn slow_poll_threshold(mut self, threshold: Duration) -> Builder {
        self.slow_poll_threshold = Some(threshold);
        self
    }

    /// Sets the slow-poll hook: it hears of every poll that runs longer than the slow-poll
    /// threshold (the task's id, name and spawn location, its worker, how long so far), of every
    /// takeover and of takeovers refused at the cap, and of each such poll's end (how long it
    /// took in all). With a hook, each poll also records its task for the report
    /// (`BENCHMARKS.md` measures the cost); without one, nothing is recorded.
    ///
    /// Where it runs: on the pool's own reporter thread (`crew-reporter`), one report at a time
    /// and in order for each poll, never while a crew lock is held. The monitor and the workers
    /// only queue reports for it, so a hook that is slow or blocks (a log shipper, a metrics
    /// push) delays no takeover, worker or task, only the reports after it. Up to 1,024 reports
    /// wait; past that, new ones are dropped and counted in
    /// [`Metrics::slow_poll_reports_dropped`](crate::Metrics::slow_poll_reports_dropped).
    /// `crew::spawn` inside the hook spawns onto this pool (the global pool's hook: the global
    /// pool). A panic in the hook is caught. The pool's drop does not wait for a hook call in
    /// progress, and once it began nothing more is delivered: the reports still queued are
    /// dropped, and the reporter thread exits as soon as the call in progress returns.
    ///
    /// # Examples
    ///
    /// ```
    /// // One line for the global pool: every slow poll is logged to stderr.
    /// crew::Builder::new().on_slow_poll(|report| eprintln!("{report}")).build_global().unwrap();
    /// # crew::block_on(crew::spawn(async {}));
    /// ```
    pub fn on_slow_poll(mut self, hook: impl Fn(&SlowPoll) + Send + Sync + 'static) -> Builder {
        self.on_slow_poll = Some(Hook::new(hook));
        self
    }

    /// Keeps a record of each task (its state, where it waits, its poll count) so that
    /// [`Pool::dump`](crate::Pool::dump) and [`crew::dump`](fn@crate::dump) can list the live
    /// tasks. Off by default (`CREW_TASK_DUMP=on` for the global pool): it costs each task a
    /// small second allocation and each poll and wake a few stores and a clock read
    /// (`docs/performance-notes.md`, "Costs of identity, metrics and the dump").
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).task_dump(true).build().unwrap();
    /// let (tx, rx) = futures::channel::oneshot::channel::<()>();
    /// let waiting = crew::task::Builder::new().name("waiting").spawn_on(&pool, rx);
    /// while pool.dump().tasks().iter().all(|task| task.polls() == 0) {
    ///     std::thread::yield_now(); // until its first poll
    /// }
    /// let dump = pool.dump();
    /// assert_eq!(dump.tasks()[0].name(), Some("waiting"));
    /// println!("{dump}");
    /// drop(tx);
    /// # let _ = crew::block_on(waiting);
    /// ```
    pub fn task_dump(mut self, on: bool) -> Builder {
        self.task_dump = Some(on);
        self
    }

    /// Sets how long a worker that ran out of work, and found none to steal, keeps sweeping
    /// the other workers' queues and the injector before it parks: in
    /// `0s..=`[`MAX_SPIN_BEFORE_PARK`]. If unset: [`DEFAULT_SPIN_BEFORE_PARK`], or no spin
    /// when the pool has more workers than the CPUs the process may use. Work that arrives
    /// meanwhile (from a plain thread's `block_on`, a foreign wake, another worker) is taken
    /// without a thread wakeup, at the cost of up to this much CPU each time a worker runs dry.
    /// Between sweeps the worker yields its thread (`sched_yield`), so a spinner never keeps a
    /// thread that is ready to run off the core it is on. A worker spins only if it ran a task
    /// since it last woke, so one woken for nothing (the watcher at its deadline, say) parks
    /// again at once. One worker at a time spins (the others park: woken one at a time, each
    /// takes a batch of the work that arrived, where spinners would take it task by task); a
    /// pool whose work ran out spins once per worker, then sleeps. `Duration::ZERO` parks at
    /// once, as tokio does.
    ///
    /// Set here, the spin applies whatever the pool runs. Left unset, the default
    /// ([`DEFAULT_SPIN_BEFORE_PARK`]) is skipped while crew's I/O driver has any socket or fd
    /// registered in the process: a service's next work comes through the driver, whose holder
    /// the kernel wakes, and a spinner only takes CPU from the threads that send it that work
    /// (`docs/performance-notes.md`, "The spin before parking").
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// // Park at once: the least CPU when work comes rarely.
    /// let pool = crew::Pool::builder().workers(2).spin_before_park(Duration::ZERO).build().unwrap();
    /// assert_eq!(crew::block_on(pool.spawn(async { 1 })), 1);
    /// ```
    pub fn spin_before_park(mut self, spin: Duration) -> Builder {
        self.spin_before_park = Some(spin);
        self
    }

    /// Starts the pool with its clock paused: every timer crew makes for the pool's tasks and
    /// its [`block_on`](crate::Pool::block_on) ([`crew::time`](crate::time)'s sleep, timeout
    /// and interval, [`crew::hyper::Timer`](crate::hyper::Timer), `crew::http`'s timeouts)
    /// reads the pool's virtual clock, bound when the timer is made, and
    /// [`crew::time::now`](crate::time::now) returns it there. The clock moves only by
    /// [`crew::time::advance`](crate::time::advance), or when nothing of the pool can run (no
    /// task queued or running, no poll of its `block_on`, no blocking job of its own): then it
    /// jumps to the next deadline. Timers due at the same instant fire in the order they were
    /// made. `std::time::Instant::now()`, tokio's timers, the reactor and crew's own monitor
    /// keep real time. The global pool cannot start paused
    /// ([`build_global`](Builder::build_global) refuses it). See `docs/testing.md`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let pool = crew::Pool::builder().workers(2).start_paused(true).build().unwrap();
    /// let real = Instant::now();
    /// let timed_out = pool.block_on(async {
    ///     let start = crew::time::now();
    ///     let result = crew::time::timeout(Duration::from_secs(3600), std::future::pending::<()>()).await;
    ///     assert_eq!(crew::time::now() - start, Duration::from_secs(3600));
    ///     result.is_err()
    /// });
    /// assert!(timed_out);
    /// assert!(real.elapsed() < Duration::from_secs(3600));
    /// ```
    pub fn start_paused(mut self, paused: bool) -> Builder {
        self.start_paused = Some(paused);
        self
    }

    /// Makes the pool a seeded one, for tests that replay an interleaving: it runs its tasks on
    /// one worker, each time picking the next among those ready by a generator seeded with
    /// `seed`, with its clock paused ([`start_paused`](Builder::start_paused)). A program that
    /// touches no real socket, no blocking job and no thread of its own polls the same tasks in
    /// the same order in every run of the same seed, in any process
    /// ([`Pool::poll_trace`](crate::Pool::poll_trace) shows it). So that nothing else decides
    /// the order, a seeded pool has no monitor (no takeover, no slow-poll reports) and its worker
    /// does not turn the I/O driver (the thread that waits for its tasks does), and [`block_on`](crate::block_on()), [`Pool::block_on`](crate::Pool::block_on),
    /// [`scope`](crate::scope()) and [`block_in_place`](crate::block_in_place()) inside its tasks
    /// panic with a message instead of handing the worker off. `build` refuses a seed with
    /// `workers(n)` for `n > 1`, `takeover(true)`, `takeover_after`, `on_slow_poll`,
    /// or `start_paused(false)`, naming both settings. Drive it with
    /// [`Pool::spawn`](crate::Pool::spawn) and wait for the handle from outside (as
    /// `#[crew::test(seed = ..)]` does), not with `Pool::block_on`, whose future runs on the
    /// calling thread, outside the seeded order. See `docs/testing.md`.
    ///
    /// # Examples
    ///
    /// ```
    /// let order = |seed| {
    ///     let pool = crew::Pool::builder().seed(seed).build().unwrap();
    ///     let run = pool.spawn(async {
    ///         let tasks: Vec<_> = (0..8).map(|i| crew::spawn(async move { i })).collect();
    ///         for task in tasks {
    ///             task.await;
    ///         }
    ///     });
    ///     crew::block_on(run);
    ///     pool.poll_trace()
    /// };
    /// assert_eq!(order(7), order(7));
    /// ```
    pub fn seed(mut self, seed: u64) -> Builder {
        self.seed = Some(seed);
        self
    }

    /// Sets the tokio runtime whose context this pool's threads hold (feature `tokio`): its
    /// workers, the threads that take a stuck worker over, and its slow-poll reporter, for their
    /// whole life, so that tokio's crates (reqwest, tonic, sqlx) work inside the pool's tasks.
    /// Without it, the pool uses crew's own runtime, started when the first thread needs it: one
    /// `crew-tokio` worker thread that drives tokio's sockets and timers and runs what
    /// `tokio::spawn` is given. Given to [`build_global`](Builder::build_global), the handle is
    /// also the one that threads of no pool enter (the blocking pool's, and `crew::block_on`'s
    /// caller). `docs/tokio.md` says what runs where.
    ///
    /// # Examples
    ///
    /// ```
    /// let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    /// let pool = crew::Pool::builder().workers(2).tokio_handle(runtime.handle().clone()).build().unwrap();
    /// let slept = crew::block_on(pool.spawn(async {
    ///     // A tokio timer inside a crew task, driven by `runtime`.
    ///     tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    ///     tokio::runtime::Handle::current().metrics().num_workers()
    /// }));
    /// assert_eq!(slept, 1);
    /// ```
    #[cfg(feature = "tokio")]
    pub fn tokio_handle(mut self, handle: tokio::runtime::Handle) -> Builder {
        self.tokio_handle = Some(handle);
        self
    }

    /// For the global pool: the setting it cannot take (a paused clock, a seed), as the
    /// error naming it.
    pub(crate) fn refuse_for_global(&self) -> Result<(), BuildError> {
        if self.unhandled_panic == Some(UnhandledPanic::ShutdownPool) {
            return Err(BuildError::setting(
                "Builder::unhandled_panic(UnhandledPanic::ShutdownPool) with Builder::build_global".to_owned(),
                "the global pool never shuts down: build a private Pool with it",
            ));
        }
        let call = match (self.seed, self.start_paused) {
            (Some(seed), _) => format!("Builder::seed({seed})"),
            (None, Some(true)) => "Builder::start_paused(true)".to_owned(),
            _ => return Ok(()),
        };
        Err(BuildError::setting(format!("{call} with Builder::build_global"), GLOBAL_CLOCK_EXPECTED))
    }

    /// Validates the settings; `env` holds the `CREW_` variables, for settings left unset.
    pub(crate) fn check(self, env: Env) -> Result<Config, BuildError> {
        // Process-wide, so checked for every pool, private ones too (`env.rs`).
        env::membarrier()?;
        if let Some(seed) = self.seed {
            let conflict = match (self.workers, self.takeover, self.start_paused) {
                (Some(n), ..) if n != 1 => Some(format!("Builder::workers({n})")),
                (_, Some(true), _) => Some("Builder::takeover(true)".to_owned()),
                (.., Some(false)) => Some("Builder::start_paused(false)".to_owned()),
                _ => None,
            };
            let conflict = conflict
                .or_else(|| self.takeover_after.map(|after| format!("Builder::takeover_after({after:?})")))
                .or_else(|| self.on_slow_poll.is_some().then(|| "Builder::on_slow_poll(..)".to_owned()));
            if let Some(call) = conflict {
                return Err(BuildError::setting(format!("{call} with Builder::seed({seed})"), SEED_EXPECTED));
            }
        }
        let workers = match self.workers {
            _ if self.seed.is_some() => 1,
            Some(n) if (1..=MAX_WORKERS).contains(&n) => n,
            Some(n) => return Err(BuildError::setting(format!("Builder::workers({n})"), WORKERS_EXPECTED)),
            None => env::workers(&env)?.unwrap_or_else(|| num_cpus::get().clamp(1, MAX_WORKERS)),
        };
        if let Some(bytes) = self.stack_size {
            if !(MIN_STACK_SIZE..=MAX_STACK_SIZE).contains(&bytes) {
                return Err(BuildError::setting(format!("Builder::stack_size({bytes})"), STACK_EXPECTED));
            }
        }
        let thread_name = self.thread_name.unwrap_or_else(|| DEFAULT_THREAD_NAME.to_owned());
        if Escaped(&thread_name).changes() {
            return Err(BuildError::setting(format!("Builder::thread_name({thread_name:?})"), THREAD_NAME_EXPECTED));
        }
        let threshold = |setting: &str, value: Option<Duration>| match value {
            Some(d) if !(MIN_TAKEOVER_AFTER..=MAX_TAKEOVER_AFTER).contains(&d) => {
                Err(BuildError::setting(format!("Builder::{setting}({d:?})"), THRESHOLD_EXPECTED))
            }
            _ => Ok(value),
        };
        // `CREW_TAKEOVER_MS` sets two things, whether takeover is on and its threshold, and
        // applies to each that the Builder left unset: `takeover(false)` and `takeover_after`
        // leave it nothing; `takeover(true)` leaves it the threshold (`off` then says nothing).
        let takeover_after = match (self.takeover, threshold("takeover_after", self.takeover_after)?) {
            _ if self.seed.is_some() => None,
            (Some(false), _) => None,
            (Some(true), Some(after)) | (None, Some(after)) => Some(after),
            (Some(true), None) => Some(env::takeover(&env)?.flatten().unwrap_or(DEFAULT_TAKEOVER_AFTER)),
            // Off by default under miri, as the reactor: an interpreted monitor thread in every
            // pool would slow every test; the takeover tests turn it on.
            (None, None) => env::takeover(&env)?.unwrap_or((!cfg!(miri)).then_some(DEFAULT_TAKEOVER_AFTER)),
        };
        let max_stuck_threads = match self.max_stuck_threads {
            Some(n) if n <= MAX_STUCK_THREADS => n,
            Some(n) => return Err(BuildError::setting(format!("Builder::max_stuck_threads({n})"), STUCK_EXPECTED)),
            // loom's models get no spare cores (each would be one more queue for every model to
            // scan) unless they ask, as the takeover model does.
            None => {
                env::max_stuck_threads(&env)?.unwrap_or(if cfg!(loom) { 0 } else { default_stuck_threads(workers) })
            }
        };
        let slow_poll_threshold =
            threshold("slow_poll_threshold", self.slow_poll_threshold)?.unwrap_or(DEFAULT_SLOW_POLL_THRESHOLD);
        let task_dump = match self.task_dump {
            Some(on) => on,
            None => env::task_dump(&env)?.unwrap_or(false),
        };
        let spin_before_park = match self.spin_before_park {
            Some(spin) if spin <= MAX_SPIN_BEFORE_PARK => spin,
            Some(spin) => {
                return Err(BuildError::setting(format!("Builder::spin_before_park({spin:?})"), SPIN_EXPECTED))
            }
            None if cfg!(miri) => Duration::ZERO,
            // The same count of CPUs as the default worker count's, so a default pool spins.
            None => default_spin_before_park(workers, std::num::NonZeroUsize::new(num_cpus::get())),
        };
        let takeover_after = takeover_after.filter(|_| max_stuck_threads > 0);
        // Spare cores serve takeovers only: none without.
        let max_stuck_threads = if takeover_after.is_some() { max_stuck_threads } else { 0 };
        Ok(Config {
            workers,
            thread_name,
            stack_size: self.stack_size,
            // Loom builds have no driver loop; a seeded pool's one worker parks plainly (its I/O
            // is turned by the thread that waits for it, `docs/testing.md`).
            drive_reactor: !cfg!(loom) && self.seed.is_none(),
            monitor: !cfg!(loom) && self.seed.is_none() && (takeover_after.is_some() || self.on_slow_poll.is_some()),
            takeover_after,
            max_stuck_threads,
            slow_poll_threshold,
            on_slow_poll: self.on_slow_poll,
            task_dump,
            spin_before_park: if cfg!(loom) { Duration::ZERO } else { spin_before_park },
            spin_despite_io: self.spin_before_park.is_some(),
            start_paused: self.seed.is_some() || self.start_paused.unwrap_or(false),
            seed: self.seed,
            hooks: self.hooks,
            thread_name_fn: self.thread_name_fn,
            unhandled_panic: self.unhandled_panic.unwrap_or_default(),
            #[cfg(feature = "tokio")]
            tokio_handle: self.tokio_handle,
        })
    }
}

/// The spin before parking of a pool of `workers` that did not set one, where the process may
/// use `cpus` CPUs (unknown: as if enough): none when the workers outnumber them.
fn default_spin_before_park(workers: usize, cpus: Option<std::num::NonZeroUsize>) -> Duration {
    match cpus {
        Some(cpus) if workers > cpus.get() => Duration::ZERO,
        _ => DEFAULT_SPIN_BEFORE_PARK,
    }
}

#[cfg(test)]
mod tests;
