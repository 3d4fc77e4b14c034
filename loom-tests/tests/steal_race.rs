//! Stealing racing the owner's local pops, on a real two-worker `crew::Pool`: each task runs
//! exactly once and none is stranded.
//!
//! A parent task spawns two children on its own worker (the first goes to the LIFO slot, the
//! second displaces it into the deque), then blocks its worker thread until the deque child has
//! run: only the other worker, woken by the local push's `notify_one`, can run it, by stealing
//! from the deque. Once the parent returns, its worker's take of the LIFO-slot child races the
//! other worker's rescue of it as the watcher (see `watcher.rs`; under loom the watcher's
//! deadline has always passed, so it may take the child as soon as it holds the role).
//!
//! Under loom, crossbeam-deque is replaced by the mutex-guarded stand-in in `src/sync/deque.rs`
//! (crossbeam's atomics are invisible to loom): this checks crew's use of the queues — picking
//! order, LIFO slot and its hint, batch steals, notifications — not crossbeam's lock-free
//! algorithm.
//!
//! Planted bug: `--cfg crew_bug="no_local_notify"` skips `notify_one` after a push onto the
//! scheduling worker's own queues (`Shared::schedule`, `src/scheduler/cores/shared.rs`): the deque child is then
//! stranded behind its blocked owner while the other worker sleeps.
#![cfg(loom)]

use std::sync::Arc as StdArc;

use crew_loom_tests::support::{model, Count};
use loom::sync::{Arc, Condvar, Mutex};

#[test]
fn a_steal_racing_the_owners_pops_runs_each_task_exactly_once() {
    model(2, || {
        let pool = StdArc::new(crew::Pool::builder().workers(2).build().unwrap());
        let (a_runs, b_runs) = (Count::new(), Count::new());
        let a_done = Arc::new((Mutex::new(false), Condvar::new()));
        let parent = pool.spawn({
            let (pool, a_runs, b_runs, a_done) = (pool.clone(), a_runs.clone(), b_runs.clone(), a_done.clone());
            async move {
                let a = pool.spawn({
                    let a_done = a_done.clone();
                    async move {
                        a_runs.add();
                        *a_done.0.lock().unwrap() = true;
                        a_done.1.notify_one();
                    }
                });
                let b = pool.spawn(async move { b_runs.add() });
                // Block this worker thread (not just the task) until `a` ran elsewhere.
                let mut done = a_done.0.lock().unwrap();
                while !*done {
                    done = a_done.1.wait(done).unwrap();
                }
                (a, b)
            }
        });
        let (a, b) = crew::block_on(parent);
        crew::block_on(a);
        crew::block_on(b);
        assert_eq!((a_runs.get(), b_runs.get()), (1, 1), "each child ran exactly once");
        drop(pool);
    });
}
