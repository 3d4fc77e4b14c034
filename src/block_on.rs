//! [`block_on`]: drive a future to completion on the calling thread.
//!
//! Invariants:
//! - The thread sleeps on a crossbeam-utils `Parker` between polls and is polled again only
//!   after its waker was woken (a wake during a poll leaves a token, so it is never lost).
//! - Each thread reuses one parker and waker; a nested `block_on` (inside a future that an outer
//!   `block_on` polls) gets a fresh pair, so the two never steal each other's wakes.
//! - Called on a crew worker thread, it first hands that worker's core (its LIFO slot and
//!   deque) to a fresh thread, which keeps running the pool; the calling thread then blocks like
//!   any other. Nested `block_on(spawn(.. block_on(spawn(..))))` therefore never deadlocks and
//!   never strands a queued task, at the cost of one thread start per call on a worker.

use std::cell::RefCell;
use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use crate::driver::{DrivingParker as Parker, DrivingUnparker as Unparker};
use crate::identity::Trace;
use crate::sync::thread_local;

/// Runs `future` to completion on the current thread, parking the thread while it waits.
///
/// Works on any thread: `main`, a foreign thread, or a crew worker (whose queued tasks are then
/// handed to a replacement worker thread first, so nothing waits behind the blocked thread).
///
/// # Examples
///
/// ```
/// let sum = crew::block_on(async {
///     let a = crew::spawn(async { 1 });
///     let b = crew::spawn(async { 2 });
///     a.await + b.await
/// });
/// assert_eq!(sum, 3);
/// ```
///
/// # Panics
///
/// On a crew worker thread, if the replacement worker thread cannot start (the message names
/// the OS error and the caller's location). A panic of `future` itself passes through.
#[track_caller]
pub fn block_on<F: Future>(future: F) -> F::Output {
    crate::scheduler::hand_off_core();
    // In a paused pool (this thread works for it or blocks in it), this future's polls count as
    // the pool's work. Inside a paused pool's task, the task's unit of work goes to the first
    // poll, so that the clock moves only once this thread blocks
    // (`scheduler/cores/task_run.rs`).
    let clock = crate::scheduler::current_paused_clock();
    let blocked = crate::scheduler::block_while_held(clock.as_ref());
    let output = match clock {
        Some(clock) => {
            let future = pin!(future);
            let counted = if blocked.handed {
                crate::clock::CountPolls::with_unit(future, clock)
            } else {
                crate::clock::CountPolls::new(future, clock)
            };
            block_on_located(counted, std::panic::Location::caller())
        }
        None => block_on_located(future, std::panic::Location::caller()),
    };
    drop(blocked);
    output
}

/// [`block_on`] once the core is handed off, called at `location`.
fn block_on_located<F: Future>(future: F, location: &'static std::panic::Location<'static>) -> F::Output {
    // The `tokio` feature: the caller holds a tokio context while it blocks, unless it has one.
    #[cfg(feature = "tokio")]
    return crate::tokio_context::within_unless_entered(crate::tokio_context::no_pool, || {
        block_on_here(future, location)
    });
    #[cfg(not(feature = "tokio"))]
    block_on_here(future, location)
}

/// [`block_on`] on this thread, as it is, called at `location`.
fn block_on_here<F: Future>(future: F, location: &'static std::panic::Location<'static>) -> F::Output {
    let trace = Trace::block_on(location);
    let mut future = pin!(future);
    let _in_block_on = crate::scheduler::enter_block_on();
    // The thread's local tasks run between the future's polls (`scheduler/local_tasks/local_drive.rs`), unless
    // this `block_on` is inside one of their polls.
    let mut poll = |future: Pin<&mut F>, cx: &mut Context<'_>| {
        let _entered = trace.enter();
        let _polling = crate::identity::current::enter_block_on();
        trace.poll(cx, |cx| future.poll(cx))
    };
    if let Some(output) = crate::scheduler::drive_local(future.as_mut(), &mut poll) {
        return output;
    }
    thread_local! {
        static CACHE: RefCell<(Parker, Waker)> = RefCell::new(parker_and_waker());
    }
    let cached = CACHE.try_with(|cache| match cache.try_borrow_mut() {
        Ok(pair) => Some(drive(future.as_mut(), &trace, &pair.0, &pair.1)),
        Err(_) => None,
    });
    match cached {
        Ok(Some(output)) => output,
        // Nested inside another block_on on this thread, or during thread-local teardown.
        _ => {
            let (parker, waker) = parker_and_waker();
            drive(future, &trace, &parker, &waker)
        }
    }
}

/// Polls `future` inside `trace`'s span until it is ready, parking between polls.
fn drive<T>(mut future: Pin<&mut impl Future<Output = T>>, trace: &Trace, parker: &Parker, waker: &Waker) -> T {
    let mut cx = Context::from_waker(waker);
    loop {
        let polled = {
            let _entered = trace.enter();
            let _polling = crate::identity::current::enter_block_on();
            trace.poll(&mut cx, |cx| future.as_mut().poll(cx))
        };
        if let Poll::Ready(output) = polled {
            return output;
        }
        parker.park();
    }
}

struct Unpark(Unparker);

impl Wake for Unpark {
    fn wake(self: StdArc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &StdArc<Self>) {
        self.0.unpark();
    }
}

fn parker_and_waker() -> (Parker, Waker) {
    let parker = Parker::new();
    let waker = Waker::from(StdArc::new(Unpark(parker.unparker().clone())));
    (parker, waker)
}
