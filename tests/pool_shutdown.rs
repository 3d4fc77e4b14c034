//! Dropping a private pool: every queued or pending task's future is dropped exactly once
//! (pending, queued in the injector or a worker's deque, detached or with a held handle, woken
//! from foreign threads while the drop runs), held handles report the task as cancelled under
//! each policy, the pool's threads are joined before the drop returns, a pool dropped from one
//! of its own tasks does not deadlock, and tasks spawned by drops during shutdown still run.

mod common;

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use common::probe::{block_on_within, current_tid, parked_forever, thread_state, threads_named, Hammering, WakerCell};
use common::{wait_until, with_timeout, DropCounts, HANG_TIMEOUT};

const TASKS: usize = if cfg!(miri) { 20 } else { 1_000 };

/// Blocks the worker threads that wait on it until it opens.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    /// Blocks the calling thread (a worker) until the gate opens.
    fn wait(&self) {
        let open = self.open.lock().unwrap();
        let (_open, timeout) = self.opened.wait_timeout_while(open, HANG_TIMEOUT, |open| !*open).unwrap();
        assert!(!timeout.timed_out(), "the gate never opened");
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

/// Occupies every worker of `pool` with a task that blocks its thread on `gate`; returns once
/// all of them run, so that tasks spawned afterwards stay queued.
/// Spawns a detached task that holds `guard` and stays pending until its pool drops it.
fn spawn_parked_holding<G: Send + 'static>(pool: &crew::Pool, guard: G, cell: &Arc<WakerCell>) {
    let cell = cell.clone();
    pool.spawn(async move {
        let _guard = guard;
        parked_forever(cell).await;
    })
    .detach();
}

fn block_all_workers(pool: &crew::Pool, gate: &Arc<Gate>) {
    let started = Arc::new(AtomicUsize::new(0));
    for _ in 0..pool.workers() {
        let (gate, started) = (gate.clone(), started.clone());
        pool.spawn(async move {
            started.fetch_add(1, Ordering::SeqCst);
            gate.wait();
        })
        .detach();
    }
    wait_until("every worker to block on the gate", || started.load(Ordering::SeqCst) == pool.workers());
}

/// Drops `pool`, whose workers are blocked on `gate`, and opens the gate from another thread
/// once the drop has begun (once this thread sleeps in it, waiting for the blocked workers).
/// The workers then see the shutdown flag as soon as their blocking task returns, so the tasks
/// queued behind them are never run. Should the gate open early anyway, queued tasks run first:
/// the tests' assertions hold either way.
fn drop_then_open(pool: crew::Pool, gate: &Arc<Gate>) {
    let dropper = current_tid();
    let dropping = Arc::new(AtomicBool::new(false));
    let releaser = {
        let (gate, dropping) = (gate.clone(), dropping.clone());
        thread::spawn(move || {
            wait_until("the drop to begin", || dropping.load(Ordering::SeqCst));
            if cfg!(miri) {
                // Miri cannot read /proc (isolation), and its threads are not the kernel's: a
                // pause lets the drop begin blocking instead (either order passes, see above).
                thread::sleep(Duration::from_millis(10));
            } else {
                wait_until("the dropping thread to block in the drop", || thread_state(dropper) == Some('S'));
            }
            gate.open();
        })
    };
    dropping.store(true, Ordering::SeqCst);
    drop(pool);
    releaser.join().unwrap();
}

/// The message a panic payload carries, if it is a string.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// Awaits `handle` (of a task its dropped pool never finished) and asserts that it panics with
/// `crew::CANCELLED_MESSAGE`.
fn assert_await_panics_cancelled<T: std::fmt::Debug, P: crew::Policy<Output<T> = T>>(handle: crew::JoinHandle<T, P>) {
    let payload = panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(handle)))
        .expect_err("awaiting a task dropped by its pool's shutdown must panic");
    assert_eq!(panic_text(payload.as_ref()), Some(crew::CANCELLED_MESSAGE));
}

