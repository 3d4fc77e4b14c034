//! A worker's parking spot: a token and an event-listener [`Event`] (see `README.md`).
//!
//! Invariants:
//! - One token: [`ParkingSpot::unpark`] sets it, a park consumes it; an unpark that comes before the
//!   park is never lost.
//! - Every way to park (blocking, with a deadline, or polled by the reactor's loop) goes through
//!   [`ParkingSpot::take_or_listen`]: the listener is registered before the token is checked again,
//!   with a SeqCst fence between, and `unpark` sets the token before it notifies.

use crate::sync::{fence, wait_until, AtomicBool, Deadline, Event, EventListener, Listener, Ordering};

/// A per-worker parking spot on an event-listener [`Event`], with a token so that an unpark
/// that comes before the park is not lost.
#[derive(Debug, Default)]
pub(super) struct ParkingSpot {
    token: AtomicBool,
    event: Event,
}

impl ParkingSpot {
    /// Hands the token to the owner and wakes it if it waits.
    pub(super) fn unpark(&self) {
        // SeqCst pairs with the fence in `take_or_listen`: either the owner sees the token, or
        // this notify sees its registered listener. A swap, not a store: the same `xchg` on x86,
        // and loom 0.7 lets a plain store slip inside `park`'s concurrent swap
        // (tokio-rs/loom#254).
        let _ = self.token.swap(true, Ordering::SeqCst);
        // `notify` issues a SeqCst fence before it looks for listeners.
        self.event.notify(1);
    }

    /// The first half of every park: takes the token if it is there, else registers a listener
    /// and checks again. `None`: the token was taken. `Some`: wait on the listener (or poll it),
    /// then call again.
    pub(super) fn take_or_listen(&self) -> Option<EventListener> {
        if self.take_token() {
            return None;
        }
        let listener = self.event.listen();
        // Pairs with the swap in `unpark` and the SeqCst fence that `notify` issues before it
        // looks for listeners: the listener is registered before the token is checked again,
        // so an `unpark` in between notifies it.
        fence(Ordering::SeqCst);
        if self.take_token() {
            return None;
        }
        Some(listener)
    }

    /// Takes the token if it is there.
    pub(super) fn take_token(&self) -> bool {
        // SeqCst: see `take_or_listen`.
        self.token.swap(false, Ordering::SeqCst)
    }

    /// Blocks until the token is handed over, then consumes it.
    pub(super) fn park(&self) {
        while let Some(listener) = self.take_or_listen() {
            listener.wait();
        }
    }

    /// As `park`, but gives up at `deadline`: true if the token came (and was consumed), false
    /// if the deadline passed first (a token that comes later is consumed by the next park).
    pub(super) fn park_until(&self, deadline: &Deadline) -> bool {
        while let Some(listener) = self.take_or_listen() {
            if !wait_until(listener, deadline) && deadline.has_passed() {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::ParkingSpot;

    #[test]
    fn unpark_before_park_is_not_lost() {
        let parker = std::sync::Arc::new(ParkingSpot::default());
        parker.unpark();
        parker.park();
        let p = parker.clone();
        let t = std::thread::spawn(move || p.park());
        parker.unpark();
        t.join().unwrap();
    }
}
