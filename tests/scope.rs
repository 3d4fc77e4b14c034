//! `crew::scope` (`src/scope/`): tasks that borrow the caller's stack, and a scope that returns
//! only after every task's future and output were dropped: when handles are awaited, dropped or
//! leaked, when the closure or a task panics, when the pool shuts down meanwhile, from a plain
//! thread, from `block_on` and from a worker thread. Nothing is lost: each test counts that each
//! scoped future, and each output, was dropped exactly once.
//!
//! These tests also run under miri (CI's miri steps, one with many seeds): a scope that
//! returned before a task ended would make the task touch a dead stack frame.
//!
//! Every wait is for an event; `with_timeout` only turns a hang into a failure.

mod common;

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::task::{Context, Poll, Waker};

use common::{with_timeout, Counted, Counts};

/// Tasks in the tests that spawn many (fewer under miri, which is slow).
const MANY: usize = if cfg!(miri) { 8 } else { 200 };

/// Adds one to a counter on the caller's stack when dropped: an output that borrows.
struct DropsInto<'a>(&'a AtomicUsize);

impl Drop for DropsInto<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Pending for `yields` polls (waking itself each time), then ready.
struct YieldTimes(usize);

impl Future for YieldTimes {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[test]
fn tasks_borrow_the_callers_stack_mutably_and_shared() {
    with_timeout(|| {
        let mut totals = [0u64; 8];
        let data: Vec<u64> = (0..if cfg!(miri) { 800 } else { 1_000_000 }).collect();
        let chunk = data.len() / totals.len();
        let counts = Counts::new();
        crew::scope(|s| {
            for (part, total) in data.chunks(chunk).zip(totals.iter_mut()) {
                s.spawn(Counted::new(&counts, async move {
                    crew::yield_now().await;
                    *total = part.iter().sum();
                }));
            }
        });
        assert_eq!(totals.iter().sum::<u64>(), data.iter().sum::<u64>());
        assert!(totals.iter().all(|&total| total > 0 || data[0] == 0));
        assert_eq!(counts.drops(), 8, "each future dropped once, before scope returned");
    });
}

#[test]
fn handles_are_awaited_in_block_on_and_in_other_scoped_tasks() {
    with_timeout(|| {
        let words = ["borrowed", "by", "scoped", "tasks"];
        let outputs = AtomicUsize::new(0);
        let total = crew::scope(|s| {
            let outputs = &outputs;
            let lengths: Vec<_> =
                words.iter().map(|word| s.spawn(async move { (word.len(), DropsInto(outputs)) })).collect();
            // One task awaits the others' handles.
            let summer = s.spawn(async move {
                let mut total = 0;
                for length in lengths {
                    total += length.await.0;
                }
                total
            });
            crew::block_on(summer)
        });
        assert_eq!(total, 21);
        assert_eq!(outputs.load(Ordering::SeqCst), 4, "each output dropped once");
    });
}

#[test]
fn scoped_tasks_spawn_more_tasks_into_the_same_scope() {
    with_timeout(|| {
        let ran = AtomicUsize::new(0);
        let counts = Counts::new();
        crew::scope(|s| {
            let (ran, counts) = (&ran, &counts);
            for _ in 0..4 {
                s.spawn(Counted::new(counts, async move {
                    for _ in 0..MANY / 4 {
                        s.spawn(Counted::new(counts, async move {
                            ran.fetch_add(1, Ordering::SeqCst);
                        }));
                    }
                }));
            }
        });
        assert_eq!(ran.load(Ordering::SeqCst), MANY / 4 * 4);
        assert_eq!(counts.drops(), 4 + MANY / 4 * 4);
    });
}

#[test]
fn a_dropped_handle_detaches_its_task_which_still_ends_before_scope_returns() {
    with_timeout(|| {
        let outputs = AtomicUsize::new(0);
        let counts = Counts::new();
        crew::scope(|s| {
            let outputs = &outputs;
            for _ in 0..MANY {
                drop(s.spawn(Counted::new(&counts, async move {
                    YieldTimes(3).await;
                    DropsInto(outputs)
                })));
            }
        });
        assert_eq!(counts.drops(), MANY);
        assert_eq!(outputs.load(Ordering::SeqCst), MANY, "every detached task's output was dropped when it ended");
    });
}

#[test]
fn a_leaked_handle_neither_hangs_the_scope_nor_keeps_its_output() {
    with_timeout(|| {
        let outputs = AtomicUsize::new(0);
        let counts = Counts::new();
        let (started_tx, started_rx) = mpsc::channel();
        crew::scope(|s| {
            let outputs = &outputs;
            // Leaked before the task ends, and after.
            let first = s.spawn(Counted::new(&counts, async move { DropsInto(outputs) }));
            while !first.is_finished() {
                std::thread::yield_now();
            }
            std::mem::forget(first);
            let started_tx = started_tx.clone();
            std::mem::forget(s.spawn(Counted::new(&counts, async move {
                started_tx.send(()).unwrap();
                YieldTimes(10).await;
                DropsInto(outputs)
            })));
            started_rx.recv().unwrap();
        });
        assert_eq!(counts.drops(), 2);
        assert_eq!(outputs.load(Ordering::SeqCst), 2, "the scope dropped the leaked handles' outputs");
    });
}

/// An output that spawns a task into its scope when dropped, `generations` deep: the task it
/// spawns returns the next such output. Each task, the last one too, yields a while and then
/// reads and writes the caller's data.
struct Respawn<'scope, 'env> {
    scope: &'scope crew::Scope<'scope, 'env>,
    data: &'env [u64],
    sums: &'env Mutex<Vec<u64>>,
    generations: usize,
}

impl Drop for Respawn<'_, '_> {
    fn drop(&mut self) {
        let (scope, data, sums) = (self.scope, self.data, self.sums);
        let left = self.generations.saturating_sub(1);
        let late = scope.spawn(async move {
            // Long enough that a scope that did not wait for this task returned meanwhile.
            YieldTimes(if cfg!(miri) { 20 } else { 2_000 }).await;
            sums.lock().unwrap().push(data.iter().sum());
            (left > 0).then(|| Respawn { scope, data, sums, generations: left })
        });
        // Leaked: its output (the next generation) is the scope's to drop.
        std::mem::forget(late);
    }
}

#[test]
fn an_output_the_scope_drops_may_spawn_and_the_scope_waits_for_that_task() {
    with_timeout(|| {
        let data: Vec<u64> = (0..1000).collect();
        let sums = Mutex::new(Vec::new());
        crew::scope(|s| {
            let (data, sums) = (&data[..], &sums);
            let first = s.spawn(async move { Respawn { scope: s, data, sums, generations: 3 } });
            while !first.is_finished() {
                std::thread::yield_now();
            }
            // The scope drops the output once every task ended: that drop spawns the next.
            std::mem::forget(first);
        });
        // Read at once: a scope that returned before a late task ended finds fewer sums.
        let sums = sums.into_inner().unwrap();
        assert_eq!(sums, [499_500; 3], "every task the outputs' drops spawned ran before scope returned");
    });
}

#[test]
fn a_detached_output_that_spawns_from_its_drop_is_waited_for_too() {
    with_timeout(|| {
        let data: Vec<u64> = (0..100).collect();
        let sums = Mutex::new(Vec::new());
        crew::scope(|s| {
            let (data, sums) = (&data[..], &sums);
            // Dropped handle: the task drops its own output, which spawns (counted first).
            drop(s.spawn(async move { Respawn { scope: s, data, sums, generations: 2 } }));
        });
        assert_eq!(sums.into_inner().unwrap(), [4950; 2]);
    });
}

/// A waker whose `wake` panics.
struct PanickingWaker;

impl std::task::Wake for PanickingWaker {
    fn wake(self: std::sync::Arc<Self>) {
        panic!("this waker panics");
    }
}

#[test]
fn a_waker_that_panics_when_the_task_ends_makes_the_scope_panic_not_hang() {
    with_timeout(|| {
        let go = std::sync::atomic::AtomicBool::new(false);
        let outputs = AtomicUsize::new(0);
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            crew::scope(|s| {
                let (go, outputs) = (&go, &outputs);
                let mut handle = s.spawn(async move {
                    while !go.load(Ordering::SeqCst) {
                        crew::yield_now().await;
                    }
                    DropsInto(outputs)
                });
                let waker = std::task::Waker::from(std::sync::Arc::new(PanickingWaker));
                let polled = Pin::new(&mut handle).poll(&mut Context::from_waker(&waker));
                assert!(polled.is_pending(), "the task waits for `go`");
                go.store(true, Ordering::SeqCst);
                // Leaked: the scope drops the output, delivered before the waker panicked.
                std::mem::forget(handle);
            })
        }));
        let payload = caught.expect_err("the waker's panic is reported as a task's panic nobody saw");
        assert_eq!(common::payload_message(&*payload), Some(crew::SCOPED_TASK_PANICKED_MESSAGE));
        assert_eq!(outputs.load(Ordering::SeqCst), 1, "the output was kept for the handle, then dropped");
    });
}

