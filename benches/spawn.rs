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
//! all three), so that the three executors do the same work (async-executor has no "current
//! executor" to spawn onto).
//!
//! Run: `cargo bench --bench spawn` (optionally `CREW_BENCH_WORKERS=4 cargo bench --bench spawn`).
//!
//! Modes instead of criterion: `CREW_BENCH_MODES=ping_pong cargo bench --bench spawn` runs one
//! workload in rounds on the three executors, with the machine's cache-line round trip beside
//! each round (see `benches/common/modes.rs`): how `ping_pong`'s slow mode was traced to the
//! machine.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{mpsc, Arc};
use std::time::Duration;

mod common;

use common::{bench, stall, workers, Exec, Workload};

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

// ---------------------------------------------------------------------------------------------
// workloads

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
                        stall(STALL_DUR);
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

fn main() {
    common::main(
        &[
            bench::<SpawnManyLocal>(),
            bench::<SpawnManyRemoteIdle>(),
            bench::<SpawnManyRemoteBusy>(),
            bench::<PingPong>(),
            bench::<YieldMany>(),
            bench::<ChainedSpawn>(),
        ],
        &[],
    );
}
