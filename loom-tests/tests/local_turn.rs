//! The monitor's takeover of a worker stuck in a local task's poll in the middle of a turn of
//! local tasks, racing that poll's return, on a real one-worker `crew::Pool` with one spare core
//! (`src/scheduler/local_tasks/local_turn.rs`: the worker runs a turn's tasks after the first outside its
//! context, marking each poll in its progress word as its loops do).
//!
//! A task on the worker spawns three local tasks: `a` and `b`, which count their runs, and, spawned
//! between them, one that blocks its thread until another thread releases it. The worker runs
//! them in one turn: `a` first (its pick), then `b` (scheduled last) and the blocker (the rest of
//! the turn, outside the context). Meanwhile the model's main thread, once the blocker's poll has begun, takes the
//! worker over (the monitor's `take_over`, called by hand: loom has no clock). Every order is
//! explored: the takeover during the poll (the thread gives the core up once the poll returns
//! and finishes its local tasks itself), or after it ended (nothing changes). Each local task runs
//! exactly once, every handle gets its output, the stuck thread gives its core up (no stuck
//! thread is left), and once the pool is idle the counters say no running core is left
//! uncounted.
//!
//! Planted bug: `--cfg crew_bug="local_turn_ignores_mark"` runs the turn on past a poll the
//! monitor marked: the stuck thread then drives the taken core on instead of giving it up.
#![cfg(loom)]

use std::rc::Rc;
use std::sync::Arc as StdArc;

use crew_loom_tests::support::{model_counting_takeovers, wait_until, Count, Flag};

#[test]
fn a_takeover_racing_a_local_polls_return_in_a_turn_runs_each_task_once() {
    let (taken, executions) = model_counting_takeovers(2, || {
        let pool = StdArc::new(crew::Pool::builder().workers(1).max_stuck_threads(1).build().unwrap());
        let (a_runs, b_runs) = (Count::new(), Count::new());
        let (started, released) = (Flag::new(), Flag::new());
        let handles = crew::block_on(pool.spawn({
            let (a_runs, b_runs) = (a_runs.clone(), b_runs.clone());
            let (started, released) = (started.clone(), released.clone());
            async move {
                // `a`, the oldest, begins the turn; `b`, scheduled last, and the blocker follow.
                let a = crew::spawn_local(async move {
                    let _local = Rc::new(());
                    a_runs.add();
                });
                let blocker = crew::spawn_local(async move {
                    let _local = Rc::new(());
                    started.raise();
                    // Block this worker thread (not just the task) until released.
                    released.wait();
                });
                let b = crew::spawn_local(async move {
                    let _local = Rc::new(());
                    b_runs.add();
                });
                (a, blocker, b)
            }
        }));
        started.wait();
        let releaser = loom::thread::spawn({
            let released = released.clone();
            move || released.raise()
        });
        let taken = crew::__loom::take_over(&pool);
        let (a, blocker, b) = handles;
        crew::block_on(blocker);
        crew::block_on(a);
        crew::block_on(b);
        releaser.join().unwrap();
        assert_eq!((a_runs.get(), b_runs.get()), (1, 1), "each local task ran exactly once");
        // Also, a stuck thread gives its core up once its poll returned: none is left.
        let mut counts = None;
        wait_until(|| {
            counts = crew::__loom::idle_counts(&pool);
            counts.is_some() && crew::__loom::stuck_threads(&pool) == 0
        });
        assert_eq!(counts, Some((0, 0)), "(unparked, searching) once every running core is parked");
        drop(pool);
        taken
    });
    // The model must reach both cases: a takeover, and none.
    assert!(taken > 0 && taken < executions, "{taken} of {executions} executions took the worker over");
}
