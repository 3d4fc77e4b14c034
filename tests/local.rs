//! Local (`!Send`) tasks: `spawn_local` on workers and inside `block_on`, `spawn_pinned`, wakes
//! from other threads, takeover, hand-off and shutdown (`docs/local-tasks.md`). Every test
//! counts that each local task's future is polled only on its thread and dropped exactly once,
//! there.

mod common;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread::{self, ThreadId};
use std::time::Duration;

/// A `!Send` future that checks the thread of each poll and of its drop against the one it
/// was made on, and counts its polls and drops.
struct Checked {
    owner: ThreadId,
    polls: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
    wrong: Arc<AtomicUsize>,
    pending: usize,
    _not_send: Rc<()>,
}

#[derive(Clone, Default)]
struct Counts {
    polls: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
    wrong: Arc<AtomicUsize>,
}

impl Counts {
    fn checked(&self, pending: usize) -> Checked {
        Checked {
            owner: thread::current().id(),
            polls: self.polls.clone(),
            drops: self.drops.clone(),
            wrong: self.wrong.clone(),
            pending,
            _not_send: Rc::new(()),
        }
    }

    fn assert(&self, drops: usize) {
        assert_eq!(self.wrong.load(Ordering::SeqCst), 0, "a local future was polled or dropped off its thread");
        assert_eq!(self.drops.load(Ordering::SeqCst), drops, "each local future is dropped exactly once");
    }
}