#[test]
fn pending_detached_tasks_are_dropped_exactly_once() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let drops = DropCounts::new(TASKS);
        let cells: Vec<_> = (0..TASKS).map(|_| WakerCell::new()).collect();
        for (i, cell) in cells.iter().enumerate() {
            spawn_parked_holding(&pool, drops.probe(i), cell);
        }
        wait_until("every task to be polled once", || cells.iter().all(|c| c.polls() >= 1));
        assert_eq!(drops.get(0), 0, "pending tasks are alive until the pool drops them");
        drop(pool);
        drops.assert_each_once("pending detached tasks");
        // Waking a task after its pool dropped it does nothing.
        for cell in &cells {
            assert!(cell.wake());
        }
        drops.assert_each_once("pending detached tasks, woken after the drop");
    });
}

#[test]
fn queued_tasks_in_the_injector_and_a_workers_deque_are_dropped_exactly_once() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let half = TASKS / 2;
        // Tasks 0..half: pending, then woken by a task on a worker, which puts them in that
        // worker's own LIFO slot and deque. Tasks half..TASKS: spawned from here while every
        // worker is blocked, so they wait in the injector.
        let drops = DropCounts::new(TASKS);
        let cells: Vec<_> = (0..half).map(|_| WakerCell::new()).collect();
        for (i, cell) in cells.iter().enumerate() {
            spawn_parked_holding(&pool, drops.probe(i), cell);
        }
        wait_until("the local tasks to be polled once", || cells.iter().all(|c| c.polls() == 1));

        let gate = Arc::new(Gate::default());
        // Block one worker, then let the other wake every pending task and block too.
        let first = Arc::new(AtomicBool::new(false));
        {
            let (gate, first) = (gate.clone(), first.clone());
            pool.spawn(async move {
                first.store(true, Ordering::SeqCst);
                gate.wait();
            })
            .detach();
        }
        wait_until("the first worker to block", || first.load(Ordering::SeqCst));
        let second = Arc::new(AtomicBool::new(false));
        {
            let (gate, second, cells) = (gate.clone(), second.clone(), cells.clone());
            pool.spawn(async move {
                for cell in &cells {
                    assert!(cell.wake());
                }
                second.store(true, Ordering::SeqCst);
                gate.wait();
            })
            .detach();
        }
        wait_until("the second worker to queue the woken tasks and block", || second.load(Ordering::SeqCst));

        let queued_polls = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (half..TASKS)
            .map(|i| {
                let (probe, polls) = (drops.probe(i), queued_polls.clone());
                pool.spawn_with(crew::Catch, async move {
                    let _probe = probe;
                    polls.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                })
            })
            .collect();
        drop_then_open(pool, &gate);

        drops.assert_each_once("tasks queued when the pool dropped");
        let repolled = cells.iter().filter(|c| c.polls() > 1).count();
        eprintln!(
            "queued tasks polled before shutdown (expected 0 unless the gate opened early): \
             local {repolled}/{half}, injector {}/{}",
            queued_polls.load(Ordering::SeqCst),
            TASKS - half
        );
        for handle in handles {
            assert!(handle.is_finished());
            let err = crew::block_on(handle).expect_err("the pool dropped the task before it finished");
            assert!(err.is_cancelled() && !err.is_panic(), "{err:?}");
        }
    });
}

