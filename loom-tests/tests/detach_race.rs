//! `JoinHandle::detach` racing the task's completion and the pool's drop, on a real one-worker
//! `crew::Pool`: the future is dropped exactly once, an output the task produced is dropped
//! exactly once by nobody-is-waiting cleanup, and nothing leaks (loom's `Arc` leak check).
//! As in `cancel_race.rs`, async-task's internals are invisible to loom.
//!
//! Planted bug: `--cfg crew_bug="detach_forgets"` makes `JoinHandle::detach` (`src/join.rs`)
//! forget async-task's handle instead of detaching it.
#![cfg(loom)]

use crew_loom_tests::support::{model, Count, Dropped};

#[test]
fn detach_racing_completion_drops_future_and_output_exactly_once() {
    model(3, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let (future_drops, outputs, output_drops) = (Count::new(), Count::new(), Count::new());
        pool.spawn({
            let guard = Dropped(future_drops.clone());
            let (outputs, output_drops) = (outputs.clone(), output_drops.clone());
            async move {
                let _guard = guard;
                outputs.add();
                Dropped(output_drops)
            }
        })
        .detach();
        drop(pool);
        assert_eq!(future_drops.get(), 1, "the future is dropped exactly once");
        assert_eq!(output_drops.get(), outputs.get(), "an output made is dropped exactly once");
    });
}
