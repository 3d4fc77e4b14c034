//! How idle workers fall asleep and are woken, without ever losing a wakeup.
//!
//! # States
//!
//! Every worker (a *core*: the right to run one worker loop, see `worker`) is in one of three
//! states, counted in one packed atomic word, [`State`]:
//!
//! - **running**: it has local work, or is polling a task. Counted in `unparked`.
//! - **searching**: it found no local work and is scanning the injector and other workers'
//!   deques. Counted in `unparked` and in `searching`.
//! - **parked**: it is listed in `sleeping` (under a mutex) and blocks on its own
//!   event-listener [`Parker`] until another thread hands it a token. Counted in neither.
//!
//! Under the `sleeping` lock, `unparked == workers - sleeping.len()` always holds: a worker moves
//! in or out of `sleeping` and the counters in the same critical section.
//!
//! # Protocol
//!
//! Pushing work that other workers should see (a spawn or wake from outside the pool, a task
//! displaced into a worker's deque, a yield into its deferred list) ends with
//! [`Sleepers::notify_one`]:
//!
//! 1. `fence(SeqCst)`, then load the state. If some worker is searching, or none is parked,
//!    return: a searcher will find the work (see below), and a running worker is not ours to wake.
//! 2. Otherwise lock `sleeping`, re-check, then in one step count one more worker as unparked
//!    *and searching*, pop a sleeper, unlock and hand that sleeper its token.
//!
//! Counting the woken worker as searching before it even runs is what stops a burst of pushes
//! from waking every sleeper (no thundering herd): the next pusher sees a searcher and skips.
//!
//! A worker that runs out of local work:
//!
//! 1. becomes a searcher if fewer than half the workers already search
//!    ([`Sleepers::try_start_searching`]), then scans the injector and every other deque;
//! 2. if it finds a task it stops searching ([`Sleepers::stop_searching`]); if it was the
//!    *last* searcher it calls `notify_one`, so that work it left behind still has a searcher;
//! 3. if it finds nothing, it parks ([`Sleepers::to_parked`]): under the lock it pushes itself
//!    onto `sleeping` and decrements `unparked` (and `searching`, if it searched). If no searcher
//!    is left (it was the last one, or none searched), it then issues `fence(SeqCst)` and
//!    re-scans every queue; if any holds work it calls `notify_one` (which may pick itself). Then
//!    it waits for its token.
//!
//! # Why no wakeup is lost
//!
//! Take a push P of task T and a worker W that is going to sleep. P's push is followed by a
//! SeqCst fence and a SeqCst load of the state; W's state change is a SeqCst read-modify-write
//! followed by a SeqCst fence and its re-scan. Either P's fence comes first in the single total
//! order of SeqCst operations, and then W's re-scan, which follows W's fence, sees T; or W's
//! read-modify-write comes first, and then P's load sees W's new state.
//!
//! - If P sees a searcher S, then S's own `stop_searching` or `to_parked` comes after P's load.
//!   If S parks as the last searcher, its re-scan sees T. If S stops because it found work and
//!   was the last searcher, its `notify_one` wakes a worker that will scan after T was pushed.
//!   If S was not the last, the same argument applies to whichever searcher is last.
//! - If P sees no searcher but a parked worker, P wakes one, which scans after T was pushed.
//! - If P sees no searcher and no parked worker, every worker is running. The first of them to
//!   run out of local work becomes a searcher: its increment comes after P's load, so its scan
//!   (which starts with a SeqCst fence) sees T. A worker that parks without searching (refused
//!   the role, perhaps before P's load, by a searcher that has since stopped to run a task) makes
//!   its `to_parked` after P's load; if no searcher is left then, it re-scans and sees T, else
//!   the argument above applies to the remaining searchers. (Found by `loom-tests/tests/
//!   steal_race.rs`: without that re-scan a task pushed by a worker blocked inside a poll was
//!   stranded while the other worker slept.)
//!
//! A token handed to a parked worker is never lost either: [`Parker`] sets the token before it
//! notifies, and the sleeper registers its event-listener before it checks the token, with a
//! SeqCst fence between each pair.
//!
//! # Watcher
//!
//! A task a worker pushes into its own LIFO slot (a wake from the task it runs) is *private*:
//! searchers do not steal it, so that a chain of tasks waking each other stays on one worker
//! with its cache warm (see `watch`). The slot's owner is running and never parks with the slot
//! full, so it takes the task itself, unless it is stuck inside the poll that pushed it. The
//! push ends with [`Sleepers::notify_private`], which is `notify_one` except that it also skips
//! the wake when the [`State::WATCHING`] flag is set; and a parking worker whose re-scan finds
//! no shared work but a task in another core's LIFO slot takes the watcher role
//! ([`Sleepers::watch`]: flag and index set together under the lock, the flag by a SeqCst
//! read-modify-write) and parks with a deadline ([`Sleepers::park_until`]), after which it
//! wakes itself, rescues the tasks of owners that took nothing from their slot meanwhile, and
//! searches and parks again like any worker. The argument above carries over with "a searcher
//! finds T" read as "a parking worker's re-scan sees T and it becomes, or finds, the watcher":
//! a private push that sees the flag has a watcher whose next term (or this one) covers T; one
//! that does not see it wakes or relies on a searcher, and the last searcher to park re-scans,
//! sees T and takes the role unless another worker holds it. Every wake picks the watcher off
//! `sleeping` and drops the role in the same critical section, so the flag is set exactly while
//! a listed, parked worker holds the role (asserted by the loom models).
//!
//! # Reactor
//!
//! With [`Builder::drive_reactor`](crate::Builder::drive_reactor) on (the default), the worker
//! loop is a future that `async_io::block_on` polls for the worker's whole life (see `worker`).
//! A worker parks by *polling* its parker ([`Sleepers::poll_park`]) and returning `Pending`; the
//! `block_on` around it then runs async-io's reactor (epoll and timers) if no other thread holds
//! it, so a socket or timer event is handled on a worker thread. A task woken there is pushed
//! onto that same (parked) worker's own queues, and the worker takes itself off the sleeping
//! list ([`Sleepers::wake_self`]) instead of waking another: no thread hop. The token protocol
//! is the same as for a blocking park: the listener is registered before the token is checked.
//! A worker that is not parked lets the reactor turn without blocking after every
//! `GLOBAL_QUEUE_INTERVAL` tasks and before it runs its yielded tasks, at most once per
//! `REACTOR_TURN_GAP` (see `worker`).
//!
//! # Shutdown
//!
//! [`Sleepers::notify_all`] empties `sleeping` and hands every sleeper its token; a woken worker
//! checks the pool's shutdown flag before anything else.