impl Future for Checked {
    type Output = ThreadId;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ThreadId> {
        if thread::current().id() != self.owner {
            self.wrong.fetch_add(1, Ordering::SeqCst);
        }
        self.polls.fetch_add(1, Ordering::SeqCst);
        if self.pending == 0 {
            return Poll::Ready(self.owner);
        }
        self.pending -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl Drop for Checked {
    fn drop(&mut self) {
        if thread::current().id() != self.owner {
            self.wrong.fetch_add(1, Ordering::SeqCst);
        }
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Worker counts the tests run on: 1, 2 and 4; under miri (about 20 polls a second), 2.
const WORKERS: &[usize] = if cfg!(miri) { &[2] } else { &[1, 2, 4] };

/// `n`, or `miri` under miri.
const fn scaled(n: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        n
    }
}

fn pool(workers: usize) -> crew::Pool {
    crew::Pool::builder().workers(workers).build().unwrap()
}

#[test]
fn spawn_local_inside_block_on_runs_on_this_thread() {
    let counts = Counts::default();
    let me = thread::current().id();
    let threads = crew::block_on(async {
        let handles: Vec<_> = (0..scaled(100, 8)).map(|i| crew::spawn_local(counts.checked(i % 5))).collect();
        let mut threads = Vec::new();
        for handle in handles {
            threads.push(handle.await);
        }
        threads
    });
    assert!(threads.iter().all(|&thread| thread == me));
    counts.assert(scaled(100, 8));
}

#[test]
fn local_tasks_share_rc_refcell_state() {
    let total = crew::block_on(async {
        let state = Rc::new(RefCell::new(Vec::new()));
        let handles: Vec<_> = (0..10)
            .map(|i| {
                let state = state.clone();
                crew::spawn_local(async move {
                    crew::yield_now().await;
                    state.borrow_mut().push(i);
                })
            })
            .collect();
        for handle in handles {
            handle.await;
        }
        let sum: i32 = state.borrow().iter().sum();
        sum
    });
    assert_eq!(total, 45);
}

/// Spawns a local task, then one that yields: returns the order in which they ran.
async fn yield_order() -> Vec<&'static str> {
    let log = Rc::new(RefCell::new(Vec::new()));
    let (first, second) = (log.clone(), log.clone());
    let queued = crew::spawn_local(async move { first.borrow_mut().push("queued") });
    let yielding = crew::spawn_local(async move {
        second.borrow_mut().push("yielder");
        crew::yield_now().await;
        second.borrow_mut().push("yielder resumed");
    });
    queued.await;
    yielding.await;
    let order = log.borrow().clone();
    order
}

#[test]
fn a_yielding_local_task_resumes_behind_the_queued_ones() {
    // Whichever of the two runs first, the yielder resumes only after the other ran: a yield
    // puts a local task behind its thread's queued ones, as an ordinary task's yield does.
    let check = |order: Vec<&str>| {
        let at = |name| order.iter().position(|&entry| entry == name).unwrap();
        assert_eq!(order.len(), 3, "{order:?}");
        assert!(at("queued") < at("yielder resumed"), "the yielder resumed first: {order:?}");
    };
    check(crew::block_on(yield_order()));
    for &workers in WORKERS {
        let pool = pool(workers);
        check(pool.block_on(pool.spawn_pinned(yield_order)));
    }
}

#[test]
fn a_worker_runs_local_tasks_in_turns_before_the_ordinary_task_they_wake() {
    // Each local task's end wakes the ordinary task awaiting it; the worker runs its local
    // tasks in turns of up to 61 (`block_on`'s batch) before that task's next poll, instead of
    // handing the worker back and forth at every wake.
    //
    // On a loaded machine the worker's thread may be preempted mid-turn, and the watcher then
    // rescues the awaiter from its LIFO slot (`rescues`, or a takeover moves the core): it runs
    // elsewhere while the turn goes on, and sees the turn's tasks finish mid-turn. A wake that
    // lands while it runs there schedules it there again (async-task's woken-while-running), so
    // one rescue may cost many polls away (miri's preemption showed 14 after 2 rescues). So the
    // polls on the local tasks' thread are bounded always, all polls only where neither
    // happened, and the lower bound, one poll per turn, holds only there too.
    const TASKS: usize = scaled(610, 122);
    for &workers in WORKERS {
        let pool = pool(workers);
        let (polls, polls_away) = pool.block_on(pool.spawn(async {
            let home = thread::current().id();
            let mut handles =
                (0..TASKS).map(|i| crew::spawn_local(async move { *Rc::new(i) })).collect::<Vec<_>>().into_iter();
            let mut current = handles.next();
            let (mut polls, mut polls_away) = (0, 0);
            std::future::poll_fn(|cx| {
                polls += 1;
                if thread::current().id() != home {
                    polls_away += 1;
                }
                while let Some(handle) = current.as_mut() {
                    if Pin::new(handle).poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    current = handles.next();
                }
                Poll::Ready(())
            })
            .await;
            (polls, polls_away)
        }));
        let metrics = pool.metrics();
        if metrics.total.rescues == 0 && metrics.total.takeovers == 0 {
            assert_eq!(polls_away, 0, "{workers} workers: the awaiter left the worker, neither rescued nor taken over");
            assert!(polls >= TASKS / 61, "{workers} workers: {polls} polls, fewer than one per turn");
        }
        let at_home = polls - polls_away;
        assert!(
            at_home <= TASKS / 10,
            "{workers} workers: {at_home} polls at home ({polls_away} away) for {TASKS} local tasks"
        );
    }
}

#[test]
fn spawn_local_on_a_worker_pins_the_task_to_that_worker_thread() {
    for &workers in WORKERS {
        let pool = pool(workers);
        let counts = Counts::default();
        let for_task = counts.clone();
        let all_home = pool.block_on(pool.spawn(async move {
            let me = thread::current().id();
            let handles: Vec<_> = (0..scaled(200, 8)).map(|i| crew::spawn_local(for_task.checked(i % 7))).collect();
            // Other work meanwhile, which other workers may steal.
            let others: Vec<_> = (0..scaled(200, 8)).map(|_| crew::spawn(async { crew::yield_now().await })).collect();
            let mut home = true;
            for handle in handles {
                home &= handle.await == me;
            }
            for other in others {
                other.await;
            }
            home
        }));
        assert!(all_home, "{workers} workers: a local task ran off its worker's thread");
        counts.assert(scaled(200, 8));
    }
}

#[test]
fn spawn_local_elsewhere_panics_naming_where_it_works() {
    let panic = std::panic::catch_unwind(|| {
        drop(crew::spawn_local(async {}));
    })
    .unwrap_err();
    let message =
        panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
    let message = message.unwrap();
    assert!(
        message.contains("crew worker thread") && message.contains("block_on") && message.contains("spawn_pinned"),
        "{message}"
    );
}

/// A one-shot signal's state: fired, and the waker of whoever waits.
type Signal = Arc<Mutex<(bool, Option<Waker>)>>;

/// Waits for a [`Signal`] to fire.
struct Wait {
    done: Signal,
}

impl Future for Wait {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut done = self.done.lock().unwrap();
        if done.0 {
            return Poll::Ready(());
        }
        done.1 = Some(cx.waker().clone());
        Poll::Pending
    }
}

fn signal() -> (Signal, Wait) {
    let done = Arc::new(Mutex::new((false, None)));
    (done.clone(), Wait { done })
}

fn fire(done: &Mutex<(bool, Option<Waker>)>) {
    let waker = {
        let mut done = done.lock().unwrap();
        done.0 = true;
        done.1.take()
    };
    if let Some(waker) = waker {
        waker.wake();
    }
}

#[test]
fn a_wake_from_another_thread_reaches_a_parked_owner_worker() {
    for &workers in WORKERS {
        let pool = pool(workers);
        for _ in 0..scaled(50, 2) {
            let (tx, rx) = mpsc::channel();
            let handle = pool.spawn(async move {
                let (done, wait) = signal();
                let me = thread::current().id();
                let local = crew::spawn_local(async move {
                    let _rc = Rc::new(());
                    wait.await;
                    thread::current().id()
                });
                tx.send(done).unwrap();
                local.await == me
            });
            let done = rx.recv().unwrap();
            // Let the workers park, then wake from this (foreign) thread.
            thread::sleep(Duration::from_millis(1));
            fire(&done);
            assert!(crew::block_on(handle));
        }
    }
}

#[test]
fn a_wake_from_another_thread_reaches_a_block_on_thread() {
    let (tx, rx) = mpsc::channel();
    let waker_thread = thread::spawn(move || {
        let done: Signal = rx.recv().unwrap();
        thread::sleep(Duration::from_millis(5));
        fire(&done);
    });
    let ran_here = crew::block_on(async move {
        let (done, wait) = signal();
        let local = crew::spawn_local(async move {
            let _rc = Rc::new(());
            wait.await;
            thread::current().id()
        });
        tx.send(done).unwrap();
        local.await == thread::current().id()
    });
    assert!(ran_here);
    waker_thread.join().unwrap();
}

#[test]
fn pending_local_tasks_wait_for_the_next_block_on_and_drop_at_thread_exit() {
    let counts = Counts::default();
    let for_thread = counts.clone();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let (done, wait) = signal();
        let ran = Rc::new(Cell::new(false));
        let flag = ran.clone();
        let for_first = for_thread.clone();
        let handle = crew::block_on(async {
            let checked = for_first.checked(0);
            let _pending = crew::spawn_local(async move {
                let _checked = checked;
                wait.await;
                flag.set(true);
            });
            crew::spawn_local(async {}).await;
            (_pending,)
        });
        fire(&done);
        assert!(!ran.get(), "no block_on runs: the woken task waits");
        crew::block_on(handle.0);
        assert!(ran.get(), "the next block_on ran it");
        // One left pending at exit: dropped as the thread's locals are destroyed.
        let (_keep, wait) = signal();
        let for_exit = for_thread.clone();
        crew::block_on(async move {
            let checked = for_exit.checked(0);
            crew::spawn_local(async move {
                let _checked = checked;
                wait.await;
            })
            .detach();
        });
        tx.send(()).unwrap();
    })
    .join()
    .unwrap();
    rx.recv().unwrap();
    counts.assert(2);
}

