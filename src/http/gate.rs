//! [`Gate`]: what a serve's accept loop and its connections share: the count of open
//! connections under the limit, and the word to shut down.
//!
//! Invariants:
//! - `open` never exceeds `limit`: a [`Permit`] is taken (`open` raised) by a compare-and-swap
//!   that fails at the limit, and its drop lowers `open` and wakes the one waiting to admit.
//!   The accept loop takes a permit before `accept`, and the connection's task owns it, so
//!   `open` counts connections whose task has not yet dropped its future (or that are being
//!   accepted).
//! - No wake is lost, on either event: a waiter registers a listener, then checks the state
//!   again before it sleeps; the other side changes the state, then notifies (event-listener's
//!   `listen` and `notify` each issue a `SeqCst` fence, which pair with each other).
//! - The shutdown word is said once and never taken back.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use event_listener::{Event, EventListener};

/// The connection limit and the shutdown word of one serve.
#[derive(Debug)]
pub(super) struct Gate {
    limit: usize,
    /// Connections admitted whose permit is not yet dropped.
    open: AtomicUsize,
    /// Notified when a permit is dropped.
    closed: Event,
    /// Set once the serve shuts down gracefully.
    shutting_down: AtomicBool,
    /// Notified (everyone) when `shutting_down` is set.
    shutdown: Event,
}

/// One open connection's place under the limit: given back when dropped.
#[derive(Debug)]
pub(super) struct Permit {
    gate: Arc<Gate>,
}

impl Gate {
    /// A gate that admits at most `limit` connections at once.
    pub(super) fn new(limit: usize) -> Arc<Gate> {
        Arc::new(Gate {
            limit,
            open: AtomicUsize::new(0),
            closed: Event::new(),
            shutting_down: AtomicBool::new(false),
            shutdown: Event::new(),
        })
    }

    /// A permit for one more connection, once fewer than `limit` are open.
    pub(super) async fn admit(self: &Arc<Self>) -> Permit {
        loop {
            if let Some(permit) = self.try_admit() {
                return permit;
            }
            let listener = self.closed.listen();
            // A permit dropped before `listen` notified no one: look again.
            if let Some(permit) = self.try_admit() {
                return permit;
            }
            listener.await;
        }
    }

    fn try_admit(self: &Arc<Self>) -> Option<Permit> {
        // SeqCst: against the drop's decrement, with the fences of `listen` and `notify`.
        let admitted =
            self.open.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |open| (open < self.limit).then_some(open + 1));
        admitted.ok().map(|_| Permit { gate: self.clone() })
    }

    /// Tells every connection, now and to come, to shut down gracefully.
    pub(super) fn shut_down(&self) {
        // SeqCst: read after `listen` by `Shutdown::poll`.
        self.shutting_down.store(true, Ordering::SeqCst);
        self.shutdown.notify(usize::MAX);
    }
}

impl Permit {
    /// A future that completes once the serve shuts down gracefully.
    pub(super) fn shutdown(&self) -> Shutdown {
        Shutdown { gate: self.gate.clone(), listener: None }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        // SeqCst: see `try_admit`.
        self.gate.open.fetch_sub(1, Ordering::SeqCst);
        self.gate.closed.notify(1);
    }
}

/// Completes once [`Gate::shut_down`] is called. Unpin, and cheap to poll again.
#[derive(Debug)]
pub(super) struct Shutdown {
    gate: Arc<Gate>,
    /// Registered at the first poll that finds no word yet.
    listener: Option<EventListener>,
}

impl Future for Shutdown {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            // SeqCst: see `Gate::shut_down`.
            if self.gate.shutting_down.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            match self.listener.as_mut() {
                // Registered now: the word may have come before it, so look again first.
                None => self.listener = Some(self.gate.shutdown.listen()),
                Some(listener) => {
                    ready!(Pin::new(listener).poll(cx));
                    self.listener = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_limit_and_again_after_a_drop() {
        let gate = Gate::new(2);
        let first = gate.try_admit().expect("one of two");
        let _second = gate.try_admit().expect("two of two");
        assert!(gate.try_admit().is_none(), "a third over a limit of two");
        drop(first);
        assert!(gate.try_admit().is_some(), "a place came free");
    }

    #[test]
    fn a_waiting_admit_wakes_when_a_permit_drops() {
        let gate = Gate::new(1);
        let held = gate.try_admit().unwrap();
        let waiter = {
            let gate = gate.clone();
            std::thread::spawn(move || crate::block_on(gate.admit()))
        };
        drop(held);
        let _admitted = waiter.join().unwrap();
    }

    #[test]
    fn shutdown_completes_for_permits_taken_before_and_after_the_word() {
        let gate = Gate::new(4);
        let before = gate.try_admit().unwrap();
        let waiting = before.shutdown();
        let waiter = std::thread::spawn(move || crate::block_on(waiting));
        gate.shut_down();
        waiter.join().unwrap();
        let after = gate.try_admit().unwrap();
        crate::block_on(after.shutdown());
    }
}
