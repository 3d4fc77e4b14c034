//! The global blocking pool at its bound: with `MAX_BLOCKING_THREADS` jobs held, the process has
//! exactly that many blocking threads, further jobs queue, a queued job whose handle is dropped
//! or cancelled is dropped without running, and the other queued jobs run once the held ones
//! finish. Process-global (it needs every blocking thread of the process to itself), hence its own
//! test binary with a single test.

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::task::Context;

use common::probe::threads_named;
use common::{wait_until, with_timeout, DropCounter};

/// A queued job's counters: how often it ran, how often its closure was dropped.
#[derive(Default)]
struct JobCounts {
    runs: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

impl JobCounts {
    /// A job that counts its run, and (through a capture) its drop; returns 7.
    fn job(&self) -> impl FnOnce() -> u32 + Send + 'static {
        let runs = self.runs.clone();
        let captured = DropCounter(self.drops.clone());
        move || {
            let _captured = captured;
            runs.fetch_add(1, Ordering::SeqCst);
            7
        }
    }

    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }

    fn drops(&self) -> usize {
        self.drops.load(Ordering::SeqCst)
    }
}

#[test]
#[cfg_attr(miri, ignore = "starts 512 threads and reads /proc/self/task, which miri isolates")]
fn jobs_past_the_bound_queue_and_a_dropped_queued_job_never_runs() {
    with_timeout(|| {
        const MAX: usize = crew::config::DEFAULT_MAX_BLOCKING_THREADS;
        // MAX jobs that meet this thread at a barrier: they hold every blocking thread.
        let gate = Arc::new(Barrier::new(MAX + 1));
        let started = Arc::new(AtomicUsize::new(0));
        let held: Vec<_> = (0..MAX)
            .map(|i| {
                let (gate, started) = (gate.clone(), started.clone());
                crew::spawn_blocking(move || {
                    started.fetch_add(1, Ordering::SeqCst);
                    gate.wait();
                    i
                })
            })
            .collect();
        wait_until("every held job runs", || started.load(Ordering::SeqCst) == MAX);
        assert_eq!(threads_named("crew-blocking-").len(), MAX);

        // Every thread is busy, so these three queue.
        let (dropped, cancelled, kept) = (JobCounts::default(), JobCounts::default(), JobCounts::default());
        drop(crew::spawn_blocking(dropped.job()));
        let mut cancel = Box::pin(crew::spawn_blocking(cancelled.job()).cancel());
        let waker = futures::task::noop_waker();
        assert!(cancel.as_mut().poll(&mut Context::from_waker(&waker)).is_pending(), "the job is queued");
        let kept_handle = crew::spawn_blocking(kept.job());
        assert_eq!(threads_named("crew-blocking-").len(), MAX, "no thread past the bound");
        assert_eq!((dropped.runs(), cancelled.runs(), kept.runs()), (0, 0, 0));

        gate.wait();
        let outputs: Vec<usize> = held.into_iter().map(crew::block_on).collect();
        assert_eq!(outputs, (0..MAX).collect::<Vec<_>>());
        assert_eq!(crew::block_on(kept_handle), 7);
        assert_eq!(crew::block_on(cancel), None);
        // The dropped job's closure is dropped when a thread takes it from the queue.
        wait_until("the dropped job's closure is dropped", || dropped.drops() == 1);
        assert_eq!((dropped.runs(), dropped.drops()), (0, 1), "the dropped job never ran");
        assert_eq!((cancelled.runs(), cancelled.drops()), (0, 1), "the cancelled job never ran");
        assert_eq!((kept.runs(), kept.drops()), (1, 1));
        assert!(threads_named("crew-blocking-").len() <= MAX);
    });
}
