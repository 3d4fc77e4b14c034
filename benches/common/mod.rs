//! Shared by the criterion benches `spawn`, `executor` and `messaging`: the worker count, one
//! `Exec` trait implemented by crew, tokio's multi-thread runtime and async-executor (each
//! started with the same number of worker threads), the harness that runs one workload as one
//! criterion group with members `crew`, `tokio` and `async_executor`, and the bench files'
//! `main`, which runs either those groups or, with `CREW_BENCH_MODES=<workload>`, the modes
//! probe of one workload (see [`main`]). The executor set-up is described in
//! `benches/spawn.rs`'s module docs. crew's pool drives async-io's reactor while it parks (the
//! default); with `CREW_BENCH_NO_REACTOR` set (to anything) it parks plainly instead
//! (`Builder::drive_reactor(false)`), to measure what the reactor costs these workloads; with
//! `CREW_BENCH_TASK_DUMP` set (to anything) it keeps task records (`Builder::task_dump(true)`),
//! to measure what the task dump costs; with `CREW_BENCH_SPIN_NS=<n>` its workers spin `n`
//! nanoseconds before they park (`Builder::spin_before_park`; 20 µs if unset, 0 parks at
//! once), to measure what the spin buys and costs.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

use criterion::Criterion;

/// The worker count every executor gets: `CREW_BENCH_WORKERS`, else 2.
pub fn workers() -> usize {
    match std::env::var("CREW_BENCH_WORKERS") {
        Ok(value) => match value.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => panic!("CREW_BENCH_WORKERS must be a positive whole number, got {value:?}"),
        },
        Err(_) => 2,
    }
}

/// What a workload needs from an executor: spawn (anywhere), detach, wait from outside, yield.
pub trait Exec: Clone + Send + Sync + 'static {
    type Handle<T: Send + 'static>: Future<Output = T> + Send + 'static;

    fn spawn<F>(&self, future: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// Lets a spawned task run on with nobody awaiting it.
    fn detach<T: Send + 'static>(handle: Self::Handle<T>);

    /// Waits for `future` on the benchmarking thread.
    fn block_on<F: Future>(&self, future: F) -> F::Output;

    fn yield_now() -> impl Future<Output = ()> + Send;
}

// ---------------------------------------------------------------------------------------------
// crew

#[derive(Clone)]
pub struct Crew(pub Arc<crew::Pool>);

/// Owns the pool; stops it on drop, from the benchmarking thread.
pub struct CrewOwner(Arc<crew::Pool>);

pub fn start_crew(workers: usize) -> (CrewOwner, Crew) {
    // Any value of CREW_BENCH_NO_REACTOR turns the reactor off (see the module docs).
    let drive = std::env::var_os("CREW_BENCH_NO_REACTOR").is_none();
    let dump = std::env::var_os("CREW_BENCH_TASK_DUMP").is_some();
    let mut builder = crew::Pool::builder().workers(workers).drive_reactor(drive).task_dump(dump);
    // CREW_BENCH_SPIN_NS=<n>: the spin before parking, in nanoseconds (see the module docs).
    if let Ok(nanos) = std::env::var("CREW_BENCH_SPIN_NS") {
        let nanos = nanos.parse().unwrap_or_else(|_| panic!("CREW_BENCH_SPIN_NS={nanos:?}: expected nanoseconds"));
        builder = builder.spin_before_park(Duration::from_nanos(nanos));
    }
    let pool = Arc::new(builder.build().expect("crew pool"));
    (CrewOwner(pool.clone()), Crew(pool))
}

impl Drop for CrewOwner {
    fn drop(&mut self) {
        // A finished task may still be dropping its clone of the handle; wait (briefly) so that
        // the pool is dropped here rather than on one of its own workers.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Arc::strong_count(&self.0) > 1 && Instant::now() < deadline {
            thread::yield_now();
        }
    }
}

impl Exec for Crew {
    type Handle<T: Send + 'static> = crew::JoinHandle<T>;

    fn spawn<F>(&self, future: F) -> crew::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.spawn(future)
    }

    fn detach<T: Send + 'static>(handle: crew::JoinHandle<T>) {
        handle.detach();
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        crew::block_on(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        crew::yield_now()
    }
}

// ---------------------------------------------------------------------------------------------
// tokio

#[derive(Clone)]
pub struct Tokio(tokio::runtime::Handle);

pub fn start_tokio(workers: usize) -> (tokio::runtime::Runtime, Tokio) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).build().expect("tokio runtime");
    let handle = rt.handle().clone();
    (rt, Tokio(handle))
}

