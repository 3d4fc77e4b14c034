//! Helpers shared by the integration tests. Each test binary compiles this module on its own
//! and uses only part of it, hence `dead_code` is allowed. Add functions; do not rewrite others'.
#![allow(dead_code)]

pub mod child;
pub mod echo;
pub mod stuck;

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

/// How long a test body may take before it is declared hung. Only turns a hang into a failure:
/// no test depends on anything finishing within some shorter time.
pub const HANG_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `body` on a fresh thread and returns its result; resumes its panic, if any; panics if
/// it has not finished after [`HANG_TIMEOUT`] (the hung thread is leaked).
pub fn with_timeout<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    with_timeout_of(HANG_TIMEOUT, body)
}

/// [`with_timeout`] with an explicit limit.
pub fn with_timeout_of<T: Send + 'static>(limit: Duration, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::Builder::new()
        .name("test-body".into())
        .spawn(move || {
            let _ = tx.send(panic::catch_unwind(AssertUnwindSafe(body)));
        })
        .expect("spawn the test body thread");
    match rx.recv_timeout(limit) {
        Ok(Ok(value)) => value,
        Ok(Err(payload)) => panic::resume_unwind(payload),
        Err(_) => panic!("the test body hung: not finished after {limit:?}"),
    }
}

/// Spins (sleeping 1 ms between checks) until `condition` holds; panics naming `what` after
/// [`HANG_TIMEOUT`]. For states reached asynchronously, such as a future dropped on a worker.
pub fn wait_until(what: &str, condition: impl FnMut() -> bool) {
    wait_until_within(HANG_TIMEOUT, what, condition)
}

/// [`wait_until`] with an explicit limit.
pub fn wait_until_within(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < limit, "still waiting after {limit:?} for: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// Poll and drop counts of a [`Counted`] future.
#[derive(Debug, Default)]
pub struct Counts {
    polls: AtomicUsize,
    drops: AtomicUsize,
}

impl Counts {
    pub fn new() -> Arc<Counts> {
        Arc::new(Counts::default())
    }

    pub fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }

    pub fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }
}

/// Wraps a future, counting its polls and its drop in a shared [`Counts`].
#[derive(Debug)]
pub struct Counted<F> {
    future: Pin<Box<F>>,
    counts: Arc<Counts>,
}

impl<F: Future> Counted<F> {
    pub fn new(counts: &Arc<Counts>, future: F) -> Counted<F> {
        Counted { future: Box::pin(future), counts: counts.clone() }
    }
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.counts.polls.fetch_add(1, Ordering::SeqCst);
        self.future.as_mut().poll(cx)
    }
}

impl<F> Drop for Counted<F> {
    fn drop(&mut self) {
        self.counts.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Increments a shared counter when dropped (also while unwinding).
#[derive(Debug)]
pub struct DropCounter(pub Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// One drop counter per task.
pub struct DropCounts(Vec<Arc<AtomicUsize>>);

impl DropCounts {
    pub fn new(tasks: usize) -> DropCounts {
        DropCounts((0..tasks).map(|_| Arc::new(AtomicUsize::new(0))).collect())
    }

    /// A value to move into task `index`'s future: it counts the future's drop.
    pub fn probe(&self, index: usize) -> DropCounter {
        DropCounter(self.0[index].clone())
    }

    pub fn get(&self, index: usize) -> usize {
        self.0[index].load(Ordering::SeqCst)
    }

    /// Waits until every task's future was dropped (some drops may happen on a reaper thread
    /// after the pool's drop returned), then asserts each was dropped exactly once.
    pub fn wait_each_once(&self, what: &str) {
        wait_until(what, || (0..self.0.len()).all(|i| self.get(i) > 0));
        self.assert_each_once(what);
    }

    /// Asserts that every task's future was dropped exactly once.
    pub fn assert_each_once(&self, what: &str) {
        let never: Vec<usize> = (0..self.0.len()).filter(|&i| self.get(i) == 0).collect();
        let twice: Vec<usize> = (0..self.0.len()).filter(|&i| self.get(i) > 1).collect();
        assert!(
            never.is_empty() && twice.is_empty(),
            "{what}: of {} futures, {} were never dropped (first: {:?}) and {} more than once (first: {:?})",
            self.0.len(),
            never.len(),
            &never[..never.len().min(5)],
            twice.len(),
            &twice[..twice.len().min(5)],
        );
    }
}

/// Occupies one worker of `pool` with a task that blocks its thread until the returned sender
/// is dropped (or sent to). Returns once that task is running, so that on a 1-worker pool every
/// task spawned afterwards stays queued until the gate opens.
pub fn block_one_worker(pool: &crew::Pool) -> mpsc::Sender<()> {
    let (started_tx, started_rx) = mpsc::channel();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    pool.spawn(async move {
        started_tx.send(()).unwrap();
        let _ = gate_rx.recv();
    })
    .detach();
    started_rx.recv_timeout(HANG_TIMEOUT).expect("the gate task never started");
    gate_tx
}

/// Runs `workers` tasks on `pool` that all wait on one `Barrier::new(workers)` (so they finish
/// only if `workers` distinct threads run them at once) and returns their thread names, sorted
/// and deduplicated. Hangs (so call it under [`with_timeout`]) if fewer workers are alive.
pub fn names_of_concurrent_workers(pool: &crew::Pool, workers: usize) -> Vec<String> {
    let barrier = Arc::new(std::sync::Barrier::new(workers));
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let barrier = barrier.clone();
            pool.spawn(async move {
                barrier.wait();
                thread::current().name().unwrap_or("<unnamed>").to_owned()
            })
        })
        .collect();
    let mut names: Vec<String> = handles.into_iter().map(crew::block_on).collect();
    names.sort();
    names.dedup();
    names
}

/// Asserts that `pool` (whose threads are named `{prefix}-{index}`) has `workers` live workers
/// that run tasks at the same time: `workers` tasks meet at a barrier on `workers` distinct
/// threads, named `{prefix}-0` .. `{prefix}-{workers - 1}`.
pub fn assert_all_workers_run(pool: &crew::Pool, prefix: &str, workers: usize) {
    let names = names_of_concurrent_workers(pool, workers);
    let mut expected: Vec<String> = (0..workers).map(|i| format!("{prefix}-{i}")).collect();
    expected.sort();
    assert_eq!(names, expected, "every worker runs one of {workers} tasks meeting at a barrier");
}

/// The text of a `&str` or `String` panic payload.
pub fn payload_message(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// Awaits `future` (typically a `JoinHandle`) with `crew::block_on` on this thread and returns
/// the payload it panicked with; fails if it returned instead.
pub fn await_panic<T: std::fmt::Debug>(future: impl Future<Output = T>) -> Box<dyn std::any::Any + Send> {
    match panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(future))) {
        Ok(value) => panic!("awaiting gave {value:?} instead of panicking"),
        Err(payload) => payload,
    }
}

