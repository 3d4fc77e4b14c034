//! A loom-visible stand-in for event-listener's `Event`, used only under `cfg(loom)`.
//!
//! event-listener 5.4's blocking `Listener::wait` deadlocks under loom 0.7 even in a two-thread
//! model of `listen(); check flag; wait()` against `set flag; notify(1)` (reproduced while
//! building crew's first model), so loom builds swap in this mutex + condvar event.
//!
//! Invariants: a listener created before a `notify` is woken by it (it remembers the epoch it
//! was created in; `notify` bumps the epoch under the mutex). `notify(n)` wakes *every* current
//! listener, a superset of what event-listener promises; crew's callers re-check their own
//! state in a loop, so extra wakeups cost steps, never correctness.

use loom::sync::{Arc, Condvar, Mutex};

#[derive(Debug, Default)]
pub(crate) struct Event {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    epoch: Mutex<u64>,
    cond: Condvar,
}

#[derive(Debug)]
pub(crate) struct EventListener {
    inner: Arc<Inner>,
    epoch: u64,
}

impl Event {
    pub(crate) fn new() -> Event {
        Event::default()
    }

    pub(crate) fn listen(&self) -> EventListener {
        let epoch = *self.inner.epoch.lock().unwrap();
        EventListener { inner: self.inner.clone(), epoch }
    }

    pub(crate) fn notify(&self, _n: usize) {
        *self.inner.epoch.lock().unwrap() += 1;
        self.inner.cond.notify_all();
    }
}

/// The blocking wait of event-listener's `Listener` trait, so that callers import `Listener`
/// alike in both builds.
pub(crate) trait Listener {
    /// Blocks until notified.
    fn wait(self);
}

impl Listener for EventListener {
    fn wait(self) {
        let mut epoch = self.inner.epoch.lock().unwrap();
        while *epoch == self.epoch {
            epoch = self.inner.cond.wait(epoch).unwrap();
        }
    }
}