#[test]
fn every_task_left_at_thread_exit_is_dropped_there_once_whatever_its_state() {
    let counts = Counts::default();
    let for_thread = counts.clone();
    common::with_timeout(move || {
        thread::spawn(move || {
            let started = Rc::new(Cell::new(0));
            let forever = |checked: Checked| {
                let started = started.clone();
                async move {
                    let _checked = checked;
                    started.set(started.get() + 1);
                    std::future::pending::<()>().await;
                }
            };
            crew::block_on(async {
                // Idle at exit: one whose handle the next holds (its drop, as the thread
                // exits, cancels it), one detached.
                let held = crew::spawn_local(forever(for_thread.checked(0)));
                let holder = forever(for_thread.checked(0));
                crew::spawn_local(async move {
                    let _held = held;
                    holder.await;
                })
                .detach();
                crew::spawn_local(forever(for_thread.checked(0))).detach();
                // Let them run to their wait.
                while started.get() < 3 {
                    crew::yield_now().await;
                }
                // Queued at exit, never polled.
                crew::spawn_local(for_thread.checked(0)).detach();
            });
            assert_eq!(started.get(), 3);
        })
        .join()
        .unwrap();
    });
    counts.assert(4);
    assert_eq!(counts.polls.load(Ordering::SeqCst), 0, "the queued task is dropped unpolled");
}

