//! `Pool::metrics` and `crew::metrics`: exact counts in set-ups where they are determined, queue
//! depths and live tasks while tasks wait, and snapshots that never go backwards while a
//! foreign thread reads them during a long run.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

use common::{block_one_worker, wait_until, with_timeout, with_timeout_of, HANG_TIMEOUT};

/// Tasks spawned from outside in the exact-count test.
const TASKS: u64 = if cfg!(miri) { 50 } else { 500 };
/// The long run: this many parents spawned from outside, each spawning `CHILDREN` it awaits
/// (a million tasks; fewer under miri, which runs about a thousand times slower).
const PARENTS: u64 = if cfg!(miri) { 4 } else { 1_000 };
const CHILDREN: u64 = if cfg!(miri) { 24 } else { 999 };

fn one_worker() -> crew::Pool {
    // No takeover: a blocked worker must stay the only one, its queues as the test left them.
    crew::Pool::builder().workers(1).takeover(false).build().unwrap()
}

#[test]
fn n_tasks_from_outside_on_one_worker_are_n_polls_n_outside_spawns_and_no_steal() {
    with_timeout(|| {
        let pool = one_worker();
        let handles: Vec<_> = (0..TASKS).map(|i| pool.spawn(async move { i })).collect();
        for handle in handles {
            crew::block_on(handle);
        }
        let metrics = pool.metrics();
        assert_eq!(metrics.spawned_outside, TASKS);
        assert_eq!(metrics.total.spawned, 0);
        assert_eq!(metrics.total.polls, TASKS, "each task finishes in its first poll");
        assert_eq!(metrics.workers[0].polls, TASKS);
        assert_eq!(metrics.total.stolen, 0);
        assert_eq!(metrics.total.takeovers, 0);
        assert_eq!(metrics.live_tasks, 0);
        assert!(metrics.total.injector_batches >= 1, "outside spawns reach the worker through the injector");
    });
}

#[test]
fn spawns_from_a_task_count_on_its_worker() {
    with_timeout(|| {
        let pool = Arc::new(one_worker());
        let inner = pool.clone();
        crew::block_on(pool.spawn(async move {
            let children: Vec<_> = (0..64).map(|i| inner.spawn(async move { i })).collect();
            for child in children {
                child.await;
            }
        }));
        let metrics = pool.metrics();
        assert_eq!(metrics.spawned_outside, 1);
        assert_eq!(metrics.workers[0].spawned, 64);
        assert_eq!(metrics.live_tasks, 0);
        assert!(metrics.total.lifo_runs >= 1, "a child spawned last runs from the LIFO slot");
    });
}

#[test]
fn a_blocked_worker_shows_its_queued_tasks_and_live_tasks() {
    with_timeout(|| {
        let pool = Arc::new(one_worker());
        let (queued_tx, queued_rx) = mpsc::channel();
        let (gate_tx, gate_rx) = mpsc::channel::<()>();
        let inner = pool.clone();
        pool.spawn(async move {
            // Three children in this worker's queues (the last in the LIFO slot), then block.
            let children: Vec<_> = (0..3).map(|_| inner.spawn(async {})).collect();
            queued_tx.send(()).unwrap();
            let _ = gate_rx.recv();
            for child in children {
                child.await;
            }
        })
        .detach();
        queued_rx.recv_timeout(HANG_TIMEOUT).unwrap();
        let outside: Vec<_> = (0..5).map(|_| pool.spawn(async {})).collect();
        let metrics = pool.metrics();
        let worker = &metrics.workers[0];
        assert_eq!((worker.lifo_depth, worker.deque_depth, worker.deferred_depth), (1, 2, 0));
        assert_eq!(metrics.injector_depth, 5);
        assert_eq!(metrics.live_tasks, 9, "the blocked task, its 3 children and 5 outside spawns");
        drop(gate_tx);
        for handle in outside {
            crew::block_on(handle);
        }
        wait_until("every task ended", || pool.metrics().live_tasks == 0);
        let metrics = pool.metrics();
        assert_eq!((metrics.injector_depth, metrics.workers[0].deque_depth), (0, 0));
    });
}

#[test]
fn parks_unparks_and_busy_time_follow_the_work() {
    with_timeout(|| {
        let pool = one_worker();
        wait_until("the idle worker parks", || pool.metrics().workers[0].parks >= 1);
        let before = pool.metrics();
        crew::block_on(pool.spawn(async { std::thread::sleep(std::time::Duration::from_millis(5)) }));
        wait_until("the worker parks again", || pool.metrics().workers[0].parks > before.workers[0].parks);
        let after = pool.metrics();
        assert!(after.workers[0].unparks > before.workers[0].unparks);
        assert!(
            after.workers[0].busy >= before.workers[0].busy + std::time::Duration::from_millis(5),
            "the 5 ms poll counts as busy: {:?} then {:?}",
            before.workers[0].busy,
            after.workers[0].busy
        );
        assert!(after.elapsed >= after.workers[0].busy);
        assert!(after.notifies_outside >= 1, "the outside spawn woke the parked worker");
    });
}

