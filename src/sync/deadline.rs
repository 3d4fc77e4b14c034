//! When a timed wait gives up: a point on the clock, or under loom, which has no clock, a
//! deadline that has always passed.
//!
//! Invariants:
//! - [`Deadline::has_passed`] never goes back from true to false.
//! - Any `Duration` makes a deadline: one past the clock's range (`Duration::MAX`, say) is a
//!   deadline that never passes, never an overflow panic.
//! - Under loom it is always true, and [`wait_until`] only lets the other threads run: a timed
//!   wait then takes only what is already there, so the models explore a watcher whose
//!   interval is over at once, racing the owners it watches.

use std::time::Duration;
#[cfg(not(loom))]
use std::time::Instant;

use super::EventListener;

/// When a timed wait gives up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    /// `None`: past the clock's range, never reached.
    #[cfg(not(loom))]
    at: Option<Instant>,
}

impl Deadline {
    /// `duration` from now (never, if that is past the clock's range).
    pub(crate) fn after(duration: Duration) -> Deadline {
        #[cfg(not(loom))]
        {
            Deadline { at: Instant::now().checked_add(duration) }
        }
        #[cfg(loom)]
        {
            let _ = duration;
            Deadline {}
        }
    }

    /// True once the deadline is reached.
    pub(crate) fn has_passed(&self) -> bool {
        #[cfg(not(loom))]
        {
            self.at.is_some_and(|at| Instant::now() >= at)
        }
        #[cfg(loom)]
        {
            true
        }
    }

    /// The point on the clock, for a reactor timer; `None` if it is never reached.
    #[cfg(not(loom))]
    pub(crate) fn instant(&self) -> Option<Instant> {
        self.at
    }
}

/// Blocks on `listener` until it is notified (true) or `deadline` passes (false). Under loom:
/// lets the other threads run first, then false.
pub(crate) fn wait_until(listener: EventListener, deadline: &Deadline) -> bool {
    #[cfg(not(loom))]
    {
        use super::Listener;
        match deadline.at {
            Some(at) => listener.wait_deadline(at).is_some(),
            None => {
                listener.wait();
                true
            }
        }
    }
    #[cfg(loom)]
    {
        let _ = (listener, deadline);
        super::thread::yield_now();
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_past_the_clocks_range_never_passes() {
        let never = Deadline::after(Duration::MAX);
        assert!(!never.has_passed());
        assert_eq!(never.instant(), None);
        let now = Deadline::after(Duration::ZERO);
        assert!(now.has_passed());
        assert!(now.instant().is_some());
    }
}