#[test]
fn held_handles_of_dropped_tasks_report_cancelled_under_every_policy() {
    with_timeout(|| {
        const EACH: usize = 8;
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let drops = DropCounts::new(5 * EACH);
        let cells: Vec<_> = (0..5 * EACH).map(|_| WakerCell::new()).collect();
        let task = |i: usize| {
            let (probe, cell) = (drops.probe(i), cells[i].clone());
            async move {
                let _probe = probe;
                parked_forever(cell).await;
                i
            }
        };
        let propagate: Vec<_> = (0..EACH).map(|i| pool.spawn(task(i))).collect();
        let catch: Vec<_> = (EACH..2 * EACH).map(|i| pool.spawn_with(crew::Catch, task(i))).collect();
        let ignore: Vec<_> = (2 * EACH..3 * EACH).map(|i| pool.spawn_with(crew::Ignore, task(i))).collect();
        let cancel: Vec<_> = (3 * EACH..4 * EACH).map(|i| pool.spawn_with(crew::Catch, task(i))).collect();
        for i in 4 * EACH..5 * EACH {
            pool.spawn(task(i)).detach();
        }
        wait_until("every task to be polled once", || cells.iter().all(|c| c.polls() >= 1));
        assert!(!propagate[0].is_finished());
        drop(pool);
        drops.assert_each_once("pending tasks with held handles");

        for handle in catch {
            assert!(handle.is_finished());
            let id = handle.id();
            let err = crew::block_on(handle).unwrap_err();
            assert!(err.is_cancelled() && !err.is_panic(), "{err:?}");
            assert_eq!(err.id(), id);
            assert_eq!(err.to_string(), format!("task {id} was cancelled: its pool shut down before it finished"));
            assert!(err.try_into_panic().is_err(), "a cancelled task has no panic payload");
        }
        for handle in propagate {
            assert!(handle.is_finished());
            assert_await_panics_cancelled(handle);
        }
        for handle in ignore {
            assert!(handle.is_finished());
            assert_await_panics_cancelled(handle);
        }
        for handle in cancel {
            assert!(crew::block_on(handle.cancel()).is_none(), "the task never finished");
        }
        drops.assert_each_once("pending tasks, after their handles were awaited");
    });
}

#[test]
fn tasks_woken_from_foreign_threads_while_the_pool_drops_are_dropped_exactly_once() {
    const HAMMERS: usize = 8;
    let rounds = if cfg!(miri) { 1 } else { 6 };
    let tasks = TASKS / 2;
    with_timeout(move || {
        for round in 0..rounds {
            let pool = crew::Pool::builder().workers(1 + round % 4).build().unwrap();
            let drops = DropCounts::new(tasks);
            let cells: Arc<Vec<_>> = Arc::new((0..tasks).map(|_| WakerCell::new()).collect());
            let mut handles = Vec::new();
            for (i, cell) in cells.iter().enumerate() {
                let (probe, cell) = (drops.probe(i), cell.clone());
                let handle = pool.spawn_with(crew::Catch, async move {
                    let _probe = probe;
                    parked_forever(cell).await;
                });
                if i % 2 == 0 {
                    handles.push(handle);
                } else {
                    handle.detach();
                }
            }
            wait_until("every task to be polled once", || cells.iter().all(|c| c.polls() >= 1));

            let hammering = Hammering::start(&cells, HAMMERS);
            // Drop while the hammering is well under way, and keep hammering the dropped tasks.
            hammering.wait_for(4 * tasks, "the hammering to start");
            drop(pool);
            // A wake racing the drop may push its task just after the drop's last look at the
            // queue; that waker hands the task to a reaper thread, which the drop waits for.
            drops.assert_each_once(&format!("round {round}: tasks woken while their pool dropped, once it returned"));
            hammering.wait_for(4 * tasks, "the hammering to go on after the drop");
            hammering.stop();
            drops.assert_each_once(&format!("round {round}: tasks woken while their pool dropped"));
            for handle in handles {
                assert!(crew::block_on(handle).unwrap_err().is_cancelled());
            }
        }
    });
}

thread_local! {
    static EXIT_PROBE: RefCell<Option<ExitProbe>> = const { RefCell::new(None) };
}

/// Lives in a worker thread's thread-locals; counts the thread's exit. Its drop is slow on
/// purpose: a drop that returned without joining the threads would miss it.
struct ExitProbe(Arc<AtomicUsize>);

