//! Blocking-pool benchmarks: `crew::spawn_blocking` against the `blocking` crate's
//! `blocking::unblock` (smol's pool) and tokio's `spawn_blocking`.
//!
//! Every workload is one criterion group with three members, `crew`, `blocking` and `tokio`.
//! Unless a workload says otherwise, the jobs are spawned and awaited from inside an async task,
//! as real code does:
//!
//! - crew: the task runs on a private `crew::Pool` with W workers (env `CREW_BENCH_WORKERS`,
//!   default 2) and calls `crew::spawn_blocking` (crew's global blocking pool).
//! - blocking: the task runs on the same kind of crew pool and calls `blocking::unblock` (the
//!   crate's global pool), whose handle is an `async_task::Task`.
//! - tokio: the task runs on `Builder::new_multi_thread().worker_threads(W)` and calls
//!   `tokio::task::spawn_blocking` (the runtime's blocking pool).
//!
//! The workloads:
//!
//! - `spawn_blocking_1000`: spawn 1,000 trivial jobs (each returns its index), then await them
//!   all in order (throughput; the pools grow to as many threads as they choose).
//! - `spawn_blocking_one`: spawn one trivial job and await it (latency of a round trip through
//!   an idle pool thread, plus the executor's wake of the awaiting task).
//! - `spawn_blocking_one_outside`: the same, spawned and awaited by the benchmarking thread in
//!   its executor's `block_on` (`crew::block_on` for crew and blocking, tokio's
//!   `Handle::block_on`): the pool's own round trip, without the task hop.
//!
//! Each pool keeps its threads alive between iterations (crew and tokio: 10 s idle,
//! blocking: 500 ms), so thread start-up is paid in the warm-up, not in the measurement.
//!
//! Run: `cargo bench --bench blocking` (optionally `CREW_BENCH_WORKERS=4`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

#[allow(dead_code)]
mod common;

use common::{start_crew, start_tokio, workers, Exec};

/// Jobs per iteration of `spawn_blocking_1000`.
const JOBS: usize = 1_000;

/// The three ways to run one blocking closure from a task, awaited from that task.
#[derive(Clone, Copy)]
enum Pool {
    Crew,
    Blocking,
    Tokio,
}

impl Pool {
    const ALL: [(Pool, &'static str); 3] = [(Pool::Crew, "crew"), (Pool::Blocking, "blocking"), (Pool::Tokio, "tokio")];

    /// Spawns `jobs` trivial jobs and awaits them all, from inside the calling task.
    async fn run_jobs(self, jobs: usize) -> usize {
        let mut sum = 0;
        match self {
            Pool::Crew => {
                let handles: Vec<_> = (0..jobs).map(|i| crew::spawn_blocking(move || black_box(i))).collect();
                for handle in handles {
                    sum += handle.await;
                }
            }
            Pool::Blocking => {
                let handles: Vec<_> = (0..jobs).map(|i| blocking::unblock(move || black_box(i))).collect();
                for handle in handles {
                    sum += handle.await;
                }
            }
            Pool::Tokio => {
                let handles: Vec<_> = (0..jobs).map(|i| tokio::task::spawn_blocking(move || black_box(i))).collect();
                for handle in handles {
                    sum += handle.await.expect("a blocking job failed");
                }
            }
        }
        sum
    }
}

/// Where the jobs are spawned and awaited from.
#[derive(Clone, Copy)]
enum Caller {
    /// A task on the executor, itself awaited by the benchmarking thread.
    Task,
    /// The benchmarking thread, in its executor's `block_on` (no task hop).
    Outside,
}

/// One member: `pool`'s jobs, spawned and awaited as `from` says.
fn member<E: Exec>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    ex: &E,
    pool: Pool,
    jobs: usize,
    from: Caller,
) {
    let expected = (0..jobs).sum::<usize>();
    group.bench_function(name, |b| {
        b.iter(|| {
            let sum = match from {
                Caller::Task => ex.block_on(ex.spawn(pool.run_jobs(jobs))),
                Caller::Outside => ex.block_on(pool.run_jobs(jobs)),
            };
            assert_eq!(sum, expected);
        })
    });
}

/// One group of `jobs` jobs per iteration, with a member per pool; each executor runs only
/// while its member is measured.
fn bench_group(c: &mut Criterion, name: &str, jobs: usize, from: Caller) {
    let workers = workers();
    let mut group = c.benchmark_group(name);
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    for (pool, member_name) in Pool::ALL {
        match pool {
            Pool::Crew | Pool::Blocking => {
                let (owner, ex) = start_crew(workers);
                member(&mut group, member_name, &ex, pool, jobs, from);
                drop(ex);
                drop(owner);
            }
            Pool::Tokio => {
                let (runtime, ex) = start_tokio(workers);
                member(&mut group, member_name, &ex, pool, jobs, from);
                drop(ex);
                drop(runtime);
            }
        }
    }
    group.finish();
}

fn spawn_blocking_1000(c: &mut Criterion) {
    bench_group(c, "spawn_blocking_1000", JOBS, Caller::Task);
}

fn spawn_blocking_one(c: &mut Criterion) {
    bench_group(c, "spawn_blocking_one", 1, Caller::Task);
}

fn spawn_blocking_one_outside(c: &mut Criterion) {
    bench_group(c, "spawn_blocking_one_outside", 1, Caller::Outside);
}

criterion_group!(benches, spawn_blocking_1000, spawn_blocking_one, spawn_blocking_one_outside);
criterion_main!(benches);
