//! `block_on`: polls only when woken, works on worker threads (handing the worker's queues to a
//! replacement thread), nests through `spawn` on small pools without deadlock or stranded
//! tasks, and nests inside itself on one thread.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

use common::{assert_all_workers_run, with_timeout};

fn thread_name() -> String {
    thread::current().name().unwrap_or("<unnamed>").to_owned()
}

/// Ready on poll number `wakes + 1`; before that, each poll hands a clone of its waker to
/// `wakers` (another thread wakes it) and returns `Pending`.
struct WokenFromOutside {
    polls: Arc<AtomicUsize>,
    wakes: usize,
    wakers: mpsc::Sender<Waker>,
}

impl Future for WokenFromOutside {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let polls = self.polls.fetch_add(1, Ordering::SeqCst) + 1;
        if polls > self.wakes {
            return Poll::Ready(polls);
        }
        self.wakers.send(cx.waker().clone()).unwrap();
        Poll::Pending
    }
}

#[test]
fn block_on_polls_exactly_once_per_wake_and_parks_in_between() {
    with_timeout(|| {
        const WAKES: usize = if cfg!(miri) { 10 } else { 200 };
        let polls = Arc::new(AtomicUsize::new(0));
        let (wakers, to_wake) = mpsc::channel::<Waker>();
        let waker_thread = {
            let polls = polls.clone();
            thread::spawn(move || {
                for i in 1..=WAKES {
                    let waker = to_wake.recv().unwrap();
                    // Let the blocked thread go idle now and then before the wake comes: a
                    // block_on that re-polled without a wake would be caught here.
                    if i % 20 == 0 {
                        thread::sleep(Duration::from_millis(2));
                    }
                    assert_eq!(polls.load(Ordering::SeqCst), i, "polled without a wake");
                    waker.wake();
                }
            })
        };
        let future = WokenFromOutside { polls: polls.clone(), wakes: WAKES, wakers };
        assert_eq!(crew::block_on(future), WAKES + 1);
        waker_thread.join().unwrap();
        assert_eq!(polls.load(Ordering::SeqCst), WAKES + 1);
    });
}

#[test]
fn block_on_a_ready_future_polls_it_once() {
    with_timeout(|| {
        let counts = common::Counts::new();
        assert_eq!(crew::block_on(common::Counted::new(&counts, async { 5 })), 5);
        assert_eq!((counts.polls(), counts.drops()), (1, 1));
    });
}

#[test]
fn block_on_called_on_a_worker_thread_completes() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(1).thread_name("blocking").build().unwrap());
        let inner_pool = pool.clone();
        let (outer, inner, value) = crew::block_on(pool.spawn(async move {
            let outer = thread_name();
            let (inner, value) = crew::block_on(inner_pool.spawn(async { (thread_name(), 7) }));
            (outer, inner, value)
        }));
        assert_eq!(value, 7);
        // The replacement worker thread carries the same name as the one it replaces.
        assert_eq!((outer.as_str(), inner.as_str()), ("blocking-0", "blocking-0"));
        assert_all_workers_run(&pool, "blocking", 1);
    });
}

/// `block_on(spawn(.. block_on(spawn(..)) ..))`, `depth` levels deep, all on `pool`.
fn nest(pool: Arc<crew::Pool>, depth: usize) -> usize {
    if depth == 0 {
        return 0;
    }
    let inner = pool.clone();
    crew::block_on(pool.spawn(async move { nest(inner, depth - 1) + 1 }))
}

fn nested_block_on_finishes(workers: usize) {
    with_timeout(move || {
        let prefix = format!("nest-{workers}");
        let pool = Arc::new(crew::Pool::builder().workers(workers).thread_name(prefix.as_str()).build().unwrap());
        assert_eq!(nest(pool.clone(), 4), 4);
        // Again, this time from a worker of the global pool.
        let from_global = pool.clone();
        assert_eq!(crew::block_on(crew::spawn(async move { nest(from_global, 4) })), 4);
        assert_all_workers_run(&pool, &prefix, workers);
    });
}