impl Drop for ExitProbe {
    fn drop(&mut self) {
        thread::sleep(Duration::from_millis(50));
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Installs an [`ExitProbe`] on the current thread unless it has one; true if it installed one.
fn install_exit_probe(exited: &Arc<AtomicUsize>) -> bool {
    EXIT_PROBE.with(|probe| {
        let mut probe = probe.borrow_mut();
        if probe.is_some() {
            return false;
        }
        *probe = Some(ExitProbe(exited.clone()));
        true
    })
}

#[test]
fn drop_returns_only_after_every_worker_thread_exited() {
    with_timeout(|| {
        const WORKERS: usize = 3;
        const PREFIX: &str = "sdjoin";
        let pool = crew::Pool::builder().workers(WORKERS).thread_name(PREFIX).build().unwrap();
        // Each thread names itself as it starts.
        // Not under miri: it cannot read /proc (isolation), nor would its threads be listed there.
        if !cfg!(miri) {
            wait_until("the workers to start", || threads_named(&format!("{PREFIX}-")).len() == WORKERS);
        }
        let exited = Arc::new(AtomicUsize::new(0));
        let installed = Arc::new(AtomicUsize::new(0));
        let install_everywhere = || {
            let barrier = Arc::new(std::sync::Barrier::new(WORKERS));
            let handles: Vec<_> = (0..WORKERS)
                .map(|_| {
                    let (barrier, exited, installed) = (barrier.clone(), exited.clone(), installed.clone());
                    pool.spawn(async move {
                        barrier.wait();
                        if install_exit_probe(&exited) {
                            installed.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                })
                .collect();
            handles.into_iter().for_each(crew::block_on);
        };
        install_everywhere();
        assert_eq!(installed.load(Ordering::SeqCst), WORKERS);
        // `block_on` on a worker hands its core to a replacement thread; the old thread exits
        // after this task. The replacement gets a probe too.
        crew::block_on(pool.spawn(async { crew::block_on(crew::yield_now()) }));
        install_everywhere();
        assert_eq!(installed.load(Ordering::SeqCst), WORKERS + 1, "one replacement thread");

        drop(pool);
        assert_eq!(
            exited.load(Ordering::SeqCst),
            WORKERS + 1,
            "every thread that ran a worker loop has exited (run its thread-local destructors) when the drop returns"
        );
        // The kernel may list a joined thread for a moment after it exited.
        if !cfg!(miri) {
            wait_until("the pool's threads to leave /proc/self/task", || {
                threads_named(&format!("{PREFIX}-")).is_empty()
            });
        }
    });
}

#[test]
fn a_pool_dropped_from_one_of_its_own_tasks_does_not_deadlock() {
    with_timeout(|| {
        for workers in [1, 2, 4] {
            let prefix = format!("sdself{workers}");
            let pool = crew::Pool::builder().workers(workers).thread_name(&prefix).build().unwrap();
            let drops = DropCounts::new(TASKS / 10 + 1);
            let cells: Vec<_> = (0..TASKS / 10).map(|_| WakerCell::new()).collect();
            for (i, cell) in cells.iter().enumerate() {
                let (probe, cell) = (drops.probe(i), cell.clone());
                pool.spawn(async move {
                    let _probe = probe;
                    parked_forever(cell).await;
                })
                .detach();
            }
            wait_until("every task to be polled once", || cells.iter().all(|c| c.polls() >= 1));

            // The pool moves into one of its own tasks, which drops it and finishes in that poll.
            let (pool_tx, pool_rx) = mpsc::channel::<crew::Pool>();
            let dropper = {
                let probe = drops.probe(TASKS / 10);
                pool.spawn_with(crew::Catch, async move {
                    let _probe = probe;
                    let pool = pool_rx.recv().unwrap();
                    drop(pool);
                    "dropped"
                })
            };
            pool_tx.send(pool).unwrap();
            let dropped = block_on_within(HANG_TIMEOUT, "a task dropping its own pool", dropper);
            assert_eq!(dropped.unwrap(), "dropped");
            drops.assert_each_once(&format!("{workers} workers: tasks of a pool dropped from its own task"));
            // Not under miri: it cannot read /proc (isolation), nor would its threads be listed there.
            if !cfg!(miri) {
                wait_until("the pool's threads to exit", || threads_named(&format!("{prefix}-")).is_empty());
            }
        }
    });
}

#[test]
fn a_task_that_drops_its_own_pool_and_yields_is_dropped_as_cancelled() {
    with_timeout(|| {
        for workers in [1, 3] {
            let pool = crew::Pool::builder().workers(workers).build().unwrap();
            let drops = DropCounts::new(1);
            let (pool_tx, pool_rx) = mpsc::channel::<crew::Pool>();
            let probe = drops.probe(0);
            let handle = pool.spawn_with(crew::Catch, async move {
                let _probe = probe;
                drop(pool_rx.recv().unwrap());
                // The pool is gone: this yield's reschedule finds it closed and drops the task.
                crew::yield_now().await;
                "not reached"
            });
            pool_tx.send(pool).unwrap();
            let result = block_on_within(HANG_TIMEOUT, "a task that dropped its own pool", handle);
            assert!(result.unwrap_err().is_cancelled());
            drops.assert_each_once("a task that dropped its own pool, then yielded");
        }
    });
}

/// On drop, spawns a task on the global pool that reports `id`.
struct SpawnOnDrop {
    id: usize,
    report: mpsc::Sender<usize>,
}

impl Drop for SpawnOnDrop {
    fn drop(&mut self) {
        let (id, report) = (self.id, self.report.clone());
        crew::spawn(async move { report.send(id).unwrap() }).detach();
    }
}

#[test]
fn tasks_spawned_by_drops_during_shutdown_run() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let (report, reports) = mpsc::channel();
        let tasks = TASKS / 4;
        // Half pending (dropped by the dropping thread), half queued behind blocked workers.
        let cells: Vec<_> = (0..tasks / 2).map(|_| WakerCell::new()).collect();
        for (id, cell) in cells.iter().enumerate() {
            spawn_parked_holding(&pool, SpawnOnDrop { id, report: report.clone() }, cell);
        }
        wait_until("the pending tasks to be polled once", || cells.iter().all(|c| c.polls() >= 1));
        let gate = Arc::new(Gate::default());
        block_all_workers(&pool, &gate);
        for id in tasks / 2..tasks {
            let guard = SpawnOnDrop { id, report: report.clone() };
            pool.spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            })
            .detach();
        }
        drop(report);
        drop_then_open(pool, &gate);

        let mut seen = vec![0usize; tasks];
        for _ in 0..tasks {
            let id = reports.recv_timeout(HANG_TIMEOUT).expect("every task spawned during shutdown runs");
            seen[id] += 1;
        }
        assert!(seen.iter().all(|&n| n == 1), "each drop spawned one task that ran once: {seen:?}");
        // Every sender is gone once the spawned tasks ran: nothing else arrives.
        assert!(matches!(reports.recv_timeout(HANG_TIMEOUT), Err(mpsc::RecvTimeoutError::Disconnected)));
    });
}

