//! Parking: how a worker with nothing to do lists itself as parked, re-scans, and waits.
//!
//! Invariants:
//! - A worker parks only with its LIFO slot, deque and deferred list empty: `prepare_park`
//!   moves what is there into the deque and returns to the loop instead.
//! - It lists itself through `Sleepers::list_parked`, and when that says no searcher is left it
//!   re-scans every queue after a SeqCst fence: stealable work gets a `notify_one` (which may
//!   pick itself), a task in another core's LIFO slot, or an owner at work (this worker is the
//!   heir of a private push, or its last term saw polls), makes it try to become the watcher,
//!   which parks with a deadline (`watch.rs`). See `sleep/README.md` for why no wakeup is lost.
//! - Woken by `notify_one` or `wake_self` it is counted as a searcher; woken by shutdown's
//!   `notify_all` it is not, and it exits. Woken by its own reactor turn's pushes
//!   (`wake_self_for_work`) it is not either: it runs its tasks, and announces its deque (the
//!   tasks beyond the LIFO slot's) with a `notify_one`.
//! - The blocking loop waits here (`next_task`); the loop inside the reactor shares
//!   `prepare_park` and `resume_after_wake` and waits by polling (`reactor.rs`).
//! - `on_thread_park` runs at the end of a `prepare_park` that says to wait (the worker is
//!   listed), `on_thread_unpark` first thing in `resume_after_wake` (`config/hooks.rs`).

use crate::scheduler::cores::shared::Runnable;

use crate::identity::Activity;
use crate::scheduler::cores::shared::{Queued, Shared};
use crate::scheduler::cores::worker::Core;
use crate::scheduler::takeover::watch::{rescue, start_term};
use crate::sync::{fence, planted_bug, Ordering};

impl Core {
    /// The next task to run, parking (blocking the thread) while there is none. `None`: the
    /// pool shuts down.
    pub(in crate::scheduler) fn next_task(&mut self, shared: &Shared) -> Option<Runnable> {
        loop {
            if shared.is_shutdown() {
                return None;
            }
            if let Some(runnable) = self.find_task(shared) {
                return Some(runnable);
            }
            if self.prepare_park(shared) {
                self.wait_and_resume(shared);
            }
        }
    }

    /// Lists this core as parked, re-scanning first if no searcher is left, and taking the
    /// watcher role if the re-scan saw a task in another core's LIFO slot or an owner is at work
    /// (`watch.rs`). Returns whether the caller should now wait for its token (until
    /// `self.watch`'s deadline, if set): false if this core has local work or the pool shuts
    /// down.
    pub(in crate::scheduler) fn prepare_park(&mut self, shared: &Shared) -> bool {
        self.watch = None;
        if let Some(runnable) = self.take_lifo() {
            shared.record_queued(&runnable, Activity::Deque(self.index));
            self.local.push(runnable);
            return false;
        }
        if self.flush_deferred(shared) {
            self.announce_deque(shared);
            return false;
        }
        if !self.local.is_empty() || self.has_own_task_hint() {
            return false;
        }
        let was_searching = std::mem::replace(&mut self.searching, false);
        let listing = shared.sleepers.list_parked(self.index, was_searching);
        // An owner was at work when this worker last woke (its last term saw polls, or a private
        // push woke it): it watches even if no LIFO slot holds a task right now (`watch.rs`).
        let owner_at_work = std::mem::take(&mut self.watch_next) || listing.heir;
        // `list_parked` locked the sleepers' mutex; if shutdown's `notify_all` ran before that,
        // we see its flag here, else it will find us listed.
        if shared.is_shutdown() {
            return false;
        }
        let counters = self.counters();
        counters.parks.incr();
        counters.busy.end(shared.clock.now());
        if listing.rescan {
            fence(Ordering::SeqCst);
            let watch = match shared.queued(self.index) {
                Queued::Stealable => {
                    self.notify_one(shared);
                    false
                }
                Queued::LifoOnly => true,
                Queued::Nothing => owner_at_work,
            };
            if watch && !planted_bug!("no_watch") && shared.sleepers.try_become_watcher(self.index) {
                self.watch = Some(start_term(shared));
            }
        } else if self.has_home() || shared.pinned_used() {
            // Pairs with the fence of a push onto this thread's local tasks or this core's
            // inbox (`local.rs`, `pinned.rs`), which wake only this worker. A pool with neither
            // pays nothing: a worker with no home has no local task, and a `pinned_used` read
            // unset (SeqCst, after this worker's listing) precedes the first pinned push, whose
            // wake then sees the listing.
            fence(Ordering::SeqCst);
        }
        // Only this worker takes its local tasks and its inbox: what a push there that did not
        // see it listed added is seen here (`sleep/README.md`, "Local tasks").
        if !planted_bug!("local_no_recheck")
            && (self.has_local_task_locked() || shared.has_inbox_task_fenced(self.index))
        {
            shared.sleepers.wake_self(self.index);
        }
        // `on_thread_park`, listed as parked already: what it spawns wakes a worker as usual.
        shared.config.hooks.parking();
        true
    }

