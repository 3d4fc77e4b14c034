//! [`Interval`]: ticks at a fixed period on one [`Sleep`], reset at each tick; what a late tick
//! does to the schedule ([`MissedTickBehavior`], tokio's three); the ticks as a `Stream`.
//!
//! Invariants:
//! - The next tick is due at the deadline of the interval's one sleep; `None` there means the
//!   schedule ran past the end of `Instant`, and no tick comes until a reset. A tick yields the
//!   instant it was due at, never the instant it was polled at.
//! - Lateness is read on the clock the interval's sleep reads (a paused pool's, bound when the
//!   interval was made, or the real one; `Sleep::clock_now`), at the poll that yields the tick.
//! - A tick at most [`LATE_TOLERANCE`] (5 ms, tokio's) late is on time, whatever the behaviour:
//!   the next one is due one period after it, so a timer's usual small lateness never moves the
//!   schedule. Beyond that the behaviour picks the next deadline from the late tick's `due` and
//!   the clock's `now`: `Burst` `due + period`; `Delay` `now + period`; `Skip` the first
//!   `due + n × period` (n ≥ 1) strictly after `now`.
//! - A reset sets the next deadline only: the period and the behaviour stay, and the ticks
//!   missed before it are forgotten.
//! - As a `Stream`, an interval never ends: `poll_next` is `poll_tick` with its instant in
//!   `Some`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_lite::Stream;

use super::clock::now;
use super::sleep::{sleep_until, Sleep};

/// How late a tick may be and still count as on time, whatever the [`MissedTickBehavior`]:
/// tokio's tolerance. A timer fires a little after its deadline (the wheel's resolution, the
/// time to wake a thread); without it, `Delay` would drift by that much at every tick.
const LATE_TOLERANCE: Duration = Duration::from_millis(5);

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
    Interval { sleep: sleep_until(start), period, missed_tick_behavior: MissedTickBehavior::default() }
}

/// What an [`Interval`] does after a tick it yields late (the task was busy elsewhere, or did not
/// call [`Interval::tick`] for a while): tokio's `MissedTickBehavior`, with its three strategies.
///
/// A tick is late when it is yielded more than 5 ms after it was due (tokio's tolerance: timers
/// fire a little late, and that must not move the schedule). The late tick itself is yielded at
/// once, with the instant it was due at; the behaviour decides when the ticks after it are due.
/// Take a period of 10 s, ticks due at 0 s, 10 s, 20 s, ..., and a task that, after the tick at
/// 0 s, comes back at 35 s:
///
/// | behaviour | ticks yielded (due at) | yielded at          |
/// |-----------|------------------------|---------------------|
/// | `Burst`   | 10, 20, 30, 40, 50     | 35, 35, 35, 40, 50  |
/// | `Delay`   | 10, 45, 55             | 35, 45, 55          |
/// | `Skip`    | 10, 40, 50             | 35, 40, 50          |
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use crew::time::{interval, sleep, MissedTickBehavior};
///
/// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
/// pool.block_on(async {
///     let start = crew::time::now();
///     let mut every = interval(Duration::from_secs(10));
///     every.set_missed_tick_behavior(MissedTickBehavior::Skip);
///     every.tick().await;
///     sleep(Duration::from_secs(35)).await;
///     // The tick due at 10 s comes at once; the ones at 20 s and 30 s are skipped.
///     assert_eq!(every.tick().await - start, Duration::from_secs(10));
///     assert_eq!(every.tick().await - start, Duration::from_secs(40));
/// });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MissedTickBehavior {
    /// Ticks as fast as possible until caught up: the schedule does not move, and every missed
    /// tick is yielded, back to back, each with the instant it was due at. The default.
    #[default]
    Burst,
    /// Ticks `period` after the late tick was yielded: the schedule moves by the delay, and the
    /// ticks after it keep the period between them.
    Delay,
    /// Skips the missed ticks: the next tick is the first one of the original schedule after the
    /// late tick was yielded (due at the next multiple of the period from the start, unless a
    /// reset moved the schedule).
    Skip,
}

impl MissedTickBehavior {
    /// The deadline of the tick after one due at `due` and yielded at `now`; `None` past the end
    /// of `Instant`.
    fn next_after(self, due: Instant, now: Instant, period: Duration) -> Option<Instant> {
        let late = now.saturating_duration_since(due);
        if late <= LATE_TOLERANCE {
            return due.checked_add(period);
        }
        match self {
            MissedTickBehavior::Burst => due.checked_add(period),
            MissedTickBehavior::Delay => now.checked_add(period),
            MissedTickBehavior::Skip => {
                // `now + period - (late % period)` is `due + (⌊late / period⌋ + 1) × period`.
                let into_period = nanos_to_duration(late.as_nanos() % period.as_nanos());
                now.checked_add(period - into_period)
            }
        }
    }
}

/// `nanos` as a `Duration`; it is less than some `Duration`'s nanoseconds, so it fits.
fn nanos_to_duration(nanos: u128) -> Duration {
    const NANOS_PER_SEC: u128 = 1_000_000_000;
    let secs = u64::try_from(nanos / NANOS_PER_SEC).unwrap_or(u64::MAX);
    Duration::new(secs, (nanos % NANOS_PER_SEC) as u32)
}

