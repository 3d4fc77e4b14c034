//! Timers on the driver: the wheel ([`Wheel`]), the precise wake-up that
//! arms the driver's wait for the earliest deadline ([`Timers`]), and the handle `crew::time`'s
//! sleeps hold ([`Timer`]).
//!
//! Invariants:
//! - **Firing** happens in the driver's turns ([`Timers::process`], after each wait): every
//!   entry whose deadline passed is fired and its waker woken on the turning thread, after the
//!   wheel's lock is released. A timer polled at or after its deadline is ready at once, without
//!   the wheel.
//! - **The wait is armed for the earliest deadline**, so a thread waiting in the driver wakes
//!   for it: on Linux a timerfd in the driver's epoll set (mio's waits are whole milliseconds; a
//!   timerfd is not), set only when the earliest deadline changes; elsewhere the wait's own
//!   timeout ([`Timers::wait_timeout`]). `armed` holds the deadline armed (`NONE` if none):
//!   a new timer earlier than it re-arms, under the wheel's lock, so the armed deadline is
//!   never later than the wheel's earliest; and every turn's `process` re-arms for the wheel's
//!   earliest (`NONE` when it is empty), so a passed deadline never stays armed after the turn
//!   that took its expiry (else a later timer would not arm the wait).
//! - **Insert and cancel are constant time** (the wheel), done on the first poll and at drop; a
//!   reset to a later deadline only stores it (`entry.rs`).

mod entry;
mod wheel;

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use entry::{TimerShared, NOT_FILED};
use wheel::Wheel;

use crate::sync::{lock, AtomicU64, Mutex, Ordering};

/// `armed`'s value when nothing is armed.
const NONE: u64 = u64::MAX;

/// The driver's timers (see the module docs).
#[derive(Debug)]
pub(crate) struct Timers {
    wheel: Mutex<Wheel>,
    /// The origin of the wheel's nanoseconds.
    epoch: Instant,
    /// The deadline the wait is armed for (nanoseconds since `epoch`), or `NONE`.
    armed: AtomicU64,
    /// The timer in the driver's epoll set (Linux); `None` elsewhere.
    timerfd: Option<OwnedFd>,
}

impl Timers {
    /// The timers of a driver made at `epoch`, with `timerfd` (already registered with the
    /// driver) if the platform has one.
    pub(crate) fn new(epoch: Instant, timerfd: Option<OwnedFd>) -> Timers {
        Timers { wheel: Mutex::new(Wheel::default()), epoch, armed: AtomicU64::new(NONE), timerfd }
    }

    /// True where a timerfd wakes the driver at the earliest deadline (Linux, but under miri).
    pub(crate) fn has_timerfd(&self) -> bool {
        self.timerfd.is_some()
    }