/// On drop, wakes another task of the same pool.
struct WakeOnDrop(Arc<WakerCell>);

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        self.0.wake();
    }
}

#[test]
fn drops_that_wake_other_tasks_of_the_dropped_pool_drop_each_once() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let pairs = TASKS / 4;
        let drops = DropCounts::new(2 * pairs);
        let cells: Vec<_> = (0..2 * pairs).map(|_| WakerCell::new()).collect();
        for i in 0..2 * pairs {
            // Task i wakes its partner (i ^ 1) when dropped, whichever of the two goes first.
            // A tuple drops in field order: the probe counts the drop, then the partner is woken.
            spawn_parked_holding(&pool, (drops.probe(i), WakeOnDrop(cells[i ^ 1].clone())), &cells[i]);
        }
        wait_until("every task to be polled once", || cells.iter().all(|c| c.polls() >= 1));
        drop(pool);
        drops.assert_each_once("pending tasks whose drops wake each other");
    });
}

#[test]
fn pools_dropped_right_after_spawning_drop_or_finish_every_task_once() {
    with_timeout(|| {
        const PREFIX: &str = "sdloop";
        let iterations = if cfg!(miri) { 10 } else { 300 };
        let mut finished = 0;
        for i in 0..iterations {
            let pool = crew::Pool::builder().workers(1 + i % 4).thread_name(PREFIX).build().unwrap();
            let drops = DropCounts::new(4);
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let probe = drops.probe(t);
                    pool.spawn_with(crew::Catch, async move {
                        let _probe = probe;
                        for _ in 0..t {
                            crew::yield_now().await;
                        }
                        t
                    })
                })
                .collect();
            drop(pool);
            drops.assert_each_once(&format!("iteration {i}"));
            for (t, handle) in handles.into_iter().enumerate() {
                assert!(handle.is_finished());
                match crew::block_on(handle) {
                    Ok(value) => {
                        assert_eq!(value, t);
                        finished += 1;
                    }
                    Err(err) => assert!(err.is_cancelled(), "{err:?}"),
                }
            }
        }
        eprintln!("{finished} of {} tasks finished before their pool dropped", 4 * iterations);
        // Not under miri: it cannot read /proc (isolation), nor would its threads be listed there.
        if !cfg!(miri) {
            wait_until("every pool's threads to exit", || threads_named(&format!("{PREFIX}-")).is_empty());
        }
    });
}