#[test]
fn a_panicking_closure_waits_for_every_task_then_resumes_its_panic() {
    with_timeout(|| {
        let counts = Counts::new();
        let finished = AtomicUsize::new(0);
        let payload = panic::catch_unwind(AssertUnwindSafe(|| {
            crew::scope(|s| {
                for _ in 0..4 {
                    s.spawn(Counted::new(&counts, async {
                        YieldTimes(20).await;
                        finished.fetch_add(1, Ordering::SeqCst);
                    }));
                }
                panic!("the closure gives up");
            })
        }))
        .unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the closure gives up"));
        assert_eq!(finished.load(Ordering::SeqCst), 4, "the tasks ran to their end first");
        assert_eq!(counts.drops(), 4);
    });
}

#[test]
fn an_unobserved_task_panic_panics_the_scope_after_every_task_ends() {
    with_timeout(|| {
        let counts = Counts::new();
        let finished = AtomicUsize::new(0);
        let payload = panic::catch_unwind(AssertUnwindSafe(|| {
            crew::scope(|s| {
                drop(s.spawn(Counted::new(&counts, async { panic!("lost task") })));
                s.spawn(Counted::new(&counts, async {
                    YieldTimes(20).await;
                    finished.fetch_add(1, Ordering::SeqCst);
                }));
                7
            })
        }))
        .unwrap_err();
        assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some(crew::SCOPED_TASK_PANICKED_MESSAGE));
        assert_eq!(finished.load(Ordering::SeqCst), 1);
        assert_eq!(counts.drops(), 2);
    });
}

