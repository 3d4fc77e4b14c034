//! `spawn` works from every kind of thread and context: `main`, a pool task, foreign threads,
//! `Drop` impls (on the caller's thread, on a worker, in a thread-local destructor), and across
//! the global pool and private pools; and it targets the current pool: a private pool inside
//! its tasks and its `block_on`, the global pool elsewhere.

mod common;

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

use common::{with_timeout, HANG_TIMEOUT};

const TASKS: usize = if cfg!(miri) { 20 } else { 1_000 };

/// The name of the thread running this code.
fn thread_name() -> String {
    thread::current().name().unwrap_or("<unnamed>").to_owned()
}

/// On drop, spawns a task on the global pool, waits for it with `block_on`, and reports the
/// task's output together with the name of the thread that ran the drop.
struct SpawnOnDrop {
    report: mpsc::Sender<(String, u32)>,
}

impl Drop for SpawnOnDrop {
    fn drop(&mut self) {
        let dropped_on = thread_name();
        let handle = crew::spawn(async { 40 + 2 });
        let output = crew::block_on(handle);
        let _ = self.report.send((dropped_on, output));
    }
}

fn spawn_on_drop() -> (SpawnOnDrop, mpsc::Receiver<(String, u32)>) {
    let (report, rx) = mpsc::channel();
    (SpawnOnDrop { report }, rx)
}

#[test]
fn spawn_from_the_main_thread_runs_every_task() {
    with_timeout(|| {
        let handles: Vec<_> = (0..TASKS).map(|i| crew::spawn(async move { i })).collect();
        let outputs: Vec<usize> = handles.into_iter().map(crew::block_on).collect();
        assert_eq!(outputs, (0..TASKS).collect::<Vec<_>>());
    });
}

#[test]
fn spawn_from_inside_a_pool_task_runs_every_child() {
    with_timeout(|| {
        let sum = crew::block_on(crew::spawn(async {
            let children: Vec<_> = (0..TASKS).map(|i| crew::spawn(async move { i })).collect();
            let mut sum = 0;
            for child in children {
                sum += child.await;
            }
            sum
        }));
        assert_eq!(sum, (0..TASKS).sum::<usize>());
    });
}

#[test]
fn spawn_from_four_foreign_threads_runs_every_task() {
    with_timeout(|| {
        let ran = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let ran = ran.clone();
                thread::spawn(move || {
                    let handles: Vec<_> = (0..TASKS)
                        .map(|_| {
                            let ran = ran.clone();
                            crew::spawn(async move {
                                ran.fetch_add(1, Ordering::SeqCst);
                            })
                        })
                        .collect();
                    handles.into_iter().for_each(crew::block_on);
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(ran.load(Ordering::SeqCst), 4 * TASKS);
    });
}

#[test]
fn spawn_from_a_drop_on_the_callers_thread_completes() {
    with_timeout(|| {
        let (guard, rx) = spawn_on_drop();
        drop(guard);
        let (dropped_on, output) = rx.recv_timeout(HANG_TIMEOUT).unwrap();
        assert_eq!(output, 42);
        assert_eq!(dropped_on, "test-body");
    });
}

#[test]
fn spawn_from_a_drop_running_on_a_worker_completes() {
    with_timeout(|| {
        let (guard, rx) = spawn_on_drop();
        // The future owns the guard; it is dropped on the worker when the task completes.
        crew::spawn(async move {
            let _guard = guard;
        })
        .detach();
        let (dropped_on, output) = rx.recv_timeout(HANG_TIMEOUT).unwrap();
        assert_eq!(output, 42);
        assert!(dropped_on.starts_with("crew-worker-"), "the drop ran on {dropped_on}");
    });
}

#[test]
fn spawn_from_a_drop_run_by_a_private_pools_shutdown_completes() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let (guard, rx) = spawn_on_drop();
        let (polled_tx, polled_rx) = mpsc::channel();
        // Pending forever: only the pool's shutdown drops it, and with it the guard.
        pool.spawn(async move {
            let _guard = guard;
            polled_tx.send(()).unwrap();
            std::future::pending::<()>().await;
        })
        .detach();
        polled_rx.recv_timeout(HANG_TIMEOUT).unwrap();
        drop(pool);
        let (_, output) = rx.recv_timeout(HANG_TIMEOUT).unwrap();
        assert_eq!(output, 42);
    });
}

thread_local! {
    static ON_THREAD_EXIT: RefCell<Option<SpawnOnDrop>> = const { RefCell::new(None) };
}

