//! How idle workers fall asleep and are woken, without ever losing a wakeup: [`Sleepers`].
//!
//! The protocol and its proof are prose in `README.md` beside this file (states, protocol, why
//! no wakeup is lost, the watcher, the reactor, shutdown); read it before changing this module.
//!
//! Invariants:
//! - Under the `sleep_list` lock, `unparked == workers - sleeping.len()`: a worker moves in or
//!   out of `sleeping` and the counters in the same critical section.
//! - A push a worker must not miss ends with [`Sleepers::notify_one_from`] (or
//!   `notify_private_from` for a LIFO slot); a worker that parks leaving no searcher re-scans after a SeqCst fence
//!   ([`Sleepers::list_parked`] says when). Either the push's fence or the parking worker's
//!   read-modify-write comes first, and whichever comes second sees the other.
//! - A woken worker is counted as searching before it runs (by `notify_one` and `wake_self`),
//!   so a burst of pushes wakes one worker, not all.
//! - At most one worker holds the watcher role; the `WATCHING` flag is set exactly while a
//!   listed, parked worker holds it, and every wake of that worker drops it. Taking the role is
//!   always safe (it only adds a look); what limits it is `watch.rs`'s rule for when a parking
//!   worker asks, of which the heir (below) is one part.
//! - The *heir* is the worker last woken by a private notify: it takes the role when it next
//!   parks with nothing to do (`list_parked` tells it, once), so that an owner pushing chain
//!   after chain into its LIFO slot wakes a parked worker once, not at every push.
//! - Tokens are never lost (`parker`).

mod parking_spot;
mod state;

use parking_spot::ParkingSpot;
pub(super) use state::State;

use super::cores::counters::{CoreCounters, OutsideCounters};

use crate::sync::{
    fence, lock, planted_bug, AtomicBool, AtomicUsize, CachePadded, Deadline, Event, EventListener, Mutex, Ordering,
};

/// The idle-worker bookkeeping of one pool.
#[derive(Debug)]
pub(super) struct Sleepers {
    state: CachePadded<AtomicUsize>,
    sleep_list: Mutex<SleepList>,
    /// One per core slot, spare cores included.
    parkers: Box<[ParkingSpot]>,
    /// The number of cores that run at once (the pool's workers): what `unparked` counts up to.
    workers: usize,
    /// The monitor's wake-up (`monitor.rs`); `None` when the pool has no monitor.
    monitor_alarm: Option<MonitorAlarm>,
}

/// Who sends a wake, for the metrics (`counters.rs`): a core of the pool, or a thread outside
/// it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum WakeSource<'a> {
    Core(&'a CoreCounters),
    Outside(&'a OutsideCounters),
}

impl WakeSource<'_> {
    /// Counts a wake sent (`woke`), or skipped because a worker was already searching.
    #[inline]
    fn count(self, woke: bool) {
        match (self, woke) {
            (WakeSource::Core(counters), true) => counters.notifies.incr(),
            (WakeSource::Core(counters), false) => counters.notifies_skipped.incr(),
            (WakeSource::Outside(counters), true) => counters.notifies.incr(),
            (WakeSource::Outside(counters), false) => counters.notifies_skipped.incr(),
        }
    }
}

/// How the monitor, asleep while every worker is parked, learns that the pool is busy again.
#[derive(Debug, Default)]
pub(super) struct MonitorAlarm {
    /// Notified by the first worker to unpark while `idle_wait` is set, and by shutdown.
    pub(super) event: Event,
    /// Set while the monitor waits for the pool to get busy: only then does an unpark notify,
    /// so a pool that goes idle and busy again many times a second does not wake the monitor
    /// each time.
    pub(super) idle_wait: AtomicBool,
}

/// What the `sleep_list` mutex guards.
#[derive(Debug)]
struct SleepList {
    /// The parked workers, most recently parked last.
    sleeping: Vec<usize>,
    /// The parked worker holding the watcher role; `Some` exactly when [`State::WATCHING`] is
    /// set, and then it is listed in `sleeping`.
    watcher: Option<usize>,
    /// The worker last woken by a private notify, until it next lists itself as parked.
    heir: Option<usize>,
}