#[cfg(not(loom))]
use std::future::Future;
#[cfg(not(loom))]
use std::pin::Pin;
#[cfg(not(loom))]
use std::task::{Context, Poll};

#[cfg(not(loom))]
use std::time::Instant;

#[cfg(not(loom))]
use crate::sync::Listener;
use crate::sync::{
    fence, lock, planted_bug, AtomicBool, AtomicUsize, CachePadded, Event, EventListener, Mutex, Ordering,
};

/// The packed counters: `searching` in the low [`State::SEARCHING_BITS`] bits, then the
/// [`State::WATCHING`] flag, then `unparked`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct State(usize);

impl State {
    const SEARCHING_BITS: u32 = 16;
    const SEARCHING_MASK: usize = (1 << Self::SEARCHING_BITS) - 1;
    /// Set while a parked worker holds the watcher role (see `# Watcher`).
    const WATCHING: usize = 1 << Self::SEARCHING_BITS;
    const UNPARKED_SHIFT: u32 = Self::SEARCHING_BITS + 1;
    const UNPARKED_MASK: usize = !(Self::SEARCHING_MASK | Self::WATCHING);
    /// One searching worker.
    const ONE_SEARCHING: usize = 1;
    /// One unparked worker.
    const ONE_UNPARKED: usize = 1 << Self::UNPARKED_SHIFT;

    pub(crate) fn new(unparked: usize, searching: usize) -> State {
        State((unparked << Self::UNPARKED_SHIFT) | searching)
    }

    pub(crate) fn searching(self) -> usize {
        self.0 & Self::SEARCHING_MASK
    }

    pub(crate) fn unparked(self) -> usize {
        (self.0 & Self::UNPARKED_MASK) >> Self::UNPARKED_SHIFT
    }

