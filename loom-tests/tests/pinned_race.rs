//! A `spawn_pinned` onto a worker racing the takeover of that worker (`src/scheduler/cores/pinned.rs`),
//! on a real one-worker `crew::Pool` with one spare core.
//!
//! A task blocks the worker thread inside its poll; the model's main thread takes the worker
//! over (the monitor's `take_over`, called by hand as in `takeover.rs`), and another thread
//! releases the stuck poll and then calls `Pool::spawn_pinned`, whose pick may still see the
//! stuck core running. Every order is explored, among them the one the fix is for: the pick
//! chooses the stuck core, its thread gives the core up (clearing its inbox) when the poll
//! returns, and only then does the push land in that inbox, which no thread reads any more. The
//! push must see the core given up and pass the task on to the injector. The pinned task runs
//! exactly once, and its handle gets its output.
//!
//! Planted bug: `--cfg crew_bug="pinned_stranded"` makes the push look only for shutdown, not for
//! a core given up: the task then stays in a spare's inbox and its handle never completes.
#![cfg(loom)]

use std::sync::Arc as StdArc;

use crew_loom_tests::support::{model_counting_takeovers, Count, Flag};

#[test]
fn a_pinned_spawn_racing_the_takeover_of_its_core_runs_once() {
    let (taken, executions) = model_counting_takeovers(1, || {
        let pool = StdArc::new(crew::Pool::builder().workers(1).max_stuck_threads(1).build().unwrap());
        let (started, released) = (Flag::new(), Flag::new());
        let stuck = pool.spawn({
            let (started, released) = (started.clone(), released.clone());
            async move {
                started.raise();
                // Block this worker thread (not just the task) until released.
                released.wait();
            }
        });
        // The takeover races the poll's end (see `takeover.rs`).
        started.wait();
        let runs = Count::new();
        let spawner = loom::thread::spawn({
            let (pool, released, runs) = (pool.clone(), released.clone(), runs.clone());
            move || {
                released.raise();
                pool.spawn_pinned(move || async move {
                    runs.add();
                    7
                })
            }
        });
        let taken = crew::__loom::take_over(&pool);
        crew::block_on(stuck);
        let pinned = spawner.join().unwrap();
        assert_eq!(crew::block_on(pinned), 7, "the pinned task's output");
        assert_eq!(runs.get(), 1, "the pinned task ran exactly once");
        drop(pool);
        taken
    });
    // The model must reach a takeover (the orders without one are `takeover.rs`'s).
    assert!(taken > 0, "{taken} of {executions} executions took the worker over");
}