/// What [`Sleepers::list_parked`] tells a worker listing itself as parked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Listing {
    /// No searcher is left: the worker must re-scan every queue (after a SeqCst fence) before
    /// it waits.
    pub(super) rescan: bool,
    /// It was last woken by a private notify (an owner at work pushing into its LIFO slot): it
    /// should take the watcher role even if its re-scan sees no LIFO task (`watch.rs`).
    pub(super) heir: bool,
}

impl Sleepers {
    /// All `workers` start running, none searching; `slots` cores may park in all (the workers
    /// and the spare cores that replace a stuck one, see `monitor.rs`). `monitor`: a monitor listens
    /// for the pool getting busy.
    pub(super) fn new(workers: usize, slots: usize, monitor: bool) -> Sleepers {
        Sleepers {
            state: CachePadded::new(AtomicUsize::new(State::new(workers, 0).0)),
            sleep_list: Mutex::new(SleepList { sleeping: Vec::with_capacity(workers), watcher: None, heir: None }),
            parkers: (0..slots).map(|_| ParkingSpot::default()).collect(),
            workers,
            monitor_alarm: monitor.then(MonitorAlarm::default),
        }
    }

    fn workers(&self) -> usize {
        self.workers
    }

    /// The monitor's wake-up (see `monitor_alarm`).
    pub(super) fn monitor_alarm(&self) -> Option<&MonitorAlarm> {
        self.monitor_alarm.as_ref()
    }

    #[inline]
    pub(super) fn state(&self) -> State {
        State(self.state.load(Ordering::SeqCst))
    }

    /// Wakes one parked worker, as a searcher, unless a worker already searches or none is
    /// parked. Call after making work visible in a shared queue (the injector, a deque or a
    /// deferred list).
    /// Returns whether a worker was woken.
    #[cfg(any(test, loom))]
    pub(super) fn notify_one(&self) -> bool {
        self.notify(false, None)
    }

    /// `notify_one` (the same wake, uncounted, for tests and loom), counted in `source`'s
    /// metrics.
    #[inline]
    pub(super) fn notify_one_from(&self, source: WakeSource<'_>) -> bool {
        self.notify(false, Some(source))
    }

    /// `notify_private` (the same wake, uncounted, for tests and loom), counted in `source`'s
    /// metrics.
    ///
    /// No fence before the state's load: the push into an empty LIFO slot is a SeqCst
    /// read-modify-write, and with the load also SeqCst, the two are in the single order of
    /// SeqCst operations with the parker's listing and re-scan, which rules out a lost wakeup
    /// (`README.md`, "The private notify needs no fence"; checked with Relacy,
    /// `loom-tests/relacy/`). A displacing push notifies through `notify_one`, fenced.
    #[inline]
    pub(super) fn notify_private_from(&self, source: WakeSource<'_>) -> bool {
        if planted_bug!("no_private_notify") {
            return false;
        }
        self.notify_fenced(true, Some(source))
    }

    /// As [`notify_one`](Sleepers::notify_one), after pushing a task onto the calling worker's
    /// *private* LIFO slot, which only the watcher (and the monitor's takeover) steals from:
    /// wakes nobody if a watcher already exists, since it will look within `WATCH_INTERVAL`
    /// (`scheduler/takeover/watch.rs`).
    #[cfg(any(test, loom))]
    pub(super) fn notify_private(&self) -> bool {
        if planted_bug!("no_private_notify") {
            return false;
        }
        self.notify_fenced(true, None)
    }

    /// [`notify_one_from`](Sleepers::notify_one_from) for a caller that has issued a SeqCst
    /// fence after making its work visible and has stored nothing since
    /// (`Shared::push_remote`): that fence is the one `notify` would begin with, so a remote
    /// spawn or wake pays for one fence, not two.
    #[inline]
    pub(super) fn notify_one_fenced_from(&self, source: WakeSource<'_>) -> bool {
        self.notify_fenced(false, Some(source))
    }

    fn notify(&self, private: bool, source: Option<WakeSource<'_>>) -> bool {
        // Pairs with the fence after `list_parked`'s read-modify-write (see `README.md`).
        fence(Ordering::SeqCst);
        self.notify_fenced(private, source)
    }