/// A tokio `JoinHandle` that yields the task's output (the benchmarks' tasks never panic).
pub struct TokioJoin<T>(tokio::task::JoinHandle<T>);

impl<T> Future for TokioJoin<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        Pin::new(&mut self.0).poll(cx).map(|result| result.expect("a benchmark task failed"))
    }
}

impl Exec for Tokio {
    type Handle<T: Send + 'static> = TokioJoin<T>;

    fn spawn<F>(&self, future: F) -> TokioJoin<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        TokioJoin(self.0.spawn(future))
    }

    fn detach<T: Send + 'static>(handle: TokioJoin<T>) {
        // Dropping a tokio JoinHandle detaches the task.
        drop(handle);
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }
}

// ---------------------------------------------------------------------------------------------
// async-executor

#[derive(Clone)]
pub struct AsyncExecutor(Arc<async_executor::Executor<'static>>);

/// The runner threads; dropping this stops and joins them.
pub struct AsyncExecutorOwner {
    stops: Vec<futures::channel::oneshot::Sender<()>>,
    threads: Vec<thread::JoinHandle<()>>,
}

pub fn start_async_executor(workers: usize) -> (AsyncExecutorOwner, AsyncExecutor) {
    let ex = Arc::new(async_executor::Executor::new());
    let mut owner = AsyncExecutorOwner { stops: Vec::new(), threads: Vec::new() };
    for i in 0..workers {
        let (stop_tx, stop_rx) = futures::channel::oneshot::channel::<()>();
        let ex = ex.clone();
        let thread = thread::Builder::new()
            .name(format!("async-executor-{i}"))
            .spawn(move || {
                futures::executor::block_on(ex.run(async move {
                    // Resolves (with `Canceled`) when the owner drops the sender.
                    let _ = stop_rx.await;
                }));
            })
            .expect("async-executor runner thread");
        owner.stops.push(stop_tx);
        owner.threads.push(thread);
    }
    (owner, AsyncExecutor(ex))
}

impl Drop for AsyncExecutorOwner {
    fn drop(&mut self) {
        self.stops.clear();
        for thread in self.threads.drain(..) {
            thread.join().expect("async-executor runner thread panicked");
        }
    }
}

impl Exec for AsyncExecutor {
    type Handle<T: Send + 'static> = async_executor::Task<T>;

    fn spawn<F>(&self, future: F) -> async_executor::Task<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.spawn(future)
    }

    fn detach<T: Send + 'static>(handle: async_executor::Task<T>) {
        handle.detach();
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        futures::executor::block_on(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        YieldNow(false)
    }
}

/// Wakes itself once and returns `Pending` (what `futures_lite::future::yield_now` does).
pub struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

// ---------------------------------------------------------------------------------------------
// workloads and harness

pub trait Workload {
    const NAME: &'static str;

    /// Starts background load before the member is measured; the returned closure stops it.
    fn background<E: Exec>(_ex: &E) -> Option<Box<dyn FnOnce()>> {
        None
    }

    /// One timed iteration.
    fn iter<E: Exec>(ex: &E);
}

/// Busy-waits (yielding the OS thread) for `dur`, as tokio's benchmark does.
pub fn stall(dur: Duration) {
    let now = Instant::now();
    while now.elapsed() < dur {
        thread::yield_now();
    }
}

/// One member of a group: background load (if any), the timed loop, then teardown.
pub fn member<W: Workload, E: Exec>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    ex: &E,
) {
    let stop = W::background(ex);
    group.bench_function(name, |b| b.iter(|| W::iter(ex)));
    if let Some(stop) = stop {
        stop();
    }
}

/// The executors every group measures, in the order it measures them (its members' names).
pub const EXECUTORS: [&str; 3] = ["crew", "tokio", "async_executor"];

/// A job for one executor, whichever it is (see [`with_executor`]).
pub trait ExecJob {
    type Output;

    /// Runs on `ex`; `pool` is crew's pool when `ex` is crew (for its metrics).
    fn run<E: Exec>(self, ex: &E, pool: Option<&crew::Pool>) -> Self::Output;
}

/// Starts the executor `name` (one of [`EXECUTORS`]) with `workers` threads, runs `job` on it,
/// then stops it: only one executor's threads exist at a time.
pub fn with_executor<J: ExecJob>(name: &str, workers: usize, job: J) -> J::Output {
    match name {
        "crew" => {
            let (owner, ex) = start_crew(workers);
            let output = job.run(&ex, Some(&*ex.0));
            drop(ex);
            drop(owner);
            output
        }
        "tokio" => {
            let (runtime, ex) = start_tokio(workers);
            let output = job.run(&ex, None);
            drop(ex);
            drop(runtime);
            output
        }
        "async_executor" => {
            let (owner, ex) = start_async_executor(workers);
            let output = job.run(&ex, None);
            drop(ex);
            drop(owner);
            output
        }
        _ => panic!("unknown executor {name:?}: expected one of {EXECUTORS:?}"),
    }
}