#[test]
fn a_handle_dropped_on_another_thread_drops_the_task_on_its_own() {
    let pool = pool(2);
    let counts = Counts::default();
    let for_task = counts.clone();
    let handle = pool
        .block_on(pool.spawn(async move {
            let (_done, wait) = signal();
            let checked = for_task.checked(0);
            (crew::spawn_local(async move {
                let _checked = checked;
                wait.await;
            }),)
        }))
        .0;
    // Dropped here, on the test thread: the task's drop runs on its worker's thread.
    drop(handle);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while counts.drops.load(Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "the cancelled local task was never dropped");
        thread::sleep(Duration::from_millis(1));
    }
    counts.assert(1);
}

#[test]
fn pool_shutdown_drops_pending_local_tasks_on_their_threads() {
    for &workers in WORKERS {
        let counts = Counts::default();
        let pool = pool(workers);
        let mut keep = Vec::new();
        for _ in 0..workers * 4 {
            let for_task = counts.clone();
            let (done, wait) = signal();
            keep.push(done);
            pool.block_on(pool.spawn(async move {
                let checked = for_task.checked(0);
                crew::spawn_local(async move {
                    let _checked = checked;
                    wait.await;
                })
                .detach();
            }));
        }
        drop(pool);
        counts.assert(workers * 4);
        // A wake after the thread is gone finds no task: nothing happens.
        for done in &keep {
            fire(done);
        }
        counts.assert(workers * 4);
    }
}

#[test]
fn spawn_pinned_runs_the_future_on_one_worker_thread() {
    for &workers in WORKERS {
        let pool = pool(workers);
        let handles: Vec<_> = (0..scaled(100, 4))
            .map(|i| {
                pool.spawn_pinned(move || async move {
                    let here = thread::current().id();
                    let rc = Rc::new(i);
                    for _ in 0..3 {
                        crew::yield_now().await;
                        assert_eq!(thread::current().id(), here, "a pinned task moved");
                    }
                    (*rc, thread::current().name().map(str::to_owned))
                })
            })
            .collect();
        for (i, handle) in handles.into_iter().enumerate() {
            let (value, name) = crew::block_on(handle);
            assert_eq!(value, i);
            assert!(name.is_some_and(|name| name.starts_with("crew-")), "runs on a worker");
        }
    }
}

#[test]
fn spawn_pinned_on_the_global_pool_from_a_plain_thread() {
    let value =
        thread::spawn(|| crew::block_on(crew::spawn_pinned(|| async { Rc::new(5) }.await_rc()))).join().unwrap();
    assert_eq!(value, 5);
}

trait AwaitRc {
    fn await_rc(self) -> Pin<Box<dyn Future<Output = i32>>>;
}

impl<F: Future<Output = Rc<i32>> + 'static> AwaitRc for F {
    fn await_rc(self) -> Pin<Box<dyn Future<Output = i32>>> {
        Box::pin(async move { *self.await })
    }
}

#[test]
fn a_panicking_local_task_propagates_and_the_worker_lives() {
    let pool = pool(1);
    let result = pool.block_on(pool.spawn_with(crew::Catch, async {
        crew::spawn_local(async {
            let _rc = Rc::new(());
            panic!("local boom")
        })
        .await
    }));
    assert!(result.is_err());
    assert_eq!(pool.block_on(pool.spawn(async { crew::spawn_local(async { 3 }).await })), 3);
}

#[test]
fn a_stuck_worker_keeps_its_local_tasks_and_runs_them_after_its_poll() {
    let pool = crew::Pool::builder().workers(1).takeover_after(Duration::from_millis(20)).build().unwrap();
    let counts = Counts::default();
    let for_task = counts.clone();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel();
    let stuck = pool.spawn(async move {
        let me = thread::current().id();
        let local = crew::spawn_local(async move { for_task.checked(2).await });
        started_tx.send(()).unwrap();
        // Stuck: the monitor takes the core over; the local task stays with this thread.
        release_rx.recv().unwrap();
        (local, me)
    });
    started_rx.recv().unwrap();
    // Ordinary tasks go on meanwhile, on the thread that took over.
    assert_eq!(pool.block_on(pool.spawn(async { 1 })), 1);
    release_tx.send(()).unwrap();
    let (local, me) = pool.block_on(stuck);
    assert_eq!(pool.block_on(local), me, "the local task ran on its stuck thread, after the poll");
    counts.assert(1);
}