#[test]
fn an_awaited_task_panic_reaches_the_awaiter_and_not_the_scope() {
    with_timeout(|| {
        let counts = Counts::new();
        let caught = crew::scope(|s| {
            let handle = s.spawn(Counted::new(&counts, async { panic!("seen") }));
            let payload = panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(handle))).unwrap_err();
            payload.downcast_ref::<&str>().copied()
        });
        assert_eq!(caught, Some("seen"));
        assert_eq!(counts.drops(), 1);
    });
}

#[test]
fn a_pool_that_shuts_down_meanwhile_drops_the_tasks_and_the_scope_returns() {
    with_timeout(|| {
        let counts = Counts::new();
        let borrowed = Mutex::new(Vec::new());
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let cancelled = crew::scope(|s| {
            let borrowed = &borrowed;
            let pending: Vec<_> = (0..4)
                .map(|i| {
                    let started_tx = started_tx.clone();
                    s.spawn_on(
                        &pool,
                        Counted::new(&counts, async move {
                            borrowed.lock().unwrap().push(i);
                            started_tx.send(()).unwrap();
                            std::future::pending::<()>().await
                        }),
                    )
                })
                .collect();
            for _ in 0..4 {
                started_rx.recv().unwrap();
            }
            // Dropped from another thread while the tasks wait.
            std::thread::spawn(move || drop(pool)).join().unwrap();
            pending
                .into_iter()
                .map(|handle| panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(handle))).unwrap_err())
                .filter(|payload| payload.downcast_ref::<String>().map(String::as_str) == Some(crew::CANCELLED_MESSAGE))
                .count()
        });
        assert_eq!(cancelled, 4, "each handle reports its task cancelled");
        assert_eq!(counts.drops(), 4, "the pool's shutdown dropped each future once");
        assert_eq!(borrowed.lock().unwrap().len(), 4);
    });
}