    /// `instant` in the wheel's nanoseconds (0 for an instant before the epoch).
    fn nanos(&self, instant: Instant) -> u64 {
        u64::try_from(instant.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Fires what is due now; returns the wakers to wake once the caller released its locks.
    pub(crate) fn process(&self) -> Vec<Waker> {
        let mut fired = Vec::new();
        let mut wheel = lock(&self.wheel);
        if wheel.len() != 0 {
            wheel.advance(self.nanos(Instant::now()), &mut fired);
        }
        // Even with the wheel empty (its timers cancelled, or ready by the clock before they
        // fired): an `armed` left at a passed deadline would keep a later timer from arming.
        self.arm(wheel.next_deadline().unwrap_or(NONE));
        fired
    }

    /// The longest a wait may block without missing a deadline, where no timerfd wakes it:
    /// `requested`, shortened to the earliest deadline.
    pub(crate) fn wait_timeout(&self, requested: Option<Duration>) -> Option<Duration> {
        if self.timerfd.is_some() {
            return requested;
        }
        let next = lock(&self.wheel).next_deadline();
        let Some(next) = next else { return requested };
        let until = Duration::from_nanos(next.saturating_sub(self.nanos(Instant::now())));
        Some(requested.map_or(until, |requested| requested.min(until)))
    }

    /// Arms the wait for `deadline` (nanoseconds since the epoch, or `NONE` to disarm), if it
    /// is not armed for it already. Called under the wheel's lock.
    fn arm(&self, deadline: u64) {
        // Relaxed: written under the wheel's lock only, where it is read too.
        if self.armed.swap(deadline, Ordering::Relaxed) == deadline {
            return;
        }
        let Some(timerfd) = &self.timerfd else { return };
        set_timerfd(timerfd, deadline, self.nanos(Instant::now()));
    }

    /// Files `shared` on its first poll, and arms the wait if it is the new earliest.
    fn file(&self, shared: &Arc<TimerShared>) -> Option<bool> {
        let mut wheel = lock(&self.wheel);
        if shared.is_fired() {
            return Some(false);
        }
        // Relaxed: `key` is read and written under the wheel's lock only (`entry.rs`).
        if shared.key.load(Ordering::Relaxed) == NOT_FILED {
            wheel.insert(shared.clone());
        }
        let deadline = shared.deadline_nanos();
        // Relaxed: see `arm`.
        if deadline < self.armed.load(Ordering::Relaxed) {
            self.arm(deadline);
            return Some(true);
        }
        None
    }

    /// Takes `shared` out of the wheel, if it is there.
    fn cancel(&self, shared: &Arc<TimerShared>) {
        // Relaxed: a first look; the key is read again under the lock.
        if shared.key.load(Ordering::Relaxed) == NOT_FILED {
            return;
        }
        let removed = {
            let mut wheel = lock(&self.wheel);
            match shared.key.load(Ordering::Relaxed) {
                NOT_FILED => None,
                key => wheel.remove(key),
            }
        };
        drop(removed);
    }
}

/// Sets `timerfd` to expire at `deadline` (`NONE`: never), from `now` (both nanoseconds since
/// the epoch).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn set_timerfd(timerfd: &OwnedFd, deadline: u64, now: u64) {
    use rustix::time::{timerfd_settime, Itimerspec, TimerfdTimerFlags, Timespec};
    let zero = Timespec { tv_sec: 0, tv_nsec: 0 };
    let value = if deadline == NONE {
        zero
    } else {
        // A zero value disarms: a deadline already past expires in a nanosecond instead.
        let after = deadline.saturating_sub(now).max(1);
        Timespec { tv_sec: (after / 1_000_000_000) as i64, tv_nsec: (after % 1_000_000_000) as i64 }
    };
    // It fails only for a bad fd or value: neither can be, and a missed arm only delays a
    // timer to the next turn.
    let _ = timerfd_settime(timerfd, TimerfdTimerFlags::empty(), &Itimerspec { it_interval: zero, it_value: value });
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn set_timerfd(_: &OwnedFd, _: u64, _: u64) {}

/// A timerfd for the driver's epoll set, where the platform has one (not under miri, which has
/// none: the wait's own timeout serves there, as on the BSDs).
pub(crate) fn make_timerfd() -> Option<OwnedFd> {
    if cfg!(miri) {
        return None;
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::time::{timerfd_create, TimerfdClockId, TimerfdFlags};
        timerfd_create(TimerfdClockId::Monotonic, TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC).ok()
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    None
}

/// A timer on the driver: what `crew::time`'s sleeps hold (see the module docs).
#[derive(Debug)]
pub(crate) struct Timer {
    deadline: Option<Instant>,
    /// Made at the first poll.
    shared: Option<Arc<TimerShared>>,
}

impl Timer {
    /// A timer that fires at `deadline`.
    pub(crate) fn at(deadline: Instant) -> Timer {
        Timer { deadline: Some(deadline), shared: None }
    }

    /// A timer that never fires.
    pub(crate) fn never() -> Timer {
        Timer { deadline: None, shared: None }
    }

    /// Makes it fire at `deadline` instead (or never), even if it fired.
    pub(crate) fn set(&mut self, deadline: Option<Instant>) {
        let earlier = match (self.deadline, deadline) {
            (Some(old), Some(new)) => new < old,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        self.deadline = deadline;
        let Some(shared) = &self.shared else { return };
        let timers = crate::driver::timers();
        match deadline {
            // Never: out of the wheel.
            None => timers.cancel(shared),
            Some(deadline) => {
                let fired = shared.is_fired();
                if earlier || fired {
                    // Earlier than where it is filed, or out of the wheel: filed again at the
                    // next poll.
                    timers.cancel(shared);
                    self.shared = None;
                } else if !shared.set_deadline_nanos(timers.nanos(deadline)) {
                    // It fired meanwhile: filed again at the next poll.
                    self.shared = None;
                }
                // Else later: stored only; the wheel files it again when its old slot comes.
            }
        }
    }

    /// Ready once the deadline passed.
    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(deadline) = self.deadline else { return Poll::Pending };
        if let Some(shared) = &self.shared {
            if shared.is_fired() {
                return Poll::Ready(());
            }
        }
        if Instant::now() >= deadline {
            return Poll::Ready(());
        }
        let timers = crate::driver::timers();
        let shared = self.shared.get_or_insert_with(|| Arc::new(TimerShared::new(timers.nanos(deadline))));
        shared.set_waker(cx.waker());
        if timers.file(shared) == Some(true) {
            // The new earliest deadline: where no timerfd re-arms the wait, wake the driver so
            // that its next wait is bounded by it.
            crate::driver::wake_for_timer();
        }
        if shared.is_fired() {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            crate::driver::timers().cancel(shared);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The race the invariant guards: a turn's wait took the timerfd's expiry, the owner then
    /// found its timer ready by the clock and dropped it (out of the wheel), and the turn's
    /// `process` found the wheel empty. The wait must not stay "armed" for that passed deadline:
    /// a later timer has to arm it, or a thread waiting in the driver never wakes for it.
    #[test]
    fn a_turn_with_an_empty_wheel_disarms_so_a_later_timer_arms_the_wait() {
        let timers = Timers::new(Instant::now(), make_timerfd());
        let first = Arc::new(TimerShared::new(1_000_000));
        assert_eq!(timers.file(&first), Some(true), "the first timer arms the wait");
        timers.cancel(&first);
        assert!(timers.process().is_empty());
        assert_eq!(timers.armed.load(Ordering::Relaxed), NONE, "an empty wheel leaves nothing armed");
        let later = Arc::new(TimerShared::new(2_000_000));
        assert_eq!(timers.file(&later), Some(true), "a later timer, the only one, arms the wait");
        assert_eq!(timers.armed.load(Ordering::Relaxed), 2_000_000);
    }
}