#[test]
fn spawn_from_a_thread_local_destructor_on_a_foreign_thread_completes() {
    with_timeout(|| {
        let (guard, rx) = spawn_on_drop();
        thread::Builder::new()
            .name("foreign".into())
            .spawn(move || ON_THREAD_EXIT.with(|slot| *slot.borrow_mut() = Some(guard)))
            .unwrap()
            .join()
            .unwrap();
        let (dropped_on, output) = rx.recv_timeout(HANG_TIMEOUT).unwrap();
        assert_eq!(output, 42);
        assert_eq!(dropped_on, "foreign");
    });
}

#[test]
fn spawn_from_a_thread_local_destructor_on_an_exiting_worker_completes() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).thread_name("exiting").build().unwrap();
        let (guard, rx) = spawn_on_drop();
        // Parks the guard in the worker thread's thread-local; the worker thread exits (and its
        // thread-locals are destroyed) when the pool is dropped.
        crew::block_on(pool.spawn(async move { ON_THREAD_EXIT.with(|slot| *slot.borrow_mut() = Some(guard)) }));
        drop(pool);
        let (dropped_on, output) = rx.recv_timeout(HANG_TIMEOUT).unwrap();
        assert_eq!(output, 42);
        assert_eq!(dropped_on, "exiting-0");
    });
}

#[test]
fn spawn_onto_a_private_pool_from_a_global_pool_task_runs_there() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(2).thread_name("private").build().unwrap());
        let for_task = pool.clone();
        let (outer, inner) = crew::block_on(crew::spawn(async move {
            let inner = for_task.spawn(async { thread_name() }).await;
            (thread_name(), inner)
        }));
        assert!(outer.starts_with("crew-worker-"), "outer task ran on {outer}");
        assert!(inner.starts_with("private-"), "inner task ran on {inner}");
    });
}

#[test]
fn spawn_inside_a_private_pool_task_runs_on_that_pool() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("private").build().unwrap();
        let (outer, inner, grandchild) = crew::block_on(pool.spawn(async {
            let inner = crew::spawn(async { (thread_name(), crew::spawn(async { thread_name() }).await) }).await;
            (thread_name(), inner.0, inner.1)
        }));
        for (what, ran_on) in [("outer", outer), ("child", inner), ("grandchild", grandchild)] {
            assert!(ran_on.starts_with("private-"), "the {what} task ran on {ran_on}");
        }
        let metrics = pool.metrics();
        assert_eq!(metrics.spawned_outside + metrics.total.spawned, 3, "all three are the pool's: {metrics:?}");
    });
}

#[test]
fn a_task_spawned_inside_a_private_pool_task_belongs_to_it_and_is_dropped_with_it() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let (guard, dropped) = mpsc::channel::<()>();
        // The child waits forever: only its pool's drop ends it (the global pool never would).
        let (hand_back, handed) = mpsc::channel();
        crew::block_on(pool.spawn(async move {
            let child = crew::spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            });
            hand_back.send(child).unwrap();
        }));
        let child = handed.recv().unwrap();
        assert_eq!(pool.metrics().live_tasks, 1, "the child is the pool's live task");
        drop(pool);
        assert_eq!(
            dropped.recv_timeout(HANG_TIMEOUT),
            Err(mpsc::RecvTimeoutError::Disconnected),
            "its future was dropped"
        );
        let cancelled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(child)));
        assert!(cancelled.is_err(), "awaiting a task its pool dropped panics as cancelled");
    });
}

#[test]
fn spawn_inside_block_on_inside_a_private_pool_task_stays_on_that_pool() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("private").build().unwrap();
        // The worker's core is handed to a new thread while this thread blocks; it still is the
        // pool's thread, inside one of its tasks.
        let ran_on = crew::block_on(pool.spawn(async { crew::block_on(crew::spawn(async { thread_name() })) }));
        assert!(ran_on.starts_with("private-"), "ran on {ran_on}");
    });
}

#[test]
fn spawn_from_a_global_pool_task_or_a_plain_thread_runs_on_the_global_pool() {
    with_timeout(|| {
        let _private = crew::Pool::builder().workers(1).thread_name("private").build().unwrap();
        let from_task = crew::block_on(crew::spawn(async { crew::spawn(async { thread_name() }).await }));
        assert!(from_task.starts_with("crew-worker-"), "ran on {from_task}");
        let from_thread = crew::block_on(crew::spawn(async { thread_name() }));
        assert!(from_thread.starts_with("crew-worker-"), "ran on {from_thread}");
    });
}