/// Ticks at a fixed period; made by [`interval`] and [`interval_at`].
///
/// Tick `n` is due at `start + n × period`. A tick that is late (the task was busy) completes
/// at once; what happens to the ticks after it is the [`MissedTickBehavior`]: by default
/// (`Burst`, tokio's default too) they keep the original schedule, and after a stall the missed
/// ticks complete back to back until the interval has caught up.
///
/// An `Interval` is also a [`futures_lite::Stream`] of the instants its ticks were due
/// at, which never ends (tokio wraps its interval in `IntervalStream` for that; here the
/// interval is the stream).
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
    /// Due at the next tick; its deadline is `None` once the schedule overflowed `Instant`.
    sleep: Sleep,
    period: Duration,
    missed_tick_behavior: MissedTickBehavior,
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
        let Some(due) = self.sleep.deadline() else {
            // The schedule ran past the end of `Instant`: no more ticks.
            return Poll::Pending;
        };
        match Pin::new(&mut self.sleep).poll(cx) {
            Poll::Ready(()) => {
                let now = self.sleep.clock_now();
                self.sleep.set(self.missed_tick_behavior.next_after(due, now, self.period));
                Poll::Ready(due)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// The instant the next tick is due at; `None` once the schedule ran past the end of
    /// `Instant` (no tick comes until a reset).
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
        self.sleep.deadline()
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

    /// What this interval does after a late tick; [`MissedTickBehavior::Burst`] unless set.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use crew::time::MissedTickBehavior;
    ///
    /// let every = crew::time::interval(Duration::from_secs(1));
    /// assert_eq!(every.missed_tick_behavior(), MissedTickBehavior::Burst);
    /// ```
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    /// Sets what this interval does after a late tick, from the next tick it yields on.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use crew::time::{interval, sleep, MissedTickBehavior};
    ///
    /// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
    /// pool.block_on(async {
    ///     let start = crew::time::now();
    ///     let mut every = interval(Duration::from_secs(10));
    ///     every.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ///     every.tick().await;
    ///     sleep(Duration::from_secs(35)).await;
    ///     // The late tick comes at once, and the next one a full period later.
    ///     assert_eq!(every.tick().await - start, Duration::from_secs(10));
    ///     assert_eq!(every.tick().await - start, Duration::from_secs(45));
    /// });
    /// ```
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }

    /// Makes the next tick due one period from now (on the interval's clock), as if the
    /// interval had just ticked; the ticks after it follow from there.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
    /// pool.block_on(async {
    ///     let mut every = crew::time::interval(Duration::from_secs(10));
    ///     every.tick().await;
    ///     crew::time::sleep(Duration::from_secs(4)).await;
    ///     every.reset();
    ///     assert_eq!(every.tick_due(), Some(crew::time::now() + Duration::from_secs(10)));
    /// });
    /// ```
    pub fn reset(&mut self) {
        self.reset_after(self.period);
    }

    /// Makes the next tick due at once: the next poll yields it, with the current instant (on
    /// the interval's clock); the ticks after it follow from there.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
    /// pool.block_on(async {
    ///     let mut every = crew::time::interval(Duration::from_secs(3600));
    ///     every.tick().await;
    ///     every.reset_immediately();
    ///     let now = crew::time::now();
    ///     assert_eq!(every.tick().await, now, "no wait: the clock has not moved");
    /// });
    /// ```
    pub fn reset_immediately(&mut self) {
        self.reset_after(Duration::ZERO);
    }

    /// Makes the next tick due `after` from now (on the interval's clock); the ticks after it
    /// follow from there. A deadline past the end of `Instant` means no more ticks.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
    /// pool.block_on(async {
    ///     let mut every = crew::time::interval(Duration::from_secs(10));
    ///     every.tick().await;
    ///     every.reset_after(Duration::from_secs(3));
    ///     let start = crew::time::now();
    ///     assert_eq!(every.tick().await - start, Duration::from_secs(3));
    /// });
    /// ```
    pub fn reset_after(&mut self, after: Duration) {
        let deadline = self.sleep.clock_now().checked_add(after);
        self.sleep.set(deadline);
    }

    /// Makes the next tick due at `deadline` (in the past: at once); the ticks after it follow
    /// from there.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let mut every = crew::time::interval(Duration::from_secs(3600));
    /// crew::block_on(every.tick());
    /// let soon = crew::time::now() + Duration::from_millis(2);
    /// every.reset_at(soon);
    /// assert_eq!(crew::block_on(every.tick()), soon);
    /// ```
    pub fn reset_at(&mut self, deadline: Instant) {
        self.sleep.set(Some(deadline));
    }
}

/// The ticks as a stream: each item is the instant a tick was due at, as [`Interval::tick`]
/// returns it, and the stream never ends (`None` never comes). tokio's `IntervalStream`, with
/// the interval itself as the stream.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use futures_lite::StreamExt;
///
/// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
/// pool.block_on(async {
///     let start = crew::time::now();
///     let ticks: Vec<Duration> =
///         crew::time::interval(Duration::from_secs(5)).map(|due| due - start).take(3).collect().await;
///     assert_eq!(ticks, [Duration::ZERO, Duration::from_secs(5), Duration::from_secs(10)]);
/// });
/// ```
impl Stream for Interval {
    type Item = Instant;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.get_mut().poll_tick(cx).map(Some)
    }
}
