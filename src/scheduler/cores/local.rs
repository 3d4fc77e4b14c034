//! Local (`!Send`) tasks: a thread's own queue, [`LocalHome`], which no other thread runs, and
//! the invariants of all local tasks (`local_spawn.rs` spawns them, `local_drive.rs` runs them
//! off a core, `local_turn.rs` runs a worker's turn of them).
//!
//! Invariants:
//! - A local task belongs to the thread that spawned it: async-task's `spawn_local` checks the
//!   thread at every poll and at the drop of its future. It is queued only in that thread's
//!   home: never in a deque, a LIFO slot, a deferred list or the injector, so no searcher,
//!   watcher, takeover or hand-off moves it.
//! - A thread's home is made at its first `spawn_local` or `block_on` and lives in the
//!   thread-local `HERE` (`context.rs`, which names the pool type and reaches the home through
//!   it). The thread drives it in one of three ways: as a worker (the loop picks from it,
//!   `pick.rs`); inside `block_on`, between polls of the blocked-on future,
//!   unless that `block_on` runs inside a local task's poll (`local_drive.rs`, `drive`); and as
//!   a worker thread whose core went to another thread (handed off, or taken over): it runs its
//!   local tasks until none is alive, or its pool shuts down, then exits (`local_drive.rs`,
//!   `finish_worker_thread`). Spawning is `local_spawn.rs`.
//! - A task scheduled on its own thread goes to the thread's own queue ([`Here::own`], behind
//!   [`Here::next`]: no lock; a task that woke itself while it ran, a yield, to
//!   [`Here::yielded`], which a worker takes only at its fairness tick or when it has nothing
//!   else, as its deferred list), and nothing else, unless the thread's core is parked (a wake
//!   from inside the reactor): then the core wakes itself. From any other thread: push onto the
//!   home's `remote` queue (under its lock), a SeqCst fence, then wake the owner, through the core it runs (`Sleepers::wake_listed`,
//!   a targeted wake) or, if it runs none, its parker. The owner looks at its queue again after
//!   every step that precedes a wait: listing its core as parked (then a fence), giving its core
//!   up (then a fence), and between its parker's tokens. So no wakeup is lost
//!   (`sleep/README.md`, "Local tasks").
//! - Every live local task is registered in its thread's [`Tasks`] (its waker; owner-only, no
//!   lock; the key is kept by the task's future, `Polled` (`local_spawn.rs`), and given back when the future is
//!   dropped), and, on a thread that works for or blocks in a pool that keeps task records, in that
//!   pool's registry too (the dump, `#[crew::test]`'s leftovers). When the thread stops being a
//!   pool's thread (its last worker life ended, as a spare thread's wait too: `run.rs`), or its
//!   thread-locals are destroyed, the home closes ([`Here::close`]): it refuses new tasks,
//!   wakes every registered one, and drops every task that reaches its queue until none is
//!   alive. So every local task is dropped on its own thread, exactly once, and once a home is
//!   closed no task of it is alive for a late wake to find.
//! - The main thread's thread-locals are never destroyed: local tasks still pending there when
//!   the process exits are never dropped (as any value still alive then).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::sync::Arc as StdArc;
use std::task::{Wake, Waker};

use super::task::Runnable;
use crate::driver::{DrivingParker as Parker, DrivingUnparker as Unparker};
use crate::identity::Activity;
use crate::sync::SingleWriterCounter;
use crate::sync::{fence, lock, Arc, AtomicBool, AtomicUsize, Mutex, Ordering};

/// [`LocalHome::core`] of a thread that runs no core.
const NO_CORE: usize = usize::MAX;

/// How many local tasks `block_on` runs between two looks at its own future's wake.
pub(in crate::scheduler) const DRIVE_BATCH: usize = 61;

/// How many tasks in a row a driver takes from [`Here::next`] before the queue's oldest (the
/// worker loop's LIFO limit, `MAX_LIFO_POLLS`, for the same reason; `worker.rs` asserts that
/// the two are equal).
pub(in crate::scheduler) const MAX_NEXT_POLLS: u32 = 3;

/// How a home's wake from another thread reaches the core its owner runs: the pool's targeted
/// wake (`Shared::wake_core`, `Sleepers::wake_listed`). A trait so that this file names no pool.
pub(in crate::scheduler) trait WakeCore {
    /// Wakes the worker that runs core `core`.
    fn wake_core(&self, core: usize);
}

