//! The monitor's takeover of a worker stuck inside one poll racing that poll's return, on a real
//! one-worker `crew::Pool` with one spare core (`src/scheduler/takeover/monitor.rs`).
//!
//! A parent task spawns two children onto its own worker (the first goes to the LIFO slot, the
//! second displaces it into the deque), then blocks its worker thread until another thread
//! releases it. Meanwhile the model's main thread, once the parent's poll has begun, takes the
//! worker over (the monitor's `take_over`, called by hand: loom has no clock to run the monitor
//! thread). Every order is explored: the takeover during the poll (a new thread runs the spare
//! core with the LIFO child, and steals the deque child or gets it back through the injector
//! when the stuck thread gives its core up), or after the poll ended (the compare-exchange fails
//! and nothing changes). Each child runs exactly once, every task's output reaches its handle, and
//! once the pool is idle the counters say no running core is left uncounted.
//!
//! Planted bugs: `--cfg crew_bug="takeover_without_exchange"` sets the taken flag without
//! checking that the poll it saw still runs (a core then driven by two threads, the counters
//! off); `--cfg crew_bug="takeover_drops_queue"` makes the stuck thread drop its queued tasks
//! when it gives its core up, instead of passing them on; `--cfg crew_bug="end_poll_without_fence"`
//! drops the owner's half of the fence pair at a poll's end (`src/scheduler/takeover/progress.rs`), so its
//! load of the flags can miss the monitor's request while the monitor's re-read misses the end.
#![cfg(loom)]

use std::sync::Arc as StdArc;

use crew_loom_tests::support::{model_counting_takeovers, wait_until, Count, Flag};

#[test]
fn a_takeover_racing_the_stuck_polls_return_runs_each_task_once() {
    let (taken, executions) = model_counting_takeovers(2, || {
        let pool = StdArc::new(crew::Pool::builder().workers(1).max_stuck_threads(1).build().unwrap());
        let (a_runs, b_runs) = (Count::new(), Count::new());
        let (started, released) = (Flag::new(), Flag::new());
        let parent = pool.spawn({
            let (pool, a_runs, b_runs) = (pool.clone(), a_runs.clone(), b_runs.clone());
            let (started, released) = (started.clone(), released.clone());
            async move {
                let a = pool.spawn(async move { a_runs.add() });
                let b = pool.spawn(async move { b_runs.add() });
                started.raise();
                // Block this worker thread (not just the task) until released.
                released.wait();
                (a, b)
            }
        });
        // The takeover below races the poll's end, not its start: a takeover before the poll
        // changes nothing (there is no poll to take), and reaching the poll first would cost the
        // model a preemption of its bound.
        started.wait();
        let releaser = loom::thread::spawn({
            let released = released.clone();
            move || released.raise()
        });
        let taken = crew::__loom::take_over(&pool);
        let (a, b) = crew::block_on(parent);
        crew::block_on(a);
        crew::block_on(b);
        releaser.join().unwrap();
        assert_eq!((a_runs.get(), b_runs.get()), (1, 1), "each child ran exactly once");
        let mut counts = None;
        wait_until(|| {
            counts = crew::__loom::idle_counts(&pool);
            counts.is_some()
        });
        assert_eq!(counts, Some((0, 0)), "(unparked, searching) once every running core is parked");
        drop(pool);
        taken
    });
    // The model must reach both cases: a takeover, and none.
    assert!(taken > 0 && taken < executions, "{taken} of {executions} executions took the worker over");
}
