//! Helpers shared by the integration tests. Each test binary compiles this module on its own
//! and uses only part of it, hence `dead_code` is allowed. Add functions; do not rewrite others'.
#![allow(dead_code)]

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
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < HANG_TIMEOUT, "still waiting after {HANG_TIMEOUT:?} for: {what}");
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
