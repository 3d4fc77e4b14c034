//! Dropping a real `crew::Pool` (one worker) right after a spawn, while a foreign thread wakes
//! one of its pending tasks: every task ends exactly once (its future is dropped exactly once,
//! after at most the polls it was owed) and before `Pool::drop` returns, and every thread exits
//! (`Pool::drop` joins the worker; a thread left blocked is reported by loom as a deadlock).
//!
//! Planted bug: `--cfg crew_bug="no_shutdown_recheck"` removes `push_remote`'s re-check of the
//! shutdown flag after its push (`src/scheduler/cores/shared.rs`): a wake that pushes after shutdown drained the
//! injector leaves its task there for good (a reference cycle through the pool), so the
//! pending task's future is never dropped. `--cfg crew_bug="no_late_reap"` keeps the re-check
//! but skips what follows once the pool is reaped: a wake whose push lands after shutdown's last
//! drain leaves its task in the injector for good, where it must hand it to a reaper thread.
//! (Neither drops a task inside the wake: see `src/scheduler/cores/shutdown.rs`.)
//! `--cfg crew_bug="drop_skips_live_wait"` keeps both, but the drop returns without waiting for
//! the pool's futures to be gone: a task handed to a reaper thread may still be alive when the
//! model, once the drop returned and the waking thread is joined, counts its drops.
#![cfg(loom)]

use std::future::poll_fn;
use std::task::{Poll, Waker};

use crew_loom_tests::support::{model, Count, Dropped};
use loom::sync::{Arc, Mutex};
use loom::thread;

#[test]
fn shutdown_racing_a_spawn_and_a_foreign_wake_ends_every_task_exactly_once() {
    model(3, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        // `pending`: parks its waker for the foreign thread, then completes when woken.
        let (pending_polls, pending_drops) = (Count::new(), Count::new());
        let waker: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        pool.spawn({
            let (polls, waker) = (pending_polls.clone(), waker.clone());
            let guard = Dropped(pending_drops.clone());
            poll_fn(move |cx| {
                let _ = &guard;
                polls.add();
                if polls.get() == 1 {
                    *waker.lock().unwrap() = Some(cx.waker().clone());
                    Poll::Pending
                } else {
                    Poll::Ready(())
                }
            })
        })
        .detach();
        let waking = {
            let pending_drops = pending_drops.clone();
            thread::spawn(move || loop {
                if let Some(waker) = waker.lock().unwrap().take() {
                    waker.wake();
                    return;
                }
                if pending_drops.get() == 1 {
                    return; // dropped by shutdown before it ever ran
                }
                thread::yield_now();
            })
        };
        // `late`: spawned just before the drop, so its push and first poll race the shutdown.
        let (late_runs, late_drops) = (Count::new(), Count::new());
        pool.spawn({
            let guard = Dropped(late_drops.clone());
            let runs = late_runs.clone();
            async move {
                let _guard = guard;
                runs.add();
            }
        })
        .detach();
        drop(pool);
        waking.join().unwrap();
        // A wake that pushed after the drop's last drain handed the task to a reaper thread,
        // which the drop waited for.
        assert_eq!(pending_drops.get(), 1, "the pending task ended exactly once, before the drop returned");
        assert!(pending_polls.get() <= 2);
        assert_eq!(late_drops.get(), 1, "the late task ended exactly once");
        assert!(late_runs.get() <= 1);
    });
}