/// `Pool::drop` blocks the calling thread (waiting for the dropped pool's cores, then joining its
/// threads). Called on a worker of *another* pool, it must first hand that worker's core to a
/// replacement thread, as `block_on` does, or work queued on that worker is stranded; here the
/// dropped pool's task waits for that work, so the drop would never return. (It deadlocked before
/// 696a5ea, which hands off the core of any pool, not only of the pool being dropped.) With the
/// global pool as the outer pool and one CPU, this is a global task dropping a private pool whose
/// tasks `block_on` global tasks.
#[test]
fn a_pool_dropped_on_another_pools_worker_does_not_strand_that_workers_tasks() {
    with_timeout(|| {
        let outer = crew::Pool::builder().workers(1).thread_name("sdouter").build().unwrap();
        let inner = crew::Pool::builder().workers(1).thread_name("sdinner").build().unwrap();
        // A task of the inner pool that blocks on a task of the outer pool.
        let (queued_tx, queued_rx) = mpsc::channel::<crew::JoinHandle<&str>>();
        let blocking = Arc::new(AtomicBool::new(false));
        let waiter = {
            let blocking = blocking.clone();
            inner.spawn(async move {
                let queued = queued_rx.recv().unwrap();
                blocking.store(true, Ordering::SeqCst);
                crew::block_on(queued)
            })
        };
        // The outer pool's only worker runs the task that will drop the inner pool...
        let (inner_tx, inner_rx) = mpsc::channel::<crew::Pool>();
        let dropper = outer.spawn(async move {
            let inner = inner_rx.recv().unwrap();
            drop(inner);
            "dropped"
        });
        // ...so this task waits in the outer pool's queue, and the inner pool's task waits for it.
        queued_tx.send(outer.spawn(async { "ran" })).unwrap();
        wait_until("the inner pool's task to block on the outer pool's task", || blocking.load(Ordering::SeqCst));
        inner_tx.send(inner).unwrap();
        assert_eq!(block_on_within(HANG_TIMEOUT, "a pool dropped on another pool's worker", dropper), "dropped");
        // The inner pool's task ran to completion before its pool's drop joined its thread.
        assert!(waiter.is_finished());
        assert_eq!(crew::block_on(waiter), "ran");
    });
}
