//! `spawn_pinned`'s placement: the first run of a task that must start on one worker's thread
//! goes to that core's inbox, which only the core's owner takes from.
//!
//! Invariants:
//! - The core is the less loaded of two running ones, by what the metrics read: its deque, its
//!   thread's local tasks (live and queued) and its inbox. The two are the next in a round over
//!   the cores and one picked at random ("the power of two choices": nearly as even as looking
//!   at every core, at a cost that does not grow with the pool).
//! - An inbox is never stolen from, nor rescued by the watcher: its owner takes from it when
//!   nothing else of its own is queued and at every fairness tick (`worker.rs`), and looks at it
//!   again after listing itself as parked (a fence between, `park.rs`). A push ends with a SeqCst
//!   fence and a targeted wake of that core (`Sleepers::wake_listed`): no wakeup is lost, as
//!   for a local task (`sleep/README.md`, "Local tasks").
//! - A core handed to another thread keeps its inbox (the task then starts on that thread); a
//!   core given up after a takeover moves its inbox to the injector; a core retired at shutdown
//!   drops it; a push that finds its core so (after the clearing) moves its task to the
//!   injector. So every task sent here runs or is dropped once, as any other.

use crate::scheduler::cores::schedule::Pinned;
use crate::scheduler::cores::shared::Runnable;
use crate::scheduler::cores::shared::Shared;
use crate::scheduler::cores::worker::Core;
use crate::sync::{fence, lock, planted_bug, Ordering};

impl Shared {
    /// The core a `spawn_pinned` task starts on (see the module docs).
    pub(crate) fn pinned_core(&self) -> Pinned {
        let slots = self.active_slots();
        // Relaxed: the round's position; any value is correct.
        let next = self.pinned_next.fetch_add(1, Ordering::Relaxed);
        let load = |index: usize| {
            let remote = &self.remotes[index];
            // Locked by the owner only as its thread's home attaches or leaves.
            let local = lock(&remote.home).as_ref().map_or(0, |home| home.live() as usize + home.queued());
            // Relaxed: a statistic.
            self.stealers[index].len() + local + remote.inbox.len.load(Ordering::Relaxed)
        };
        // A running core from `start` on (a spare, or a core given up, runs no thread).
        let running_from = |start: usize| {
            (0..slots)
                .map(|offset| (start + offset) % slots)
                .find(|&index| self.is_active(index) && self.worker_number(index) != usize::MAX)
        };
        let random = crate::scheduler::cores::rand::FastRand::new(next as u64).below(slots);
        let chosen = match (running_from(next % slots), running_from(random)) {
            (Some(a), Some(b)) if a != b => {
                if load(b) < load(a) {
                    b
                } else {
                    a
                }
            }
            (Some(a), _) => a,
            (None, _) => next % self.workers(),
        };
        Pinned(chosen)
    }

    /// Queues `runnable`, a pinned task's first run, in core `core`'s inbox and wakes the core if
    /// it is parked.
    pub(in crate::scheduler) fn push_inbox(&self, core: usize, runnable: Runnable) {
        // See `has_inbox_task_fenced`; a load first, so that the flag's line is written once.
        if !self.pinned_used.load(Ordering::SeqCst) {
            self.pinned_used.store(true, Ordering::SeqCst);
        }
        let inbox = &self.remotes[core].inbox;
        {
            let mut queued = lock(&inbox.queue);
            queued.push_back(runnable);
            // Relaxed: under the lock; the owner's re-check before parking locks it.
            inbox.len.store(queued.len(), Ordering::Relaxed);
        }
        // Its core may have retired (shutdown) or been given up after a takeover (a spare now,
        // whose inbox nobody looks at): both clear their inbox after the state this reads, so a
        // push that came after the clearing sees it (the inbox's lock orders them). Then the task
        // goes to the injector: run by any worker, or dropped by shutdown's drains.
        if self.is_shutdown() || (!planted_bug!("pinned_stranded") && !self.is_active(core)) {
            while let Some(runnable) = Core::take_inbox_of(self, core) {
                self.push_remote(runnable);
            }
            return;
        }
        // Pairs with the fence after the owner lists itself as parked (`park.rs`).
        fence(Ordering::SeqCst);
        self.wake_core(core);
    }

    /// Wakes core `index` if it is listed as parked, for a task queued only it takes.
    pub(in crate::scheduler) fn wake_core(&self, index: usize) {
        self.sleepers.wake_listed(index);
    }
}

impl Core {
    /// The next task in this core's inbox, if any.
    #[inline]
    pub(in crate::scheduler) fn take_inbox(&self, shared: &Shared) -> Option<Runnable> {
        // Relaxed: a hint; the re-check before parking locks the inbox after a fence.
        if self.remote().inbox.len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        Core::take_inbox_of(shared, self.index)
    }

    /// The next task in core `index`'s inbox, under its lock.
    pub(in crate::scheduler) fn take_inbox_of(shared: &Shared, index: usize) -> Option<Runnable> {
        let inbox = &shared.remotes[index].inbox;
        let mut queued = lock(&inbox.queue);
        let runnable = queued.pop_front();
        // Relaxed: under the lock.
        inbox.len.store(queued.len(), Ordering::Relaxed);
        runnable
    }

    /// True if a task only this worker takes may be queued (its thread's local tasks, its inbox):
    /// a hint without a lock, for a searcher's spin.
    pub(in crate::scheduler) fn has_own_task_hint(&self) -> bool {
        // Relaxed: a hint; the re-check before parking locks both.
        self.has_local_task_hint() || self.remote().inbox.len.load(Ordering::Relaxed) > 0
    }
}

impl Shared {
    /// True if core `index`'s inbox holds a task: the look of its owner about to park, after the
    /// SeqCst fence that follows its listing. Locks the inbox only once this pool has had a
    /// pinned spawn: the flag is stored (SeqCst) before the first push, so a look that reads it
    /// unset precedes that store in the SeqCst order, and that push's wake then sees the owner
    /// listed (`sleep/README.md`, "Local tasks").
    pub(in crate::scheduler) fn has_inbox_task_fenced(&self, index: usize) -> bool {
        self.pinned_used() && !lock(&self.remotes[index].inbox.queue).is_empty()
    }

    /// Whether this pool has had a `spawn_pinned` (see [`has_inbox_task_fenced`]).
    ///
    /// [`has_inbox_task_fenced`]: Shared::has_inbox_task_fenced
    #[inline]
    pub(in crate::scheduler) fn pinned_used(&self) -> bool {
        // SeqCst: see `has_inbox_task_fenced`.
        self.pinned_used.load(Ordering::SeqCst)
    }
}
