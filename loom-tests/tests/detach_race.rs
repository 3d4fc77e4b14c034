//! `JoinHandle::detach` racing the task's completion and the pool's drop, on a real one-worker
//! `crew::Pool`: the future is dropped exactly once, an output the task produced is dropped
//! exactly once by nobody-is-waiting cleanup, and nothing leaks (loom's `Arc` leak check).
//! As in `cancel_race.rs`, async-task's internals are invisible to loom.
//!
//! Planted bug: `--cfg crew_bug="detach_forgets"` makes `JoinHandle::detach` (`src/handle/join.rs`)
//! forget async-task's handle instead of detaching it.
#![cfg(loom)]

use crew_loom_tests::support::{model, Counted};

#[test]
fn detach_racing_completion_drops_future_and_output_exactly_once() {
    model(3, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let counted = Counted::new();
        counted.spawn(&pool).detach();
        drop(pool);
        counted.assert_each_dropped_once();
    });
}
