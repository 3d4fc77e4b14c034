//! `pair_ping_pong`'s shape for counting, not timing: 100 pairs of tasks bounce a counter 100
//! times over two `async_channel::bounded(1)` channels, on a 2-worker crew pool or tokio
//! multi-thread runtime, `ROUNDS` times. `scripts/locked-count` runs it under callgrind at two
//! round counts and divides the difference by the round trips between them, so that start-up
//! and shutdown cancel out: instructions and locked instructions per round trip
//! (BENCHMARKS.md, "Per round trip").
//!
//! Usage: `round_trips <crew|tokio> <ROUNDS>` (`cargo bench --bench round_trips -- crew 12`).

use std::future::Future;

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

fn main() {
    // `cargo bench` passes `--bench`: only the positional arguments count.
    let args: Vec<String> = std::env::args().skip(1).filter(|arg| !arg.starts_with("--")).collect();
    let usage = "usage: round_trips <crew|tokio> <ROUNDS>";
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
        other => panic!("executor {other:?}: expected crew or tokio; {usage}"),
    }
}
