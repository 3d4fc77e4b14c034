//! The harness of `scripts/ab-alternate` (which writes it into a scratch crate beside a
//! worktree of the older revision): the two crew versions' global pools, their private pools
//! (of `WORKERS`, 2 by default: what criterion's benches run), the working tree's private pool
//! with no spin before parking, and tokio's runtime take turns per round, in one process, so
//! that the VM's slow and fast states fall on all of them alike; prints each one's median round
//! and the median of its per-round ratios.

use std::rc::Rc;
use std::time::Instant;

// benches/common/local_pair.rs, copied beside this file by the script.
mod local_pair;

/// WORKERS=<n>: the worker threads of tokio's runtime and of the private pools (default 2; the
/// global pools take theirs from `CREW_WORKERS`).
fn workers() -> usize {
    std::env::var("WORKERS").map_or(2, |n| n.parse().unwrap_or_else(|_| panic!("WORKERS={n:?}: expected a number of threads")))
}

const PAIRS: usize = 100;
const ROUND_TRIPS: usize = 100;

/// `pair_ping_pong`'s, `yield_many`'s and `spawn_many_local`'s shapes, for one executor.
macro_rules! workloads {
    ($name:ident, $spawn:path, $yield_now:path, $sleep:path) => {
        mod $name {
            pub async fn pair() {
                let mut handles = Vec::new();
                for _ in 0..super::PAIRS {
                    let (ping_send, ping_recv) = async_channel::bounded::<u64>(1);
                    let (pong_send, pong_recv) = async_channel::bounded::<u64>(1);
                    handles.push($spawn(async move {
                        let mut count = 0;
                        for _ in 0..super::ROUND_TRIPS {
                            ping_send.send(count).await.unwrap();
                            count = pong_recv.recv().await.unwrap() + 1;
                        }
                        assert_eq!(count, 2 * super::ROUND_TRIPS as u64);
                    }));
                    handles.push($spawn(async move {
                        while let Ok(count) = ping_recv.recv().await {
                            pong_send.send(count + 1).await.unwrap();
                        }
                    }));
                }
                for handle in handles {
                    let _ = handle.await;
                }
            }

            pub async fn yields() {
                let handles: Vec<_> = (0..500)
                    .map(|_| $spawn(async { for _ in 0..100 { $yield_now().await; } }))
                    .collect();
                for handle in handles {
                    let _ = handle.await;
                }
            }

            /// `remote_spawn_join`'s shape: 10,000 tasks spawned from outside the pool (this
            /// `block_on`'s thread), awaited in order.
            pub async fn remote() {
                let handles: Vec<_> = (0..10_000).map(|i| $spawn(async move { i })).collect();
                for handle in handles {
                    let _ = handle.await;
                }
            }

            pub async fn spawn() {
                let _ = $spawn(async {
                    let handles: Vec<_> = (0..10_000).map(|_| $spawn(async {})).collect();
                    for handle in handles {
                        let _ = handle.await;
                    }
                })
                .await;
            }

            /// Timers made, polled once (so registered) and cancelled, 1,000 an hour away; then
            /// 100 tasks that each sleep 100 µs, fired by the reactor.
            pub async fn timers() {
                let _ = $spawn(async {
                    for _ in 0..1_000 {
                        let mut nap = Box::pin($sleep(std::time::Duration::from_secs(3600)));
                        assert!(futures_lite::future::poll_once(&mut nap).await.is_none());
                    }
                    let handles: Vec<_> = (0..100)
                        .map(|_| $spawn(async { $sleep(std::time::Duration::from_micros(100)).await }))
                        .collect();
                    for handle in handles {
                        let _ = handle.await;
                    }
                })
                .await;
            }
        }
    };
}

workloads!(old, crew_old::spawn, crew_old::yield_now, crew_old::time::sleep);
workloads!(new, crew_new::spawn, crew_new::yield_now, crew_new::time::sleep);
workloads!(tok, tokio::spawn, tokio::task::yield_now, tokio::time::sleep);
workloads!(old_private, crate::private::spawn_old, crew_old::yield_now, crew_old::time::sleep);
workloads!(new_private, crate::private::spawn_new, crew_new::yield_now, crew_new::time::sleep);
workloads!(new_no_spin, crate::private::spawn_new_no_spin, crew_new::yield_now, crew_new::time::sleep);

/// Each crew's private pool of `WORKERS` (criterion's benches run crew on one, not on the
/// global pool), and the working tree's with no spin, started on first use.
mod private {
    use std::future::Future;
    use std::sync::OnceLock;

