//! Volume: a million tiny tasks spawned from foreign threads, a 100,000-task recursive fan-out,
//! 10,000 tasks each woken from 8 foreign threads at once, and wakers that outlive their tasks
//! on other threads. Every task runs (or is dropped) exactly once. Sizes shrink under miri.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll, Waker};
use std::thread;

use common::probe::{block_on_within, WakeCounter};
use common::{wait_until_within, with_timeout, with_timeout_of, DropCounter, HANG_TIMEOUT};

const TINY_TASKS: usize = if cfg!(miri) { 200 } else { 1_000_000 };
const TREE_NODES: usize = if cfg!(miri) { 500 } else { 100_000 };
const WOKEN_TASKS: usize = if cfg!(miri) { 50 } else { 10_000 };
const WAKERS: usize = 8;

/// Indices `i` where `counts[i] != 1`, at most five of them, and how many there are.
fn not_once(counts: &[AtomicU8]) -> (usize, Vec<usize>) {
    let bad: Vec<usize> = (0..counts.len()).filter(|&i| counts[i].load(Ordering::SeqCst) != 1).collect();
    (bad.len(), bad.into_iter().take(5).collect())
}

#[test]
fn a_million_tiny_tasks_spawned_from_four_threads_each_run_once() {
    // Up to about 40 s under ThreadSanitizer on 2 otherwise idle cores, past 60 s beside a miri
    // run (CI, 2026-11-27): five hang timeouts, so that only a hang fails it.
    with_timeout_of(5 * HANG_TIMEOUT, || {
        const SPAWNERS: usize = 4;
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let ran: Arc<Vec<AtomicU8>> = Arc::new((0..TINY_TASKS).map(|_| AtomicU8::new(0)).collect());
        let done = Arc::new(AtomicUsize::new(0));
        let sum = Arc::new(AtomicU64::new(0));
        thread::scope(|scope| {
            for spawner in 0..SPAWNERS {
                let (pool, ran, done, sum) = (&pool, &ran, &done, &sum);
                scope.spawn(move || {
                    for i in (spawner..TINY_TASKS).step_by(SPAWNERS) {
                        let (ran, done, sum) = (ran.clone(), done.clone(), sum.clone());
                        pool.spawn(async move {
                            ran[i].fetch_add(1, Ordering::Relaxed);
                            sum.fetch_add(i as u64, Ordering::Relaxed);
                            done.fetch_add(1, Ordering::Release);
                        })
                        .detach();
                    }
                });
            }
        });
        wait_until_within(5 * HANG_TIMEOUT, "every tiny task to run", || done.load(Ordering::Acquire) >= TINY_TASKS);
        assert_eq!(done.load(Ordering::Acquire), TINY_TASKS);
        let (count, first) = not_once(&ran);
        assert_eq!(count, 0, "{count} tasks did not run exactly once (first: {first:?})");
        let n = TINY_TASKS as u64;
        assert_eq!(sum.load(Ordering::Relaxed), n * (n - 1) / 2);
    });
}

/// A tree node: counts itself, spawns up to four children that share its `size - 1`
/// descendants, awaits them and returns the number of nodes in its subtree.
fn fan_out(size: usize, visited: Arc<AtomicUsize>) -> Pin<Box<dyn Future<Output = usize> + Send>> {
    Box::pin(async move {
        visited.fetch_add(1, Ordering::Relaxed);
        let mut rest = size - 1;
        let mut children = Vec::new();
        for k in (1..=4).rev() {
            if rest == 0 {
                break;
            }
            let share = rest.div_ceil(k);
            rest -= share;
            children.push(crew::spawn(fan_out(share, visited.clone())));
        }
        let mut total = 1;
        for child in children {
            total += child.await;
        }
        total
    })
}

#[test]
fn a_recursive_fan_out_of_100_000_tasks_completes() {
    with_timeout(|| {
        let visited = Arc::new(AtomicUsize::new(0));
        let root = crew::spawn(fan_out(TREE_NODES, visited.clone()));
        assert_eq!(block_on_within(HANG_TIMEOUT, "the fan-out tree", root), TREE_NODES);
        assert_eq!(visited.load(Ordering::Relaxed), TREE_NODES);
    });
}