#[test]
fn a_takeover_is_counted_on_the_stuck_worker() {
    with_timeout(|| {
        let pool =
            crew::Pool::builder().workers(1).takeover_after(std::time::Duration::from_millis(1)).build().unwrap();
        let gate = block_one_worker(&pool);
        // Queued behind the stuck poll: the monitor takes the worker over to run it.
        crew::block_on(pool.spawn(async {}));
        let metrics = pool.metrics();
        assert_eq!(metrics.workers[0].takeovers, 1);
        assert_eq!(metrics.stuck_threads, 1, "the stuck poll has not returned");
        drop(gate);
        wait_until("the stuck thread gives its core up", || pool.metrics().stuck_threads == 0);
        assert_eq!(pool.metrics().total.takeovers, 1);
    });
}

#[test]
fn snapshots_from_a_foreign_thread_never_go_backwards_during_a_million_tasks() {
    // A million tasks take about 55 s under ThreadSanitizer on 2 cores (5 to 7 s in a plain
    // debug build): five hang timeouts, so that only a hang fails it.
    with_timeout_of(5 * HANG_TIMEOUT, || {
        let pool = Arc::new(crew::Pool::builder().workers(2).build().unwrap());
        let done = Arc::new(AtomicBool::new(false));
        let reader = {
            let (pool, done) = (pool.clone(), done.clone());
            thread::spawn(move || {
                let mut last = pool.metrics();
                let mut snapshots = 0;
                // At least one comparison, however fast the run.
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    let now = pool.metrics();
                    let pairs = [
                        (last.total.polls, now.total.polls),
                        (last.total.spawned, now.total.spawned),
                        (last.spawned_outside, now.spawned_outside),
                        (last.total.stolen, now.total.stolen),
                        (last.total.steal_attempts, now.total.steal_attempts),
                        (last.total.lifo_runs, now.total.lifo_runs),
                        (last.total.injector_batches, now.total.injector_batches),
                        (last.total.parks, now.total.parks),
                        (last.total.unparks, now.total.unparks),
                        (last.total.notifies, now.total.notifies),
                        (last.total.notifies_skipped, now.total.notifies_skipped),
                    ];
                    for (field, (before, after)) in pairs.into_iter().enumerate() {
                        assert!(after >= before, "counter {field} went backwards: {before} then {after}");
                    }
                    assert!(now.total.busy >= last.total.busy);
                    for (before, after) in last.workers.iter().zip(&now.workers) {
                        assert!(after.polls >= before.polls && after.spawned >= before.spawned);
                    }
                    last = now;
                    snapshots += 1;
                    if finished {
                        break snapshots;
                    }
                }
            })
        };
        // A million tasks: 1,000 spawned from here, each spawning 999 children it awaits.
        let inner = pool.clone();
        let parents: Vec<_> = (0..PARENTS)
            .map(|_| {
                let inner = inner.clone();
                pool.spawn(async move {
                    let children: Vec<_> = (0..CHILDREN).map(|i| inner.spawn(async move { i })).collect();
                    for child in children {
                        child.await;
                    }
                })
            })
            .collect();
        for parent in parents {
            crew::block_on(parent);
        }
        done.store(true, Ordering::SeqCst);
        let snapshots: u64 = reader.join().unwrap();
        println!("{snapshots} snapshots compared");
        let metrics = pool.metrics();
        let tasks = PARENTS * (1 + CHILDREN);
        assert_eq!(metrics.spawned_outside + metrics.total.spawned, tasks);
        assert_eq!(metrics.live_tasks, 0);
        assert!(metrics.total.polls >= tasks);
    });
}

#[test]
fn the_global_pool_counts_its_spawns_and_live_tasks() {
    with_timeout(|| {
        let before = crew::metrics();
        let (tx, rx) = mpsc::channel::<()>();
        let rx = Arc::new(std::sync::Mutex::new(rx));
        let (started_tx, started_rx) = mpsc::channel();
        let handle = crew::spawn(async move {
            // Pending until the test sends: a live task waiting for a wake, while its blocking
            // job holds a blocking thread.
            let rx = rx.clone();
            crew::spawn_blocking(move || {
                started_tx.send(()).unwrap();
                rx.lock().unwrap().recv()
            })
            .await
        });
        started_rx.recv_timeout(HANG_TIMEOUT).unwrap();
        let during = crew::metrics();
        // This test binary's other tests use private pools only: the global pool's tasks are
        // this test's.
        assert_eq!(during.spawned_outside, before.spawned_outside + 1);
        assert_eq!(during.live_tasks, before.live_tasks + 1);
        assert!(during.blocking.threads >= 1);
        tx.send(()).unwrap();
        crew::block_on(handle).unwrap();
        wait_until("the task ended", || crew::metrics().live_tasks == before.live_tasks);
        let text = crew::metrics().to_string();
        assert!(text.contains("total") && text.contains("live tasks"), "{text}");
    });
}