    static OLD: OnceLock<crew_old::Pool> = OnceLock::new();
    static NEW: OnceLock<crew_new::Pool> = OnceLock::new();

    pub fn spawn_old<F: Future + Send + 'static>(future: F) -> crew_old::JoinHandle<F::Output>
    where
        F::Output: Send + 'static,
    {
        OLD.get_or_init(|| crew_old::Pool::builder().workers(super::workers()).build().unwrap()).spawn(future)
    }

    pub fn spawn_new<F: Future + Send + 'static>(future: F) -> crew_new::JoinHandle<F::Output>
    where
        F::Output: Send + 'static,
    {
        NEW.get_or_init(|| crew_new::Pool::builder().workers(super::workers()).build().unwrap()).spawn(future)
    }

    static NEW_NO_SPIN: OnceLock<crew_new::Pool> = OnceLock::new();

    /// The working tree's private pool with no spin before parking (as tokio's workers park).
    pub fn spawn_new_no_spin<F: Future + Send + 'static>(future: F) -> crew_new::JoinHandle<F::Output>
    where
        F::Output: Send + 'static,
    {
        let pool = NEW_NO_SPIN.get_or_init(|| {
            crew_new::Pool::builder().workers(super::workers()).spin_before_park(std::time::Duration::ZERO).build().unwrap()
        });
        pool.spawn(future)
    }
}

/// `local_ping_pong`'s pairs, spawned with `$spawn_local`, all awaited.
macro_rules! local_pairs {
    ($spawn_local:expr) => {{
        let mut handles = Vec::new();
        for _ in 0..PAIRS {
            for task in local_pair::local_pair(ROUND_TRIPS as u64) {
                handles.push($spawn_local(task));
            }
        }
        handles
    }};
}

/// `spawn_join_100k`'s shape, smaller: local tasks, each holding an `Rc` of its number, spawned
/// with `$spawn_local` and awaited in order (`$output` makes a handle's output a number).
const LOCAL_SPAWNS: u64 = 10_000;

macro_rules! local_spawn_join {
    ($spawn_local:expr, $output:expr) => {{
        let handles: Vec<_> = (0..LOCAL_SPAWNS)
            .map(|i| {
                let number = Rc::new(i);
                $spawn_local(async move { *number })
            })
            .collect();
        for (i, handle) in handles.into_iter().enumerate() {
            assert_eq!($output(handle.await), i as u64);
        }
    }};
}

/// A crew version's turn at a local workload (`local` or `local-spawn`): on a worker of its
/// global pool (`spawn`: inside one of its tasks), or `in_block_on` on this thread.
macro_rules! crew_local {
    ($crew:ident, $workload:expr, spawn) => {
        $crew::block_on($crew::spawn(crew_local!(@body $crew, $workload)))
    };
    ($crew:ident, $workload:expr, in_block_on) => {
        $crew::block_on(crew_local!(@body $crew, $workload))
    };
    (@body $crew:ident, $workload:expr) => {{
        let pairs = $workload == "local";
        async move {
            if pairs {
                for handle in local_pairs!($crew::spawn_local) {
                    handle.await;
                }
            } else {
                local_spawn_join!($crew::spawn_local, std::convert::identity)
            }
        }
    }};
}

/// Member `$member`'s turn at an ordinary (`Send`) workload, the function `$workload` of each
/// executor's `workloads!` module (tokio's on `$runtime`): the members in `main`'s `names` order.
macro_rules! ordinary {
    ($runtime:expr, $member:expr, $workload:ident) => {
        match $member {
            0 => $runtime.block_on(tok::$workload()),
            1 => crew_old::block_on(old::$workload()),
            2 => crew_new::block_on(new::$workload()),
            3 => crew_old::block_on(old_private::$workload()),
            4 => crew_new::block_on(new_private::$workload()),
            5 => crew_new::block_on(new_no_spin::$workload()),
            other => unreachable!("no member {other}"),
        }
    };
}