#[test]
fn block_in_place_keeps_local_tasks_on_its_thread() {
    let pool = pool(2);
    let ok = pool.block_on(pool.spawn(async {
        let me = thread::current().id();
        let local = crew::spawn_local(async { thread::current().id() });
        crew::block_in_place(|| thread::sleep(Duration::from_millis(1)));
        local.await == me
    }));
    assert!(ok);
}

#[test]
fn block_on_inside_a_worker_task_runs_that_threads_local_tasks() {
    let pool = pool(1);
    let ok = pool.block_on(pool.spawn(async {
        let me = thread::current().id();
        let local = crew::spawn_local(async {
            crew::yield_now().await;
            thread::current().id()
        });
        // The core goes to a fresh thread; this thread's local task runs inside this block_on.
        crew::block_on(local) == me
    }));
    assert!(ok);
}

#[test]
fn a_busy_local_task_does_not_starve_ordinary_tasks_nor_the_reverse() {
    // A local task's yield waits as an ordinary task's does (for the worker's fairness tick, or
    // until it has nothing else): on one worker, the spinner and the four yielders take turns,
    // one yield each per round, instead of the spinner running turns of its own between them.
    // Takeover off: a thread descheduled mid-poll must not move the ordinary tasks elsewhere.
    const YIELDS: u64 = if cfg!(miri) { 10 } else { 1000 };
    let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
    let done = pool.block_on(pool.spawn_pinned(|| async {
        let stop = Rc::new(Cell::new(false));
        let flag = stop.clone();
        let spinner = crew::spawn_local(async move {
            let mut yields = 0u64;
            while !flag.get() {
                crew::yield_now().await;
                yields += 1;
            }
            yields
        });
        // Ordinary tasks that yield forever too.
        let stop_all = Arc::new(AtomicUsize::new(0));
        let ordinary: Vec<_> = (0..4)
            .map(|_| {
                let stop_all = stop_all.clone();
                crew::spawn(async move {
                    let mut yields = 0u64;
                    while stop_all.load(Ordering::SeqCst) == 0 {
                        crew::yield_now().await;
                        yields += 1;
                        if yields == YIELDS {
                            return yields;
                        }
                    }
                    yields
                })
            })
            .collect();
        let mut ordinary_yields = 0;
        for task in ordinary {
            ordinary_yields += task.await;
        }
        stop.set(true);
        stop_all.store(1, Ordering::SeqCst);
        (ordinary_yields, spinner.await)
    }));
    let (ordinary, spinner) = done;
    assert_eq!(ordinary, 4 * YIELDS);
    assert!(
        (YIELDS / 2..=2 * YIELDS + 61).contains(&spinner),
        "the local spinner yielded {spinner} times while each of 4 ordinary tasks yielded {YIELDS} times"
    );
}

#[test]
#[cfg_attr(miri, ignore = "a timer makes crew's driver, whose epoll waits too long interpreted")]
fn a_local_task_yielding_forever_alone_lets_timers_fire_and_outside_spawns_run() {
    // A 1-worker pool whose only local task yields forever (so the worker never parks) still
    // turns the driver (a timer fires) and takes tasks spawned from outside (the injector),
    // and runs the yielder again after each yield.
    common::with_timeout(local_yielder_alone_lets_timers_fire_and_outside_spawns_run);
}

