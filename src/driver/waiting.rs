//! The threads parked on their own parkers while another holds the driver ([`Waiting`]), and the
//! hand-on to one of them (`park.rs` says when).
//!
//! Invariants: a thread lists itself before it tries the driver a last time and parks, and
//! unlists itself once it woke; the listing and the holder's release of the poll's lock are
//! each followed by a `SeqCst` fence before the look at the other's (`hand_on` looks at the
//! list after the release), so a thread that lists itself after the holder looked finds the
//! lock free at its last try. A hand-on wakes the parker of the first listed thread, which takes
//! the driver at its next look (or finds it taken, lists itself again and parks).

use crate::sync::{fence, lock, AtomicUsize, Mutex, Ordering, Unparker};

/// The threads waiting for the driver (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    /// Each thread's parker's id and unparker.
    threads: Mutex<Vec<(usize, Unparker)>>,
    /// `threads.len()`, for the holder's look without the lock.
    len: AtomicUsize,
}

impl Waiting {
    /// Lists the thread of parker `id`.
    pub(crate) fn list(&self, id: usize, unparker: &Unparker) {
        let mut threads = lock(&self.threads);
        threads.push((id, unparker.clone()));
        self.len.store(threads.len(), Ordering::SeqCst);
        drop(threads);
        // Pairs with the fence in `hand_on` (module docs).
        fence(Ordering::SeqCst);
    }

    /// Unlists the thread of parker `id`.
    pub(crate) fn unlist(&self, id: usize) {
        let mut threads = lock(&self.threads);
        if let Some(index) = threads.iter().position(|(listed, _)| *listed == id) {
            threads.swap_remove(index);
        }
        self.len.store(threads.len(), Ordering::SeqCst);
    }

    /// Wakes one listed thread if nobody holds `poll`, the driver's lock: the lock taken and
    /// released at once, then the hand-on that follows every release. With nobody listed (a
    /// look without the list's lock: a thread listed meanwhile is the next release's), nothing.
    pub(crate) fn hand_on_if_free<T>(&self, poll: &Mutex<T>) {
        if self.len.load(Ordering::SeqCst) == 0 {
            return;
        }
        if let Ok(held) = poll.try_lock() {
            drop(held);
            self.hand_on();
        }
    }

    /// Wakes one listed thread: called once the driver's lock is released.
    pub(crate) fn hand_on(&self) {
        // Pairs with the fence in `list` (module docs).
        fence(Ordering::SeqCst);
        if self.len.load(Ordering::SeqCst) == 0 {
            return;
        }
        let first = lock(&self.threads).first().map(|(_, unparker)| unparker.clone());
        if let Some(unparker) = first {
            // Its parker's own wake: not its token, which stays its task's.
            unparker.unpark();
        }
    }
}
