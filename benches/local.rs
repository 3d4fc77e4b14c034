//! Local (`!Send`) tasks: crew's `spawn_local` and `spawn_pinned` against tokio's `LocalSet`
//! and `LocalRuntime`, tokio-util's `LocalPoolHandle::spawn_pinned` and async-executor's
//! `LocalExecutor`. Pools have `W` threads (env `CREW_BENCH_WORKERS`, default 2). Each member's
//! executor is started before its timed loop and stopped after it, so that only its threads
//! exist while it is timed.
//!
//! - `spawn_join_100k`: from inside one task, spawn 100,000 local tasks, each holding an `Rc` of
//!   its number (so `!Send`), then await them in the order they were spawned.
//! - `local_ping_pong`: 100 pairs of local tasks, each pair bouncing a counter 100 times there
//!   and back over two one-number slots it shares as `Rc<RefCell<..>>` (`common::LocalChannel`,
//!   written there so that what differs is the executors' work, not a channel crate's):
//!   every message wakes the partner task.
//! - `spawn_pinned_10k`: the benchmarking thread calls `spawn_pinned` 10,000 times, each call
//!   building on a worker a future that holds an `Rc` of its number, then awaits the tasks in
//!   the order they were spawned: members `crew` (`Pool::spawn_pinned`, `W` workers) and
//!   `tokio_util_spawn_pinned` (`LocalPoolHandle::spawn_pinned`, `W` threads).
//!
//! The first two have the same members (see [`local_group`]), each running the workload:
//!
//! - `crew`: in an ordinary task on a crew pool of `W` workers, with `crew::spawn_local` (the
//!   local tasks stay on that task's worker);
//! - `crew_block_on`: in `crew::block_on` on the benchmarking thread, with `crew::spawn_local`;
//! - `tokio_local_set`: in `LocalSet::run_until` on a current-thread runtime, with
//!   `tokio::task::spawn_local`;
//! - `tokio_local_runtime`: in `LocalRuntime::block_on` (stable since tokio 1.51), with
//!   `tokio::task::spawn_local`;
//! - `tokio_util_spawn_pinned`: in one task of a tokio-util `LocalPoolHandle` of `W` threads,
//!   with `tokio::task::spawn_local`;
//! - `async_executor_local`: in async-executor's `LocalExecutor::run` under futures-lite's
//!   `block_on` on the benchmarking thread, with `LocalExecutor::spawn`.
//!
//! Run: `cargo bench --bench local` (optionally `CREW_BENCH_WORKERS=4`).

use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

use async_executor::LocalExecutor;
use criterion::{criterion_group, criterion_main, Criterion};
use futures::FutureExt;
use tokio::runtime::LocalOptions;
use tokio::task::JoinError;
use tokio_util::task::LocalPoolHandle;

// The shared harness: only its worker count and the local pair are used here.
#[allow(dead_code)]
mod common;

/// Local tasks spawned and awaited in `spawn_join_100k`.
const SPAWNS: u64 = 100_000;
/// Task pairs in `local_ping_pong`, and round trips per pair.
const PAIRS: usize = 100;
const ROUND_TRIPS: u64 = 100;
/// `spawn_pinned` calls in `spawn_pinned_10k`.
const PINNED: u64 = 10_000;

/// An executor's way to spawn a `!Send` future onto the thread it is called on.
trait LocalSpawner {
    type Handle<T: 'static>: Future<Output = T>;

    fn spawn_local<F>(&self, future: F) -> Self::Handle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static;
}

/// `crew::spawn_local`: onto the worker of the task it is called in, or the thread of the
/// `crew::block_on` it is called in.
struct Crew;

impl LocalSpawner for Crew {
    type Handle<T: 'static> = crew::JoinHandle<T>;

    fn spawn_local<F>(&self, future: F) -> crew::JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        crew::spawn_local(future)
    }
}

/// `tokio::task::spawn_local`: onto the `LocalSet` or `LocalRuntime` it is called in (each
/// thread of a `LocalPoolHandle` runs a `LocalRuntime`). Its handles yield the task's output
/// (the benchmarks' tasks never panic).
struct Tokio;

impl LocalSpawner for Tokio {
    type Handle<T: 'static> = futures::future::Map<tokio::task::JoinHandle<T>, fn(Result<T, JoinError>) -> T>;

    fn spawn_local<F>(&self, future: F) -> Self::Handle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        tokio::task::spawn_local(future).map(Result::unwrap as fn(_) -> _)
    }
}

/// async-executor's `LocalExecutor::spawn`: onto that executor, which runs on the thread that
/// runs it.
impl LocalSpawner for Rc<LocalExecutor<'static>> {
    type Handle<T: 'static> = async_executor::Task<T>;

    fn spawn_local<F>(&self, future: F) -> async_executor::Task<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.spawn(future)
    }
}

