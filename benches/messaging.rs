//! Message passing and remote spawn: the work most services do, run on crew, tokio's
//! multi-thread runtime and async-executor with the same number of worker threads `W` (env
//! `CREW_BENCH_WORKERS`, default 2). Every workload is one criterion group with three members,
//! `crew`, `tokio` and `async_executor`; executors are set up and torn down as in
//! `benches/spawn.rs` (see its module docs and `benches/common/executors.rs`).
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
//! - `join_set_10k`: 10,000 tasks joined in the order they finish: crew's `JoinSet`, tokio's
//!   `JoinSet`, and `FuturesUnordered` of crew handles (see [`join_set_group`]).
//!
//! A foreign wake, like `spawn_one` in `benches/executor.rs`, is bounded below by a thread
//! wakeup: that file's `floor/thread_round_trip` measures it.
//!
//! The `floor` group puts `pair_ping_pong` next to the least a runtime could add to the
//! channels' own work: `pair_ping_pong_local` runs the same pairs on `W` plain threads (started
//! once), each with its own share of the pairs on a run queue of its own: async-task's tasks on
//! a thread-local stack (the task woken last runs next, as from the pools' LIFO slots; a FIFO
//! queue measured the same), no stealing, no notifies, no reactor, no other thread ever touching
//! a task (see [`local_pairs`]). With async-task's tasks, no runtime does less per message.
//!
//! Run: `cargo bench --bench messaging` (optionally `CREW_BENCH_WORKERS=4`).
//! `CREW_BENCH_MODES=<workload>` runs one workload's modes probe instead (see
//! `benches/spawn.rs` and `benches/common/modes.rs`).
//!
//! Counts instead of times: `CREW_BENCH_COUNTS=<executor>[/<workload>]` (executor `crew`, `tokio`
//! or `async_executor`) runs each workload (or the one named) [`COUNT_ITERS`] times after a
//! warm-up, on that executor alone, and prints per unit of work (a round trip, a spawn, a wake)
//! the context switches of all the process's threads (from `/proc/self/task`, so Linux only),
//! and for crew the pool's polls, notifies (sent and skipped because a searcher existed),
//! parks and LIFO runs (`crew::Metrics`). Under
//! `perf stat -e syscalls:sys_enter_futex,context-switches` the same run counts futex calls too;
//! one executor per process keeps the counts apart.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use criterion::Criterion;
use futures::channel::oneshot;

// The shared harness: this file's workloads neither yield nor stall, so part of it goes unused.
#[allow(dead_code)]
mod common;

use common::{bench, Exec, Workload};

/// Task pairs in `pair_ping_pong`, and round trips per pair.
const PAIRS: usize = 100;
const ROUND_TRIPS: usize = 100;
/// Tasks spawned and awaited in `remote_spawn_join`.
const REMOTE_SPAWNS: usize = 10_000;
/// Tasks woken from outside in `foreign_wakes`.
const FOREIGN_WAKES: usize = 1_000;

struct PairPingPong;

/// One pair of `pair_ping_pong`: the task that starts each round trip, and its partner.
fn pair() -> [impl Future<Output = ()> + Send + 'static; 2] {
    let (ping_send, ping_recv) = async_channel::bounded::<u64>(1);
    let (pong_send, pong_recv) = async_channel::bounded::<u64>(1);
    let pinger = async move {
        let mut count = 0;
        for _ in 0..ROUND_TRIPS {
            ping_send.send(count).await.unwrap();
            count = pong_recv.recv().await.unwrap() + 1;
        }
        assert_eq!(count, 2 * ROUND_TRIPS as u64);
    };
    let ponger = async move {
        while let Ok(count) = ping_recv.recv().await {
            pong_send.send(count + 1).await.unwrap();
        }
    };
    // `Either` gives the two futures one type, unboxed, so that callers spawn them alike.
    [futures::future::Either::Left(pinger), futures::future::Either::Right(ponger)]
}

impl Workload for PairPingPong {
    const NAME: &'static str = "pair_ping_pong";

