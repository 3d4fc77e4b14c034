//! The driver under loom: a fake poller with the real one's park-facing API (`poller.rs`), so
//! that `park.rs`'s protocol is model-checked with loom's types (`loom-tests/tests/driver_park.rs`).
//!
//! Invariants: as `poller.rs`'s for what `park.rs` sees: one turner at a time behind a
//! try-lock; a turn without a timeout waits until [`Driver::unpark`] (a wake counted, so an
//! unpark before the wait is never lost, as an eventfd's counter); a zero timeout never waits.
//! The driver exists only once a model makes it ([`make_driver`]), so the other models' parks
//! stay on their parkers.

use std::time::Duration;

use crate::driver::waiting::Waiting;
use crate::sync::{lock, Mutex};

/// As the real driver's: how long a pool's monitor lets the driver go unturned.
pub(crate) const MONITOR_TURN_GAP: Duration = Duration::from_millis(1);

/// The fake driver (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Driver {
    poll: Mutex<()>,
    /// Pending wakes of the waiter, as an eventfd's counter.
    wakes: Mutex<usize>,
    woken: loom::sync::Condvar,
    waiting: Waiting,
    /// Turns that waited and were woken, for the models.
    pub(crate) turns: Mutex<usize>,
}

loom::lazy_static! {
    static ref DRIVER: Driver = Driver::default();
    static ref MADE: Mutex<bool> = Mutex::new(false);
}

/// Makes this execution's driver: from then on, parks try it first.
pub(crate) fn make_driver() -> &'static Driver {
    *lock(&MADE) = true;
    &DRIVER
}

/// The driver, made by the model.
pub(crate) fn driver() -> &'static Driver {
    &DRIVER
}

/// The driver if a model made it.
pub(crate) fn driver_if_made() -> Option<&'static Driver> {
    lock(&MADE).then_some(&DRIVER)
}

impl Driver {
    /// As the real driver's: a turn if the lock is free.
    pub(crate) fn try_turn(&self, timeout: Option<Duration>) -> bool {
        let Ok(held) = self.poll.try_lock() else { return false };
        self.turn(timeout);
        drop(held);
        self.waiting.hand_on();
        true
    }

    /// As the real driver's (a turn here finds nothing to wake).
    pub(crate) fn try_turn_unless(&self, skip: impl FnOnce() -> bool) -> Option<Woken> {
        let Ok(held) = self.poll.try_lock() else { return None };
        if skip() {
            drop(held);
            self.waiting.hand_on();
        } else {
            self.turn(None);
        }
        Some(Woken)
    }

    /// As the real driver's: the fake driver registers no sources.
    pub(crate) fn has_sources(&self) -> bool {
        false
    }

    /// As the real driver's: a hand-on if the lock is free and a thread is listed.
    pub(crate) fn hand_on_if_free(&self) {
        self.waiting.hand_on_if_free(&self.poll);
    }

    /// Waits for a wake (no timeout), or takes a pending one (zero timeout: never waits).
    fn turn(&self, timeout: Option<Duration>) {
        let mut wakes = lock(&self.wakes);
        if timeout.is_none() {
            while *wakes == 0 {
                wakes = self.woken.wait(wakes).unwrap();
            }
            *lock(&self.turns) += 1;
        }
        *wakes = 0;
    }

    /// Wakes the waiting turn, or the next one.
    pub(crate) fn unpark(&self) {
        *lock(&self.wakes) += 1;
        self.woken.notify_all();
    }

    /// As the real driver's; loom has no time: always "just now".
    pub(crate) fn since_last_turn(&self) -> Duration {
        Duration::ZERO
    }

    /// The threads waiting for the driver.
    pub(crate) fn waiting(&self) -> &Waiting {
        &self.waiting
    }
}

/// What a turn of the fake driver found: nothing (no sources under loom).
#[derive(Debug)]
pub(crate) struct Woken;

impl Woken {
    /// Nothing to wake.
    pub(crate) fn wake(self) {}
}