    /// `notify` after its fence.
    #[inline]
    fn notify_fenced(&self, private: bool, source: Option<WakeSource<'_>>) -> bool {
        let state = self.state();
        if !self.should_wake(state, private) {
            if state.searching() > 0 {
                if let Some(source) = source {
                    source.count(false);
                }
            }
            return false;
        }
        let mut idle = lock(&self.sleep_list);
        if !self.should_wake(self.state(), private) {
            return false;
        }
        let index = idle.sleeping.pop().expect("unparked < workers under the lock means a sleeper is listed");
        self.count_woken(&mut idle, index, true);
        if private {
            idle.heir = Some(index);
        }
        drop(idle);
        self.parkers[index].unpark();
        if let Some(source) = source {
            source.count(true);
        }
        true
    }

    fn should_wake(&self, state: State, private: bool) -> bool {
        state.searching() == 0 && state.unparked() < self.workers() && !(private && state.watching())
    }

    /// Counts worker `index`, just taken off `sleeping`, as unparked (and searching if
    /// `searching`), dropping the watcher role if it held it, in one read-modify-write. Under the
    /// `sleep_list` lock.
    fn count_woken(&self, idle: &mut SleepList, index: usize, searching: bool) {
        let mut delta = if searching { State::ONE_UNPARKED | State::ONE_SEARCHING } else { State::ONE_UNPARKED };
        if idle.watcher == Some(index) && !planted_bug!("watcher_kept") {
            idle.watcher = None;
            // WATCHING is set: subtracting it borrows nothing.
            delta = delta.wrapping_sub(State::WATCHING);
        }
        let prev = State(self.state.fetch_add(delta, Ordering::SeqCst));
        if let Some(busy) = &self.monitor_alarm {
            // SeqCst pairs with the monitor's store and fence before its re-check: either it
            // sees this worker unparked, or this load sees it waiting.
            if prev.unparked() == 0 && busy.idle_wait.load(Ordering::SeqCst) {
                // The pool was idle: the monitor starts sampling again.
                busy.event.notify(1);
            }
        }
    }

    /// Wakes every parked worker (for shutdown). The woken workers are not searching.
    pub(super) fn notify_all(&self) {
        let mut idle = lock(&self.sleep_list);
        let woken: Vec<usize> = idle.sleeping.drain(..).collect();
        let mut delta = State::ONE_UNPARKED * woken.len();
        if idle.watcher.take().is_some() {
            delta = delta.wrapping_sub(State::WATCHING);
        }
        self.state.fetch_add(delta, Ordering::SeqCst);
        drop(idle);
        for index in woken {
            self.parkers[index].unpark();
        }
    }

    /// Turns a running worker into a searcher, unless half the workers already search.
    pub(super) fn try_start_searching(&self) -> bool {
        let state = self.state();
        if 2 * state.searching() >= self.workers() {
            return false;
        }
        self.state.fetch_add(State::ONE_SEARCHING, Ordering::SeqCst);
        true
    }

    /// A searcher found work. Returns true if it was the last searcher, in which case the
    /// caller must `notify_one` so that any other pending work gets a searcher.
    pub(super) fn stop_searching(&self) -> bool {
        let prev = State(self.state.fetch_sub(State::ONE_SEARCHING, Ordering::SeqCst));
        prev.searching() == 1
    }

    /// Lists worker `index` as parked, and says whether it must re-scan (no searcher is left: it
    /// was the last searcher, or none searched) and whether it is the heir (see [`Listing`]).
    pub(super) fn list_parked(&self, index: usize, was_searching: bool) -> Listing {
        let mut idle = lock(&self.sleep_list);
        let counted_searching = was_searching && !planted_bug!("searching_drift");
        let delta = State::ONE_UNPARKED + if counted_searching { State::ONE_SEARCHING } else { 0 };
        let prev = State(self.state.fetch_sub(delta, Ordering::SeqCst));
        idle.sleeping.push(index);
        let heir = idle.heir == Some(index);
        if heir {
            idle.heir = None;
        }
        // No searcher left: a push that saw this worker unparked (running, or refused the
        // searcher role) skipped waking anyone, so this worker must re-scan.
        let rescan = prev.searching() == usize::from(was_searching);
        Listing { rescan: !planted_bug!("skip_rescan") && rescan, heir }
    }

