//! Scheduler benchmarks: crew against tokio's multi-thread runtime and async-executor.
//!
//! The workloads are those of tokio's `benches/rt_multi_threaded.rs`, with its parameters, run
//! on each executor with the same number of worker threads `W` (env `CREW_BENCH_WORKERS`,
//! default 2). Every workload is one criterion group with three members: `crew`, `tokio` and
//! `async_executor`.
//!
//! - `spawn_many_local`: one task spawns 10,000 empty tasks, then awaits them all.
//! - `spawn_many_remote_idle`: the benchmarking thread spawns 10,000 empty tasks, then awaits
//!   them all.
//! - `spawn_many_remote_busy`: as `spawn_many_remote_idle`, while 2×W background tasks loop
//!   `yield_now(); stall 10 µs` (tokio's `spawn_many_remote_busy1`).
//! - `ping_pong`: a root task spawns 1,000 tasks; each spawns a partner and exchanges one
//!   message each way with it over two oneshot channels (`futures::channel::oneshot` for all).
//! - `yield_many`: 200 tasks spawned from outside, each yielding 1,000 times.
//! - `chained_spawn`: each task spawns the next, 1,000 deep.
//!
//! Each executor is started just before its member runs and stopped right after, so only one
//! executor's threads exist at a time (and background load never leaks into another member).
//! Executor start-up is outside the timed loop. The benchmarking thread only spawns and waits:
//!
//! - crew: a private `crew::Pool` with W workers; the thread waits with `crew::block_on`.
//! - tokio: `Builder::new_multi_thread().worker_threads(W)`; the thread waits with
//!   `Handle::block_on`.
//! - async-executor: one `Arc<Executor>` run by W threads, each in
//!   `futures::executor::block_on(ex.run(stop))`; the thread waits with
//!   `futures::executor::block_on`.
//!
//! Tasks that spawn more tasks do so through a clone of their executor's handle (an `Arc` for
//! all three), since `crew::spawn` inside a private pool's task targets the global pool.
//!
//! Run: `cargo bench --bench spawn` (optionally `CREW_BENCH_WORKERS=4 cargo bench --bench spawn`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

/// Spawns in the `spawn_many_*` workloads.
const NUM_SPAWN: usize = 10_000;
/// Pairs in `ping_pong`.
const NUM_PINGS: usize = 1_000;
/// Tasks and yields per task in `yield_many`.
const YIELD_TASKS: usize = 200;
const NUM_YIELD: usize = 1_000;
/// Depth of `chained_spawn`.
const CHAIN_DEPTH: usize = 1_000;
/// How long a background task of `spawn_many_remote_busy` stays busy between yields.
const STALL_DUR: Duration = Duration::from_micros(10);

/// The worker count every executor gets: `CREW_BENCH_WORKERS`, else 2.
fn workers() -> usize {
    match std::env::var("CREW_BENCH_WORKERS") {
        Ok(value) => match value.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => panic!("CREW_BENCH_WORKERS must be a positive whole number, got {value:?}"),
        },
        Err(_) => 2,
    }
}

/// What a workload needs from an executor: spawn (anywhere), detach, wait from outside, yield.
trait Exec: Clone + Send + Sync + 'static {
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
struct Crew(Arc<crew::Pool>);

/// Owns the pool; stops it on drop, from the benchmarking thread.
struct CrewOwner(Arc<crew::Pool>);

fn start_crew(workers: usize) -> (CrewOwner, Crew) {
    let pool = Arc::new(crew::Pool::builder().workers(workers).build().expect("crew pool"));
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
struct Tokio(tokio::runtime::Handle);

fn start_tokio(workers: usize) -> (tokio::runtime::Runtime, Tokio) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).build().expect("tokio runtime");
    let handle = rt.handle().clone();
    (rt, Tokio(handle))
}