    pub(crate) fn watching(self) -> bool {
        self.0 & Self::WATCHING != 0
    }
}

/// A per-worker parking spot on an event-listener [`Event`], with a token so that an unpark
/// that comes before the park is not lost.
#[derive(Debug, Default)]
pub(crate) struct Parker {
    token: AtomicBool,
    event: Event,
}

impl Parker {
    /// Hands the token to the owner and wakes it if it waits.
    fn unpark(&self) {
        // SeqCst pairs with the fence in `take_or_listen`: either the owner sees the token, or
        // this notify sees its registered listener. A swap, not a store: the same `xchg` on x86,
        // and loom 0.7 lets a plain store slip inside `park`'s concurrent swap
        // (tokio-rs/loom#254).
        let _ = self.token.swap(true, Ordering::SeqCst);
        // `notify` issues a SeqCst fence before it looks for listeners.
        self.event.notify(1);
    }

    /// The first half of every blocking park: takes the token if it is there, else registers a
    /// listener and checks again. `None`: the token was taken. `Some`: wait on the listener, then
    /// call again.
    fn take_or_listen(&self) -> Option<EventListener> {
        if self.token.swap(false, Ordering::SeqCst) {
            return None;
        }
        let listener = self.event.listen();
        // Pairs with the swap in `unpark` and the SeqCst fence that `notify` issues before it
        // looks for listeners: the listener is registered before the token is checked again,
        // so an `unpark` in between notifies it.
        fence(Ordering::SeqCst);
        if self.token.swap(false, Ordering::SeqCst) {
            return None;
        }
        Some(listener)
    }

    /// Blocks until the token is handed over, then consumes it.
    fn park(&self) {
        while let Some(listener) = self.take_or_listen() {
            listener.wait();
        }
    }

    /// As `park`, but gives up at `deadline`: true if the token came (and was consumed), false
    /// if the deadline passed first (a token that comes later is consumed by the next park).
    #[cfg(not(loom))]
    fn park_until(&self, deadline: Instant) -> bool {
        while let Some(listener) = self.take_or_listen() {
            if listener.wait_deadline(deadline).is_none() && Instant::now() >= deadline {
                return false;
            }
        }
        true
    }

    /// loom has no clock: the deadline has always passed already, so a timed park only takes a
    /// token that is already there. The yield lets loom run the other threads first.
    #[cfg(loom)]
    fn park_until(&self, _deadline: Deadline) -> bool {
        crate::sync::thread::yield_now();
        self.token.swap(false, Ordering::SeqCst)
    }

    /// The non-blocking `park`: `Ready` once the token is handed over (consuming it); `Pending`
    /// with `listener` registered to wake `cx` when it is. Same protocol as `park`.
    #[cfg(not(loom))]
    fn poll_park(&self, listener: &mut Option<EventListener>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            if self.token.swap(false, Ordering::SeqCst) {
                *listener = None;
                return Poll::Ready(());
            }
            match listener {
                Some(registered) => match Pin::new(registered).poll(cx) {
                    // Notified: the token was set before; the loop consumes it.
                    Poll::Ready(()) => *listener = None,
                    Poll::Pending => return Poll::Pending,
                },
                None => {
                    *listener = Some(self.event.listen());
                    // As in `take_or_listen`: registered before the token is checked again.
                    fence(Ordering::SeqCst);
                }
            }
        }
    }
}

/// The idle-worker bookkeeping of one pool.
#[derive(Debug)]
pub(crate) struct Sleepers {
    state: CachePadded<AtomicUsize>,
    idle: Mutex<Idle>,
    parkers: Box<[Parker]>,
}

/// What the `idle` mutex guards.
#[derive(Debug)]
struct Idle {
    /// The parked workers, most recently parked last.
    sleeping: Vec<usize>,
    /// The parked worker holding the watcher role; `Some` exactly when [`State::WATCHING`] is
    /// set, and then it is listed in `sleeping`.
    watcher: Option<usize>,
}

/// When a timed park gives up: an `Instant`, or nothing under loom, which has no clock.
#[cfg(not(loom))]
pub(crate) type Deadline = Instant;
/// When a timed park gives up: an `Instant`, or under loom, which has no clock, a deadline
/// that has always passed.
#[cfg(loom)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline;

