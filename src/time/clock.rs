//! The clock timers read: [`now`], and [`advance`] for a paused pool's clock; the public face of
//! `crate::clock` (a paused pool's virtual clock and its timers).
//!
//! Invariants:
//! - [`now`] reads the clock a timer made on this thread would read: a paused pool's in its tasks
//!   and its `block_on`, the real clock everywhere else.
//! - An [`Advance`] holds the paused clock at or before its target while it is awaited, and is
//!   ready once the clock reads the target (`ClockRef::poll_advance`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::clock::ClockRef;
use crate::scheduler::current_paused_clock;

/// The current instant: the real clock's (`Instant::now()`), except in a paused pool's tasks
/// and its `block_on` ([`Builder::start_paused`](crate::Builder::start_paused)), where it is
/// that pool's virtual clock, which every crew timer made there reads.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
/// pool.block_on(async {
///     let start = crew::time::now();
///     crew::time::sleep(Duration::from_secs(90)).await;
///     assert_eq!(crew::time::now() - start, Duration::from_secs(90));
/// });
/// ```
pub fn now() -> Instant {
    match current_paused_clock() {
        Some(clock) => clock.now(),
        None => Instant::now(),
    }
}

/// Moves a paused pool's clock forward by `duration`, firing every timer due by then in
/// deadline order and letting the tasks they wake run before the clock moves on (the pool
/// must fall idle between two deadlines, see [`Builder::start_paused`]); completes once the
/// clock reads `now() + duration`, as of the call. Meanwhile the clock moves no further,
/// even while the pool is idle.
///
/// # Panics
///
/// Outside a paused pool's tasks and `block_on`, or if `now() + duration` overflows
/// `Instant`; the message says which.
///
/// [`Builder::start_paused`]: crate::Builder::start_paused
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let pool = crew::Pool::builder().workers(2).start_paused(true).build().unwrap();
/// pool.block_on(async {
///     let fired = Arc::new(AtomicUsize::new(0));
///     for minutes in [1, 2, 10] {
///         let fired = fired.clone();
///         crew::spawn(async move {
///             crew::time::sleep(Duration::from_secs(60 * minutes)).await;
///             fired.fetch_add(1, Ordering::SeqCst);
///         })
///         .detach();
///     }
///     crew::time::advance(Duration::from_secs(150)).await;
///     assert_eq!(fired.load(Ordering::SeqCst), 2, "the 1- and 2-minute sleeps, not the 10-minute one");
/// });
/// ```
#[track_caller]
pub fn advance(duration: Duration) -> Advance {
    let Some(clock) = current_paused_clock() else {
        panic!(
            "crew::time::advance({duration:?}) was called outside a paused pool: only the tasks and the block_on of \
             a pool built with Builder::start_paused(true) have a clock it can move"
        );
    };
    let Some(target) = clock.now().checked_add(duration) else {
        panic!("crew::time::advance({duration:?}): the paused clock's now + {duration:?} overflows Instant");
    };
    Advance { clock, target }
}

/// The future returned by [`advance`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
/// pool.block_on(async {
///     let start = crew::time::now();
///     let step: crew::time::Advance = crew::time::advance(Duration::from_millis(250));
///     step.await;
///     assert_eq!(crew::time::now() - start, Duration::from_millis(250));
/// });
/// ```
#[derive(Debug)]
#[must_use = "the clock moves only while the advance is awaited"]
pub struct Advance {
    clock: ClockRef,
    target: Instant,
}

impl Future for Advance {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.clock.poll_advance(self.target, cx)
    }
}