#[test]
fn pool_block_on_makes_the_pool_current_until_it_returns() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("entered").build().unwrap();
        let (direct, nested) = pool.block_on(async {
            let direct = crew::spawn(async { thread_name() }).await;
            let nested = crew::spawn(async { crew::spawn(async { thread_name() }).await }).await;
            (direct, nested)
        });
        assert!(direct.starts_with("entered-"), "ran on {direct}");
        assert!(nested.starts_with("entered-"), "ran on {nested}");
        let after = crew::block_on(crew::spawn(async { thread_name() }));
        assert!(after.starts_with("crew-worker-"), "after block_on returned, ran on {after}");
    });
}

#[test]
fn nested_pool_block_on_calls_put_the_outer_pool_back() {
    with_timeout(|| {
        let outer = crew::Pool::builder().workers(1).thread_name("outer").build().unwrap();
        let inner = crew::Pool::builder().workers(1).thread_name("inner").build().unwrap();
        let names = outer.block_on(async {
            let in_inner = inner.block_on(async { crew::spawn(async { thread_name() }).await });
            let back_in_outer = crew::spawn(async { thread_name() }).await;
            (in_inner, back_in_outer)
        });
        assert!(names.0.starts_with("inner-"), "{names:?}");
        assert!(names.1.starts_with("outer-"), "{names:?}");
    });
}

#[test]
fn a_panic_inside_pool_block_on_puts_the_previous_pool_back() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).thread_name("panicky").build().unwrap();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.block_on(async { panic!("inside block_on") });
        }));
        assert!(panicked.is_err());
        let after = crew::block_on(crew::spawn(async { thread_name() }));
        assert!(after.starts_with("crew-worker-"), "after the panic, ran on {after}");
    });
}

#[test]
fn pool_block_on_called_inside_another_pools_task_hands_off_that_worker_and_spawns_on_the_entered_pool() {
    with_timeout(|| {
        let home = crew::Pool::builder().workers(1).thread_name("home").build().unwrap();
        let other = Arc::new(crew::Pool::builder().workers(1).thread_name("other").build().unwrap());
        let for_task = other.clone();
        let (in_other, back_home) = crew::block_on(home.spawn(async move {
            let in_other = for_task.block_on(async { crew::spawn(async { thread_name() }).await });
            // Back in `home`'s task: its pool is current again.
            (in_other, crew::spawn(async { thread_name() }).await)
        }));
        assert!(in_other.starts_with("other-"), "ran on {in_other}");
        assert!(back_home.starts_with("home-"), "ran on {back_home}");
    });
}

#[test]
fn spawn_inside_a_blocking_job_runs_on_the_pool_that_started_the_job() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).thread_name("private").build().unwrap();
        let from_task = crew::block_on(
            pool.spawn(async { crew::spawn_blocking(|| crew::block_on(crew::spawn(async { thread_name() }))).await }),
        );
        assert!(from_task.starts_with("private-"), "ran on {from_task}");
        let from_block_on = pool
            .block_on(async { crew::spawn_blocking(|| crew::block_on(crew::spawn(async { thread_name() }))).await });
        assert!(from_block_on.starts_with("private-"), "ran on {from_block_on}");
        // A job started off every private pool spawns onto the global pool, and the blocking
        // thread that ran the pool's job keeps no trace of it.
        for _ in 0..4 {
            let ran_on = crew::block_on(crew::spawn_blocking(|| crew::block_on(crew::spawn(async { thread_name() }))));
            assert!(ran_on.starts_with("crew-worker-"), "ran on {ran_on}");
        }
    });
}

#[test]
fn spawn_from_many_private_pool_tasks_runs_every_child_on_that_pool() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("many").build().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let parents: Vec<_> = (0..10)
            .map(|_| {
                let ran = ran.clone();
                pool.spawn(async move {
                    let children: Vec<_> = (0..TASKS / 10)
                        .map(|_| {
                            let ran = ran.clone();
                            crew::spawn(async move {
                                assert!(thread_name().starts_with("many-"), "ran on {}", thread_name());
                                ran.fetch_add(1, Ordering::SeqCst);
                            })
                        })
                        .collect();
                    for child in children {
                        child.await;
                    }
                })
            })
            .collect();
        parents.into_iter().for_each(crew::block_on);
        assert_eq!(ran.load(Ordering::SeqCst), TASKS / 10 * 10);
    });
}