    /// Worker `index`, parked, found in its re-scan a task in another worker's LIFO slot, or
    /// has another reason to watch (`watch.rs`): makes it the watcher unless there is one
    /// already or it was woken meanwhile. Returns whether it took the role; if so it must park
    /// with a deadline ([`Sleepers::park_until`]).
    pub(super) fn try_become_watcher(&self, index: usize) -> bool {
        let mut idle = lock(&self.sleep_list);
        if idle.watcher.is_some() || !idle.sleeping.contains(&index) {
            return false;
        }
        idle.watcher = Some(index);
        // SeqCst pairs with the fence in `notify_private`: a private push either sees the
        // role, or happened before this worker's re-scan, which saw it.
        self.state.fetch_add(State::WATCHING, Ordering::SeqCst);
        true
    }

    /// Blocks worker `index` until `notify_one` or `notify_all` picks it. On return it has
    /// been taken off `sleeping` and counted as unparked (and as searching, if by `notify_one`).
    pub(super) fn park(&self, index: usize) {
        self.parkers[index].park();
    }

    /// As [`park`](Sleepers::park), for the watcher, giving up at `deadline`: then it takes
    /// itself off `sleeping` as [`wake_self`](Sleepers::wake_self) does (dropping the role)
    /// and waits for its token, which is then already there or on its way.
    pub(super) fn park_until(&self, index: usize, deadline: &Deadline) {
        if !self.parkers[index].park_until(deadline) {
            self.wake_self(index);
            self.parkers[index].park();
        }
    }

    /// The first half of worker `index`'s park, for a loop that polls instead of blocking
    /// (`reactor::poll_park`): `None` if its token was there (consumed: it was picked, as when
    /// [`park`](Sleepers::park) returns), else a listener registered to be notified when the
    /// token comes.
    #[cfg_attr(loom, allow(dead_code))] // loom builds have no reactor loop
    pub(super) fn take_or_listen(&self, index: usize) -> Option<EventListener> {
        self.parkers[index].take_or_listen()
    }

    /// Takes worker `index`'s token if it is there: true when it was picked (see
    /// [`take_or_listen`](Sleepers::take_or_listen)), for a polled park that holds a listener.
    #[cfg_attr(loom, allow(dead_code))] // loom builds have no reactor loop
    pub(super) fn take_token(&self, index: usize) -> bool {
        self.parkers[index].take_token()
    }

    /// Worker `index`, parked, wakes itself: it has just pushed work onto its own queues from
    /// its own thread (a task woken while that thread ran the reactor), or it is the watcher and
    /// its deadline passed. Takes it off `sleeping`, counted as unparked and searching exactly
    /// as `notify_one` would (dropping the watcher role), and hands it its token. Returns false
    /// if it was no longer listed (another thread's `notify_one` or `notify_all` already picked
    /// it, and its token is on the way).
    pub(super) fn wake_self(&self, index: usize) -> bool {
        self.wake_self_counted(index, true)
    }

    /// As [`wake_self`](Sleepers::wake_self) for a worker that pushed tasks onto its own parked
    /// core from its thread's reactor turn, but counted as unparked and *not* searching: it
    /// resumes to run its own tasks, as a worker that never parked, and wakes another worker
    /// only if it has more than one (`Core::resume_after_wake`), as tokio's worker after a
    /// park that dispatched I/O. Counted searching, it would wake another worker for a single
    /// task when it stopped searching, which then parks again (an `epoll_wait` and a futex
    /// wake per request under a light stream of requests). Nothing is lost: the tasks are in
    /// this core's queues, which its thread takes next.
    pub(super) fn wake_self_for_work(&self, index: usize) -> bool {
        self.wake_self_counted(index, false)
    }

