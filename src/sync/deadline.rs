//! When a timed wait gives up: a point on the clock, or under loom, which has no clock, a
//! deadline that has always passed.
//!
//! Invariants:
//! - [`Deadline::has_passed`] never goes back from true to false.
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
    #[cfg(not(loom))]
    at: Instant,
}

impl Deadline {
    /// `duration` from now.
    pub(crate) fn after(duration: Duration) -> Deadline {
        #[cfg(not(loom))]
        {
            Deadline { at: Instant::now() + duration }
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
            Instant::now() >= self.at
        }
        #[cfg(loom)]
        {
            true
        }
    }

    /// The point on the clock, for a reactor timer.
    #[cfg(not(loom))]
    pub(crate) fn instant(&self) -> Instant {
        self.at
    }
}

/// Blocks on `listener` until it is notified (true) or `deadline` passes (false). Under loom:
/// lets the other threads run first, then false.
pub(crate) fn wait_until(listener: EventListener, deadline: &Deadline) -> bool {
    #[cfg(not(loom))]
    {
        use super::Listener;
        listener.wait_deadline(deadline.at).is_some()
    }
    #[cfg(loom)]
    {
        let _ = (listener, deadline);
        super::thread::yield_now();
        false
    }
}
