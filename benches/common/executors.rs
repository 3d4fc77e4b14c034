//! The executors every bench compares, behind one trait: [`Exec`] (spawn anywhere, detach, wait
//! from outside, yield), implemented by crew, tokio's multi-thread runtime and async-executor,
//! each started with the same number of worker threads ([`workers`]), and [`with_executor`],
//! which runs a job on one of them ([`EXECUTORS`]) with only that executor's threads alive. The
//! executor set-up is described in `benches/spawn.rs`'s module docs.
//!
//! crew's pool turns its own I/O driver while it parks (as every crew pool does); with
//! `CREW_BENCH_TASK_DUMP` set (to anything) it keeps task records (`Builder::task_dump(true)`),
//! to measure what the task dump costs; with `CREW_BENCH_SPIN_NS=<n>` its workers spin `n`
//! nanoseconds before they park (`Builder::spin_before_park`; if unset 20 µs, or none with
//! more workers than CPUs; 0 parks at once), to measure what the spin buys and costs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

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
    let dump = std::env::var_os("CREW_BENCH_TASK_DUMP").is_some();
    let mut builder = crew::Pool::builder().workers(workers).task_dump(dump);
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
// one of them at a time

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