    fn wake_self_counted(&self, index: usize, searching: bool) -> bool {
        let mut idle = lock(&self.sleep_list);
        let Some(position) = idle.sleeping.iter().position(|&sleeper| sleeper == index) else {
            return false;
        };
        idle.sleeping.swap_remove(position);
        self.count_woken(&mut idle, index, searching);
        drop(idle);
        if !planted_bug!("wake_self_no_token") {
            self.parkers[index].unpark();
        }
        true
    }

    /// Wakes worker `index` if it is listed as parked, as [`wake_self`](Sleepers::wake_self)
    /// does (counted as unparked and searching), for a task queued where only it looks (its
    /// thread's local tasks, its inbox). Call after the push and a SeqCst fence: this SeqCst load
    /// of the state either sees the worker's `list_parked`, or the worker's re-check after its
    /// fence sees the push (`README.md`, "Local tasks"). Returns whether it woke it.
    pub(super) fn wake_listed(&self, index: usize) -> bool {
        if self.state().unparked() == self.workers() {
            // Nobody is parked: the worker runs, and looks at its queues before it parks.
            return false;
        }
        self.wake_self(index)
    }

    /// True if worker `index` is listed as parked.
    #[cfg(any(test, loom))]
    pub(super) fn is_parked(&self, index: usize) -> bool {
        lock(&self.sleep_list).sleeping.contains(&index)
    }

