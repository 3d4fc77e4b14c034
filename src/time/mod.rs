//! Timers: [`sleep`], [`sleep_until`], [`timeout`], [`timeout_at`] and [`interval`], on
//! crew's I/O driver, or on a paused pool's virtual clock; [`now`], and [`advance`] for a paused
//! clock.
//!
//! Invariants:
//! - No thread per timer: every timer is an entry of the driver's wheel (`driver/timer/`), filed
//!   at its first poll and fired by whichever thread turns the driver (a parked crew worker, a
//!   thread in `block_on`, a busy worker at its tick, a pool's monitor). A timer dropped before
//!   it fires is taken out of the wheel at once, with its waker: it never wakes its task.
//! - **A paused pool's timers** ([`Builder::start_paused`]): a timer made on a thread that works
//!   for or blocks in a paused pool (its tasks, its `block_on`) reads that pool's clock, bound
//!   when the timer is made, and never enters the driver's wheel: it is an entry of the clock's own
//!   (`clock.rs`), fired when the clock reaches its deadline, in deadline order and, at one
//!   instant, in the order the timers were made. Everywhere else, timers and [`now`] read the
//!   real clock.
//! - A deadline that overflows `Instant` (a huge duration) never fires; it is not an error.
//! - A future that finishes is never reported as timed out: [`Timeout`] polls its future before
//!   it looks at the clock, so even a zero-duration timeout returns `Ok` for a ready future.
//! - [`Timeout`] drops its future when it returns its result, timed out or not; polled again
//!   after that it panics with a message (like any finished `async` block). [`Sleep`] stays
//!   ready when polled again; [`Interval::tick`] moves on.
//!
//! [`Builder::start_paused`]: crate::Builder::start_paused

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::driver::Timer;
use pin_project_lite::pin_project;

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

/// Waits until `duration` has passed.
///
/// Fired by crew's driver, which crew's own threads turn (a pool's workers, `crew::block_on`):
/// on another executor it fires while some crew thread waits, and it costs no thread. Made in a
/// paused pool's task or `block_on`, it waits on that pool's clock (see the module docs).
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let start = Instant::now();
/// crew::block_on(crew::spawn(crew::time::sleep(Duration::from_millis(10))));
/// assert!(start.elapsed() >= Duration::from_millis(10));
/// ```
pub fn sleep(duration: Duration) -> Sleep {
    match current_paused_clock() {
        None => Sleep::real(Instant::now().checked_add(duration)),
        Some(clock) => {
            let deadline = clock.now().checked_add(duration);
            Sleep::paused(clock, deadline)
        }
    }
}

/// Waits until `deadline`. A deadline in the past completes at the first poll.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let deadline = Instant::now() + Duration::from_millis(5);
/// crew::block_on(crew::time::sleep_until(deadline));
/// assert!(Instant::now() >= deadline);
/// ```
pub fn sleep_until(deadline: Instant) -> Sleep {
    match current_paused_clock() {
        None => Sleep::real(Some(deadline)),
        Some(clock) => Sleep::paused(clock, Some(deadline)),
    }
}

/// The future returned by [`sleep`] and [`sleep_until`]. Dropping it cancels the timer.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let mut nap = crew::time::sleep(Duration::from_secs(3600));
/// // Move the deadline forward: the timer is re-registered, nothing leaks.
/// nap.reset(Instant::now());
/// crew::block_on(nap);
/// ```
#[derive(Debug)]
pub struct Sleep {
    timer: SleepTimer,
    deadline: Option<Instant>,
    fired: bool,
}

/// Where a [`Sleep`]'s timer is: the driver's wheel, or a paused pool's clock.
#[derive(Debug)]
enum SleepTimer {
    Real(Timer),
    Paused(PausedTimer),
}

/// A timer of a paused pool's clock: its number there, and the deadline its entry is filed
/// under, if it has one.
#[derive(Debug)]
struct PausedTimer {
    clock: ClockRef,
    number: u64,
    filed: Option<Instant>,
}

impl Drop for PausedTimer {
    fn drop(&mut self) {
        self.clock.cancel_timer(self.number, &mut self.filed);
    }
}

impl Sleep {
    fn real(deadline: Option<Instant>) -> Sleep {
        let timer = match deadline {
            Some(deadline) => Timer::at(deadline),
            None => Timer::never(),
        };
        Sleep { timer: SleepTimer::Real(timer), deadline, fired: false }
    }

    fn paused(clock: ClockRef, deadline: Option<Instant>) -> Sleep {
        let number = clock.timer_made();
        Sleep { timer: SleepTimer::Paused(PausedTimer { clock, number, filed: None }), deadline, fired: false }
    }