#[test]
fn tasks_each_woken_from_eight_foreign_threads_all_finish_once() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let drops: Arc<Vec<AtomicU8>> = Arc::new((0..WOKEN_TASKS).map(|_| AtomicU8::new(0)).collect());
        let counters: Arc<Vec<Arc<WakeCounter>>> = Arc::new((0..WOKEN_TASKS).map(|_| WakeCounter::new()).collect());
        let handles: Vec<_> = (0..WOKEN_TASKS)
            .map(|i| {
                let (drops, ready) = (drops.clone(), counters[i].reached(WAKERS));
                pool.spawn(async move {
                    let _probe = OnDrop(move || {
                        drops[i].fetch_add(1, Ordering::SeqCst);
                    });
                    ready.await;
                    i
                })
            })
            .collect();
        // The wakers start at once: tasks are not yet polled, pending, or running when woken.
        let wakers: Vec<_> = (0..WAKERS)
            .map(|w| {
                let counters = counters.clone();
                thread::spawn(move || {
                    let n = counters.len();
                    for k in 0..n {
                        counters[(k + w * n / WAKERS) % n].add();
                    }
                })
            })
            .collect();
        for waker in wakers {
            waker.join().unwrap();
        }
        let mut sum = 0;
        for handle in handles {
            sum += block_on_within(HANG_TIMEOUT, "a task woken from 8 threads", handle);
        }
        assert_eq!(sum, WOKEN_TASKS * (WOKEN_TASKS - 1) / 2);
        assert!(counters.iter().all(|c| c.count() == WAKERS));
        let (count, first) = not_once(&drops);
        assert_eq!(count, 0, "{count} futures were not dropped exactly once (first: {first:?})");
    });
}

/// Runs a closure when dropped.
struct OnDrop<F: FnMut()>(F);

impl<F: FnMut()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        (self.0)();
    }
}

/// On its first poll, sends clones of its waker to `holders` (one each) and to a thread that
/// wakes it; finishes on the poll after that wake.
struct ShareWakers {
    holders: Vec<mpsc::Sender<Waker>>,
    waker_of_waker: mpsc::Sender<Waker>,
    sent: bool,
    _probe: DropCounter,
}

impl Future for ShareWakers {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.sent {
            return Poll::Ready(());
        }
        self.sent = true;
        for holder in &self.holders {
            holder.send(cx.waker().clone()).unwrap();
        }
        self.waker_of_waker.send(cx.waker().clone()).unwrap();
        Poll::Pending
    }
}

#[test]
fn wakers_sent_to_other_threads_outlive_their_finished_tasks_safely() {
    with_timeout(|| {
        const HOLDERS: usize = 3;
        let tasks = WOKEN_TASKS;
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let drops: Vec<Arc<AtomicUsize>> = (0..tasks).map(|_| Arc::new(AtomicUsize::new(0))).collect();

        // Holders keep every waker until told to wake and drop them all.
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
        let mut holder_txs = Vec::new();
        let mut holders = Vec::new();
        for _ in 0..HOLDERS {
            let (tx, rx) = mpsc::channel::<Waker>();
            holder_txs.push(tx);
            let release_rx = release_rx.clone();
            holders.push(thread::spawn(move || {
                let kept: Vec<Waker> = rx.iter().collect();
                release_rx.lock().unwrap().recv().unwrap();
                let n = kept.len();
                for waker in kept {
                    waker.wake();
                }
                n
            }));
        }
        // One thread wakes each task once, dropping that waker right after.
        let (wake_tx, wake_rx) = mpsc::channel::<Waker>();
        let waker_thread = thread::spawn(move || wake_rx.iter().map(Waker::wake).count());

        let handles: Vec<_> = (0..tasks)
            .map(|i| {
                pool.spawn(ShareWakers {
                    holders: holder_txs.clone(),
                    waker_of_waker: wake_tx.clone(),
                    sent: false,
                    _probe: DropCounter(drops[i].clone()),
                })
            })
            .collect();
        drop((holder_txs, wake_tx));
        for handle in handles {
            block_on_within(HANG_TIMEOUT, "a task whose waker went to another thread", handle);
        }
        assert!(drops.iter().all(|d| d.load(Ordering::SeqCst) == 1), "finished futures are dropped once");
        assert_eq!(waker_thread.join().unwrap(), tasks);
        // Every task finished and the pool is gone: the wakers still held now wake nothing.
        drop(pool);
        for _ in 0..HOLDERS {
            release_tx.send(()).unwrap();
        }
        for holder in holders {
            assert_eq!(holder.join().unwrap(), tasks);
        }
        assert!(drops.iter().all(|d| d.load(Ordering::SeqCst) == 1), "late wakes run nothing again");
    });
}
