//! [`Sleep`]: one timer, on crew's driver or on a paused pool's clock; [`sleep`] and
//! [`sleep_until`] make it, and `Timeout` and `Interval` are built on it.
//!
//! Invariants:
//! - A sleep's clock is bound when it is made (a paused pool's, or the real one) and never
//!   changes; [`Sleep::clock_now`] reads that clock, so an interval built on a sleep measures
//!   lateness where its deadlines are.
//! - Its timer is filed at its first poll, not before, and taken out (with its waker) when the
//!   sleep is dropped or reset: a reset or dropped timer never wakes its task, and a paused clock
//!   never jumps to a deadline nobody waits for.
//! - Once fired it stays ready until [`Sleep::reset`] (or `set`) gives it a new deadline.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::clock::ClockRef;
use crate::driver::Timer;
use crate::scheduler::current_paused_clock;

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

    /// The current instant on the clock this sleep reads: its paused pool's, or the real one.
    pub(super) fn clock_now(&self) -> Instant {
        match &self.timer {
            SleepTimer::Real(_) => Instant::now(),
            SleepTimer::Paused(timer) => timer.clock.now(),
        }
    }

    /// Makes this sleep complete at `deadline`, or never.
    pub(super) fn set(&mut self, deadline: Option<Instant>) {
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
        // A sleep already due spends a unit of the running task's budget (`identity/current.rs`).
        crate::identity::current::budgeted(cx, |cx| self.poll_unbudgeted(cx))
    }
}

impl Sleep {
    /// The poll, outside the budget: for `Timeout`, whose deadline must fire even when its
    /// future spends the budget (as tokio's).
    pub(super) fn poll_unbudgeted(&mut self, cx: &mut Context<'_>) -> Poll<()> {
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