    /// After `prepare_park` said to wait: blocks for this core's token (until its term's deadline
    /// if it watches), then resumes.
    fn wait_and_resume(&mut self, shared: &Shared) {
        match &self.watch {
            Some(watch) => shared.sleepers.park_until(self.index, &watch.deadline),
            None => shared.sleepers.park(self.index),
        }
        self.resume_after_wake(shared);
    }

    /// After the token came: woken by `notify_one` or `wake_self`, which counted this worker as
    /// a searcher, or by shutdown's `notify_all`, which did not. A watcher whose interval is
    /// over first rescues the LIFO tasks of owners that are stuck (see `watch.rs`).
    pub(in crate::scheduler) fn resume_after_wake(&mut self, shared: &Shared) {
        shared.config.hooks.unparked();
        let counters = self.counters();
        counters.unparks.incr();
        counters.busy.begin(shared.clock.now());
        // Woken by its own reactor turn's pushes: not a searcher, and the others are told only
        // of the tasks beyond the one it runs next (a LIFO slot's task and a deque).
        let for_work = std::mem::take(&mut self.woken_for_work);
        self.searching = !for_work && !shared.is_shutdown();
        self.spin_armed = false;
        if for_work {
            self.announce_deque(shared);
        }
        if let Some(watch) = self.watch.take() {
            if self.searching {
                self.watch_next = rescue(watch, shared, self.index, &self.local);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::Core;
    use crate::scheduler::cores::shared::{PoolKind, Shared};

    /// A two-worker pool whose loops never started: its shared state and its two cores.
    fn two_cores() -> (Arc<Shared>, Core, Core) {
        let config = crate::Builder::new().workers(2).check(crate::config::Env::none()).unwrap();
        let (shared, mut cores) = Shared::new(config, PoolKind::Private);
        let one = cores.remove(1);
        let zero = cores.remove(0);
        (shared, zero, one)
    }

    #[test]
    fn a_worker_watches_while_an_owner_works_and_stops_once_it_is_idle() {
        let (shared, mut owner, mut idle) = two_cores();
        // Core 1 parks with nothing seen: no role, as before any LIFO push.
        assert!(idle.prepare_park(&shared));
        assert!(idle.watch.is_none());
        // Core 0's private push wakes it, as the heir.
        assert!(shared.sleepers.notify_private());
        idle.wait_and_resume(&shared);
        // With no LIFO task to see, the heir takes the role anyway: the owner is at work.
        assert!(idle.prepare_park(&shared));
        assert!(idle.watch.is_some());
        assert_eq!(shared.sleepers.watcher(), Some(idle.index));
        assert!(!shared.sleepers.notify_private(), "the owner's pushes wake nobody now");
        // The owner polls during the term; at the deadline the watcher wakes itself and, having
        // seen polls, watches again.
        owner.polls += 1;
        shared.remotes[owner.index].progress.begin_poll(owner.polls);
        let _ = shared.remotes[owner.index].progress.end_poll(owner.polls);
        idle.wait_and_resume(&shared);
        assert_eq!(shared.sleepers.watcher(), None, "the deadline ended the term");
        assert!(idle.prepare_park(&shared));
        assert!(idle.watch.is_some(), "the owner was at work: another term");
        // A term with no poll on the owner ends the role: an idle pool stops waking.
        idle.wait_and_resume(&shared);
        assert!(idle.prepare_park(&shared));
        assert!(idle.watch.is_none(), "no poll for a whole term: no role");
        assert_eq!(shared.sleepers.watcher(), None);
    }
}