/// The criterion member `name` of `W`'s group (see [`member`]), as an [`ExecJob`].
struct Member<'a, 'g, W> {
    group: &'a mut criterion::BenchmarkGroup<'g, criterion::measurement::WallTime>,
    name: &'static str,
    workload: PhantomData<W>,
}

impl<W: Workload> ExecJob for Member<'_, '_, W> {
    type Output = ();

    fn run<E: Exec>(self, ex: &E, _pool: Option<&crew::Pool>) {
        member::<W, E>(self.group, self.name, ex);
    }
}

/// The criterion group of `W`: one member per executor. It prints the machine's cache-line
/// round trip before and after the group ([`cache_line_round_trip_ns`]), so that each run
/// records which of the machine's states its groups were measured in (`BENCHMARKS.md`, "The
/// machine's two states").
pub fn group<W: Workload>(c: &mut Criterion) {
    let workers = workers();
    let before = cache_line_round_trip_ns();
    let mut group = c.benchmark_group(W::NAME);
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    for name in EXECUTORS {
        with_executor(name, workers, Member::<W> { group: &mut group, name, workload: PhantomData });
    }
    group.finish();
    let after = cache_line_round_trip_ns();
    println!("{}: the machine's cache-line round trip {before} ns before, {after} ns after\n", W::NAME);
}

// ---------------------------------------------------------------------------------------------
// the machine's cross-core hand-off, and the modes probe

/// `iters` round trips of one cache line between this thread and a partner thread, both
/// spinning on it (no pause, no park): this thread writes an odd turn, the partner answers with
/// the next even one. What the machine charges for moving a line from one core to another and
/// back, which every message, wake and steal between two workers pays at least once. Thread
/// start and join are outside the time, and so are the round trips of the first `warm_up`.
///
/// The warm-up is for a machine that was idle: on this project's 2-vCPU VM, round trips right
/// after an idle spell take 200 to 1,200 ns, and settle after some 200 ms of spinning.
pub fn cache_line_round_trips(warm_up: Duration, iters: u64) -> Duration {
    const STOP: u64 = u64::MAX;
    let turn = Arc::new(AtomicU64::new(0));
    let partner = {
        let turn = turn.clone();
        thread::spawn(move || loop {
            let seen = turn.load(Acquire);
            if seen == STOP {
                break;
            }
            if seen % 2 == 1 {
                turn.store(seen + 1, Release);
            }
        })
    };
    let mut turns = 0;
    let mut round_trip = || {
        turns += 2;
        turn.store(turns - 1, Release);
        while turn.load(Acquire) != turns {}
    };
    let warm = Instant::now();
    while warm.elapsed() < warm_up {
        round_trip();
    }
    let start = Instant::now();
    for _ in 0..iters {
        round_trip();
    }
    let elapsed = start.elapsed();
    turn.store(STOP, Release);
    partner.join().expect("the cache-line partner thread panicked");
    elapsed
}

/// One cache-line round trip in nanoseconds, after 200 ms of warm-up: the median of five runs
/// of 20,000.
pub fn cache_line_round_trip_ns() -> u64 {
    const ROUND_TRIPS: u64 = 20_000;
    let warm_up = Duration::from_millis(200);
    let mut runs: Vec<u64> = (0..5)
        .map(|run| {
            let warm_up = if run == 0 { warm_up } else { Duration::ZERO };
            cache_line_round_trips(warm_up, ROUND_TRIPS).as_nanos() as u64 / ROUND_TRIPS
        })
        .collect();
    runs.sort_unstable();
    runs[2]
}

/// One workload of a bench file: its name, its criterion group ([`group`]) and its modes probe.
pub struct Bench {
    name: &'static str,
    group: fn(&mut Criterion),
    probe: fn(),
}

/// The [`Bench`] of `W`.
pub fn bench<W: Workload>() -> Bench {
    Bench { name: W::NAME, group: group::<W>, probe: modes::<W> }
}

/// Rounds of the `CREW_BENCH_MODES` probe, and timed and warm-up iterations per executor and round.
const MODE_ROUNDS: usize = 20;
const MODE_ITERS: usize = 100;
const MODE_WARM_UP: usize = 10;