/// A tokio `JoinHandle` that yields the task's output (the benchmarks' tasks never panic).
struct TokioJoin<T>(tokio::task::JoinHandle<T>);

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
struct AsyncExecutor(Arc<async_executor::Executor<'static>>);

/// The runner threads; dropping this stops and joins them.
struct AsyncExecutorOwner {
    stops: Vec<futures::channel::oneshot::Sender<()>>,
    threads: Vec<thread::JoinHandle<()>>,
}

fn start_async_executor(workers: usize) -> (AsyncExecutorOwner, AsyncExecutor) {
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
struct YieldNow(bool);

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
// workloads

trait Workload {
    const NAME: &'static str;

    /// Starts background load before the member is measured; the returned closure stops it.
    fn background<E: Exec>(_ex: &E) -> Option<Box<dyn FnOnce()>> {
        None
    }

    /// One timed iteration.
    fn iter<E: Exec>(ex: &E);
}

struct SpawnManyLocal;

impl Workload for SpawnManyLocal {
    const NAME: &'static str = "spawn_many_local";

    fn iter<E: Exec>(ex: &E) {
        let inner = ex.clone();
        let root = ex.spawn(async move {
            let handles: Vec<_> = (0..NUM_SPAWN).map(|_| inner.spawn(async {})).collect();
            for handle in handles {
                handle.await;
            }
        });
        ex.block_on(root);
    }
}

/// 10,000 empty tasks spawned from the benchmarking thread, then awaited there.
fn spawn_many_remote<E: Exec>(ex: &E) {
    let handles: Vec<_> = (0..NUM_SPAWN).map(|_| ex.spawn(async {})).collect();
    ex.block_on(async move {
        for handle in handles {
            handle.await;
        }
    });
}

struct SpawnManyRemoteIdle;

impl Workload for SpawnManyRemoteIdle {
    const NAME: &'static str = "spawn_many_remote_idle";

    fn iter<E: Exec>(ex: &E) {
        spawn_many_remote(ex);
    }
}

struct SpawnManyRemoteBusy;

/// Busy-waits (yielding the OS thread) for `STALL_DUR`, as tokio's benchmark does.
fn stall() {
    let now = Instant::now();
    while now.elapsed() < STALL_DUR {
        thread::yield_now();
    }
}

impl Workload for SpawnManyRemoteBusy {
    const NAME: &'static str = "spawn_many_remote_busy";

    fn background<E: Exec>(ex: &E) -> Option<Box<dyn FnOnce()>> {
        let flag = Arc::new(AtomicBool::new(true));
        let busy: Vec<_> = (0..2 * workers())
            .map(|_| {
                let flag = flag.clone();
                ex.spawn(async move {
                    while flag.load(Relaxed) {
                        E::yield_now().await;
                        stall();
                    }
                })
            })
            .collect();
        let ex = ex.clone();
        Some(Box::new(move || {
            flag.store(false, Relaxed);
            ex.block_on(async move {
                for task in busy {
                    task.await;
                }
            });
        }))
    }

    fn iter<E: Exec>(ex: &E) {
        spawn_many_remote(ex);
    }
}

struct PingPong;

impl Workload for PingPong {
    const NAME: &'static str = "ping_pong";

    fn iter<E: Exec>(ex: &E) {
        use futures::channel::oneshot;

        let (done_tx, done_rx) = mpsc::sync_channel(1);
        let rem = Arc::new(AtomicUsize::new(NUM_PINGS));
        let inner = ex.clone();
        let root = ex.spawn(async move {
            for _ in 0..NUM_PINGS {
                let rem = rem.clone();
                let done_tx = done_tx.clone();
                let ex = inner.clone();
                E::detach(inner.spawn(async move {
                    let (tx1, rx1) = oneshot::channel::<()>();
                    let (tx2, rx2) = oneshot::channel::<()>();
                    E::detach(ex.spawn(async move {
                        rx1.await.unwrap();
                        tx2.send(()).unwrap();
                    }));
                    tx1.send(()).unwrap();
                    rx2.await.unwrap();
                    if rem.fetch_sub(1, Relaxed) == 1 {
                        done_tx.send(()).unwrap();
                    }
                }));
            }
        });
        E::detach(root);
        done_rx.recv().unwrap();
    }
}

struct YieldMany;

impl Workload for YieldMany {
    const NAME: &'static str = "yield_many";

    fn iter<E: Exec>(ex: &E) {
        let handles: Vec<_> = (0..YIELD_TASKS)
            .map(|_| {
                ex.spawn(async {
                    for _ in 0..NUM_YIELD {
                        E::yield_now().await;
                    }
                })
            })
            .collect();
        ex.block_on(async move {
            for handle in handles {
                handle.await;
            }
        });
    }
}

struct ChainedSpawn;

/// Spawns the next link of the chain, or signals the end.
fn chain<E: Exec>(ex: E, done: mpsc::SyncSender<()>, n: usize) {
    if n == 0 {
        done.send(()).unwrap();
    } else {
        let next = ex.clone();
        E::detach(ex.spawn(async move { chain(next, done, n - 1) }));
    }
}

impl Workload for ChainedSpawn {
    const NAME: &'static str = "chained_spawn";

    fn iter<E: Exec>(ex: &E) {
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        let next = ex.clone();
        E::detach(ex.spawn(async move { chain(next, done_tx, CHAIN_DEPTH) }));
        done_rx.recv().unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// harness

/// One member of a group: background load (if any), the timed loop, then teardown.
fn member<W: Workload, E: Exec>(
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

fn group<W: Workload>(c: &mut Criterion) {
    let workers = workers();
    let mut group = c.benchmark_group(W::NAME);
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    {
        let (owner, ex) = start_crew(workers);
        member::<W, _>(&mut group, "crew", &ex);
        drop(ex);
        drop(owner);
    }
    {
        let (runtime, ex) = start_tokio(workers);
        member::<W, _>(&mut group, "tokio", &ex);
        drop(ex);
        drop(runtime);
    }
    {
        let (owner, ex) = start_async_executor(workers);
        member::<W, _>(&mut group, "async_executor", &ex);
        drop(ex);
        drop(owner);
    }
    group.finish();
}

criterion_group!(
    benches,
    group::<SpawnManyLocal>,
    group::<SpawnManyRemoteIdle>,
    group::<SpawnManyRemoteBusy>,
    group::<PingPong>,
    group::<YieldMany>,
    group::<ChainedSpawn>,
);
criterion_main!(benches);
