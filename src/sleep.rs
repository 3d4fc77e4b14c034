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
//! displaced into a worker's deque) ends with [`Sleepers::notify_one`]:
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

use crate::sync::{fence, lock, AtomicBool, AtomicUsize, CachePadded, Event, Mutex, Ordering};
#[cfg(not(loom))]
use crate::sync::{EventListener, Listener};

/// The packed counters: `searching` in the low [`State::SEARCHING_BITS`] bits, `unparked` above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct State(usize);

impl State {
    const SEARCHING_BITS: u32 = 16;
    const SEARCHING_MASK: usize = (1 << Self::SEARCHING_BITS) - 1;
    const UNPARKED_MASK: usize = !Self::SEARCHING_MASK;
    /// One searching worker.
    const ONE_SEARCHING: usize = 1;
    /// One unparked worker.
    const ONE_UNPARKED: usize = 1 << Self::SEARCHING_BITS;

    pub(crate) fn new(unparked: usize, searching: usize) -> State {
        State((unparked << Self::SEARCHING_BITS) | searching)
    }

    pub(crate) fn searching(self) -> usize {
        self.0 & Self::SEARCHING_MASK
    }

    pub(crate) fn unparked(self) -> usize {
        (self.0 & Self::UNPARKED_MASK) >> Self::SEARCHING_BITS
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
        // SeqCst pairs with the fence in `park`: either the owner sees the token, or this
        // notify sees its registered listener. A swap, not a store: the same `xchg` on x86, and
        // loom 0.7 lets a plain store slip inside `park`'s concurrent swap (tokio-rs/loom#254).
        let _ = self.token.swap(true, Ordering::SeqCst);
        // `notify` issues a SeqCst fence before it looks for listeners.
        self.event.notify(1);
    }

    /// Blocks until the token is handed over, then consumes it.
    fn park(&self) {
        loop {
            if self.token.swap(false, Ordering::SeqCst) {
                return;
            }
            let listener = self.event.listen();
            // Pairs with the store + fence in `unpark`: the listener is registered before the
            // token is checked again, so an `unpark` in between notifies it.
            fence(Ordering::SeqCst);
            if self.token.swap(false, Ordering::SeqCst) {
                return;
            }
            listener.wait();
        }
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
                    // As in `park`: registered before the token is checked again.
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
    sleeping: Mutex<Vec<usize>>,
    parkers: Box<[Parker]>,
}

impl Sleepers {
    /// All `workers` start running, none searching.
    pub(crate) fn new(workers: usize) -> Sleepers {
        Sleepers {
            state: CachePadded::new(AtomicUsize::new(State::new(workers, 0).0)),
            sleeping: Mutex::new(Vec::with_capacity(workers)),
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
    /// parked. Call after making work visible. Returns whether a worker was woken.
    pub(crate) fn notify_one(&self) -> bool {
        // Pairs with the fence after `to_parked`'s read-modify-write (see the module docs).
        fence(Ordering::SeqCst);
        if !self.should_wake(self.state()) {
            return false;
        }
        let mut sleeping = lock(&self.sleeping);
        if !self.should_wake(self.state()) {
            return false;
        }
        let index = sleeping.pop().expect("unparked < workers under the lock means a sleeper is listed");
        self.state.fetch_add(State::ONE_UNPARKED | State::ONE_SEARCHING, Ordering::SeqCst);
        drop(sleeping);
        self.parkers[index].unpark();
        true
    }

    fn should_wake(&self, state: State) -> bool {
        state.searching() == 0 && state.unparked() < self.workers()
    }

    /// Wakes every parked worker (for shutdown). The woken workers are not searching.
    pub(crate) fn notify_all(&self) {
        let mut sleeping = lock(&self.sleeping);
        let woken: Vec<usize> = sleeping.drain(..).collect();
        self.state.fetch_add(State::ONE_UNPARKED * woken.len(), Ordering::SeqCst);
        drop(sleeping);
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
        let mut sleeping = lock(&self.sleeping);
        let delta = State::ONE_UNPARKED + if searching { State::ONE_SEARCHING } else { 0 };
        #[cfg(crew_bug = "searching_drift")]
        let delta = State::ONE_UNPARKED;
        let prev = State(self.state.fetch_sub(delta, Ordering::SeqCst));
        sleeping.push(index);
        // No searcher left: a push that saw this worker unparked (running, or refused the
        // searcher role) skipped waking anyone, so this worker must re-scan.
        let rescan = prev.searching() == usize::from(searching);
        cfg!(not(crew_bug = "skip_rescan")) && rescan
    }

    /// Blocks worker `index` until `notify_one` or `notify_all` picks it. On return it has
    /// been taken off `sleeping` and counted as unparked (and as searching, if by `notify_one`).
    pub(crate) fn park(&self, index: usize) {
        self.parkers[index].park();
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

    /// Worker `index`, parked, has just pushed work onto its own queues from its own thread (a
    /// task woken while that thread ran the reactor): takes it off `sleeping`, counted as
    /// unparked and searching exactly as `notify_one` would, and hands it its token. Returns
    /// false if it was no longer listed (another thread's `notify_one` or `notify_all` already
    /// picked it, and its token is on the way).
    pub(crate) fn wake_self(&self, index: usize) -> bool {
        let mut sleeping = lock(&self.sleeping);
        let Some(position) = sleeping.iter().position(|&sleeper| sleeper == index) else {
            return false;
        };
        sleeping.swap_remove(position);
        self.state.fetch_add(State::ONE_UNPARKED | State::ONE_SEARCHING, Ordering::SeqCst);
        drop(sleeping);
        #[cfg(not(crew_bug = "wake_self_no_token"))]
        self.parkers[index].unpark();
        true
    }

    /// True if worker `index` is listed as parked.
    #[cfg(any(test, loom))]
    pub(crate) fn is_parked(&self, index: usize) -> bool {
        lock(&self.sleeping).contains(&index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_fields_do_not_overlap() {
        assert_eq!(State::SEARCHING_MASK & State::UNPARKED_MASK, 0);
        assert_eq!(State::SEARCHING_MASK | State::UNPARKED_MASK, usize::MAX);
        let s = State::new(crate::config::MAX_WORKERS, crate::config::MAX_WORKERS);
        assert_eq!((s.unparked(), s.searching()), (crate::config::MAX_WORKERS, crate::config::MAX_WORKERS));
        let s = State(State::new(3, 2).0 + State::ONE_UNPARKED + State::ONE_SEARCHING);
        assert_eq!((s.unparked(), s.searching()), (4, 3));
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