    fn iter<E: Exec>(ex: &E) {
        let mut tasks = Vec::with_capacity(2 * PAIRS);
        for _ in 0..PAIRS {
            tasks.extend(pair().map(|task| ex.spawn(task)));
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

thread_local! {
    /// The run queue of a `local_pairs` thread, taken last in first out: the tasks it runs,
    /// woken only by each other.
    static LOCAL_QUEUE: RefCell<VecDeque<async_task::Runnable>> = const { RefCell::new(VecDeque::new()) };
}

/// A thread of the `floor` group: runs `pairs` pairs of `pair_ping_pong` to the end on its own
/// run queue each time it is handed a count, and answers when they are done.
fn local_pairs_thread() -> (mpsc::Sender<usize>, mpsc::Receiver<()>) {
    let (jobs, received) = mpsc::channel::<usize>();
    let (done, finished) = mpsc::channel();
    thread::Builder::new()
        .name("floor-pairs".into())
        .spawn(move || {
            for pairs in received {
                let schedule = |runnable| LOCAL_QUEUE.with(|queue| queue.borrow_mut().push_back(runnable));
                let mut tasks = Vec::with_capacity(2 * pairs);
                for _ in 0..pairs {
                    for future in pair() {
                        let (runnable, task) = async_task::spawn(future, schedule);
                        runnable.schedule();
                        tasks.push(task);
                    }
                }
                while let Some(runnable) = LOCAL_QUEUE.with(|queue| queue.borrow_mut().pop_back()) {
                    runnable.run();
                }
                assert!(tasks.iter().all(|task| task.is_finished()), "a pair stopped short");
                done.send(()).unwrap();
            }
        })
        .expect("a floor thread");
    (jobs, finished)
}

/// One iteration of `floor/pair_ping_pong_local` on `threads` (started once per process): the
/// [`PAIRS`] pairs split over them as evenly as they go.
fn local_pairs(threads: &[(mpsc::Sender<usize>, mpsc::Receiver<()>)]) {
    for (i, (jobs, _)) in threads.iter().enumerate() {
        jobs.send(PAIRS / threads.len() + usize::from(i < PAIRS % threads.len())).unwrap();
    }
    for (_, finished) in threads {
        finished.recv().unwrap();
    }
}

fn floor_group(c: &mut Criterion) {
    let threads: Vec<_> = (0..common::workers()).map(|_| local_pairs_thread()).collect();
    let mut group = c.benchmark_group("floor");
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    group.bench_function("pair_ping_pong_local", |b| b.iter(|| local_pairs(&threads)));
    group.finish();
}

/// Members of `join_set_10k`.
const SET_MEMBERS: u64 = 10_000;

/// `join_set_10k`: the benchmarking thread spawns 10,000 tasks into a group and joins them in
/// the order they finish: crew's `JoinSet` against tokio's `JoinSet` and against
/// `futures::stream::FuturesUnordered` of crew handles, each on `W` workers (`W` = 2 unless
/// `CREW_BENCH_WORKERS`), in the same run. Each member yields once, so members finish out of
/// spawn order and spread over the workers.
fn join_set_group(c: &mut Criterion) {
    let workers = common::workers();
    let pool = crew::Pool::builder().workers(workers).build().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).build().unwrap();
    let member = |i: u64| async move {
        crew::yield_now().await;
        i
    };
    let mut group = c.benchmark_group("join_set_10k");
    group.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    group.bench_function("crew_join_set", |b| {
        b.iter(|| {
            pool.block_on(async {
                let set = crew::task::JoinSet::new();
                for i in 0..SET_MEMBERS {
                    set.spawn(member(i));
                }
                let mut sum = 0;
                while let Some(i) = set.join_next().await {
                    sum += i;
                }
                assert_eq!(sum, SET_MEMBERS * (SET_MEMBERS - 1) / 2);
            })
        })
    });
    group.bench_function("tokio_join_set", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut set = tokio::task::JoinSet::new();
                for i in 0..SET_MEMBERS {
                    set.spawn(async move {
                        tokio::task::yield_now().await;
                        i
                    });
                }
                let mut sum = 0;
                while let Some(i) = set.join_next().await {
                    sum += i.unwrap();
                }
                assert_eq!(sum, SET_MEMBERS * (SET_MEMBERS - 1) / 2);
            })
        })
    });
    group.bench_function("crew_futures_unordered", |b| {
        b.iter(|| {
            pool.block_on(async {
                use futures::StreamExt;
                let mut set: futures::stream::FuturesUnordered<_> =
                    (0..SET_MEMBERS).map(|i| crew::spawn(member(i))).collect();
                let mut sum = 0;
                while let Some(i) = set.next().await {
                    sum += i;
                }
                assert_eq!(sum, SET_MEMBERS * (SET_MEMBERS - 1) / 2);
            })
        })
    });
    group.finish();
}

fn main() {
    match std::env::var("CREW_BENCH_COUNTS") {
        Ok(which) => counts::run(&which),
        Err(std::env::VarError::NotPresent) => common::main(
            &[bench::<PairPingPong>(), bench::<RemoteSpawnJoin>(), bench::<ForeignWakes>()],
            &[floor_group, join_set_group],
        ),
        Err(std::env::VarError::NotUnicode(value)) => {
            panic!("CREW_BENCH_COUNTS={value:?} is not UTF-8; expected <executor>[/<workload>]")
        }
    }
}

