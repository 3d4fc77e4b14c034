//! `crew::scope` returns only after its tasks' ends (`src/scope/count.rs`): on a real
//! one-worker `crew::Pool`, a scoped task borrows a counter from the model's stack and its
//! output writes to it when dropped; once `scope` returns, the model reads the counter with a
//! `Relaxed` load, which loom lets return any value not ordered before it: only the chain
//! from the output's drop, through the task's decrement, to the scope's read of zero makes it
//! see the write. One model detaches the task (the task drops its output itself), the other
//! leaks the handle (the scope drops the output, from the list of slots the task put it in).
//!
//! Planted bugs: `--cfg crew_bug="scope_end_before_drop"` makes the task leave the count
//! before its output is dropped; `--cfg crew_bug="scope_relaxed_end"` makes the decrement and
//! the wait's read `Relaxed` (a wait that can return before the task's writes are visible).
#![cfg(loom)]

use crew_loom_tests::support::model;
use loom::sync::atomic::AtomicUsize;
use loom::sync::atomic::Ordering::Relaxed;

/// Writes 1 to its counter when dropped (a plain store: no synchronisation of its own).
struct SetsOnDrop<'a>(&'a AtomicUsize);

impl Drop for SetsOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(1, Relaxed);
    }
}

#[test]
fn a_detached_tasks_output_is_dropped_before_scope_returns() {
    model(2, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let dropped = AtomicUsize::new(0);
        crew::scope(|s| {
            let dropped = &dropped;
            drop(s.spawn_on(&pool, async move { SetsOnDrop(dropped) }));
        });
        assert_eq!(dropped.load(Relaxed), 1, "scope returned before the task's output was dropped");
        drop(pool);
    });
}

#[test]
fn a_leaked_handles_output_is_dropped_before_scope_returns() {
    model(2, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let dropped = AtomicUsize::new(0);
        crew::scope(|s| {
            let dropped = &dropped;
            std::mem::forget(s.spawn_on(&pool, async move { SetsOnDrop(dropped) }));
        });
        assert_eq!(dropped.load(Relaxed), 1, "scope returned before the leaked handle's output was dropped");
        drop(pool);
    });
}