/// The bench file's `main`: the criterion groups of `workloads`, then the `others` (groups
/// that are no single workload), or, with `CREW_BENCH_MODES=<workload>` (one of `workloads`),
/// the modes probe of that workload.
///
/// The probe looks for a workload's *modes*: spells in which it runs far slower than usual, on
/// one executor or on all of them. For [`MODE_ROUNDS`] rounds it runs the workload
/// on each executor in turn ([`MODE_ITERS`] timed iterations after [`MODE_WARM_UP`]) and prints
/// the median of each, with the machine's [`cache_line_round_trip_ns`] measured before and after
/// the round (a slow round whose round trips are slow too is the machine's, not an
/// executor's), and what crew's workers did per iteration (from its metrics).
pub fn main(workloads: &[Bench], others: &[fn(&mut Criterion)]) {
    match std::env::var("CREW_BENCH_MODES") {
        Ok(name) => match workloads.iter().find(|bench| bench.name == name) {
            Some(bench) => (bench.probe)(),
            None => {
                let names: Vec<&str> = workloads.iter().map(|bench| bench.name).collect();
                panic!("CREW_BENCH_MODES={name:?}: expected one of this file's workloads, {names:?}")
            }
        },
        Err(std::env::VarError::NotPresent) => {
            // What `criterion_group!` and `criterion_main!` do, for a list made at run time.
            let mut criterion = Criterion::default().configure_from_args();
            for bench in workloads {
                (bench.group)(&mut criterion);
            }
            for group in others {
                group(&mut criterion);
            }
            criterion.final_summary();
        }
        Err(std::env::VarError::NotUnicode(value)) => {
            panic!("CREW_BENCH_MODES={value:?} is not UTF-8; expected a workload's name")
        }
    }
}

/// The median time of [`MODE_ITERS`] iterations of `W` (see [`main`]), as an [`ExecJob`]; for
/// crew, with what its workers did per iteration.
struct Median<W>(PhantomData<W>);

impl<W: Workload> ExecJob for Median<W> {
    type Output = (Duration, Option<String>);

    fn run<E: Exec>(self, ex: &E, pool: Option<&crew::Pool>) -> (Duration, Option<String>) {
        let stop = W::background(ex);
        for _ in 0..MODE_WARM_UP {
            W::iter(ex);
        }
        let before = pool.map(crew::Pool::metrics);
        let mut times: Vec<Duration> = (0..MODE_ITERS)
            .map(|_| {
                let start = Instant::now();
                W::iter(ex);
                start.elapsed()
            })
            .collect();
        let after = pool.map(crew::Pool::metrics);
        if let Some(stop) = stop {
            stop();
        }
        times.sort_unstable();
        (times[MODE_ITERS / 2], before.zip(after).map(|(before, after)| per_iteration(&before, &after)))
    }
}

/// What crew's workers did per iteration between two snapshots of its metrics, worker by
/// worker: polls, LIFO runs, tasks stolen, steal sweeps, parks, and the time out of park.
fn per_iteration(before: &crew::Metrics, after: &crew::Metrics) -> String {
    let per = |n: u64| n as f64 / MODE_ITERS as f64;
    let workers: Vec<String> = after
        .workers
        .iter()
        .zip(&before.workers)
        .map(|(a, b)| {
            format!(
                "{:.0} polls, {:.0} LIFO, {:.0} stolen, {:.0} sweeps, {:.1} parks, busy {:.3} ms",
                per(a.polls - b.polls),
                per(a.lifo_runs - b.lifo_runs),
                per(a.stolen - b.stolen),
                per(a.steal_attempts - b.steal_attempts),
                per(a.parks - b.parks),
                (a.busy - b.busy).as_secs_f64() * 1e3 / MODE_ITERS as f64,
            )
        })
        .collect();
    workers.join(" | ")
}

/// The `CREW_BENCH_MODES` probe (see [`main`]).
fn modes<W: Workload>() {
    let workers = workers();
    println!(
        "{}, {workers} workers: per round, each executor's median of {MODE_ITERS} iterations (after \
         {MODE_WARM_UP}), and one cache-line round trip between two spinning threads before and after",
        W::NAME
    );
    for round in 1..=MODE_ROUNDS {
        let before = cache_line_round_trip_ns();
        let mut crew = None;
        let mut medians = Vec::new();
        for name in EXECUTORS {
            let (median, counts) = with_executor(name, workers, Median::<W>(PhantomData));
            medians.push(format!("{name} {:.3} ms", median.as_secs_f64() * 1e3));
            crew = crew.or(counts);
        }
        let after = cache_line_round_trip_ns();
        println!("round {round:>2}: {}; round trip {before} ns before, {after} ns after", medians.join(", "));
        if let Some(crew) = crew {
            println!("          crew per iteration: {crew}");
        }
    }
}