/// A thread's queue of its own local tasks, and how to wake the thread (see the module docs).
/// `P` is the pool whose `Runnable`s it holds (`Shared`; `shared.rs` names the type).
pub(crate) struct LocalHome<P> {
    /// Tasks scheduled from other threads (the owner's own pushes go to [`Here::own`], with no
    /// lock); the owner moves them over before it pops.
    remote: Mutex<VecDeque<Runnable<P>>>,
    /// `remote`'s length, written under its lock: read without it by the owner's pops.
    remote_len: AtomicUsize,
    /// The tasks in [`Here::own`], [`Here::next`] and [`Here::yielded`] ([`Here::queued`]),
    /// written by the owner: for its picks' hint and the metrics.
    own_len: AtomicUsize,
    /// The core this thread runs now, [`NO_CORE`] if none: where a wake from another thread
    /// goes. Set only by the owner.
    core: AtomicUsize,
    /// The pool whose core the thread ran when the home was made (`None`: it ran none).
    pool: Option<Arc<P>>,
    /// Wakes the owner while it runs no core (in `block_on`, or finishing its local tasks).
    pub(in crate::scheduler) unparker: Unparker,
    /// Live local tasks: raised at each spawn, lowered at each task's end, both on the owner.
    pub(in crate::scheduler) live: SingleWriterCounter,
    /// Set once [`Here::close`] began.
    pub(in crate::scheduler) closed: AtomicBool,
}

impl<P> std::fmt::Debug for LocalHome<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHome").field("live", &self.live.get()).field("queued", &self.queued()).finish()
    }
}

/// What a thread keeps of its own home.
pub(in crate::scheduler) struct Here<P> {
    pub(in crate::scheduler) home: Arc<LocalHome<P>>,
    /// The live local tasks' wakers, for [`Here::close`].
    pub(in crate::scheduler) tasks: RefCell<Tasks>,
    /// Tasks the owner scheduled itself: no lock, no atomic read-modify-write.
    pub(in crate::scheduler) own: RefCell<VecDeque<Runnable<P>>>,
    /// The task the owner scheduled last, run next (at most [`MAX_NEXT_POLLS`] in a row), as
    /// from a worker's LIFO slot: a chain of local tasks waking each other runs with its data
    /// in cache, one tick per chain link of that length. The previous one goes to `own`'s back.
    pub(in crate::scheduler) next: Cell<Option<Runnable<P>>>,
    /// Tasks that woke themselves while they ran (a yield), in the order they did. A worker's
    /// picks move them to `own`'s back only at its fairness tick and once it has nothing else
    /// ([`LocalHome::release_yielded`]), as they move its deferred list to its deque;
    /// `block_on`'s loop and a former worker's take them once `own`, `remote` and `next` are
    /// empty ([`Here::pop`]).
    pub(in crate::scheduler) yielded: RefCell<VecDeque<Runnable<P>>>,
    /// Tasks in `own`, `next` and `yielded` (published in [`LocalHome::own_len`]).
    queued: Cell<usize>,
    pub(in crate::scheduler) parker: Parker,
    /// The core this thread runs is parked (in the reactor: a wake on this thread then comes
    /// from the reactor, and the core must wake itself).
    pub(in crate::scheduler) core_parked: Cell<bool>,
    /// `block_on`'s waker for its future, reused by the outermost `block_on` that drives.
    pub(in crate::scheduler) main: RefCell<Option<(StdArc<MainWake>, Waker)>>,
}

impl<P> Drop for Here<P> {
    fn drop(&mut self) {
        // The thread exits: every local task still alive is dropped here, on its thread.
        self.close();
    }
}

/// This thread's local queue, popped without a thread-local lookup per pop: for a worker's turn
/// of local tasks (`local_turn.rs`).
pub(in crate::scheduler) struct Queue<'a, P>(pub(in crate::scheduler) &'a Here<P>);

impl<P> Queue<'_, P> {
    /// As [`LocalHome::pop_next`].
    #[inline]
    pub(in crate::scheduler) fn pop_next(&self) -> Option<Runnable<P>> {
        self.0.pop_next()
    }

    /// As [`LocalHome::pop_ready`].
    #[inline]
    pub(in crate::scheduler) fn pop_ready(&self) -> Option<Runnable<P>> {
        self.0.pop_ready()
    }

    /// Whether this thread runs a core (the home's `core`, which the thread sets and clears as
    /// it takes a core and gives it up, hand-offs included).
    #[inline]
    pub(in crate::scheduler) fn runs_core(&self) -> bool {
        // Relaxed: written by this thread only.
        self.0.home.core.load(Ordering::Relaxed) != NO_CORE
    }
}