/// Iterations that `CREW_BENCH_COUNTS` counts over, after `COUNT_WARM_UP` uncounted ones.
const COUNT_ITERS: usize = 300;
const COUNT_WARM_UP: usize = 20;

/// The `CREW_BENCH_COUNTS` mode (see the module docs).
mod counts {
    use super::*;

    use common::{with_executor, workers, ExecJob, EXECUTORS};

    /// Each workload with its unit of work and how many units one iteration does.
    const WORKLOADS: [(&str, &str, usize); 3] = [
        (PairPingPong::NAME, "round trip", PAIRS * ROUND_TRIPS),
        (RemoteSpawnJoin::NAME, "spawn", REMOTE_SPAWNS),
        (ForeignWakes::NAME, "wake", FOREIGN_WAKES),
    ];

    pub fn run(which: &str) {
        let (executor, only) = match which.split_once('/') {
            Some((executor, workload)) => (executor, Some(workload)),
            None => (which, None),
        };
        let names = WORKLOADS.map(|(name, _, _)| name);
        if !EXECUTORS.contains(&executor) || only.is_some_and(|only| !names.contains(&only)) {
            panic!(
                "CREW_BENCH_COUNTS={which:?}: expected <executor>[/<workload>], the executor one of \
                 {EXECUTORS:?} and the workload one of {names:?}"
            );
        }
        println!(
            "{executor}, {} workers, {COUNT_ITERS} iterations (after {COUNT_WARM_UP}), per unit of work:",
            workers()
        );
        for (name, unit, units) in WORKLOADS {
            if only.is_some_and(|only| only != name) {
                continue;
            }
            let line = with_executor(executor, workers(), Count(name));
            println!("{name:>18} (per {unit}): {}", line.per(units * COUNT_ITERS));
        }
    }

    /// The pool counters `CREW_BENCH_COUNTS` prints for crew, in the order `crew_counts` reads them.
    const CREW_COUNTS: [&str; 5] = ["polls", "notifies", "notifies skipped", "parks", "LIFO runs"];

    /// [`CREW_COUNTS`] from `pool`'s metrics (notifies from outside the workers included).
    fn crew_counts(pool: &crew::Pool) -> [u64; 5] {
        let m = pool.metrics();
        let t = &m.total;
        [
            t.polls,
            t.notifies + m.notifies_outside,
            t.notifies_skipped + m.notifies_skipped_outside,
            t.parks,
            t.lifo_runs,
        ]
    }

    /// What one workload's counted iterations did, in all.
    struct Counted {
        switches: u64,
        crew: Option<[u64; 5]>,
    }

    impl Counted {
        fn per(&self, units: usize) -> String {
            let per = |n: u64| n as f64 / units as f64;
            let mut line = format!("context switches {:.4}", per(self.switches));
            for (label, n) in CREW_COUNTS.iter().zip(self.crew.iter().flatten()) {
                line += &format!(", {label} {:.4}", per(*n));
            }
            line
        }
    }

    /// Counts the workload named in it (see [`count`]), as an [`ExecJob`].
    struct Count<'a>(&'a str);

    impl ExecJob for Count<'_> {
        type Output = Counted;

        fn run<E: Exec>(self, ex: &E, pool: Option<&crew::Pool>) -> Counted {
            count(self.0, ex, pool)
        }
    }

    fn count<E: Exec>(name: &str, ex: &E, pool: Option<&crew::Pool>) -> Counted {
        let iter = |ex: &E| match name {
            PairPingPong::NAME => PairPingPong::iter(ex),
            RemoteSpawnJoin::NAME => RemoteSpawnJoin::iter(ex),
            _ => ForeignWakes::iter(ex),
        };
        for _ in 0..COUNT_WARM_UP {
            iter(ex);
        }
        let (switches, crew) = (context_switches(), pool.map(crew_counts));
        for _ in 0..COUNT_ITERS {
            iter(ex);
        }
        let switches = context_switches() - switches;
        let crew = crew.zip(pool.map(crew_counts)).map(|(a, b)| std::array::from_fn(|i| b[i] - a[i]));
        Counted { switches, crew }
    }

    /// Voluntary and involuntary context switches of every live thread of this process.
    fn context_switches() -> u64 {
        let tasks = std::fs::read_dir("/proc/self/task").expect("CREW_BENCH_COUNTS reads /proc/self/task (Linux only)");
        let mut total = 0;
        for task in tasks.flatten() {
            // A thread that exited since the listing has no status left: it is not counted.
            let Ok(status) = std::fs::read_to_string(task.path().join("status")) else { continue };
            for line in status.lines() {
                if let Some(n) = line
                    .strip_prefix("voluntary_ctxt_switches:")
                    .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
                {
                    total += n.trim().parse::<u64>().expect("a context switch count in /proc/self/task/*/status");
                }
            }
        }
        total
    }
}