    /// The instant this sleep completes at; `None` if its duration overflowed `Instant` (it
    /// never completes).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// assert!(crew::time::sleep(Duration::from_secs(1)).deadline().is_some());
    /// assert!(crew::time::sleep(Duration::MAX).deadline().is_none());
    /// ```
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Makes this sleep complete at `deadline` instead, even if it already completed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let mut nap = crew::time::sleep(Duration::ZERO);
    /// crew::block_on(&mut nap);
    /// let again = Instant::now() + Duration::from_millis(2);
    /// nap.reset(again);
    /// crew::block_on(&mut nap);
    /// assert!(Instant::now() >= again);
    /// ```
    pub fn reset(&mut self, deadline: Instant) {
        self.set(Some(deadline));
    }

    /// Makes this sleep complete at `deadline`, or never.
    fn set(&mut self, deadline: Option<Instant>) {
        match &mut self.timer {
            SleepTimer::Real(timer) => timer.set(deadline),
            // Out of the clock's map at once: the clock never jumps to a deadline nobody waits for.
            SleepTimer::Paused(timer) => timer.clock.cancel_timer(timer.number, &mut timer.filed),
        }
        self.deadline = deadline;
        self.fired = false;
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.fired {
            return Poll::Ready(());
        }
        let this = &mut *self;
        let fired = match &mut this.timer {
            SleepTimer::Real(timer) => timer.poll(cx).is_ready(),
            SleepTimer::Paused(timer) => match this.deadline {
                Some(deadline) => timer.clock.poll_timer(deadline, timer.number, &mut timer.filed, cx),
                None => false,
            },
        };
        if fired {
            this.fired = true;
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Runs `future` for at most `duration`: `Ok` with its output if it finishes first, else
/// `Err(`[`Elapsed`]`)`. Either way the future is dropped when the result is returned (not
/// later, with the `Timeout`), so whatever it holds is released by then.
///
/// The future is polled before the clock is read, so a future that is ready at once wins even
/// against `Duration::ZERO`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use crew::time::{sleep, timeout};
///
/// crew::block_on(async {
///     assert_eq!(timeout(Duration::from_secs(5), async { 7 }).await, Ok(7));
///     let err = timeout(Duration::from_millis(5), sleep(Duration::from_secs(3600))).await.unwrap_err();
///     assert_eq!(err.to_string(), "crew::time::timeout: the future did not finish within 5ms");
/// });
/// ```
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout { future: Some(future), sleep: sleep(duration), limit: Limit::Duration(duration) }
}

/// Runs `future` until `deadline` at the latest: `Ok` with its output if it finishes first,
/// else `Err(`[`Elapsed`]`)`; the future is dropped when the result is returned, as in
/// [`timeout`].
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let deadline = Instant::now() + Duration::from_millis(5);
/// let result = crew::block_on(crew::time::timeout_at(deadline, std::future::pending::<()>()));
/// assert!(result.is_err());
/// ```
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout { future: Some(future), sleep: sleep_until(deadline), limit: Limit::Deadline }
}

pin_project! {
    /// The future returned by [`timeout`] and [`timeout_at`].
    ///
    /// # Panics
    ///
    /// If polled again after it returned its result (like any finished `async` block).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let limited: crew::time::Timeout<_> = crew::time::timeout(Duration::from_secs(1), async { "done" });
    /// assert_eq!(crew::block_on(limited), Ok("done"));
    /// ```
    #[derive(Debug)]
    pub struct Timeout<F> {
        // `None` once the result was returned: the future is dropped then.
        #[pin]
        future: Option<F>,
        sleep: Sleep,
        limit: Limit,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    Duration(Duration),
    Deadline,
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let Some(future) = this.future.as_mut().as_pin_mut() else {
            panic!("crew::time::Timeout polled after it returned its result");
        };
        let result = match future.poll(cx) {
            Poll::Ready(output) => Ok(output),
            Poll::Pending => match Pin::new(this.sleep).poll(cx) {
                Poll::Ready(()) => Err(Elapsed { limit: *this.limit }),
                Poll::Pending => return Poll::Pending,
            },
        };
        this.future.set(None);
        Poll::Ready(result)
    }
}

/// The error of a [`timeout`] whose future did not finish in time.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let err = crew::block_on(crew::time::timeout(Duration::ZERO, std::future::pending::<()>())).unwrap_err();
/// assert_eq!(err.limit(), Some(Duration::ZERO));
/// let err = crew::block_on(crew::time::timeout_at(Instant::now(), std::future::pending::<()>())).unwrap_err();
/// assert_eq!(err.to_string(), "crew::time::timeout_at: the future did not finish before its deadline");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed {
    limit: Limit,
}