impl<P> Here<P> {
    /// A new home for this thread, of the pool `pool` whose core it runs, if any.
    pub(in crate::scheduler) fn new(pool: Option<Arc<P>>) -> Here<P> {
        let parker = Parker::new();
        let home = LocalHome {
            remote: Mutex::new(VecDeque::new()),
            remote_len: AtomicUsize::new(0),
            own_len: AtomicUsize::new(0),
            core: AtomicUsize::new(NO_CORE),
            pool,
            unparker: parker.unparker().clone(),
            live: SingleWriterCounter::default(),
            closed: AtomicBool::new(false),
        };
        Here {
            home: Arc::new(home),
            own: RefCell::new(VecDeque::new()),
            next: Cell::new(None),
            yielded: RefCell::new(VecDeque::new()),
            queued: Cell::new(0),
            tasks: RefCell::new(Tasks::default()),
            parker,
            core_parked: Cell::new(false),
            main: RefCell::new(None),
        }
    }

    /// The next queued task, if any: [`pop_ready`](Here::pop_ready)'s, else the oldest yielded.
    pub(in crate::scheduler) fn pop(&self) -> Option<Runnable<P>> {
        self.pop_ready().or_else(|| {
            let runnable = self.yielded.borrow_mut().pop_front()?;
            self.note_queued(-1);
            Some(runnable)
        })
    }

    /// The next queued task that did not yield, if any, oldest first: the owner's own, with what
    /// other threads pushed moved behind them at each pop (so that neither kind waits for the
    /// other to run dry), then `next`.
    pub(in crate::scheduler) fn pop_ready(&self) -> Option<Runnable<P>> {
        let home = &self.home;
        // Relaxed: a hint; the look before a wait locks `remote` (`is_empty`).
        if home.remote_len.load(Ordering::Relaxed) > 0 {
            let mut remote = lock(&home.remote);
            self.queued.set(self.queued.get() + remote.len());
            self.own.borrow_mut().extend(remote.drain(..));
            // Relaxed: under the lock.
            home.remote_len.store(0, Ordering::Relaxed);
        }
        let runnable = self.own.borrow_mut().pop_front().or_else(|| self.next.take());
        if runnable.is_some() {
            self.note_queued(-1);
        }
        runnable
    }

    /// The task scheduled last by the owner, if any (see `next`).
    pub(in crate::scheduler) fn pop_next(&self) -> Option<Runnable<P>> {
        let runnable = self.next.take()?;
        self.note_queued(-1);
        Some(runnable)
    }

    /// Counts `change` more tasks in `own`, `next` and `yielded`, and publishes the count for the
    /// picks' hint and the metrics.
    #[inline]
    pub(in crate::scheduler) fn note_queued(&self, change: isize) {
        let queued = self.queued.get().wrapping_add_signed(change);
        self.queued.set(queued);
        // Relaxed: written by the owner only, read as a hint and a statistic.
        self.home.own_len.store(queued, Ordering::Relaxed);
    }

    /// Whether no task is queued, `remote` looked at under its lock: the look before a wait.
    pub(in crate::scheduler) fn is_empty(&self) -> bool {
        self.queued.get() == 0 && lock(&self.home.remote).is_empty()
    }

    /// Closes the home (see the module docs): refuses new tasks, wakes every registered one, and
    /// drops every task that reaches the queue until none is alive, waiting on the parker for
    /// tasks in flight.
    pub(in crate::scheduler) fn close(&self) {
        let home = &self.home;
        home.closed.store(true, Ordering::SeqCst);
        let wakers = self.tasks.borrow_mut().close();
        for waker in wakers {
            waker.wake();
        }
        loop {
            // Each dropped outside the queue's borrow: its drop may schedule other local tasks.
            while let Some(runnable) = self.pop() {
                drop(runnable);
            }
            if home.live.get() == 0 {
                return;
            }
            // A task still alive is on its way here: woken just now, or by another thread.
            if self.is_empty() {
                self.parker.park();
            }
        }
    }
}

impl<P> LocalHome<P> {
    /// The core this home's thread runs, `core` of the pool it was made on: wakes from other
    /// threads go there from now on. Called by the owner.
    pub(in crate::scheduler) fn attach(&self, core: usize) {
        self.core.store(core, Ordering::SeqCst);
    }