fn local_yielder_alone_lets_timers_fire_and_outside_spawns_run() {
    let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
    let stop = Arc::new(AtomicUsize::new(0));
    let yields = Arc::new(AtomicUsize::new(0));
    let counts = Counts::default();
    let (task_stop, task_yields, for_task) = (stop.clone(), yields.clone(), counts.clone());
    let spinner = pool.spawn_pinned(move || async move {
        let polls = Rc::new(Cell::new(0u64));
        let counted = polls.clone();
        crew::spawn_local(async move {
            let _checked = for_task.checked(0);
            while task_stop.load(Ordering::SeqCst) == 0 {
                counted.set(counted.get() + 1);
                task_yields.fetch_add(1, Ordering::SeqCst);
                crew::yield_now().await;
            }
        })
        .await;
        polls.get()
    });
    common::wait_until("the local task runs", || yields.load(Ordering::SeqCst) > 0);
    // A timer on the spinner's worker, and 100 tasks through the injector.
    let slept = pool.spawn(async { crew::time::sleep(Duration::from_millis(5)).await });
    let outside: Vec<_> = (0..100).map(|i| pool.spawn(async move { i })).collect();
    pool.block_on(slept);
    assert_eq!(outside.into_iter().map(|handle| pool.block_on(handle)).sum::<i32>(), 4950);
    stop.store(1, Ordering::SeqCst);
    assert!(pool.block_on(spinner) > 0);
    counts.assert(1);
}

#[test]
fn metrics_count_local_tasks_per_worker() {
    let pool = pool(2);
    let (done, wait) = signal();
    let for_task = done.clone();
    let handle = pool.spawn_pinned(move || async move {
        let pending = crew::spawn_local(wait);
        for _ in 0..10 {
            crew::spawn_local(async { crew::yield_now().await }).await;
        }
        drop(for_task);
        pending.await
    });
    // The pending local task and its pinned parent's local task wait on this worker's thread.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let metrics = pool.metrics();
        if metrics.total.local_spawned >= 12 && metrics.total.local_tasks >= 2 {
            assert!(
                metrics.total.local_runs > 10 * 2,
                "ten local tasks that yield once ran twice each, the waiting one once"
            );
            assert!(
                metrics.workers.iter().filter(|worker| worker.local_tasks > 0).count() == 1,
                "one thread owns them"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "local tasks never counted: {metrics:?}");
        thread::sleep(Duration::from_millis(1));
    }
    fire(&done);
    crew::block_on(handle);
    let metrics = pool.metrics();
    assert_eq!(metrics.total.local_tasks, 0, "{metrics}");
}

#[test]
fn a_stuck_threads_local_tasks_are_reported_and_dropped_by_the_pools_shutdown() {
    let (reports_tx, reports_rx) = mpsc::channel();
    let pool = crew::Pool::builder()
        .workers(1)
        .takeover_after(Duration::from_millis(20))
        .slow_poll_threshold(Duration::from_millis(5))
        .on_slow_poll(move |report| {
            let _ = reports_tx.send((report.kind(), report.local_tasks()));
        })
        .build()
        .unwrap();
    let counts = Counts::default();
    let for_task = counts.clone();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (_keep, wait) = signal();
    pool.spawn(async move {
        let checked = for_task.checked(0);
        // Waits forever: the thread keeps it after the takeover, until the pool shuts down.
        crew::spawn_local(async move {
            let _checked = checked;
            wait.await;
        })
        .detach();
        // The poll that blocks is a later one than the spawn's: its report comes after the spawn
        // however slowly this runs (under miri, the spawn's poll can be slow itself).
        crew::yield_now().await;
        release_rx.recv().unwrap();
    })
    .detach();
    // The slow-poll report of the blocked poll counts the local task waiting behind it.
    loop {
        let report = reports_rx.recv_timeout(Duration::from_secs(60)).expect("a slow-poll report");
        if report == (crew::SlowPollKind::Slow, 1) {
            break;
        }
    }
    // A task waiting behind the stuck poll: the takeover runs it on a new thread.
    assert_eq!(pool.block_on(pool.spawn(async { 2 })), 2);
    release_tx.send(()).unwrap();
    // The stuck thread now finishes its local tasks: this one never ends, so shutdown drops it
    // there.
    drop(pool);
    counts.assert(1);
}

