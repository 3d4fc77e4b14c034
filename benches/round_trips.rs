//! `pair_ping_pong`'s and `local_ping_pong`'s shapes for counting, not timing: 100 pairs of
//! tasks bounce a counter 100 times, `ROUNDS` times. `scripts/locked-count` runs it under
//! callgrind at two round counts and divides the difference by the round trips between them,
//! so that start-up and shutdown cancel out: instructions and locked instructions per round
//! trip (BENCHMARKS.md, "Per round trip").
//!
//! - `crew`, `tokio`: ordinary tasks over two `async_channel::bounded(1)` channels, on a
//!   2-worker crew pool or tokio multi-thread runtime, spawned from outside and joined in
//!   `block_on`.
//! - `crew-local`, `crew-local-block-on`, `tokio-local-set`, `async-executor-local`: local
//!   (`!Send`) tasks over `Rc<RefCell>` slots (`common::local_pair`), as `benches/local.rs`
//!   runs them: spawned and joined by a task on a 2-worker crew pool with `crew::spawn_local`;
//!   inside `crew::block_on`; in tokio's `LocalSet` on a current-thread runtime; in
//!   async-executor's `LocalExecutor`.
//!
//! Usage: `round_trips <EXECUTOR> <ROUNDS>` (`cargo bench --bench round_trips -- crew 12`).

use std::future::Future;
use std::rc::Rc;

// The shared harness: only the local pair is used here.
#[allow(dead_code)]
mod common;

const PAIRS: usize = 100;
const ROUND_TRIPS: u32 = 100;

/// One pair's two tasks.
fn pair() -> (impl Future<Output = ()> + Send + 'static, impl Future<Output = ()> + Send + 'static) {
    let (a_tx, a_rx) = async_channel::bounded::<u32>(1);
    let (b_tx, b_rx) = async_channel::bounded::<u32>(1);
    let ping = async move {
        for i in 0..ROUND_TRIPS {
            a_tx.send(i).await.unwrap();
            b_rx.recv().await.unwrap();
        }
    };
    let pong = async move {
        for _ in 0..ROUND_TRIPS {
            let v = a_rx.recv().await.unwrap();
            b_tx.send(v).await.unwrap();
        }
    };
    (ping, pong)
}

/// `local_ping_pong`'s work: spawns the pairs with `spawn` (each task boxed, so that one
/// function serves every executor: each pays the same box), then awaits every task.
async fn local_pairs<H: Future<Output = ()>>(spawn: impl Fn(std::pin::Pin<Box<dyn Future<Output = ()>>>) -> H) {
    let mut handles = Vec::with_capacity(2 * PAIRS);
    for _ in 0..PAIRS {
        handles.extend(common::local_pair(ROUND_TRIPS.into()).map(|task| spawn(Box::pin(task))));
    }
    for handle in handles {
        handle.await;
    }
}

fn main() {
    // `cargo bench` passes `--bench`: only the positional arguments count.
    let args: Vec<String> = std::env::args().skip(1).filter(|arg| !arg.starts_with("--")).collect();
    let usage =
        "usage: round_trips <crew|tokio|crew-local|crew-local-block-on|tokio-local-set|async-executor-local> <ROUNDS>";
    let (Some(executor), Some(rounds)) = (args.first(), args.get(1)) else {
        println!("{usage}: nothing to run");
        return;
    };
    let rounds: usize =
        rounds.parse().unwrap_or_else(|_| panic!("ROUNDS={rounds:?}: expected a whole number; {usage}"));
    match executor.as_str() {
        "crew" => {
            let pool = crew::Pool::builder().workers(2).build().unwrap();
            for _ in 0..rounds {
                let mut handles = Vec::with_capacity(2 * PAIRS);
                for (ping, pong) in (0..PAIRS).map(|_| pair()) {
                    handles.extend([pool.spawn(ping), pool.spawn(pong)]);
                }
                crew::block_on(async {
                    for handle in handles {
                        handle.await;
                    }
                });
            }
        }
        "tokio" => {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
            for _ in 0..rounds {
                let mut handles = Vec::with_capacity(2 * PAIRS);
                for (ping, pong) in (0..PAIRS).map(|_| pair()) {
                    handles.extend([runtime.spawn(ping), runtime.spawn(pong)]);
                }
                runtime.block_on(async {
                    for handle in handles {
                        handle.await.unwrap();
                    }
                });
            }
        }
        "crew-local" => {
            let pool = crew::Pool::builder().workers(2).build().unwrap();
            for _ in 0..rounds {
                crew::block_on(pool.spawn(local_pairs(crew::spawn_local)));
            }
        }
        "crew-local-block-on" => {
            for _ in 0..rounds {
                crew::block_on(local_pairs(crew::spawn_local));
            }
        }
        "tokio-local-set" => {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let local_set = tokio::task::LocalSet::new();
            for _ in 0..rounds {
                let spawn = |task| {
                    let handle = tokio::task::spawn_local(task);
                    async move { handle.await.unwrap() }
                };
                runtime.block_on(local_set.run_until(local_pairs(spawn)));
            }
        }
        "async-executor-local" => {
            let executor = Rc::new(async_executor::LocalExecutor::new());
            for _ in 0..rounds {
                futures_lite::future::block_on(executor.run(local_pairs(|task| executor.spawn(task))));
            }
        }
        other => panic!("executor {other:?}: {usage}"),
    }
}