impl Elapsed {
    /// The duration given to [`timeout`]; `None` for [`timeout_at`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let err = crew::block_on(crew::time::timeout(Duration::from_millis(1), std::future::pending::<()>()));
    /// assert_eq!(err.unwrap_err().limit(), Some(Duration::from_millis(1)));
    /// ```
    pub fn limit(&self) -> Option<Duration> {
        match self.limit {
            Limit::Duration(duration) => Some(duration),
            Limit::Deadline => None,
        }
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.limit {
            Limit::Duration(duration) => {
                write!(f, "crew::time::timeout: the future did not finish within {duration:?}")
            }
            Limit::Deadline => f.write_str("crew::time::timeout_at: the future did not finish before its deadline"),
        }
    }
}

impl Error for Elapsed {}

/// A stream of ticks every `period`, the first one at once.
///
/// # Panics
///
/// If `period` is zero (a zero period would tick in a busy loop); the message names the value.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let start = Instant::now();
/// crew::block_on(async {
///     let mut every = crew::time::interval(Duration::from_millis(2));
///     for _ in 0..3 {
///         every.tick().await;
///     }
/// });
/// // Ticks at 0, 2 and 4 ms.
/// assert!(start.elapsed() >= Duration::from_millis(4));
/// ```
pub fn interval(period: Duration) -> Interval {
    interval_at(now(), period)
}

/// A stream of ticks every `period`, the first one at `start`.
///
/// # Panics
///
/// If `period` is zero; the message names the value.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let start = Instant::now() + Duration::from_millis(3);
/// let mut every = crew::time::interval_at(start, Duration::from_secs(1));
/// assert_eq!(crew::block_on(every.tick()), start);
/// ```
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(!period.is_zero(), "crew::time::interval: the period must be greater than zero, got {period:?}");
    Interval { sleep: sleep_until(start), next: Some(start), period }
}

/// Ticks at a fixed period; made by [`interval`] and [`interval_at`].
///
/// Tick `n` is due at `start + n × period`. A tick that is late (the task was busy) completes
/// at once, and the following ticks keep the original schedule: after a stall, missed ticks
/// complete back to back until the interval has caught up (tokio's default, "burst").
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let mut every = crew::time::interval(Duration::from_millis(1));
/// assert_eq!(every.period(), Duration::from_millis(1));
/// let first = crew::block_on(every.tick());
/// let second = crew::block_on(every.tick());
/// assert_eq!(second - first, Duration::from_millis(1));
/// ```
#[derive(Debug)]
pub struct Interval {
    sleep: Sleep,
    /// The deadline of the next tick; `None` once it overflowed `Instant`.
    next: Option<Instant>,
    period: Duration,
}

impl Interval {
    /// Waits for the next tick and returns the instant it was due at.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let mut every = crew::time::interval(Duration::from_millis(1));
    /// crew::block_on(async {
    ///     let due = every.tick().await;
    ///     assert!(due <= Instant::now());
    /// });
    /// ```
    pub fn tick(&mut self) -> impl Future<Output = Instant> + '_ {
        std::future::poll_fn(move |cx| self.poll_tick(cx))
    }

    /// Polls for the next tick: `Ready` with the instant it was due at, once it is due.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let mut every = crew::time::interval(Duration::from_secs(60));
    /// let first = crew::block_on(std::future::poll_fn(|cx| every.poll_tick(cx)));
    /// assert_eq!(every.tick_due(), Some(first + Duration::from_secs(60)));
    /// ```
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        let Some(due) = self.next else {
            // The schedule ran past the end of `Instant`: no more ticks.
            return Poll::Pending;
        };
        match Pin::new(&mut self.sleep).poll(cx) {
            Poll::Ready(()) => {
                self.next = due.checked_add(self.period);
                self.sleep.set(self.next);
                Poll::Ready(due)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// The instant the next tick is due at.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let start = Instant::now();
    /// let every = crew::time::interval_at(start, Duration::from_secs(1));
    /// assert_eq!(every.tick_due(), Some(start));
    /// ```
    pub fn tick_due(&self) -> Option<Instant> {
        self.next
    }

    /// The period between ticks.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// assert_eq!(crew::time::interval(Duration::from_secs(2)).period(), Duration::from_secs(2));
    /// ```
    pub fn period(&self) -> Duration {
        self.period
    }
}