impl Sleepers {
    /// All `workers` start running, none searching.
    pub(crate) fn new(workers: usize) -> Sleepers {
        Sleepers {
            state: CachePadded::new(AtomicUsize::new(State::new(workers, 0).0)),
            idle: Mutex::new(Idle { sleeping: Vec::with_capacity(workers), watcher: None }),
            parkers: (0..workers).map(|_| Parker::default()).collect(),
        }
    }

    fn workers(&self) -> usize {
        self.parkers.len()
    }

    pub(crate) fn state(&self) -> State {
        State(self.state.load(Ordering::SeqCst))
    }

    /// Wakes one parked worker, as a searcher, unless a worker already searches or none is
    /// parked. Call after making work visible in a shared queue (the injector, a deque or a
    /// deferred list).
    /// Returns whether a worker was woken.
    pub(crate) fn notify_one(&self) -> bool {
        self.notify(false)
    }

    /// As [`notify_one`](Sleepers::notify_one), after pushing a task onto the calling worker's
    /// *private* LIFO slot, which only the watcher steals from:
    /// wakes nobody if a watcher already exists, since it will look within
    /// [`WATCH_INTERVAL`](crate::watch::WATCH_INTERVAL).
    pub(crate) fn notify_private(&self) -> bool {
        if planted_bug!("no_private_notify") {
            return false;
        }
        self.notify(true)
    }

    fn notify(&self, private: bool) -> bool {
        // Pairs with the fence after `to_parked`'s read-modify-write (see the module docs).
        fence(Ordering::SeqCst);
        if !self.should_wake(self.state(), private) {
            return false;
        }
        let mut idle = lock(&self.idle);
        if !self.should_wake(self.state(), private) {
            return false;
        }
        let index = idle.sleeping.pop().expect("unparked < workers under the lock means a sleeper is listed");
        self.count_woken(&mut idle, index);
        drop(idle);
        self.parkers[index].unpark();
        true
    }

    fn should_wake(&self, state: State, private: bool) -> bool {
        state.searching() == 0 && state.unparked() < self.workers() && !(private && state.watching())
    }

    /// Counts worker `index`, just taken off `sleeping`, as unparked and searching, dropping the
    /// watcher role if it held it, in one read-modify-write. Under the `idle` lock.
    fn count_woken(&self, idle: &mut Idle, index: usize) {
        let mut delta = State::ONE_UNPARKED | State::ONE_SEARCHING;
        if idle.watcher == Some(index) && !planted_bug!("watcher_kept") {
            idle.watcher = None;
            // WATCHING is set: subtracting it borrows nothing.
            delta = delta.wrapping_sub(State::WATCHING);
        }
        self.state.fetch_add(delta, Ordering::SeqCst);
    }