#[test]
fn the_dump_shows_a_local_task_running_on_a_thread_with_no_worker() {
    let pool = Arc::new(crew::Pool::builder().workers(1).task_dump(true).takeover(false).build().unwrap());
    let (running_tx, running_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let reader = {
        let pool = pool.clone();
        std::thread::spawn(move || {
            running_rx.recv().unwrap();
            // The local task's poll blocks its thread until this dump was read.
            let dump = pool.dump();
            let state = dump.tasks().iter().find(|task| task.name() == Some("local-running")).map(|task| task.state());
            release_tx.send(()).unwrap();
            (state, dump.to_string())
        })
    };
    // `Pool::block_on` runs the local task on this thread, which runs no worker.
    pool.block_on(async move {
        crew::task::Builder::new()
            .name("local-running")
            .spawn_local(async move {
                running_tx.send(()).unwrap();
                release_rx.recv().unwrap();
            })
            .await
    });
    let (state, dump) = reader.join().unwrap();
    assert!(matches!(state, Some(crew::TaskState::RunningOffWorker { .. })), "{state:?}\n{dump}");
    assert!(dump.contains("running on its own thread, which runs no worker"), "{dump}");
    // Its poll over, the task ended: no longer listed.
    assert!(pool.dump().tasks().iter().all(|task| task.name() != Some("local-running")));
}

#[test]
fn the_dump_shows_a_local_task_in_its_threads_queue() {
    let pool = crew::Pool::builder().workers(1).task_dump(true).takeover(false).build().unwrap();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (queued_tx, queued_rx) = mpsc::channel();
    let blocker = pool.spawn(async move {
        // Queued behind this poll, which blocks its worker until the dump was read.
        crew::task::Builder::new().name("local-one").spawn_local(async {}).detach();
        queued_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    queued_rx.recv().unwrap();
    let dump = pool.dump();
    let local = dump.tasks().iter().find(|task| task.name() == Some("local-one")).expect("the local task is listed");
    assert!(
        matches!(local.state(), crew::TaskState::Queued { place: crew::QueuedIn::Local { worker: Some(0) }, .. }),
        "{:?}",
        local.state()
    );
    release_tx.send(()).unwrap();
    crew::block_on(blocker);
}

/// `future`, counting its polls in `polls`.
fn count_polls<F: Future>(polls: Arc<AtomicUsize>, future: F) -> impl Future<Output = F::Output> {
    let mut future = Box::pin(future);
    std::future::poll_fn(move |cx| {
        polls.fetch_add(1, Ordering::SeqCst);
        future.as_mut().poll(cx)
    })
}

/// Local tasks spawned at once by one pinned task: fewer than a turn (61), so that the worker
/// runs them, and the pinned task, in one turn.
const TURN_TASKS: usize = scaled(40, 8);

/// A local task's future, boxed: a turn's tasks differ in type.
type LocalFuture = Pin<Box<dyn Future<Output = ThreadId>>>;

/// On a worker of `pool` (`spawn_pinned`), a task that spawns [`TURN_TASKS`] local tasks at once,
/// the `i`th made by `task(i)` (a future that returns its thread), awaits them and checks that
/// each ran on its thread; its output is that thread. `polls` counts every poll of it and of
/// its local tasks.
fn turn_of_local_tasks(
    pool: &crew::Pool,
    polls: &Arc<AtomicUsize>,
    mut task: impl FnMut(usize) -> LocalFuture + Send + 'static,
) -> crew::JoinHandle<ThreadId> {
    let polls = polls.clone();
    pool.spawn_pinned(move || {
        count_polls(polls.clone(), async move {
            let me = thread::current().id();
            let handles: Vec<_> =
                (0..TURN_TASKS).map(|i| crew::spawn_local(count_polls(polls.clone(), task(i)))).collect();
            for handle in handles {
                assert_eq!(handle.await, me);
            }
            me
        })
    })
}

#[test]
fn the_metrics_count_every_local_poll_of_a_turn() {
    // The worker runs a turn's local tasks after the first one by one, outside its context
    // (`local_turn.rs`): each of those polls still counts in `local_runs`, exactly.
    for &workers in WORKERS {
        let pool = pool(workers);
        let counts = Counts::default();
        let polls = Arc::new(AtomicUsize::new(0));
        let for_tasks = counts.clone();
        let owner = pool.block_on(turn_of_local_tasks(&pool, &polls, move |i| Box::pin(for_tasks.checked(i % 4))));
        counts.assert(TURN_TASKS);
        assert_ne!(owner, thread::current().id());
        let expected = polls.load(Ordering::SeqCst) as u64;
        assert!(expected > 2 * TURN_TASKS as u64, "{expected} local polls");
        // The turn adds its count when it ends, after the last poll's wake reached this thread.
        common::wait_until("the worker counts every local poll it ran", || {
            let counted = pool.metrics().total.local_runs;
            assert!(counted <= expected, "{workers} workers: {counted} local runs counted, {expected} polls");
            counted == expected
        });
    }
}

#[test]
fn block_in_place_in_the_middle_of_a_turn_keeps_the_rest_on_its_thread() {
    // A local task in the middle of a turn hands the core off (`block_in_place`): the turn stops
    // there, every local task still runs on its thread (after the poll, with no core), and the
    // core's count of local polls ends with the blocking one.
    for &workers in WORKERS {
        let pool = pool(workers);
        let counts = Counts::default();
        let polls = Arc::new(AtomicUsize::new(0));
        let at_hand_off = Arc::new(AtomicUsize::new(0));
        let (for_tasks, for_blocker, polls_seen) = (counts.clone(), at_hand_off.clone(), polls.clone());
        let owner = pool.block_on(turn_of_local_tasks(&pool, &polls, move |i| -> LocalFuture {
            if i != TURN_TASKS / 2 {
                return Box::pin(for_tasks.checked(2));
            }
            let (polls, at_hand_off, rc) = (polls_seen.clone(), for_blocker.clone(), Rc::new(()));
            Box::pin(async move {
                at_hand_off.store(polls.load(Ordering::SeqCst), Ordering::SeqCst);
                crew::block_in_place(|| drop(rc));
                thread::current().id()
            })
        }));
        counts.assert(TURN_TASKS - 1);
        assert_ne!(owner, thread::current().id());
        let at_hand_off = at_hand_off.load(Ordering::SeqCst) as u64;
        assert!(at_hand_off > 1 && at_hand_off < polls.load(Ordering::SeqCst) as u64);
        // Every local poll after the hand-off ran on the thread with no core: none counted.
        assert_eq!(pool.metrics().total.local_runs, at_hand_off, "{workers} workers");
        // The core went on on a fresh thread.
        assert_eq!(pool.block_on(pool.spawn(async { 5 })), 5);
    }
}

#[test]
fn a_local_task_stuck_in_the_middle_of_a_turn_loses_the_core_and_keeps_the_others() {
    // The monitor takes the core over while a local task in the middle of a turn is stuck:
    // ordinary tasks go on on the thread that took over; once the poll returns, the turn stops
    // there (the core's count of local polls ends with the stuck one), the thread gives the core
    // up and runs the rest of its local tasks itself.
    let pool = crew::Pool::builder().workers(1).takeover_after(Duration::from_millis(20)).build().unwrap();
    let counts = Counts::default();
    let polls = Arc::new(AtomicUsize::new(0));
    let at_stuck = Arc::new(AtomicUsize::new(0));
    let (for_tasks, for_stuck, polls_seen) = (counts.clone(), at_stuck.clone(), polls.clone());
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (stuck_tx, stuck_rx) = mpsc::channel();
    let mut stuck = Some((stuck_tx, release_rx));
    let handle = turn_of_local_tasks(&pool, &polls, move |i| -> LocalFuture {
        let Some((stuck_tx, release_rx)) = stuck.take_if(|_| i == TURN_TASKS / 2) else {
            return Box::pin(for_tasks.checked(2));
        };
        let (polls, at_stuck) = (polls_seen.clone(), for_stuck.clone());
        Box::pin(async move {
            let _not_send = Rc::new(());
            at_stuck.store(polls.load(Ordering::SeqCst), Ordering::SeqCst);
            stuck_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            thread::current().id()
        })
    });
    stuck_rx.recv().unwrap();
    assert_eq!(pool.block_on(pool.spawn(async { 1 })), 1, "ordinary tasks run while the local task is stuck");
    let taker = pool.block_on(pool.spawn(async { thread::current().id() }));
    release_tx.send(()).unwrap();
    let owner = pool.block_on(handle);
    assert_ne!(owner, taker, "the thread that took over does not run the stuck thread's local tasks");
    counts.assert(TURN_TASKS - 1);
    let metrics = pool.metrics();
    assert!(metrics.total.takeovers >= 1);
    let at_stuck = at_stuck.load(Ordering::SeqCst) as u64;
    assert!(at_stuck > 1 && at_stuck < polls.load(Ordering::SeqCst) as u64);
    assert_eq!(metrics.total.local_runs, at_stuck, "local polls counted on the core, up to the stuck one");
}
