//! `yield_now`: wakes once and returns `Pending` once; on a worker, every task queued there runs
//! before the yielder resumes; a yield loop starves nothing.

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

use common::with_timeout;

struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn yield_now_is_pending_once_with_one_wake_then_ready() {
    let wakes = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(wakes.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = crew::yield_now();
    let mut future = std::pin::Pin::new(&mut future);
    assert!(future.as_mut().poll(&mut cx).is_pending());
    assert_eq!(wakes.0.load(Ordering::SeqCst), 1, "it wakes itself before returning Pending");
    assert!(future.as_mut().poll(&mut cx).is_ready());
    assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
}

#[test]
fn yield_now_works_under_block_on() {
    with_timeout(|| {
        crew::block_on(async {
            for _ in 0..10 {
                crew::yield_now().await;
            }
        })
    });
}

type Log = Arc<Mutex<Vec<String>>>;

fn log(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

#[test]
fn yield_now_lets_every_task_spawned_on_the_same_worker_run_before_the_yielder_resumes() {
    with_timeout(|| {
        const OTHERS: usize = 10;
        let pool = Arc::new(crew::Pool::builder().workers(1).build().unwrap());
        let order: Log = Arc::default();
        let (inner_pool, inner_order) = (pool.clone(), order.clone());
        crew::block_on(pool.spawn(async move {
            log(&inner_order, "yielder starts");
            let others: Vec<_> = (0..OTHERS)
                .map(|i| {
                    let order = inner_order.clone();
                    inner_pool.spawn(async move { log(&order, format!("task {i}")) })
                })
                .collect();
            crew::yield_now().await;
            log(&inner_order, "yielder resumes");
            for other in others {
                other.await;
            }
        }));
        let order = order.lock().unwrap();
        assert_eq!(order.len(), OTHERS + 2);
        assert_eq!(order.first().map(String::as_str), Some("yielder starts"));
        assert_eq!(order.last().map(String::as_str), Some("yielder resumes"), "order: {order:?}");
    });
}

#[test]
fn yield_now_lets_tasks_woken_by_the_yielder_run_before_it_resumes() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(1).build().unwrap());
        let order: Log = Arc::default();
        // Three tasks parked on oneshot receivers; the yielder wakes them all, then yields.
        let mut senders = Vec::new();
        let mut waiting = Vec::new();
        for i in 0..3 {
            let (tx, rx) = futures::channel::oneshot::channel::<()>();
            let order = order.clone();
            senders.push(tx);
            waiting.push(pool.spawn(async move {
                rx.await.unwrap();
                log(&order, format!("woken {i}"));
            }));
        }
        // Make sure all three have been polled (and are parked) before the yielder runs.
        // (The single worker takes tasks from outside in order: the three run before this one.)
        crew::block_on(pool.spawn(async {}));
        let inner_order = order.clone();
        crew::block_on(pool.spawn(async move {
            for tx in senders {
                tx.send(()).unwrap();
            }
            crew::yield_now().await;
            log(&inner_order, "yielder resumes");
        }));
        waiting.into_iter().for_each(crew::block_on);
        let order = order.lock().unwrap();
        assert_eq!(order.last().map(String::as_str), Some("yielder resumes"), "order: {order:?}");
        assert_eq!(order.len(), 4);
    });
}

#[test]
fn a_yield_loop_on_a_1_worker_pool_does_not_starve_tasks_spawned_from_outside() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let yields = Arc::new(AtomicUsize::new(0));
        let (loop_stop, loop_yields) = (stop.clone(), yields.clone());
        let yielder = pool.spawn(async move {
            while !loop_stop.load(Ordering::SeqCst) {
                loop_yields.fetch_add(1, Ordering::SeqCst);
                crew::yield_now().await;
            }
        });
        common::wait_until("the yield loop runs", || yields.load(Ordering::SeqCst) > 0);
        // These go to the injector; only the worker's periodic injector check can reach them.
        let outside: Vec<_> = (0..100).map(|i| pool.spawn(async move { i })).collect();
        assert_eq!(outside.into_iter().map(crew::block_on).sum::<i32>(), 4950);
        stop.store(true, Ordering::SeqCst);
        crew::block_on(yielder);
    });
}

#[test]
fn many_yielding_tasks_all_finish_with_every_yield_counted() {
    with_timeout(|| {
        const TASKS: usize = if cfg!(miri) { 4 } else { 100 };
        const YIELDS: usize = if cfg!(miri) { 5 } else { 100 };
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let yields = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..TASKS)
            .map(|_| {
                let yields = yields.clone();
                pool.spawn(async move {
                    for _ in 0..YIELDS {
                        crew::yield_now().await;
                        yields.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(crew::block_on);
        assert_eq!(yields.load(Ordering::SeqCst), TASKS * YIELDS);
    });
}

/// A yielded task waits behind ready work, but not forever: an endless chain of tasks, each
/// spawning the next (so the worker never runs dry), must still let the yielder through.
#[test]
#[cfg_attr(
    miri,
    ignore = "123 s of CI under miri for a fairness property (no unsafe, no new atomics); run natively and by TSan"
)]
fn a_yielder_is_not_starved_by_an_endless_chain_of_spawns_on_a_1_worker_pool() {
    fn link(pool: Arc<crew::Pool>, stop: Arc<AtomicBool>, links: Arc<AtomicUsize>) {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        links.fetch_add(1, Ordering::SeqCst);
        let next = pool.clone();
        pool.spawn(async move { link(next, stop, links) }).detach();
    }
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(1).build().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let links = Arc::new(AtomicUsize::new(0));
        let (chain_pool, chain_stop, chain_links) = (pool.clone(), stop.clone(), links.clone());
        let yielder = pool.spawn(async move {
            link(chain_pool, chain_stop.clone(), chain_links);
            for _ in 0..10 {
                crew::yield_now().await;
            }
            chain_stop.store(true, Ordering::SeqCst);
        });
        crew::block_on(yielder);
        assert!(links.load(Ordering::SeqCst) > 0, "the chain ran while the yielder waited");
    });
}

/// A task that yields is held back by its worker, but another worker takes it if that worker
/// then blocks inside the next task's poll: here the next task waits (blocking its thread) for
/// a message the yielder sends after its yield.
#[test]
fn a_yielded_task_is_stolen_from_a_worker_blocked_by_the_next_task() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(2).build().unwrap());
        let inner = pool.clone();
        let received = crew::block_on(pool.spawn(async move {
            let (tx, rx) = std::sync::mpsc::channel();
            // Spawned from this worker: it runs here next, from the LIFO slot, as soon as the
            // yield below hands the worker over.
            let blocker = inner.spawn(async move { rx.recv().unwrap() });
            crew::yield_now().await;
            tx.send("after the yield").unwrap();
            blocker.await
        }));
        assert_eq!(received, "after the yield");
    });
}
