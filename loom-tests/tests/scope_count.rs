//! `crew::scope` returns only after its tasks' ends (`src/scope/count.rs`): on a real
//! one-worker `crew::Pool`, a scoped task borrows a counter from the model's stack and its
//! output writes to it when dropped; once `scope` returns, the model reads the counter with a
//! `Relaxed` load, which loom lets return any value not ordered before it: only the chain
//! from the output's drop, through the task's decrement, to the scope's read of zero makes it
//! see the write. One model detaches the task (the task drops its output itself), the other
//! leaks the handle (the scope drops the output, from the list of slots the task put it in).
//!
//! A third model leaks a handle whose output, dropped by the scope's own wait, spawns one more
//! task into the scope: the scope must wait for that task too.
//!
//! A fourth drops the pool inside the scope while one scoped task wakes another from the
//! worker: in some executions the woken task is in the worker's LIFO slot when the worker's
//! loop exits for the shutdown, and the slot's drop must tell the scope's count that the task
//! is gone (`src/scheduler/cores/lifo.rs`), or the scope waits forever (loom reports the
//! deadlock).
//!
//! Planted bugs: `--cfg crew_bug="scope_end_before_drop"` makes the task leave the count
//! before its output is dropped; `--cfg crew_bug="scope_relaxed_end"` makes the decrement and
//! the wait's read `Relaxed` (a wait that can return before the task's writes are visible);
//! `--cfg crew_bug="scope_wait_once"` makes the scope wait for the count once, then dispose of
//! the leaked handles' outputs and return (a task their drops spawn outlives the scope);
//! `--cfg crew_bug="lifo_raw_drop"` drops a task left in a LIFO slot as async-task's raw
//! `Runnable`, which no scope hears of.
#![cfg(loom)]

use std::future::poll_fn;
use std::task::{Poll, Waker};

use crew::{Pool, Scope};
use crew_loom_tests::support::model;
use loom::sync::atomic::AtomicUsize;
use loom::sync::atomic::Ordering::Relaxed;
use loom::sync::Mutex;

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

/// Spawns, when dropped, a task into its scope on `pool` that writes 1 to `dropped`.
struct SpawnsOnDrop<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    pool: &'env Pool,
    dropped: &'env AtomicUsize,
}

impl Drop for SpawnsOnDrop<'_, '_> {
    fn drop(&mut self) {
        let dropped = self.dropped;
        drop(self.scope.spawn_on(self.pool, async move { dropped.store(1, Relaxed) }));
    }
}

#[test]
fn a_task_spawned_by_an_output_the_scope_drops_ends_before_scope_returns() {
    model(2, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let dropped = AtomicUsize::new(0);
        crew::scope(|s| {
            let (pool, dropped) = (&pool, &dropped);
            std::mem::forget(s.spawn_on(pool, async move { SpawnsOnDrop { scope: s, pool, dropped } }));
        });
        assert_eq!(dropped.load(Relaxed), 1, "scope returned before the task its wait's drop spawned ended");
        drop(pool);
    });
}

#[test]
fn a_scoped_task_in_the_lifo_slot_at_shutdown_ends_before_scope_returns() {
    model(2, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let dropped = AtomicUsize::new(0);
        let waker: Mutex<Option<Waker>> = Mutex::new(None);
        crew::scope(|s| {
            let (dropped, waker) = (&dropped, &waker);
            // Runs first (the injector is FIFO and there is one worker): waits for a wake.
            let guard = SetsOnDrop(dropped);
            drop(s.spawn_on(&pool, async move {
                let _guard = guard;
                let mut polled = false;
                poll_fn(|cx| {
                    if std::mem::replace(&mut polled, true) {
                        return Poll::Ready(());
                    }
                    *waker.lock().unwrap() = Some(cx.waker().clone());
                    Poll::Pending
                })
                .await;
            }));
            // Wakes the first from the worker: into the worker's LIFO slot.
            drop(s.spawn_on(&pool, async move {
                if let Some(waker) = waker.lock().unwrap().take() {
                    waker.wake();
                }
            }));
            drop(pool);
        });
        assert_eq!(dropped.load(Relaxed), 1, "scope returned before the task in the LIFO slot was dropped");
    });
}