/// Probes for the shutdown, configuration, stress and lost-wakeup tests: a `block_on` that turns
/// a hang into a panic, worker threads as the OS lists them, and hand-made wake primitives.
pub mod probe {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex, OnceLock, Weak};
    use std::task::{Context, Poll, Waker};
    use std::thread;
    use std::time::{Duration, Instant};

    /// A waker slot the watchdog wakes now and then, so that a pending `block_on_within` re-checks
    /// its deadline.
    #[derive(Default)]
    struct WatchSlot {
        waker: Mutex<Option<Waker>>,
    }

    fn watched() -> &'static Mutex<Vec<Weak<WatchSlot>>> {
        static WATCHED: OnceLock<Mutex<Vec<Weak<WatchSlot>>>> = OnceLock::new();
        WATCHED.get_or_init(|| {
            thread::Builder::new()
                .name("test-watchdog".into())
                .spawn(|| loop {
                    thread::sleep(Duration::from_millis(250));
                    let live: Vec<Arc<WatchSlot>> = {
                        let mut slots = watched().lock().unwrap();
                        slots.retain(|slot| slot.strong_count() > 0);
                        slots.iter().filter_map(Weak::upgrade).collect()
                    };
                    for slot in live {
                        let waker = slot.waker.lock().unwrap().clone();
                        if let Some(waker) = waker {
                            waker.wake();
                        }
                    }
                })
                .expect("start the watchdog thread");
            Mutex::new(Vec::new())
        })
    }

    /// `crew::block_on(future)`, but panics if `future` is still pending after `limit`. A
    /// watchdog thread wakes the blocked thread (never a pool worker) every 250 ms so that it
    /// re-checks the deadline; the deadline only turns a hang into a failure.
    pub fn block_on_within<F: Future>(limit: Duration, what: &str, future: F) -> F::Output {
        let start = Instant::now();
        let slot = Arc::new(WatchSlot::default());
        let mut registered = false;
        let mut future = pin!(future);
        crew::block_on(std::future::poll_fn(|cx: &mut Context<'_>| {
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                return Poll::Ready(output);
            }
            assert!(start.elapsed() < limit, "hang: still waiting after {limit:?} for {what}");
            {
                let mut waker = slot.waker.lock().unwrap();
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
            }
            if !registered {
                registered = true;
                watched().lock().unwrap().push(Arc::downgrade(&slot));
            }
            Poll::Pending
        }))
    }

    /// The names (`comm`, at most 15 bytes) of this process's threads that start with `prefix`.
    pub fn threads_named(prefix: &str) -> Vec<String> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir("/proc/self/task").expect("read /proc/self/task").flatten() {
            // A thread may exit between the listing and the read: skip it.
            if let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) {
                let comm = comm.trim_end_matches('\n');
                if comm.starts_with(prefix) {
                    names.push(comm.to_owned());
                }
            }
        }
        names.sort();
        names
    }

    /// The kernel's id of the calling thread.
    pub fn current_tid() -> i32 {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() }
    }

    /// The scheduler state letter (`R`, `S`, `D`, ...) of thread `tid` of this process, if it
    /// still exists.
    pub fn thread_state(tid: i32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
        // "tid (comm) S ...": comm may hold spaces and parentheses, so split after the last ')'.
        stat[stat.rfind(')')? + 1..].trim_start().chars().next()
    }

    /// A hand-made wake primitive: a counter that any thread bumps with [`WakeCounter::add`] and
    /// a task awaits reaching a target with [`WakeCounter::reached`]; one waker slot.
    #[derive(Debug, Default)]
    pub struct WakeCounter {
        count: AtomicUsize,
        waker: Mutex<Option<Waker>>,
    }

    impl WakeCounter {
        pub fn new() -> Arc<WakeCounter> {
            Arc::new(WakeCounter::default())
        }

        /// Adds one and wakes the waiting task, if any.
        pub fn add(&self) {
            // The count is bumped before the slot is locked, and the waiter re-checks the count
            // under the lock: either the waiter sees the new count, or this take sees its waker.
            self.count.fetch_add(1, Ordering::SeqCst);
            let waker = self.waker.lock().unwrap().take();
            if let Some(waker) = waker {
                waker.wake();
            }
        }

        pub fn count(&self) -> usize {
            self.count.load(Ordering::SeqCst)
        }

        /// Ready once the count is at least `target`.
        pub fn reached(self: &Arc<Self>, target: usize) -> impl Future<Output = ()> + Send + 'static {
            let this = self.clone();
            std::future::poll_fn(move |cx: &mut Context<'_>| {
                if this.count() >= target {
                    return Poll::Ready(());
                }
                let mut waker = this.waker.lock().unwrap();
                if this.count() >= target {
                    return Poll::Ready(());
                }
                *waker = Some(cx.waker().clone());
                Poll::Pending
            })
        }
    }

    /// The waker a [`parked_forever`] future left at its last poll, and how often it was polled.
    #[derive(Debug, Default)]
    pub struct WakerCell {
        waker: Mutex<Option<Waker>>,
        polls: AtomicUsize,
    }

    impl WakerCell {
        pub fn new() -> Arc<WakerCell> {
            Arc::new(WakerCell::default())
        }

        pub fn polls(&self) -> usize {
            self.polls.load(Ordering::SeqCst)
        }

        /// Wakes the stored waker (a clone of it, outside the lock). False if none is stored yet.
        pub fn wake(&self) -> bool {
            let waker = self.waker.lock().unwrap().clone();
            waker.map(Waker::wake).is_some()
        }

        /// Takes the stored waker out.
        pub fn take(&self) -> Option<Waker> {
            self.waker.lock().unwrap().take()
        }
    }

    /// Threads that wake every cell's stored waker, round and round, until stopped: a storm of
    /// foreign wakes, for tests that drop a pool in the middle of one.
    pub struct Hammering {
        stop: Arc<std::sync::atomic::AtomicBool>,
        wakes: Arc<AtomicUsize>,
        threads: Vec<thread::JoinHandle<()>>,
    }

    impl Hammering {
        /// Starts `threads` threads, each from its own part of `cells` (every cell must hold a
        /// waker already: the futures were polled once).
        pub fn start(cells: &Arc<Vec<Arc<WakerCell>>>, threads: usize) -> Hammering {
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let wakes = Arc::new(AtomicUsize::new(0));
            let threads = (0..threads)
                .map(|t| {
                    let (cells, stop, wakes) = (cells.clone(), stop.clone(), wakes.clone());
                    let mut i = t * cells.len() / threads;
                    thread::spawn(move || {
                        while !stop.load(Ordering::Relaxed) {
                            assert!(cells[i].wake(), "every cell holds a waker");
                            wakes.fetch_add(1, Ordering::Relaxed);
                            i = (i + 1) % cells.len();
                        }
                    })
                })
                .collect();
            Hammering { stop, wakes, threads }
        }

        /// Waits until `more` wakes were made from now on.
        pub fn wait_for(&self, more: usize, what: &str) {
            let from = self.wakes.load(Ordering::Relaxed);
            super::wait_until(what, || self.wakes.load(Ordering::Relaxed) >= from + more);
        }

        /// Stops and joins the threads.
        pub fn stop(self) {
            self.stop.store(true, Ordering::Relaxed);
            for thread in self.threads {
                thread.join().unwrap();
            }
        }
    }

    /// A future that never completes; every poll stores its waker in `cell` and counts itself.
    pub fn parked_forever(cell: Arc<WakerCell>) -> impl Future<Output = ()> + Send + 'static {
        std::future::poll_fn(move |cx: &mut Context<'_>| {
            *cell.waker.lock().unwrap() = Some(cx.waker().clone());
            cell.polls.fetch_add(1, Ordering::SeqCst);
            Poll::Pending
        })
    }
}
