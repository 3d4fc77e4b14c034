//! Spare threads: a worker thread whose worker life ended early (its core handed off by
//! `block_on`, `scope` or `block_in_place`, or taken over while it was stuck in a poll) waits a
//! while for the next core to run instead of exiting, so that a steady blocking mix does not
//! start a thread per takeover.
//!
//! Invariants:
//! - A thread waits as a spare only once its last poll returned, its core is gone (given up or
//!   handed off) and none of its local tasks is alive (`local::finish_worker_thread`), and only
//!   while the pool runs. Its local home stays open: the next core it runs attaches it
//!   (`run.rs`), and it is closed when the thread exits. At most `max_stuck_threads` wait at
//!   once, or as many as the pool's workers if that is more (a hand-off's thread, takeover
//!   off); none under loom, whose models never reuse a thread.
//! - [`Shared::start_worker_if`](crate::scheduler::cores::shared::Shared) hands a core to a waiting spare before
//!   it starts a thread: a spare named for the same worker number (threads are named
//!   `{prefix}-N` when they start, and a running thread cannot be renamed, so a spare runs only
//!   the cores of its own number: every worker thread's name stays true), the most recent first
//!   (its stack is warm). It reserves the spare under the spare's lock before its `go` decides,
//!   so that a reserved spare never times out, and each core reaches exactly one thread: the
//!   spare takes what it is given, or its reservation is withdrawn and it waits on.
//! - A spare gives up after [`SPARE_WAIT`], or at once when the pool's shutdown begins: it
//!   marks itself gone under its lock (a starter then finds it gone and looks for another), and
//!   shutdown marks every waiting spare gone.

use std::time::Duration;

use crate::sync::{lock, shrunk_under_loom, wait_until, Arc, Deadline, Event, Listener, Mutex};

/// How long a spare thread waits for a core before it exits.
pub(in crate::scheduler) const SPARE_WAIT: Duration = Duration::from_secs(10);

/// The spare threads of one pool, waiting for a core (`C`: the worker's `Box<Core>`; this file
/// only passes it on).
pub(in crate::scheduler) struct SpareThreads<C> {
    waiting: Mutex<Vec<Arc<Spare<C>>>>,
}

impl<C> Default for SpareThreads<C> {
    fn default() -> SpareThreads<C> {
        SpareThreads { waiting: Mutex::new(Vec::new()) }
    }
}

/// One spare thread's mailbox.
struct Spare<C> {
    /// The worker number the thread is named for: the only cores it runs.
    worker: usize,
    state: Mutex<Mailbox<C>>,
    changed: Event,
}

#[derive(Default)]
enum Mailbox<C> {
    /// Waiting for a core.
    #[default]
    Waiting,
    /// A starter took this spare and decides (its `go`): the spare waits for the outcome.
    Reserved,
    /// The core to run.
    Core(C),
    /// Timed out, or the pool shuts down: no core may be put here.
    Gone,
}

/// A spare a starter took out of the list and reserved: [`SpareThreads::give`] or
/// [`SpareThreads::withdraw`] it.
pub(in crate::scheduler) struct Reserved<C>(Arc<Spare<C>>);

impl<C> std::fmt::Debug for SpareThreads<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpareThreads").field("waiting", &self.len()).finish()
    }
}

impl<C> SpareThreads<C> {
    /// Waits as a spare for a core of worker number `worker` (the one the thread is named for),
    /// until one comes (`Some`), [`SPARE_WAIT`] passes, or the pool shuts down (`None`: the
    /// thread exits). `cap` spares at most wait; `is_shutdown` is read after this spare is
    /// listed, so that shutdown marks it or it sees the flag.
    pub(in crate::scheduler) fn wait(&self, worker: usize, cap: usize, is_shutdown: impl Fn() -> bool) -> Option<C> {
        let spare = Arc::new(Spare { worker, state: Mutex::new(Mailbox::Waiting), changed: Event::new() });
        {
            let mut waiting = lock(&self.waiting);
            if waiting.len() >= shrunk_under_loom(cap, 0) {
                return None;
            }
            waiting.push(spare.clone());
        }
        let deadline = Deadline::after(SPARE_WAIT);
        let core = loop {
            // Listening before the look: a change after it notifies this listener.
            let listener = spare.changed.listen();
            let reserved = {
                let mut state = lock(&spare.state);
                match std::mem::take(&mut *state) {
                    Mailbox::Core(core) => break Some(core),
                    Mailbox::Gone => break None,
                    Mailbox::Reserved => {
                        *state = Mailbox::Reserved;
                        true
                    }
                    Mailbox::Waiting if is_shutdown() || deadline.has_passed() => {
                        *state = Mailbox::Gone;
                        break None;
                    }
                    Mailbox::Waiting => false,
                }
            };
            if reserved {
                // The starter's answer comes soon: no deadline.
                listener.wait();
            } else {
                // Until the deadline, then once more round the loop to give up.
                wait_until(listener, &deadline);
            }
        };
        lock(&self.waiting).retain(|listed| !Arc::ptr_eq(listed, &spare));
        core
    }

    /// Takes the most recent waiting spare named for worker number `worker` and reserves it, if
    /// there is one that has not given up.
    pub(in crate::scheduler) fn reserve(&self, worker: usize) -> Option<Reserved<C>> {
        loop {
            let spare = {
                let mut waiting = lock(&self.waiting);
                let at = waiting.iter().rposition(|spare| spare.worker == worker)?;
                waiting.remove(at)
            };
            let mut state = lock(&spare.state);
            if matches!(*state, Mailbox::Waiting) {
                *state = Mailbox::Reserved;
                drop(state);
                return Some(Reserved(spare));
            }
        }
    }

    /// Hands `core` to the reserved spare, which runs it.
    pub(in crate::scheduler) fn give(&self, reserved: Reserved<C>, core: C) {
        *lock(&reserved.0.state) = Mailbox::Core(core);
        reserved.0.changed.notify(usize::MAX);
    }

    /// The starter decided not to start the core: the spare waits on, listed again.
    pub(in crate::scheduler) fn withdraw(&self, reserved: Reserved<C>) {
        *lock(&reserved.0.state) = Mailbox::Waiting;
        lock(&self.waiting).push(reserved.0.clone());
        reserved.0.changed.notify(usize::MAX);
    }

    /// The pool shuts down: every waiting spare gives up now.
    pub(in crate::scheduler) fn release_all(&self) {
        for spare in std::mem::take(&mut *lock(&self.waiting)) {
            {
                let mut state = lock(&spare.state);
                if matches!(*state, Mailbox::Waiting) {
                    *state = Mailbox::Gone;
                }
            }
            spare.changed.notify(usize::MAX);
        }
    }

    /// How many spares wait now (a snapshot, for the metrics).
    pub(in crate::scheduler) fn len(&self) -> usize {
        lock(&self.waiting).len()
    }
}
