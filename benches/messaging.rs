//! Message passing and remote spawn: the work most services do, run on crew, tokio's
//! multi-thread runtime and async-executor with the same number of worker threads `W` (env
//! `CREW_BENCH_WORKERS`, default 2). Every workload is one criterion group with three members,
//! `crew`, `tokio` and `async_executor`; executors are set up and torn down as in
//! `benches/spawn.rs` (see its module docs and `benches/common/mod.rs`).
//!
//! - `pair_ping_pong`: 100 pairs of tasks, each pair bouncing a counter 100 times there and back
//!   over two `async_channel::bounded(1)` channels (every message wakes the partner task).
//! - `remote_spawn_join`: inside `block_on` on the benchmarking thread (not a worker), spawn
//!   10,000 empty tasks, then await them in the order they were spawned.
//! - `foreign_wakes`: 1,000 tasks each wait on a oneshot channel of their own; once all of them
//!   wait, a plain `std::thread` (started once, outside the timed loop) sends on every channel,
//!   waking each task once from outside the pool; the benchmarking thread awaits them all.
//!   Each iteration spawns the tasks too; the wakes are what the other executors do differently.
//!
//! A foreign wake, like `spawn_one` in `benches/executor.rs`, is bounded below by a thread
//! wakeup: that file's `floor/thread_round_trip` measures it.
//!
//! Run: `cargo bench --bench messaging` (optionally `CREW_BENCH_WORKERS=4`).

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::{mpsc, Arc};
use std::thread;

use criterion::{criterion_group, criterion_main};
use futures::channel::oneshot;

// The shared harness: this file's workloads neither yield nor stall, so part of it goes unused.
#[allow(dead_code)]
mod common;

use common::{group, Exec, Workload};

/// Task pairs in `pair_ping_pong`, and round trips per pair.
const PAIRS: usize = 100;
const ROUND_TRIPS: usize = 100;
/// Tasks spawned and awaited in `remote_spawn_join`.
const REMOTE_SPAWNS: usize = 10_000;
/// Tasks woken from outside in `foreign_wakes`.
const FOREIGN_WAKES: usize = 1_000;

struct PairPingPong;

impl Workload for PairPingPong {
    const NAME: &'static str = "pair_ping_pong";

    fn iter<E: Exec>(ex: &E) {
        let mut tasks = Vec::with_capacity(2 * PAIRS);
        for _ in 0..PAIRS {
            let (ping_send, ping_recv) = async_channel::bounded::<u64>(1);
            let (pong_send, pong_recv) = async_channel::bounded::<u64>(1);
            tasks.push(ex.spawn(async move {
                let mut count = 0;
                for _ in 0..ROUND_TRIPS {
                    ping_send.send(count).await.unwrap();
                    count = pong_recv.recv().await.unwrap() + 1;
                }
                assert_eq!(count, 2 * ROUND_TRIPS as u64);
            }));
            tasks.push(ex.spawn(async move {
                while let Ok(count) = ping_recv.recv().await {
                    pong_send.send(count + 1).await.unwrap();
                }
            }));
        }
        ex.block_on(async move {
            for task in tasks {
                task.await;
            }
        });
    }
}

struct RemoteSpawnJoin;

impl Workload for RemoteSpawnJoin {
    const NAME: &'static str = "remote_spawn_join";

    fn iter<E: Exec>(ex: &E) {
        let spawner = ex.clone();
        ex.block_on(async move {
            let handles: Vec<_> = (0..REMOTE_SPAWNS).map(|i| spawner.spawn(async move { i })).collect();
            for (i, handle) in handles.into_iter().enumerate() {
                assert_eq!(handle.await, i);
            }
        });
    }
}

/// The plain thread of `foreign_wakes`: sends on every channel of each batch it is handed.
fn waker_thread() -> mpsc::Sender<Vec<oneshot::Sender<usize>>> {
    let (batches, received) = mpsc::channel::<Vec<oneshot::Sender<usize>>>();
    thread::Builder::new()
        .name("foreign-waker".into())
        .spawn(move || {
            for batch in received {
                for (i, channel) in batch.into_iter().enumerate() {
                    channel.send(i).unwrap();
                }
            }
        })
        .expect("the foreign waker thread");
    batches
}

struct ForeignWakes;

impl Workload for ForeignWakes {
    const NAME: &'static str = "foreign_wakes";

    fn iter<E: Exec>(ex: &E) {
        thread_local! {
            static WAKER: mpsc::Sender<Vec<oneshot::Sender<usize>>> = waker_thread();
        }
        let waiting = Arc::new(AtomicUsize::new(0));
        let mut senders = Vec::with_capacity(FOREIGN_WAKES);
        let tasks: Vec<_> = (0..FOREIGN_WAKES)
            .map(|_| {
                let (send, recv) = oneshot::channel();
                senders.push(send);
                let waiting = waiting.clone();
                ex.spawn(async move {
                    // Release: pairs with the benchmarking thread's Acquire load below.
                    waiting.fetch_add(1, Release);
                    recv.await.unwrap()
                })
            })
            .collect();
        // Every task has been polled once (it is about to wait, or waits): the wakes below come
        // from outside the pool onto waiting tasks.
        while waiting.load(Acquire) < FOREIGN_WAKES {
            thread::yield_now();
        }
        WAKER.with(|waker| waker.send(senders).unwrap());
        ex.block_on(async move {
            for (i, task) in tasks.into_iter().enumerate() {
                assert_eq!(task.await, i);
            }
        });
    }
}

criterion_group!(benches, group::<PairPingPong>, group::<RemoteSpawnJoin>, group::<ForeignWakes>);
criterion_main!(benches);
