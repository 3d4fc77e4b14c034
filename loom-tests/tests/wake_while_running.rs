//! A task woken during its own poll is polled again exactly once, on a real one-worker
//! `crew::Pool`: async-task reports the wake to crew's schedule function with
//! `woken_while_running`, and crew must queue it (to the back of the worker's deque) rather
//! than drop or duplicate it.
//!
//! Planted bug: `--cfg crew_bug="lost_yield"` makes `Core::push` (`src/scheduler/cores/worker.rs`) drop a task
//! woken while running; the task is then cancelled and awaiting it panics.
#![cfg(loom)]

use std::future::poll_fn;
use std::task::{Poll, Waker};

use std::sync::Arc as StdArc;

use crew_loom_tests::support::{model, Count};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

/// A future that wakes itself and returns `Pending` on its first poll (what `yield_now`
/// does), counting its polls.
fn yield_once(polls: Count) -> impl std::future::Future<Output = ()> {
    poll_fn(move |cx| {
        polls.add();
        if polls.get() == 1 {
            cx.waker().wake_by_ref();
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
}

/// The task wakes itself from inside its first poll (what `yield_now` does).
#[test]
fn a_task_that_wakes_itself_while_running_is_polled_exactly_once_more() {
    model(3, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let polls = Count::new();
        let handle = pool.spawn(yield_once(polls.clone()));
        crew::block_on(handle);
        drop(pool);
        assert_eq!(polls.get(), 2, "one poll, one wake, exactly one more poll");
    });
}

/// A foreign thread wakes the task, possibly while its first poll is still running (after the
/// task handed out its waker, before the poll returned), possibly after.
#[test]
fn a_foreign_wake_racing_the_poll_that_armed_it_gives_exactly_one_more_poll() {
    model(2, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let polls = Count::new();
        let waker: Arc<Mutex<Option<Waker>>> = Arc::new(Mutex::new(None));
        let handle = pool.spawn({
            let (polls, waker) = (polls.clone(), waker.clone());
            poll_fn(move |cx| {
                polls.add();
                if polls.get() == 1 {
                    *waker.lock().unwrap() = Some(cx.waker().clone());
                    Poll::Pending
                } else {
                    Poll::Ready(())
                }
            })
        });
        let waking = thread::spawn(move || loop {
            if let Some(waker) = waker.lock().unwrap().take() {
                waker.wake();
                return;
            }
            thread::yield_now();
        });
        crew::block_on(handle);
        waking.join().unwrap();
        drop(pool);
        assert_eq!(polls.get(), 2, "one poll, one wake, exactly one more poll");
    });
}

/// On two workers, a task yields with nothing else queued on its worker: the push wakes nobody
/// (`Pushed::DeferredNext`), and the task is still polled exactly once more, by its own worker
/// or by the other one searching, whichever way their picks and parks interleave.
#[test]
fn a_yield_with_nothing_queued_behind_it_wakes_nobody_and_is_polled_exactly_once_more() {
    model(2, || {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let polls = Count::new();
        crew::block_on(pool.spawn(yield_once(polls.clone())));
        drop(pool);
        assert_eq!(polls.get(), 2, "one poll, one wake, exactly one more poll");
    });
}

/// On two workers, a task spawns a child into its worker's LIFO slot and then yields; the child
/// blocks its worker's thread until the yielder's second poll. The yield, with the child queued
/// ahead of it, must wake the other worker to take it from the deferred list.
///
/// Planted bug: `--cfg crew_bug="hidden_yield_ignores_queue"` makes `Core::push`
/// (`src/scheduler/cores/worker.rs`) ignore the queued child: the yield then wakes nobody.
#[test]
fn a_yield_behind_a_task_that_blocks_its_worker_is_taken_by_the_other_worker() {
    model(2, || {
        let pool = StdArc::new(crew::Pool::builder().workers(2).build().unwrap());
        let polls = Count::new();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let parent = pool.spawn({
            let (pool, polls, gate) = (pool.clone(), polls.clone(), gate.clone());
            async move {
                let blocker = pool.spawn({
                    let gate = gate.clone();
                    async move {
                        // Blocks this worker's thread, not just the task.
                        let mut open = gate.0.lock().unwrap();
                        while !*open {
                            open = gate.1.wait(open).unwrap();
                        }
                    }
                });
                yield_once(polls).await;
                *gate.0.lock().unwrap() = true;
                gate.1.notify_one();
                blocker.await;
            }
        });
        crew::block_on(parent);
        assert_eq!(polls.get(), 2, "the yielder's one more poll opened the gate");
        drop(pool);
    });
}