/// Pending until its first poll is over, handing its waker to `waker` then; ready when polled
/// again.
fn pending_once(waker: &Mutex<Option<Waker>>, parked: mpsc::Sender<()>) -> impl Future<Output = ()> + Send + '_ {
    let mut polled = false;
    std::future::poll_fn(move |cx| {
        if std::mem::replace(&mut polled, true) {
            return Poll::Ready(());
        }
        *waker.lock().unwrap() = Some(cx.waker().clone());
        parked.send(()).unwrap();
        Poll::Pending
    })
}

#[test]
fn a_scoped_task_in_a_lifo_slot_when_its_pool_shuts_down_is_dropped_and_the_scope_returns() {
    // One worker, no takeover: nothing but the worker's own loop takes from its LIFO slot.
    with_timeout(|| {
        let counts = Counts::new();
        let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
        let spawner = pool.spawner();
        let waker = Mutex::new(None);
        let (parked_tx, parked_rx) = mpsc::channel();
        let (woke_tx, woke_rx) = mpsc::channel();
        crew::scope(|s| {
            let waker = &waker;
            // A: waits for a wake.
            s.spawn_on(&pool, Counted::new(&counts, pending_once(waker, parked_tx)));
            parked_rx.recv().unwrap();
            // B: wakes A from the worker, which puts A in its LIFO slot, then holds the worker
            // inside its poll until the pool's shutdown has begun: the worker's loop then exits
            // with A still in the slot.
            s.spawn_on(&pool, async move {
                waker.lock().unwrap().take().unwrap().wake();
                woke_tx.send(()).unwrap();
                while !spawner.is_shut_down() {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            });
            woke_rx.recv().unwrap();
            std::thread::spawn(move || drop(pool));
        });
        assert_eq!(counts.drops(), 1, "A's future was dropped once");
        assert_eq!(counts.polls(), 1, "A was never polled again");
    });
}

#[test]
fn a_scope_on_a_worker_thread_hands_the_workers_queue_away_first() {
    with_timeout(|| {
        // One worker: the scope's tasks go to its queue, which the blocked worker hands away.
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let outputs = pool.spawn(async {
            let local = [1u64, 2, 3];
            let sums = Mutex::new(0);
            crew::scope(|s| {
                for value in &local {
                    let sums = &sums;
                    s.spawn(async move {
                        crew::yield_now().await;
                        *sums.lock().unwrap() += value;
                    });
                }
            });
            sums.into_inner().unwrap()
        });
        assert_eq!(crew::block_on(outputs), 6);
    });
}

#[test]
fn a_scope_inside_block_on_and_on_a_private_pool() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let text = String::from("scoped");
        let counts = Counts::new();
        let (a, b) = crew::block_on(async {
            crew::scope(|s| {
                let a = s.spawn(Counted::new(&counts, async { text.len() }));
                let b = s.spawn_on(&pool, Counted::new(&counts, async { text.to_uppercase() }));
                crew::block_on(async { (a.await, b.await) })
            })
        });
        assert_eq!((a, b.as_str()), (6, "SCOPED"));
        assert_eq!(counts.drops(), 2);
    });
}

#[test]
fn scope_and_its_reference_are_send_and_sync() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    crew::scope(|s| {
        send_sync(&s);
        let handle = s.spawn(async { 1 });
        send_sync(&handle);
        assert_eq!(crew::block_on(handle), 1);
    });
}
