//! `JoinHandle::cancel` racing the task's completion on a real one-worker `crew::Pool`: the
//! future is dropped exactly once, the output (if the task got to produce it) is dropped
//! exactly once, and nothing leaks (every counter below holds a loom `Arc`, which loom's leak
//! check reports if it outlives the execution).
//!
//! async-task's own state machine uses plain std atomics, invisible to loom: loom interleaves
//! crew's code and the model's threads around async-task's operations, never inside them. What
//! this proves is that crew's wrapper (`TaskFuture`, `JoinHandle`, the pool's queues and
//! shutdown) keeps exactly-once for every order in which cancel, the worker's poll and the
//! pool's shutdown reach async-task — not that async-task's atomics are right.
//!
//! Planted bug: `--cfg crew_bug="cancel_forgets_output"` makes `JoinHandle::cancel`
//! (`src/handle/join.rs`) forget an output it got back instead of returning it.
#![cfg(loom)]

use crew_loom_tests::support::{model, Counted};

#[test]
fn cancel_racing_completion_drops_future_and_output_exactly_once() {
    model(3, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let counted = Counted::new();
        let handle = counted.spawn(&pool);
        let output = crew::block_on(handle.cancel());
        // `None` also when the poll that made the output was running as cancel closed the task:
        // async-task then drops that output itself.
        assert!(output.is_none() || counted.outputs.get() == 1, "Some only if the task made its output");
        drop(output);
        drop(pool);
        counted.assert_each_dropped_once();
    });
}
