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

use crew_loom_tests::support::{model, Count};
use loom::sync::{Arc, Mutex};
use loom::thread;

/// The task wakes itself from inside its first poll (what `yield_now` does).
#[test]
fn a_task_that_wakes_itself_while_running_is_polled_exactly_once_more() {
    model(3, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let polls = Count::new();
        let handle = pool.spawn({
            let polls = polls.clone();
            poll_fn(move |cx| {
                polls.add();
                if polls.get() == 1 {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                } else {
                    Poll::Ready(())
                }
            })
        });
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
