//! `spawn` works from every kind of thread and context: `main`, a pool task, foreign threads,
//! `Drop` impls (on the caller's thread, on a worker, in a thread-local destructor), and across
//! the global pool and private pools.

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
fn spawn_onto_the_global_pool_from_a_private_pool_task_runs_there() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("private").build().unwrap();
        let (outer, inner) = crew::block_on(pool.spawn(async {
            let inner = crew::spawn(async { thread_name() }).await;
            (thread_name(), inner)
        }));
        assert!(outer.starts_with("private-"), "outer task ran on {outer}");
        assert!(inner.starts_with("crew-worker-"), "inner task ran on {inner}");
    });
}

#[test]
fn spawn_from_many_private_pool_tasks_onto_the_global_pool_runs_every_task() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let parents: Vec<_> = (0..10)
            .map(|_| {
                let ran = ran.clone();
                pool.spawn(async move {
                    let children: Vec<_> = (0..TASKS / 10)
                        .map(|_| {
                            let ran = ran.clone();
                            crew::spawn(async move {
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