    /// The thread gives its core up: wakes from other threads unpark the thread from now on,
    /// and the caller, which goes on to drive the home itself, looks at the queue only after
    /// this fence (pairs with the fence in [`wake_owner`](LocalHome::wake_owner)).
    pub(in crate::scheduler) fn detach(&self) {
        self.core.store(NO_CORE, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// Whether a task is queued (a hint: the owner's look before a wait locks the queue from
    /// other threads after a SeqCst fence, `park.rs`).
    #[inline]
    pub(in crate::scheduler) fn has_queued(&self) -> bool {
        // Relaxed: a hint for the owner's picks (see above).
        self.own_len.load(Ordering::Relaxed) > 0 || self.remote_len.load(Ordering::Relaxed) > 0
    }

    /// Tasks queued now, for the metrics.
    pub(crate) fn queued(&self) -> usize {
        // Relaxed: statistics.
        self.own_len.load(Ordering::Relaxed) + self.remote_len.load(Ordering::Relaxed)
    }

    /// Live local tasks, for the metrics.
    pub(crate) fn live(&self) -> u64 {
        self.live.get()
    }

    /// Notes in `runnable`'s record, if it keeps one (the dump), that it is queued here.
    #[inline]
    pub(in crate::scheduler) fn record_queued(&self, runnable: &Runnable<P>) {
        if let Some(record) = runnable.metadata().info().record() {
            // Relaxed: a label for the dump.
            let core = self.core.load(Ordering::Relaxed);
            record.queued(Activity::Local(if core == NO_CORE { Activity::NO_CORE } else { core }));
        }
    }
}

impl<P: WakeCore> LocalHome<P> {
    /// Pushes `runnable`, scheduled on another thread, onto `remote` and wakes the owner.
    pub(in crate::scheduler) fn push_remote(&self, runnable: Runnable<P>) {
        {
            let mut remote = lock(&self.remote);
            remote.push_back(runnable);
            // Relaxed: under the lock (see `remote_len`).
            self.remote_len.store(remote.len(), Ordering::Relaxed);
        }
        self.wake_owner();
    }

    /// After a push from another thread: a SeqCst fence, then a targeted wake of the core the
    /// owner runs, or of its parker.
    fn wake_owner(&self) {
        // Pairs with the owner's fence after listing its core as parked (`park.rs`) and after
        // giving the core up (`detach`): either the owner sees the push, or this load sees
        // what it did.
        fence(Ordering::SeqCst);
        let core = self.core.load(Ordering::SeqCst);
        match (&self.pool, core) {
            (Some(pool), core) if core != NO_CORE => pool.wake_core(core),
            _ => self.unparker.unpark(),
        }
    }
}

/// A thread's live local tasks' wakers, for [`Here::close`]: only the owner registers and
/// removes, so no lock. Once closed, it keeps nothing.
#[derive(Default)]
pub(in crate::scheduler) struct Tasks {
    wakers: Vec<Option<Waker>>,
    free: Vec<TaskKey>,
    closed: bool,
}

/// A local task's place in its thread's [`Tasks`]. Non-zero (the index plus one): the task
/// keeps it beside its future, in `Polled` (`local_spawn.rs`), where `Option`'s tag for the dropped future goes
/// in its niche (a coroutine has none), 8 bytes less in every local task's allocation.
#[derive(Clone, Copy)]
pub(in crate::scheduler) struct TaskKey(NonZeroUsize);

impl TaskKey {
    fn index(self) -> usize {
        self.0.get() - 1
    }
}

impl Tasks {
    /// A key for a task about to be made.
    #[inline]
    pub(in crate::scheduler) fn reserve(&mut self) -> TaskKey {
        self.free.pop().unwrap_or_else(|| {
            self.wakers.push(None);
            // The new slot's index (`len - 1`), plus one.
            TaskKey(NonZeroUsize::MIN.saturating_add(self.wakers.len() - 1))
        })
    }

    /// The task of `key` was made: its waker.
    #[inline]
    pub(in crate::scheduler) fn fill(&mut self, key: TaskKey, waker: Waker) {
        self.wakers[key.index()] = Some(waker);
    }

    /// The task of `key` ended (or was never made): its waker, for the caller to drop after
    /// the borrow.
    #[inline]
    pub(in crate::scheduler) fn remove(&mut self, key: TaskKey) -> Option<Waker> {
        if self.closed {
            return None;
        }
        self.free.push(key);
        self.wakers[key.index()].take()
    }

    /// Every registered waker; from now on, nothing is kept.
    fn close(&mut self) -> Vec<Waker> {
        self.closed = true;
        self.free = Vec::new();
        std::mem::take(&mut self.wakers).into_iter().flatten().collect()
    }
}

/// What `block_on`'s future's waker does while `block_on` drives the thread's local tasks: marks
/// the future woken and unparks the thread. `woken` is a `std` atomic, also under loom: the
/// waker reaches other threads through async-task's atomics, which loom cannot see, and the
/// parker's (loom's) lock orders the flag with the park.
pub(in crate::scheduler) struct MainWake {
    pub(in crate::scheduler) woken: std::sync::atomic::AtomicBool,
    pub(in crate::scheduler) unparker: Unparker,
}

impl Wake for MainWake {
    fn wake(self: StdArc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &StdArc<Self>) {
        // SeqCst: read by the driver after its parker's token (see `drive`).
        self.woken.store(true, std::sync::atomic::Ordering::SeqCst);
        self.unparker.unpark();
    }
}