    /// Wakes every parked worker (for shutdown). The woken workers are not searching.
    pub(crate) fn notify_all(&self) {
        let mut idle = lock(&self.idle);
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
    pub(crate) fn try_start_searching(&self) -> bool {
        let state = self.state();
        if 2 * state.searching() >= self.workers() {
            return false;
        }
        self.state.fetch_add(State::ONE_SEARCHING, Ordering::SeqCst);
        true
    }

    /// A searcher found work. Returns true if it was the last searcher, in which case the
    /// caller must `notify_one` so that any other pending work gets a searcher.
    pub(crate) fn stop_searching(&self) -> bool {
        let prev = State(self.state.fetch_sub(State::ONE_SEARCHING, Ordering::SeqCst));
        prev.searching() == 1
    }

    /// Lists worker `index` as parked. Returns true if no searcher is left (it was the last
    /// searcher, or none searched), in which case the caller must re-scan every queue (after a
    /// SeqCst fence) before waiting.
    pub(crate) fn to_parked(&self, index: usize, searching: bool) -> bool {
        let mut idle = lock(&self.idle);
        let counted_searching = searching && !planted_bug!("searching_drift");
        let delta = State::ONE_UNPARKED + if counted_searching { State::ONE_SEARCHING } else { 0 };
        let prev = State(self.state.fetch_sub(delta, Ordering::SeqCst));
        idle.sleeping.push(index);
        // No searcher left: a push that saw this worker unparked (running, or refused the
        // searcher role) skipped waking anyone, so this worker must re-scan.
        let rescan = prev.searching() == usize::from(searching);
        !planted_bug!("skip_rescan") && rescan
    }

    /// Worker `index`, parked, found in its re-scan a task in another worker's LIFO slot:
    /// makes it the watcher unless there is one already or it was woken meanwhile. Returns
    /// whether it took the role; if so it must park with a deadline ([`Sleepers::park_until`]).
    pub(crate) fn watch(&self, index: usize) -> bool {
        let mut idle = lock(&self.idle);
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
    pub(crate) fn park(&self, index: usize) {
        self.parkers[index].park();
    }

    /// As [`park`](Sleepers::park), for the watcher, giving up at `deadline`: then it takes
    /// itself off `sleeping` as [`wake_self`](Sleepers::wake_self) does (dropping the role)
    /// and waits for its token, which is then already there or on its way.
    pub(crate) fn park_until(&self, index: usize, deadline: Deadline) {
        if !self.parkers[index].park_until(deadline) {
            self.wake_self(index);
            self.parkers[index].park();
        }
    }

    /// The non-blocking [`park`](Sleepers::park) of worker `index`, for a worker loop that runs
    /// as a future: `Ready` when `park` would return, else `Pending` with `listener` set to wake
    /// `cx`. Keep `listener` across polls; it is cleared on `Ready`.
    #[cfg(not(loom))]
    pub(crate) fn poll_park(
        &self,
        index: usize,
        listener: &mut Option<EventListener>,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        self.parkers[index].poll_park(listener, cx)
    }

    /// Worker `index`, parked, wakes itself: it has just pushed work onto its own queues from
    /// its own thread (a task woken while that thread ran the reactor), or it is the watcher and
    /// its deadline passed. Takes it off `sleeping`, counted as unparked and searching exactly
    /// as `notify_one` would (dropping the watcher role), and hands it its token. Returns false
    /// if it was no longer listed (another thread's `notify_one` or `notify_all` already picked
    /// it, and its token is on the way).
    pub(crate) fn wake_self(&self, index: usize) -> bool {
        let mut idle = lock(&self.idle);
        let Some(position) = idle.sleeping.iter().position(|&sleeper| sleeper == index) else {
            return false;
        };
        idle.sleeping.swap_remove(position);
        self.count_woken(&mut idle, index);
        drop(idle);
        if !planted_bug!("wake_self_no_token") {
            self.parkers[index].unpark();
        }
        true
    }

    /// True if worker `index` is listed as parked.
    #[cfg(any(test, loom))]
    pub(crate) fn is_parked(&self, index: usize) -> bool {
        lock(&self.idle).sleeping.contains(&index)
    }

    /// The watcher's index, checked against [`State::WATCHING`] under the lock.
    #[cfg(any(test, loom))]
    pub(crate) fn watcher(&self) -> Option<usize> {
        let idle = lock(&self.idle);
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
    fn packed_fields_do_not_overlap() {
        let masks = [State::SEARCHING_MASK, State::WATCHING, State::UNPARKED_MASK];
        for (i, a) in masks.iter().enumerate() {
            for b in &masks[i + 1..] {
                assert_eq!(a & b, 0, "{a:#x} and {b:#x} overlap");
            }
        }
        assert_eq!(masks.iter().fold(0, |all, mask| all | mask), usize::MAX);
        let s = State::new(crate::config::MAX_WORKERS, crate::config::MAX_WORKERS);
        assert_eq!(
            (s.unparked(), s.searching(), s.watching()),
            (crate::config::MAX_WORKERS, crate::config::MAX_WORKERS, false)
        );
        let s = State(State::new(3, 2).0 + State::ONE_UNPARKED + State::ONE_SEARCHING + State::WATCHING);
        assert_eq!((s.unparked(), s.searching(), s.watching()), (4, 3, true));
    }

    #[test]
    fn a_private_push_wakes_nobody_while_a_watcher_exists() {
        let sleepers = Sleepers::new(3);
        assert!(sleepers.to_parked(0, false));
        assert!(sleepers.to_parked(1, false));
        assert!(sleepers.watch(1), "no watcher yet, and worker 1 is parked");
        assert!(!sleepers.watch(0), "one watcher at a time");
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
        let sleepers = Sleepers::new(2);
        assert!(sleepers.to_parked(0, false));
        assert!(sleepers.notify_private());
        assert_eq!(sleepers.state(), State::new(2, 1));
        sleepers.park(0);
        assert!(!sleepers.notify_private(), "nobody is parked");
    }

    #[test]
    fn only_a_listed_worker_takes_the_watcher_role() {
        let sleepers = Sleepers::new(2);
        assert!(!sleepers.watch(0), "worker 0 is running");
        assert!(sleepers.to_parked(0, false));
        assert!(sleepers.notify_one(), "worker 0 is picked before it could take the role");
        assert!(!sleepers.watch(0));
        assert_eq!(sleepers.watcher(), None);
        sleepers.park(0);
    }

    #[test]
    fn the_watcher_wakes_itself_at_its_deadline_and_drops_the_role() {
        let sleepers = Sleepers::new(2);
        assert!(sleepers.to_parked(0, false));
        assert!(sleepers.watch(0));
        #[cfg(not(loom))]
        let deadline = Instant::now() + std::time::Duration::from_millis(1);
        #[cfg(loom)]
        let deadline = Deadline;
        sleepers.park_until(0, deadline);
        assert!(!sleepers.is_parked(0));
        assert_eq!(sleepers.watcher(), None);
        assert_eq!(sleepers.state(), State::new(2, 1), "counted as a searcher, as if notified");
        // Taken off the list by a notify first: the deadline changes nothing, the token came.
        assert!(sleepers.to_parked(0, true));
        assert!(sleepers.watch(0));
        assert!(sleepers.notify_private() || sleepers.notify_one());
        sleepers.park_until(0, deadline);
        assert_eq!(sleepers.watcher(), None);
        assert_eq!(sleepers.state(), State::new(2, 1));
    }

    #[test]
    fn shutdown_drops_the_watcher_role() {
        let sleepers = Sleepers::new(2);
        assert!(sleepers.to_parked(0, false));
        assert!(sleepers.watch(0));
        sleepers.notify_all();
        assert_eq!(sleepers.watcher(), None);
        assert_eq!(sleepers.state(), State::new(2, 0));
        sleepers.park(0);
    }

    #[test]
    fn searchers_are_capped_at_half_the_workers() {
        let sleepers = Sleepers::new(4);
        assert!(sleepers.try_start_searching());
        assert!(sleepers.try_start_searching());
        assert!(!sleepers.try_start_searching());
        assert!(!sleepers.stop_searching());
        assert!(sleepers.stop_searching(), "the second to stop is the last searcher");
    }

    #[test]
    fn notify_wakes_one_sleeper_as_a_searcher_and_no_more() {
        let sleepers = Sleepers::new(3);
        assert!(!sleepers.notify_one(), "nobody is parked");
        assert!(sleepers.to_parked(0, false), "nobody searches: re-scan");
        assert!(sleepers.to_parked(1, false));
        assert_eq!(sleepers.state(), State::new(1, 0));
        assert!(sleepers.notify_one());
        assert_eq!(sleepers.state(), State::new(2, 1));
        assert!(!sleepers.notify_one(), "a searcher exists: no second wake");
        assert!(sleepers.is_parked(0) != sleepers.is_parked(1), "exactly one was taken off the list");
        sleepers.park(1); // its token is already there: returns at once
    }

    #[test]
    fn last_searcher_to_park_is_told_to_rescan() {
        let sleepers = Sleepers::new(2);
        assert!(sleepers.try_start_searching());
        assert!(sleepers.to_parked(0, true));
        assert_eq!(sleepers.state(), State::new(1, 0));
        sleepers.notify_all();
        assert_eq!(sleepers.state(), State::new(2, 0));
        sleepers.park(0);
    }

    #[test]
    fn unpark_before_park_is_not_lost() {
        let parker = std::sync::Arc::new(Parker::default());
        parker.unpark();
        parker.park();
        let p = parker.clone();
        let t = std::thread::spawn(move || p.park());
        parker.unpark();
        t.join().unwrap();
    }
}
