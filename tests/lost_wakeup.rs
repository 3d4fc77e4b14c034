//! Hammers the sleep protocol: work that appears while workers go to sleep always gets a
//! worker. On 1-, 2- and 4-worker pools, 20,000 times each: spawn from outside onto an idle
//! pool, wake a pending task from a foreign thread, and spawn from inside a task so that one
//! child lands in the stealable deque while its worker stays busy and the other workers are
//! parking. A lost wakeup leaves a task queued with every worker asleep: a hang, which
//! `block_on_within` turns into a failure.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::thread;
use std::time::Instant;

use common::probe::{block_on_within, WakeCounter};
use common::HANG_TIMEOUT;

const ITERATIONS: usize = if cfg!(miri) { 20 } else { 20_000 };
const POOL_SIZES: [usize; 3] = [1, 2, 4];

#[test]
fn a_task_spawned_from_outside_while_the_workers_fall_asleep_always_runs() {
    for workers in POOL_SIZES {
        let pool = crew::Pool::builder().workers(workers).build().unwrap();
        for i in 0..ITERATIONS {
            // The previous task just finished: its worker is on its way to sleep.
            thread::yield_now();
            let handle = pool.spawn(async move { i });
            let what = format!("spawn {i} from outside onto a {workers}-worker pool");
            assert_eq!(block_on_within(HANG_TIMEOUT, &what, handle), i);
        }
    }
}

/// Wraps a future, setting `pending` once a poll of it returned `Pending`.
struct NotePending<F> {
    future: Pin<Box<F>>,
    pending: Arc<AtomicBool>,
}

impl<F: Future> Future for NotePending<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let poll = self.future.as_mut().poll(cx);
        if poll.is_pending() {
            self.pending.store(true, Ordering::SeqCst);
        }
        poll
    }
}

#[test]
fn a_task_woken_from_a_foreign_thread_while_the_workers_fall_asleep_always_runs() {
    // The foreign thread: wakes whatever it is handed.
    let (wake_tx, wake_rx) = mpsc::channel::<Arc<WakeCounter>>();
    let waker = thread::spawn(move || {
        for counter in wake_rx {
            counter.add();
        }
    });
    for workers in POOL_SIZES {
        let pool = crew::Pool::builder().workers(workers).build().unwrap();
        for i in 0..ITERATIONS {
            let counter = WakeCounter::new();
            let pending = Arc::new(AtomicBool::new(false));
            let handle = pool.spawn(NotePending { future: Box::pin(counter.reached(1)), pending: pending.clone() });
            let start = Instant::now();
            while !pending.load(Ordering::SeqCst) {
                assert!(start.elapsed() < HANG_TIMEOUT, "task {i} was never polled on a {workers}-worker pool");
                thread::yield_now();
            }
            // The task just returned `Pending`: its worker is on its way to sleep.
            thread::yield_now();
            wake_tx.send(counter).unwrap();
            let what = format!("task {i} woken from a foreign thread on a {workers}-worker pool");
            block_on_within(HANG_TIMEOUT, &what, handle);
        }
    }
    drop(wake_tx);
    waker.join().unwrap();
}

/// Spins until `flag` is set; panics after the hang timeout.
fn spin_until(flag: &AtomicBool, what: &str) {
    let start = Instant::now();
    while !flag.load(Ordering::SeqCst) {
        assert!(start.elapsed() < HANG_TIMEOUT, "hang: still waiting after {HANG_TIMEOUT:?} for {what}");
        std::hint::spin_loop();
        thread::yield_now();
    }
}

#[test]
fn a_task_spawned_from_inside_while_the_other_workers_fall_asleep_always_runs() {
    for workers in POOL_SIZES {
        let pool = Arc::new(crew::Pool::builder().workers(workers).build().unwrap());
        for i in 0..ITERATIONS {
            thread::yield_now();
            let parent = {
                let pool_ref = pool.clone();
                pool.spawn(async move {
                    let first_ran = Arc::new(AtomicBool::new(false));
                    // The first child goes to this worker's LIFO slot, then the second pushes it
                    // out into the worker's deque, where the other workers (just done with the
                    // last iteration, and parking) must be told to steal it.
                    let first = {
                        let first_ran = first_ran.clone();
                        pool_ref.spawn(async move { first_ran.store(true, Ordering::SeqCst) })
                    };
                    let second = pool_ref.spawn(async move { i });
                    if workers > 1 {
                        // Keep this worker busy: only another worker can run the first child.
                        spin_until(&first_ran, &format!("iteration {i}: a stolen child on a {workers}-worker pool"));
                    }
                    first.await;
                    second.await
                })
            };
            let what = format!("iteration {i}: a parent and its children on a {workers}-worker pool");
            assert_eq!(block_on_within(HANG_TIMEOUT, &what, parent), i);
        }
    }
}

#[test]
fn two_children_spawned_from_a_busy_task_both_get_a_sleeping_worker() {
    // Needs the parent's worker plus two more, and spinning threads: fewer iterations.
    let iterations = ITERATIONS / 4;
    for workers in [3, 4] {
        let pool = Arc::new(crew::Pool::builder().workers(workers).build().unwrap());
        for i in 0..iterations {
            thread::yield_now();
            let parent = {
                let pool_ref = pool.clone();
                pool.spawn(async move {
                    // Two children that run only together: each waits until the other started.
                    // The first two go to this worker's deque (pushed out of its LIFO slot by the
                    // next spawn), the third stays in the LIFO slot. One parked worker is woken for
                    // the first; whoever takes it, the last searcher to stop must wake another.
                    let started = [Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false))];
                    let child = |me: usize| {
                        let started = started.clone();
                        pool_ref.spawn(async move {
                            started[me].store(true, Ordering::SeqCst);
                            spin_until(&started[1 - me], &format!("iteration {i}: the sibling of child {me}"));
                        })
                    };
                    let (first, second) = (child(0), child(1));
                    let third = pool_ref.spawn(async move { i });
                    for (k, flag) in started.iter().enumerate() {
                        spin_until(flag, &format!("iteration {i}: child {k} on a {workers}-worker pool"));
                    }
                    first.await;
                    second.await;
                    third.await
                })
            };
            let what = format!("iteration {i}: a parent and its two children on a {workers}-worker pool");
            assert_eq!(block_on_within(HANG_TIMEOUT, &what, parent), i);
        }
    }
}
