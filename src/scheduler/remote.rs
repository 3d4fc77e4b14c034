//! The part of a core that threads other than its owner touch, besides its deque.
//!
//! Invariants:
//! - The LIFO slot is *private*: taken from by its owner, by the watcher only when the owner
//!   began no poll for a whole interval (see `watch.rs`), and by the monitor only as it takes
//!   the core over (see `monitor.rs`). The deferred list is
//!   *shared*: any searcher may take its older half as a last resort.
//! - Only the owner fills either, and only the owner begins and ends polls in the progress word
//!   (the monitor only flags them, see `progress.rs`); its mutexes are uncontended but for the
//!   watcher's, the monitor's and searchers' rare looks.
//! - `current` holds the task of the poll running now only while the pool has a slow-poll hook
//!   (`Shared::records_polls`): without one, the owner writes nothing per poll but the progress
//!   word.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::time::Instant;

use super::local::LocalHome;
use super::progress::Progress;
use super::shared::{Runnable, TaskMeta};
use crate::identity::TaskInfo;
use crate::sync::{lock, Arc, AtomicBool, AtomicUsize, Mutex, MutexGuard, SingleWriterCounter, Slot};

/// A core's LIFO slot and deferred list, and the sign of its progress that the watcher reads.
pub(super) struct Remote {
    /// The task woken last on this core (by a task it ran), run next. Private (see `watch.rs`):
    /// its owner is the core's `SlotOwner` (`Core::lifo`), the watcher and the monitor take
    /// through this. Its own allocation, on lines of its own (crew-slot aligns it): searchers
    /// lock the deferred list beside it as a last resort, and must not take the owner's line.
    /// `std`'s `Arc` under loom too: `Slot::claim` takes `self` in one.
    pub(super) lifo: std::sync::Arc<Slot<TaskMeta>>,
    /// Tasks woken while they ran (yields, and any wake during the poll, from any thread), held
    /// back until the owner runs out of other work or reaches its fairness tick. Searchers take
    /// from it as a last resort.
    pub(super) deferred: Deferred,
    /// The owner's polls (see `progress.rs`): a value that does not move while it is inside a
    /// poll means the owner is stuck in that poll.
    pub(super) progress: Progress,
    /// The poll running now, for slow-poll reports (see the module docs).
    pub(super) current: Mutex<CurrentPoll>,
    /// The local tasks' home of the thread running this core, if it has one: for the metrics
    /// and `spawn_pinned`'s choice. Locked by the owner only as a home attaches or leaves.
    pub(super) home: Mutex<Option<Arc<LocalHome>>>,
    /// `spawn_pinned` tasks sent to this core: only its owner takes them (see `pinned.rs`).
    pub(super) inbox: Inbox,
}

/// A core's inbox of `spawn_pinned` tasks' first runs (see `pinned.rs`), its length mirrored for
/// the owner's look without the lock.
#[derive(Debug, Default)]
pub(super) struct Inbox {
    pub(super) queue: Mutex<VecDeque<Runnable>>,
    pub(super) len: AtomicUsize,
}

/// What is known of a core slot besides its queues: read by searchers at every steal sweep and
/// written only when a core is handed out or given back, so kept apart from the `Remote`, whose
/// progress word its owner writes at every poll.
#[derive(Debug)]
pub(super) struct SlotState {
    /// Set while the core is a running worker's, not a spare: from the pool's start (or the
    /// takeover that hands it out) until its thread retires it or gives it up; kept across a
    /// hand-off, which moves the loop to another thread.
    pub(super) active: AtomicBool,
    /// The worker number this core runs as: its thread is named `{prefix}-{worker}`, and reports
    /// name it. A core that takes over a stuck one runs as that one's number, so the pool's
    /// workers keep their names; `usize::MAX` for a spare.
    pub(super) worker: AtomicUsize,
}

impl SlotState {
    pub(super) fn spare() -> SlotState {
        SlotState { active: AtomicBool::new(false), worker: AtomicUsize::new(usize::MAX) }
    }
}

/// What the slow-poll reports know of a core's current poll.
#[derive(Debug, Default)]
pub(super) struct CurrentPoll {
    /// The task being polled (recorded only while the pool has a slow-poll hook).
    pub(super) task: Option<TaskInfo>,
    /// When the monitor first saw this poll running, once it reported it as slow.
    pub(super) slow_since: Option<Instant>,
}

impl Remote {
    pub(super) fn new() -> Remote {
        Remote {
            lifo: std::sync::Arc::new(Slot::new()),
            deferred: Deferred { list: Mutex::new(Vec::new()), len: SingleWriterCounter::default() },
            progress: Progress::default(),
            current: Mutex::new(CurrentPoll::default()),
            home: Mutex::new(None),
            inbox: Inbox::default(),
        }
    }

    /// Records `task` as the one this core polls now (for slow-poll reports).
    pub(super) fn record_poll(&self, task: &TaskInfo) {
        let previous = {
            let mut current = lock(&self.current);
            current.slow_since = None;
            current.task.replace(task.clone())
        };
        // Dropped after unlocking: a name's last reference frees memory.
        drop(previous);
    }

    /// True if the LIFO slot holds a task.
    #[inline]
    pub(super) fn has_lifo_task(&self) -> bool {
        self.lifo.is_occupied()
    }
}

/// A core's deferred list, its length mirrored (under its lock) for the metrics to read without
/// locking.
#[derive(Debug)]
pub(super) struct Deferred {
    list: Mutex<Vec<Runnable>>,
    len: SingleWriterCounter,
}

impl Deferred {
    /// Locks the list; the length is written back as the guard drops.
    #[inline]
    pub(super) fn lock(&self) -> DeferredGuard<'_> {
        DeferredGuard { list: lock(&self.list), len: &self.len }
    }

    /// The length as of the last unlock, read without the lock: for statistics only.
    pub(super) fn len_hint(&self) -> usize {
        self.len.get() as usize
    }
}

/// The locked deferred list (see [`Deferred::lock`]).
pub(super) struct DeferredGuard<'a> {
    list: MutexGuard<'a, Vec<Runnable>>,
    len: &'a SingleWriterCounter,
}

impl Deref for DeferredGuard<'_> {
    type Target = Vec<Runnable>;

    fn deref(&self) -> &Vec<Runnable> {
        &self.list
    }
}

impl DerefMut for DeferredGuard<'_> {
    fn deref_mut(&mut self) -> &mut Vec<Runnable> {
        &mut self.list
    }
}

impl Drop for DeferredGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // Still under the lock: one writer at a time.
        self.len.set(self.list.len() as u64);
    }
}
