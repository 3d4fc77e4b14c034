//! Timer benchmarks: crew's `crew::time` against tokio's `tokio::time` and async-io's `Timer`
//! (smol's timers) on async-executor, W worker threads each (`CREW_BENCH_WORKERS`, default 2).
//!
//! Every workload is one criterion group with three members, `crew`, `tokio` and
//! `async_executor`, run in a task on its executor and awaited from the benchmarking thread:
//!
//! - `timers_make_cancel_1000`: 1,000 timers an hour away, each made, polled once (so
//!   registered with its timer wheel or map) and dropped (cancelled).
//! - `timers_fire_100`: 100 tasks, each sleeping 100 µs, awaited in order: the timers fire.
//!
//! crew runs on a private pool (its workers turn crew's own driver, which fires the timers),
//! tokio on a multi-thread runtime with its time driver on, async-executor's `Executor` on W
//! threads with async-io's reactor. None of crew's pools here is paused: the figures are what
//! an ordinary program's timers cost (`BENCHMARKS.md`, "Timers").
//!
//! Run: `cargo bench --bench timers`.

use std::future::Future;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

#[allow(dead_code)]
mod common;

use common::{start_async_executor, start_crew, workers, Exec};

/// Timers made and cancelled per iteration of `timers_make_cancel_1000`.
const MADE: usize = 1_000;
/// Tasks per iteration of `timers_fire_100`.
const FIRED: usize = 100;
const HOUR: Duration = Duration::from_secs(3600);
const NAP: Duration = Duration::from_micros(100);

/// Makes `MADE` timers with `sleep`, each polled once and dropped.
async fn make_cancel<S: Future>(sleep: impl Fn(Duration) -> S) {
    for _ in 0..MADE {
        let mut timer = std::pin::pin!(sleep(HOUR));
        assert!(futures_lite::future::poll_once(&mut timer).await.is_none());
    }
}

/// `FIRED` tasks on `exec`, each sleeping `NAP` with `sleep`, awaited in order.
async fn fire<E: Exec, S: Future<Output = ()> + Send + 'static>(exec: &E, sleep: impl Fn(Duration) -> S) {
    let handles: Vec<_> = (0..FIRED).map(|_| exec.spawn(sleep(NAP))).collect();
    for handle in handles {
        handle.await;
    }
}

fn timers(c: &mut Criterion) {
    let w = workers();
    for (name, fire_them) in [("timers_make_cancel_1000", false), ("timers_fire_100", true)] {
        let mut group = c.benchmark_group(name);
        {
            let (_owner, crew) = start_crew(w);
            let inner = crew.clone();
            group.bench_function("crew", |b| {
                b.iter(|| {
                    let inner = inner.clone();
                    crew.block_on(crew.spawn(async move {
                        if fire_them {
                            fire(&inner, crew::time::sleep).await;
                        } else {
                            make_cancel(crew::time::sleep).await;
                        }
                    }))
                })
            });
        }
        {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(w).enable_time().build().unwrap();
            group.bench_function("tokio", |b| {
                b.iter(|| {
                    runtime.block_on(async {
                        tokio::spawn(async move {
                            if fire_them {
                                let handles: Vec<_> =
                                    (0..FIRED).map(|_| tokio::spawn(tokio::time::sleep(NAP))).collect();
                                for handle in handles {
                                    handle.await.unwrap();
                                }
                            } else {
                                make_cancel(tokio::time::sleep).await;
                            }
                        })
                        .await
                        .unwrap()
                    })
                })
            });
        }
        {
            let (_owner, exec) = start_async_executor(w);
            let inner = exec.clone();
            let after = |d| async move {
                async_io::Timer::after(d).await;
            };
            group.bench_function("async_executor", |b| {
                b.iter(|| {
                    let inner = inner.clone();
                    exec.block_on(exec.spawn(async move {
                        if fire_them {
                            fire(&inner, after).await;
                        } else {
                            make_cancel(after).await;
                        }
                    }))
                })
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = timers
}
criterion_main!(benches);
