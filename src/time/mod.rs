//! Timers: [`sleep`](fn@sleep), [`sleep_until`], [`timeout`](fn@timeout), [`timeout_at`] and [`interval`](fn@interval), on
//! crew's I/O driver, or on a paused pool's virtual clock; [`now`], and [`advance`] for a paused
//! clock. What tokio's users reach for is here under tokio's names: an [`Interval`]'s
//! [`MissedTickBehavior`] and `reset*` methods, an `Interval` as a `Stream` of ticks, and a
//! [`Timeout`]'s `get_ref`, `get_mut` and `into_inner`.
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
//!   after that it panics with a message (like any finished `async` block), and so do its
//!   accessors (`get_ref`, `get_mut`, `into_inner`): they reach the future only until then.
//!   [`Sleep`] stays ready when polled again; [`Interval::tick`] moves on.
//! - An [`Interval`] yields each tick with the instant it was due at. A tick more than 5 ms late
//!   (tokio's tolerance) moves the schedule as its [`MissedTickBehavior`] says (`Burst`, the
//!   default, keeps it); lateness is read on the interval's own clock. As a `Stream` an interval
//!   never ends.
//!
//! Files, none importing another both ways: `clock.rs` ([`now`], [`advance`]), `sleep.rs`
//! ([`Sleep`], which the others are built on), `timeout.rs` ([`Timeout`], [`Elapsed`]),
//! `interval.rs` ([`Interval`], [`MissedTickBehavior`]); this file only wires them.
//!
//! [`Builder::start_paused`]: crate::Builder::start_paused

mod clock;
mod interval;
mod sleep;
mod timeout;

pub use clock::{advance, now, Advance};
pub use interval::{interval, interval_at, Interval, MissedTickBehavior};
pub use sleep::{sleep, sleep_until, Sleep};
pub use timeout::{timeout, timeout_at, Elapsed, Timeout};
