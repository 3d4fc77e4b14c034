//! [`Interval`]: ticks at a fixed period on one [`Sleep`], reset at each tick.
//!
//! Invariants:
//! - Tick `n` is due at `start + n × period`, and a tick yields the instant it was due at,
//!   never the instant it was polled at; after a stall the missed ticks are yielded back to
//!   back (tokio's "burst").
//! - `next` is the deadline of the interval's sleep; `None` once the schedule ran past the end
//!   of `Instant`, and no tick comes after that.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::clock::now;
use super::sleep::{sleep_until, Sleep};

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