/// A task of `spawn_join_100k` and `spawn_pinned_10k`: returns its number, and is `!Send` for
/// the `Rc` it holds.
fn local_task(i: u64) -> impl Future<Output = u64> + 'static {
    let number = Rc::new(i);
    async move { *number }
}

/// Awaits `handles` in order, checking that each returns its place in the order.
async fn join_in_order<H: Future<Output = u64>>(handles: Vec<H>) {
    for (i, handle) in handles.into_iter().enumerate() {
        assert_eq!(handle.await, i as u64);
    }
}

/// `spawn_join_100k`: spawns [`SPAWNS`] local tasks with `spawner`, then awaits them in order.
async fn spawn_join<S: LocalSpawner>(spawner: S) {
    join_in_order((0..SPAWNS).map(|i| spawner.spawn_local(local_task(i))).collect()).await;
}

/// `local_ping_pong`: spawns the [`PAIRS`] pairs with `spawner`, then awaits all their tasks.
async fn ping_pong<S: LocalSpawner>(spawner: S) {
    let mut handles = Vec::with_capacity(2 * PAIRS);
    for _ in 0..PAIRS {
        handles.extend(common::local_pair(ROUND_TRIPS).map(|task| spawner.spawn_local(task)));
    }
    for handle in handles {
        handle.await;
    }
}

/// The criterion group `name` of a workload of local tasks (its members: see the module docs).
/// The workload comes once per spawner it runs with ([`Crew`], [`Tokio`], `Rc<LocalExecutor>`):
/// a generic function such as [`spawn_join`] is passed three times, one instance for each.
fn local_group<C, T, A>(
    c: &mut Criterion,
    name: &str,
    for_crew: fn(Crew) -> C,
    for_tokio: fn(Tokio) -> T,
    for_async_executor: fn(Rc<LocalExecutor<'static>>) -> A,
) where
    C: Future<Output = ()> + Send + 'static,
    T: Future<Output = ()> + 'static,
    A: Future<Output = ()>,
{
    let workers = common::workers();
    let mut group = c.benchmark_group(name);
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));

    let pool = crew::Pool::builder().workers(workers).build().unwrap();
    group.bench_function("crew", |b| b.iter(|| crew::block_on(pool.spawn(for_crew(Crew)))));
    drop(pool);

    group.bench_function("crew_block_on", |b| b.iter(|| crew::block_on(for_crew(Crew))));

    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let local_set = tokio::task::LocalSet::new();
    group.bench_function("tokio_local_set", |b| b.iter(|| runtime.block_on(local_set.run_until(for_tokio(Tokio)))));
    drop((local_set, runtime));

    let runtime = tokio::runtime::Builder::new_current_thread().build_local(LocalOptions::default()).unwrap();
    group.bench_function("tokio_local_runtime", |b| b.iter(|| runtime.block_on(for_tokio(Tokio))));
    drop(runtime);

    let pool = LocalPoolHandle::new(workers);
    group.bench_function("tokio_util_spawn_pinned", |b| {
        b.iter(|| futures_lite::future::block_on(pool.spawn_pinned(move || for_tokio(Tokio))).unwrap())
    });
    drop(pool);

    let executor = Rc::new(LocalExecutor::new());
    group.bench_function("async_executor_local", |b| {
        b.iter(|| futures_lite::future::block_on(executor.run(for_async_executor(executor.clone()))))
    });
    group.finish();
}

fn spawn_join_group(c: &mut Criterion) {
    local_group(c, "spawn_join_100k", spawn_join, spawn_join, spawn_join);
}

fn ping_pong_group(c: &mut Criterion) {
    local_group(c, "local_ping_pong", ping_pong, ping_pong, ping_pong);
}

/// `spawn_pinned_10k` (see the module docs).
fn spawn_pinned_group(c: &mut Criterion) {
    let workers = common::workers();
    let mut group = c.benchmark_group("spawn_pinned_10k");
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));

    let pool = crew::Pool::builder().workers(workers).build().unwrap();
    group.bench_function("crew", |b| {
        b.iter(|| {
            let handles = (0..PINNED).map(|i| pool.spawn_pinned(move || local_task(i))).collect();
            crew::block_on(join_in_order(handles))
        })
    });
    drop(pool);

    let pool = LocalPoolHandle::new(workers);
    group.bench_function("tokio_util_spawn_pinned", |b| {
        b.iter(|| {
            let handles = (0..PINNED).map(|i| pool.spawn_pinned(move || local_task(i)).map(Result::unwrap)).collect();
            futures_lite::future::block_on(join_in_order(handles))
        })
    });
    drop(pool);
    group.finish();
}

criterion_group!(benches, spawn_join_group, ping_pong_group, spawn_pinned_group);
criterion_main!(benches);