    /// The watcher's index, checked against [`State::WATCHING`] under the lock.
    #[cfg(any(test, loom))]
    pub(super) fn watcher(&self) -> Option<usize> {
        let idle = lock(&self.sleep_list);
        assert_eq!(self.state().watching(), idle.watcher.is_some(), "WATCHING matches the watcher");
        if let Some(watcher) = idle.watcher {
            assert!(idle.sleeping.contains(&watcher), "the watcher {watcher} is listed as parked");
        }
        idle.watcher
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_push_wakes_nobody_while_a_watcher_exists() {
        let sleepers = Sleepers::new(3, 3, false);
        assert!(sleepers.list_parked(0, false).rescan);
        assert!(sleepers.list_parked(1, false).rescan);
        assert!(sleepers.try_become_watcher(1), "no watcher yet, and worker 1 is parked");
        assert!(!sleepers.try_become_watcher(0), "one watcher at a time");
        assert_eq!(sleepers.watcher(), Some(1));
        assert!(!sleepers.notify_private(), "the watcher will look");
        assert_eq!(sleepers.state(), State(State::new(1, 0).0 | State::WATCHING));
        // A shared push still wakes a searcher; here it picks the watcher (parked last), which
        // drops the role in the same step.
        assert!(sleepers.notify_one());
        assert_eq!(sleepers.watcher(), None);
        assert_eq!(sleepers.state(), State::new(2, 1));
        sleepers.park(1);
    }

    #[test]
    fn a_private_push_wakes_a_searcher_when_there_is_no_watcher() {
        let sleepers = Sleepers::new(2, 2, false);
        assert!(sleepers.list_parked(0, false).rescan);
        assert!(sleepers.notify_private());
        assert_eq!(sleepers.state(), State::new(2, 1));
        sleepers.park(0);
        assert!(!sleepers.notify_private(), "nobody is parked");
    }

    #[test]
    fn a_private_wake_makes_the_woken_worker_heir_until_it_next_lists_itself() {
        let sleepers = Sleepers::new(2, 2, false);
        let listing = sleepers.list_parked(0, false);
        assert_eq!(listing, Listing { rescan: true, heir: false }, "no wake yet");
        assert!(sleepers.notify_private(), "no watcher: the private push wakes worker 0");
        sleepers.park(0);
        assert_eq!(sleepers.list_parked(0, true), Listing { rescan: true, heir: true });
        assert!(sleepers.try_become_watcher(0), "the heir takes the role");
        assert!(!sleepers.notify_private(), "the owner's next push wakes nobody");
        // A shared push wakes the watcher; that wake is not a private one.
        assert!(sleepers.notify_one());
        sleepers.park(0);
        assert_eq!(sleepers.list_parked(0, true), Listing { rescan: true, heir: false }, "heir once");
        assert_eq!(sleepers.watcher(), None);
    }

    #[test]
    fn the_last_private_wake_names_the_heir() {
        let sleepers = Sleepers::new(3, 3, false);
        assert!(sleepers.list_parked(0, false).rescan);
        assert!(sleepers.list_parked(1, false).rescan);
        assert!(sleepers.notify_private(), "wakes worker 1, parked last");
        sleepers.park(1);
        // Worker 1 stops searching (it found a task), so the next private push wakes worker 0.
        assert!(sleepers.stop_searching());
        assert!(sleepers.notify_private());
        sleepers.park(0);
        assert!(!sleepers.list_parked(1, false).heir, "worker 0's wake came after worker 1's");
        assert!(sleepers.list_parked(0, true).heir);
    }

    #[test]
    fn only_a_listed_worker_takes_the_watcher_role() {
        let sleepers = Sleepers::new(2, 2, false);
        assert!(!sleepers.try_become_watcher(0), "worker 0 is running");
        assert!(sleepers.list_parked(0, false).rescan);
        assert!(sleepers.notify_one(), "worker 0 is picked before it could take the role");
        assert!(!sleepers.try_become_watcher(0));
        assert_eq!(sleepers.watcher(), None);
        sleepers.park(0);
    }

    #[test]
    fn the_watcher_wakes_itself_at_its_deadline_and_drops_the_role() {
        let sleepers = Sleepers::new(2, 2, false);
        assert!(sleepers.list_parked(0, false).rescan);
        assert!(sleepers.try_become_watcher(0));
        let deadline = Deadline::after(std::time::Duration::from_millis(1));
        sleepers.park_until(0, &deadline);
        assert!(!sleepers.is_parked(0));
        assert_eq!(sleepers.watcher(), None);
        assert_eq!(sleepers.state(), State::new(2, 1), "counted as a searcher, as if notified");
        // Taken off the list by a notify first: the deadline changes nothing, the token came.
        assert!(sleepers.list_parked(0, true).rescan);
        assert!(sleepers.try_become_watcher(0));
        assert!(sleepers.notify_private() || sleepers.notify_one());
        sleepers.park_until(0, &deadline);
        assert_eq!(sleepers.watcher(), None);
        assert_eq!(sleepers.state(), State::new(2, 1));
    }

    #[test]
    fn shutdown_drops_the_watcher_role() {
        let sleepers = Sleepers::new(2, 2, false);
        assert!(sleepers.list_parked(0, false).rescan);
        assert!(sleepers.try_become_watcher(0));
        sleepers.notify_all();
        assert_eq!(sleepers.watcher(), None);
        assert_eq!(sleepers.state(), State::new(2, 0));
        sleepers.park(0);
    }

    #[test]
    fn searchers_are_capped_at_half_the_workers() {
        let sleepers = Sleepers::new(4, 4, false);
        assert!(sleepers.try_start_searching());
        assert!(sleepers.try_start_searching());
        assert!(!sleepers.try_start_searching());
        assert!(!sleepers.stop_searching());
        assert!(sleepers.stop_searching(), "the second to stop is the last searcher");
    }

    #[test]
    fn notify_wakes_one_sleeper_as_a_searcher_and_no_more() {
        let sleepers = Sleepers::new(3, 3, false);
        assert!(!sleepers.notify_one(), "nobody is parked");
        assert!(sleepers.list_parked(0, false).rescan, "nobody searches: re-scan");
        assert!(sleepers.list_parked(1, false).rescan);
        assert_eq!(sleepers.state(), State::new(1, 0));
        assert!(sleepers.notify_one());
        assert_eq!(sleepers.state(), State::new(2, 1));
        assert!(!sleepers.notify_one(), "a searcher exists: no second wake");
        assert!(sleepers.is_parked(0) != sleepers.is_parked(1), "exactly one was taken off the list");
        sleepers.park(1); // its token is already there: returns at once
    }

    #[test]
    fn last_searcher_to_park_is_told_to_rescan() {
        let sleepers = Sleepers::new(2, 2, false);
        assert!(sleepers.try_start_searching());
        assert!(sleepers.list_parked(0, true).rescan);
        assert_eq!(sleepers.state(), State::new(1, 0));
        sleepers.notify_all();
        assert_eq!(sleepers.state(), State::new(2, 0));
        sleepers.park(0);
    }
}