#[test]
fn nested_block_on_spawn_depth_4_finishes_on_a_1_worker_pool() {
    nested_block_on_finishes(1);
}

#[test]
fn nested_block_on_spawn_depth_4_finishes_on_a_2_worker_pool() {
    nested_block_on_finishes(2);
}

#[test]
fn nested_block_on_spawn_strands_no_sibling_queued_on_a_blocking_worker() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(1).build().unwrap());
        let siblings_ran = Arc::new(AtomicUsize::new(0));
        fn nest_with_siblings(pool: Arc<crew::Pool>, ran: Arc<AtomicUsize>, depth: usize) -> usize {
            if depth == 0 {
                return 0;
            }
            // Queued on this worker (LIFO slot, then deque) just before it blocks.
            let siblings: Vec<_> = (0..3)
                .map(|_| {
                    let ran = ran.clone();
                    pool.spawn(async move {
                        ran.fetch_add(1, Ordering::SeqCst);
                    })
                })
                .collect();
            let (inner_pool, inner_ran) = (pool.clone(), ran.clone());
            let below = crew::block_on(pool.spawn(async move { nest_with_siblings(inner_pool, inner_ran, depth - 1) }));
            siblings.into_iter().for_each(crew::block_on);
            below + 1
        }
        let top = pool.clone();
        let depth = crew::block_on(pool.spawn(async move {
            nest_with_siblings(top, siblings_ran.clone(), 4) + siblings_ran.load(Ordering::SeqCst)
        }));
        assert_eq!(depth, 4 + 3 * 4);
    });
}

#[test]
fn a_task_queued_on_a_worker_just_before_it_blocks_on_that_task_is_not_stranded() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(1).build().unwrap());
        let inner = pool.clone();
        let value = crew::block_on(pool.spawn(async move {
            // On a 1-worker pool this child goes to this very worker's LIFO slot.
            let child = inner.spawn(async { 11 });
            crew::block_on(child)
        }));
        assert_eq!(value, 11);
    });
}

#[test]
fn tasks_in_a_blocking_workers_deque_and_lifo_slot_all_run() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(1).build().unwrap());
        let inner = pool.clone();
        let sum = crew::block_on(pool.spawn(async move {
            // The last child sits in the LIFO slot, the others in the deque.
            let children: Vec<_> = (1..=10).map(|i| inner.spawn(async move { i })).collect();
            children.into_iter().map(crew::block_on).sum::<u32>()
        }));
        assert_eq!(sum, 55);
    });
}

#[test]
fn block_on_nested_inside_a_future_polled_by_block_on_works() {
    with_timeout(|| {
        let total = crew::block_on(async {
            let a = crew::spawn(async { 1 }).await;
            // The inner block_on needs its own wakes; the outer one is mid-poll on this thread.
            let b = crew::block_on(async {
                let (tx, rx) = futures::channel::oneshot::channel();
                let sender = thread::spawn(move || tx.send(2).unwrap());
                let b = rx.await.unwrap();
                sender.join().unwrap();
                b + crew::block_on(crew::spawn(async { 0 }))
            });
            let c = crew::spawn(async { 3 }).await;
            a + b + c
        });
        assert_eq!(total, 6);
    });
}

#[test]
fn block_on_many_times_on_workers_keeps_the_pool_at_full_strength() {
    with_timeout(|| {
        const ROUNDS: usize = if cfg!(miri) { 3 } else { 50 };
        let pool = Arc::new(crew::Pool::builder().workers(2).thread_name("rounds").build().unwrap());
        for _ in 0..ROUNDS {
            let inner = pool.clone();
            let handles: Vec<_> = (0..4)
                .map(|i| {
                    let inner = inner.clone();
                    pool.spawn(async move { crew::block_on(inner.spawn(async move { i })) })
                })
                .collect();
            assert_eq!(handles.into_iter().map(crew::block_on).sum::<i32>(), 6);
        }
        assert_all_workers_run(&pool, "rounds", 2);
    });
}