fn main() {
    let mut args = std::env::args().skip(1);
    let workload = args.next().expect("a workload: pair, yield, spawn, remote, timers, local or local-spawn");
    let rounds: usize = args.next().map_or(1500, |n| n.parse().expect("ROUNDS: a number"));
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    // tokio's timers only for the timers workload: its time driver would cost the others.
    if workload == "timers" {
        runtime.enable_time();
    }
    let runtime = runtime.worker_threads(workers()).build().unwrap();
    let local_runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let local_set = tokio::task::LocalSet::new();
    let local_executor = Rc::new(async_executor::LocalExecutor::new());
    // A LocalExecutor on a thread of its own, handed each round's work over a channel (as crew's
    // worker is by `block_on(spawn(..))`): the peer that pays what a pool's thread pays.
    let (job_tx, job_rx) = std::sync::mpsc::channel::<String>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let _own_thread = std::thread::spawn(move || {
        let executor = Rc::new(async_executor::LocalExecutor::new());
        for job in job_rx {
            match job.as_str() {
                "local" => futures_lite::future::block_on(executor.run(async {
                    for handle in local_pairs!(|task| executor.spawn(task)) {
                        handle.await;
                    }
                })),
                _ => futures_lite::future::block_on(executor.run(async {
                    local_spawn_join!(|task| executor.spawn(task), std::convert::identity)
                })),
            }
            done_tx.send(()).unwrap();
        }
    });
    let names: &[&str] = if workload.starts_with("local") {
        &[
            "tokio LocalSet",
            "crew (new) on a worker",
            "crew (new) in block_on",
            "LocalExecutor",
            "LocalExecutor, own thread",
            "crew (old) on a worker",
            "crew (old) in block_on",
        ]
    } else {
        &[
            "tokio",
            "crew (old)",
            "crew (new)",
            "crew (old), private pool",
            "crew (new), private pool",
            "crew (new), private, no spin",
        ]
    };
    // TURN=<n>: each member runs n iterations back to back per turn (timed together), as
    // criterion and the modes probe run them; 1 by default.
    let turn: usize =
        std::env::var("TURN").map_or(1, |n| n.parse().unwrap_or_else(|_| panic!("TURN={n:?}: expected a number of iterations")));
    let mut times = vec![Vec::new(); names.len()];
    for round in 0..rounds {
        for k in 0..names.len() {
            // Alternate the order, so that no member always follows the same one.
            let member = if round % 2 == 0 { k } else { names.len() - 1 - k };
            let start = Instant::now();
            for _ in 0..turn {
                match (workload.as_str(), member) {
                    ("pair", _) => ordinary!(runtime, member, pair),
                    ("yield", _) => ordinary!(runtime, member, yields),
                    ("spawn", _) => ordinary!(runtime, member, spawn),
                    ("remote", _) => ordinary!(runtime, member, remote),
                    ("timers", _) => ordinary!(runtime, member, timers),
                    ("local", 0) => local_runtime.block_on(local_set.run_until(async {
                        for handle in local_pairs!(tokio::task::spawn_local) {
                            handle.await.unwrap();
                        }
                    })),
                    ("local", 3) => futures_lite::future::block_on(local_executor.run(async {
                        for handle in local_pairs!(|task| local_executor.spawn(task)) {
                            handle.await;
                        }
                    })),
                    ("local-spawn", 0) => local_runtime.block_on(local_set.run_until(async {
                        local_spawn_join!(tokio::task::spawn_local, Result::unwrap)
                    })),
                    ("local-spawn", 3) => futures_lite::future::block_on(local_executor.run(async {
                        local_spawn_join!(|task| local_executor.spawn(task), std::convert::identity)
                    })),
                    ("local" | "local-spawn", 1) => crew_local!(crew_new, workload, spawn),
                    ("local" | "local-spawn", 2) => crew_local!(crew_new, workload, in_block_on),
                    ("local" | "local-spawn", 5) => crew_local!(crew_old, workload, spawn),
                    ("local" | "local-spawn", 6) => crew_local!(crew_old, workload, in_block_on),
                    ("local" | "local-spawn", 4) => {
                        job_tx.send(workload.clone()).unwrap();
                        done_rx.recv().unwrap();
                    }
                    (other, _) => panic!("unknown workload {other:?}: pair, yield, spawn, remote, timers, local or local-spawn"),
                }
            }
            times[member].push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    let median = |mut values: Vec<f64>| {
        values.sort_by(|a, b| a.total_cmp(b));
        values[values.len() / 2]
    };
    // The second ratio: to the older crew (its global pool; on a worker, for local tasks).
    let base = if workload.starts_with("local") { 5 } else { 1 };
    for (member, name) in names.iter().enumerate() {
        let ratio = |to: usize| median(times[member].iter().zip(&times[to]).map(|(a, b)| a / b).collect());
        let mut line = format!(
            "{workload} {name:<24} median {:8.1} µs   per-round ratio to {}: {:.3}",
            median(times[member].clone()),
            names[0],
            ratio(0)
        );
        if base != 0 {
            line += &format!("   to {}: {:.3}", names[base], ratio(base));
        }
        println!("{line}");
    }
}
