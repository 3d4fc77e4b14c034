//! Local (`!Send`) tasks: a thread's own queue, [`LocalHome`], which no other thread runs.
//!
//! Invariants:
//! - A local task belongs to the thread that spawned it: async-task's `spawn_local` checks the
//!   thread at every poll and at the drop of its future. It is queued only in that thread's
//!   home: never in a deque, a LIFO slot, a deferred list or the injector, so no searcher,
//!   watcher, takeover or hand-off moves it.
//! - A thread's home is made at its first `spawn_local` or `block_on` and lives in the
//!   thread-local [`HERE`]. The thread drives it in one of three ways: as a worker (the loop
//!   picks from it, `worker.rs`); inside `block_on`, between polls of the blocked-on future,
//!   unless that `block_on` runs inside a local task's poll ([`drive`]); and as a worker thread
//!   whose core went to another thread (handed off, or taken over): it runs its local tasks until
//!   none is alive, or its pool shuts down, then exits ([`finish_worker_thread`]).
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
//!   lock; the key is kept by the task's future, [`Polled`], and given back when the future is
//!   dropped), and, on a thread that works for or blocks in a pool that keeps task records, in that
//!   pool's registry too (the dump, `#[crew::test]`'s leftovers). When the thread stops being a
//!   pool's thread (its last worker life ended, as a spare thread's wait too: `run.rs`), or its
//!   thread-locals are destroyed, the home closes ([`Here::close`]): it refuses new tasks,
//!   wakes every registered one, and drops every task that reaches its queue until none is
//!   alive. So every local task is dropped on its own thread, exactly once, and once a home is
//!   closed no task of it is alive for a late wake to find.
//! - The main thread's thread-locals are never destroyed: local tasks still pending there when
//!   the process exits are never dropped (as any value still alive then).

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::num::NonZeroUsize;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use async_task::{Schedule, ScheduleInfo, WithInfo};

use super::context;
use super::registry::Registration;
use super::shared::Shared;
use super::shared::{RawRunnable, Runnable, TaskMeta};
use crate::identity::{Activity, OnTaskEnd, TaskId, TaskInfo};
use crate::sync::thread::LocalKey;
use crate::sync::{fence, lock, thread_local, Arc, AtomicBool, AtomicUsize, Mutex, Ordering, Parker};
use crate::sync::{SingleWriterCounter, Unparker};

/// [`LocalHome::core`] of a thread that runs no core.
const NO_CORE: usize = usize::MAX;

/// How many local tasks `block_on` runs between two looks at its own future's wake.
pub(super) const DRIVE_BATCH: usize = 61;

/// How many tasks in a row a driver takes from [`Here::next`] before the queue's oldest (the
/// worker loop's LIFO limit, `MAX_LIFO_POLLS`, for the same reason).
pub(super) const MAX_NEXT_POLLS: u32 = super::worker::MAX_LIFO_POLLS;

/// A thread's queue of its own local tasks, and how to wake the thread (see the module docs).
pub(crate) struct LocalHome {
    /// Tasks scheduled from other threads (the owner's own pushes go to [`Here::own`], with no
    /// lock); the owner moves them over before it pops.
    remote: Mutex<VecDeque<Runnable>>,
    /// `remote`'s length, written under its lock: read without it by the owner's pops.
    remote_len: AtomicUsize,
    /// The tasks in [`Here::own`], [`Here::next`] and [`Here::yielded`] ([`Here::queued`]),
    /// written by the owner: for its picks' hint and the metrics.
    own_len: AtomicUsize,
    /// The core this thread runs now, [`NO_CORE`] if none: where a wake from another thread
    /// goes. Set only by the owner.
    core: AtomicUsize,
    /// The pool whose core the thread ran when the home was made (`None`: it ran none).
    pool: Option<Arc<Shared>>,
    /// Wakes the owner while it runs no core (in `block_on`, or finishing its local tasks).
    unparker: Unparker,
    /// Live local tasks: raised at each spawn, lowered at each task's end, both on the owner.
    live: SingleWriterCounter,
    /// Set once [`Here::close`] began.
    closed: AtomicBool,
}

impl std::fmt::Debug for LocalHome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHome").field("live", &self.live.get()).field("queued", &self.queued()).finish()
    }
}

/// What a thread keeps of its own home.
struct Here {
    home: Arc<LocalHome>,
    /// The live local tasks' wakers, for [`Here::close`].
    tasks: RefCell<Tasks>,
    /// Tasks the owner scheduled itself: no lock, no atomic read-modify-write.
    own: RefCell<VecDeque<Runnable>>,
    /// The task the owner scheduled last, run next (at most [`MAX_NEXT_POLLS`] in a row), as
    /// from a worker's LIFO slot: a chain of local tasks waking each other runs with its data
    /// in cache, one tick per chain link of that length. The previous one goes to `own`'s back.
    next: Cell<Option<Runnable>>,
    /// Tasks that woke themselves while they ran (a yield), in the order they did. A worker's
    /// picks move them to `own`'s back only at its fairness tick and once it has nothing else
    /// ([`LocalHome::release_yielded`]), as they move its deferred list to its deque;
    /// `block_on`'s loop and a former worker's take them once `own`, `remote` and `next` are
    /// empty ([`Here::pop`]).
    yielded: RefCell<VecDeque<Runnable>>,
    /// Tasks in `own`, `next` and `yielded` (published in [`LocalHome::own_len`]).
    queued: Cell<usize>,
    parker: Parker,
    /// The core this thread runs is parked (in the reactor: a wake on this thread then comes
    /// from the reactor, and the core must wake itself).
    core_parked: Cell<bool>,
    /// `block_on`'s waker for its future, reused by the outermost `block_on` that drives.
    main: RefCell<Option<(StdArc<MainWake>, Waker)>>,
}

thread_local! {
    // Not `const {}`: loom's `thread_local!` has no const form.
    #[allow(clippy::missing_const_for_thread_local)]
    static HERE: OnceCell<Here> = OnceCell::new();
}

impl Drop for Here {
    fn drop(&mut self) {
        // The thread exits: every local task still alive is dropped here, on its thread.
        self.close();
    }
}

/// Runs `f` on this thread's [`Here`], making it first (and attaching it to the core the thread
/// runs, if any). `None` while the thread-locals are being destroyed.
fn with_here<R>(f: impl FnOnce(&Here) -> R) -> Option<R> {
    HERE.try_with(|here| {
        let mut made = false;
        let here = here.get_or_init(|| {
            made = true;
            Here::new()
        });
        if made {
            context::attach_home(&here.home);
        }
        f(here)
    })
    .ok()
}

/// Notes that this thread's core parks (`true`) or woke, for a wake of one of its local tasks
/// from inside the reactor (`LocalHome::schedule`). Called only by a thread with a home.
pub(super) fn note_core_parked(parked: bool) {
    let _ = HERE.try_with(|here| here.get().map(|here| here.core_parked.set(parked)));
}

/// This thread's home, if it has one.
pub(super) fn this_thread_home() -> Option<Arc<LocalHome>> {
    HERE.try_with(|here| here.get().map(|here| here.home.clone())).ok().flatten()
}

/// This thread's local queue, popped without a thread-local lookup per pop: for a worker's turn
/// of local tasks (`local_turn.rs`).
pub(super) struct Queue<'a>(&'a Here);

impl Queue<'_> {
    /// As [`LocalHome::pop_next`].
    #[inline]
    pub(super) fn pop_next(&self) -> Option<Runnable> {
        self.0.pop_next()
    }

    /// As [`LocalHome::pop_ready`].
    #[inline]
    pub(super) fn pop_ready(&self) -> Option<Runnable> {
        self.0.pop_ready()
    }

    /// Whether this thread runs a core (the home's `core`, which the thread sets and clears as
    /// it takes a core and gives it up, hand-offs included).
    #[inline]
    pub(super) fn runs_core(&self) -> bool {
        // Relaxed: written by this thread only.
        self.0.home.core.load(Ordering::Relaxed) != NO_CORE
    }
}

/// Runs `f` on this thread's local queue; `None` if the thread has no home (or while its
/// thread-locals are being destroyed).
#[inline]
pub(super) fn with_queue<R>(f: impl FnOnce(Queue<'_>) -> R) -> Option<R> {
    HERE.try_with(|here| here.get().map(|here| f(Queue(here)))).ok().flatten()
}

impl Here {
    fn new() -> Here {
        let parker = Parker::new();
        let core = context::current_core();
        let home = LocalHome {
            remote: Mutex::new(VecDeque::new()),
            remote_len: AtomicUsize::new(0),
            own_len: AtomicUsize::new(0),
            core: AtomicUsize::new(NO_CORE),
            pool: core.map(|(pool, _)| pool),
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
    fn pop(&self) -> Option<Runnable> {
        self.pop_ready().or_else(|| {
            let runnable = self.yielded.borrow_mut().pop_front()?;
            self.note_queued(-1);
            Some(runnable)
        })
    }

    /// The next queued task that did not yield, if any, oldest first: the owner's own, with what
    /// other threads pushed moved behind them at each pop (so that neither kind waits for the
    /// other to run dry), then `next`.
    fn pop_ready(&self) -> Option<Runnable> {
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
    fn pop_next(&self) -> Option<Runnable> {
        let runnable = self.next.take()?;
        self.note_queued(-1);
        Some(runnable)
    }

    /// Counts `change` more tasks in `own`, `next` and `yielded`, and publishes the count for the
    /// picks' hint and the metrics.
    #[inline]
    fn note_queued(&self, change: isize) {
        let queued = self.queued.get().wrapping_add_signed(change);
        self.queued.set(queued);
        // Relaxed: written by the owner only, read as a hint and a statistic.
        self.home.own_len.store(queued, Ordering::Relaxed);
    }

    /// Whether no task is queued, `remote` looked at under its lock: the look before a wait.
    fn is_empty(&self) -> bool {
        self.queued.get() == 0 && lock(&self.home.remote).is_empty()
    }

    /// Closes the home (see the module docs): refuses new tasks, wakes every registered one, and
    /// drops every task that reaches the queue until none is alive, waiting on the parker for
    /// tasks in flight.
    fn close(&self) {
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

impl LocalHome {
    /// The core this home's thread runs, `core` of the pool it was made on: wakes from other
    /// threads go there from now on. Called by the owner.
    pub(super) fn attach(&self, core: usize) {
        self.core.store(core, Ordering::SeqCst);
    }

    /// The thread gives its core up: wakes from other threads unpark the thread from now on,
    /// and the caller, which goes on to drive the home itself, looks at the queue only after
    /// this fence (pairs with the fence in [`wake_owner`](LocalHome::wake_owner)).
    pub(super) fn detach(&self) {
        self.core.store(NO_CORE, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    /// Whether a task is queued (a hint: the owner's look before a wait locks the queue from
    /// other threads after a SeqCst fence, `park.rs`).
    #[inline]
    pub(super) fn has_queued(&self) -> bool {
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

    /// The next queued task, if any. Called by the owner.
    #[inline]
    pub(super) fn pop(&self) -> Option<Runnable> {
        HERE.try_with(|here| here.get().and_then(Here::pop)).ok().flatten()
    }

    /// The next queued task that did not yield, if any (a worker's pick). Called by the owner.
    #[inline]
    pub(super) fn pop_ready(&self) -> Option<Runnable> {
        HERE.try_with(|here| here.get().and_then(Here::pop_ready)).ok().flatten()
    }

    /// Whether a yielded task waits (see [`Here::yielded`]). Called by the owner.
    pub(super) fn has_yielded(&self) -> bool {
        HERE.try_with(|here| here.get().is_some_and(|here| !here.yielded.borrow().is_empty())).unwrap_or(false)
    }

    /// Moves the yielded tasks to the back of the queue, in the order they yielded: a worker's
    /// fairness tick, and its pick once it has nothing else. Returns whether there were any.
    /// Called by the owner.
    pub(super) fn release_yielded(&self) -> bool {
        HERE.try_with(|here| {
            let Some(here) = here.get() else { return false };
            let mut yielded = here.yielded.borrow_mut();
            let any = !yielded.is_empty();
            here.own.borrow_mut().extend(yielded.drain(..));
            any
        })
        .unwrap_or(false)
    }

    /// The task the owner scheduled last, if it is still queued (see [`Here::next`]). Called by
    /// the owner.
    #[inline]
    pub(super) fn pop_next(&self) -> Option<Runnable> {
        HERE.try_with(|here| here.get().and_then(Here::pop_next)).ok().flatten()
    }

    /// Whether no task is queued, looked at under the lock of the queue other threads push to:
    /// the owner's look before a wait.
    pub(super) fn is_empty_locked(&self) -> bool {
        HERE.try_with(|here| here.get().map_or(true, Here::is_empty)).unwrap_or(true)
    }

    /// Notes in `runnable`'s record, if it keeps one (the dump), that it is queued here.
    #[inline]
    fn record_queued(&self, runnable: &Runnable) {
        if let Some(record) = runnable.metadata().info().record() {
            // Relaxed: a label for the dump.
            let core = self.core.load(Ordering::Relaxed);
            record.queued(Activity::Local(if core == NO_CORE { Activity::NO_CORE } else { core }));
        }
    }

    /// A local task's schedule: on the owner, into `next` (the one before goes to the back of
    /// its own queue), or, if the task woke itself while it ran (a yield), into `yielded`,
    /// behind the others; its core woken if it is parked (a wake from inside the reactor). From
    /// any other thread, onto `remote`, then wake the owner (see the module docs). Never drops
    /// the task (a wake).
    #[inline]
    fn schedule(&self, runnable: Runnable, woken_while_running: bool) {
        self.record_queued(&runnable);
        let mut task = Some(runnable);
        let core_parked = HERE.try_with(|here| match here.get() {
            Some(here) if std::ptr::eq(&*here.home, self) => {
                if woken_while_running {
                    here.yielded.borrow_mut().extend(task.take());
                } else if let Some(behind) = here.next.replace(task.take()) {
                    here.own.borrow_mut().push_back(behind);
                }
                here.note_queued(1);
                here.core_parked.get()
            }
            _ => false,
        });
        match task {
            // Another thread, or this one while its locals are destroyed (a drop in `close`,
            // which looks at `remote` again anyway).
            Some(runnable) => self.push_remote(runnable),
            None if matches!(core_parked, Ok(true)) => context::wake_own_parked_core(),
            None => {}
        }
    }

    /// Pushes `runnable`, scheduled on another thread, onto `remote` and wakes the owner.
    fn push_remote(&self, runnable: Runnable) {
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
struct Tasks {
    wakers: Vec<Option<Waker>>,
    free: Vec<TaskKey>,
    closed: bool,
}

/// A local task's place in its thread's [`Tasks`]. Non-zero (the index plus one): the task
/// keeps it beside its future, in [`Polled`], where `Option`'s tag for the dropped future goes
/// in its niche (a coroutine has none), 8 bytes less in every local task's allocation.
#[derive(Clone, Copy)]
struct TaskKey(NonZeroUsize);

impl TaskKey {
    fn index(self) -> usize {
        self.0.get() - 1
    }
}

impl Tasks {
    /// A key for a task about to be made.
    #[inline]
    fn reserve(&mut self) -> TaskKey {
        self.free.pop().unwrap_or_else(|| {
            self.wakers.push(None);
            // The new slot's index (`len - 1`), plus one.
            TaskKey(NonZeroUsize::MIN.saturating_add(self.wakers.len() - 1))
        })
    }

    /// The task of `key` was made: its waker.
    #[inline]
    fn fill(&mut self, key: TaskKey, waker: Waker) {
        self.wakers[key.index()] = Some(waker);
    }

    /// The task of `key` ended (or was never made): its waker, for the caller to drop after
    /// the borrow.
    #[inline]
    fn remove(&mut self, key: TaskKey) -> Option<Waker> {
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

/// What a local task tells at its end: its home's live count (its [`Polled`] future gave its
/// key in [`Tasks`] back when it was dropped, just before).
struct HomeEnd {
    home: Arc<LocalHome>,
}

impl OnTaskEnd for HomeEnd {
    #[inline]
    fn task_ended(&mut self) {
        // One writer: the owner (a local task's future is dropped on its thread only).
        self.home.live.decr();
    }
}

thread_local! {
    /// `block_on` calls running on this thread now: `spawn_local` works inside them.
    // Not `const {}`: loom's `thread_local!` has no const form.
    #[allow(clippy::missing_const_for_thread_local)]
    static BLOCK_ON_DEPTH: Cell<usize> = Cell::new(0);
}

/// True inside a `block_on` on this thread.
fn in_block_on() -> bool {
    Counted::is_raised(&BLOCK_ON_DEPTH)
}

/// Counts one more `block_on` running on this thread until the guard drops.
pub(crate) fn enter_block_on() -> Counted {
    Counted::raise(&BLOCK_ON_DEPTH)
}

// Local tasks being polled on this thread now: one, unless a local task's poll drives another
// executor that polls local tasks of this thread (only `block_on`, which then does not drive
// them). Read at every local poll: a `const` thread-local outside loom (`sync::const_thread_local`).
crate::sync::const_thread_local! {
    static POLLING: Cell<usize> = Cell::new(0);
}

/// True while a local task is being polled on this thread.
fn in_local_poll() -> bool {
    Counted::is_raised(&POLLING)
}

/// A guard that counts one more in a per-thread count ([`BLOCK_ON_DEPTH`], [`POLLING`]) while
/// it lives; a panic unwinds through it. A thread whose locals are being destroyed counts
/// nothing.
pub(crate) struct Counted {
    count: &'static LocalKey<Cell<usize>>,
    raised: bool,
}

impl Counted {
    #[inline]
    fn raise(count: &'static LocalKey<Cell<usize>>) -> Counted {
        let raised = count.try_with(|count| count.set(count.get() + 1)).is_ok();
        Counted { count, raised }
    }

    /// True while some guard counts in `count` on this thread.
    #[inline]
    fn is_raised(count: &'static LocalKey<Cell<usize>>) -> bool {
        count.try_with(Cell::get).unwrap_or(0) > 0
    }
}

impl Drop for Counted {
    #[inline]
    fn drop(&mut self) {
        if self.raised {
            let _ = self.count.try_with(|count| count.set(count.get() - 1));
        }
    }
}

/// How a local task's allocation and handle are made, for [`spawn`]: by the layer that owns the
/// handles (`spawning/build.rs`), from the metadata, the end, the future as this thread's home
/// wraps it, and the schedule function that [`spawn`] gives it.
pub(crate) trait MakeLocal<F: Future> {
    /// The task's handle.
    type Handle;

    /// The task `meta` from `future`, scheduled by `schedule`, telling `end` when it ends.
    fn make<G, S, E>(meta: TaskMeta, end: E, future: G, schedule: S) -> (Runnable, Self::Handle)
    where
        G: Future<Output = F::Output> + 'static,
        S: Schedule<TaskMeta> + Send + Sync + 'static,
        E: OnTaskEnd;

    /// The handle of a task refused before it was made, with the identity it would have had.
    fn refused(id: TaskId, location: &'static Location<'static>) -> Self::Handle;
}

/// Spawns the local task `info` from `future` on this thread (see the module docs), registered
/// in the thread's [`Tasks`] and, if the pool the thread works for or blocks in keeps task
/// records, in that pool's registry. A task refused (the home or the pool closing) has its
/// future dropped here and a handle that reports it cancelled.
///
/// # Panics
///
/// On a thread that runs no local tasks (see [`crate::spawn_local`]).
#[track_caller]
pub(crate) fn spawn<M, F>(info: TaskInfo, future: F) -> M::Handle
where
    M: MakeLocal<F>,
    F: Future + 'static,
    F::Output: 'static,
{
    let pool = context::local_spawn_pool();
    if !(pool.is_some() || in_block_on() || in_local_poll()) {
        panic!(
            "crew::spawn_local works only where crew runs local tasks: inside a task on a crew worker \
             thread, or inside crew::block_on or Pool::block_on; from any other thread, use crew::spawn_pinned"
        );
    }
    let Some((home, key)) = with_here(|here| (here.home.clone(), here.tasks.borrow_mut().reserve())) else {
        panic!("crew::spawn_local was called while this thread's thread-locals are being destroyed");
    };
    let (id, location) = (info.id(), info.location());
    let forget_key = || with_here(|here| drop(here.tasks.borrow_mut().remove(key)));
    // Only the owner closes its home: no close can begin between this check and the register.
    if home.closed.load(Ordering::SeqCst) {
        return M::refused(id, location);
    }
    // The pool's registry lists a local task only for the dump (and `#[crew::test]`'s check of
    // leftovers): a pool's shutdown drops its threads' local tasks through their homes.
    let registry = pool.flatten();
    let info = if registry.is_some() { info.with_record() } else { info };
    // The task holds the home twice (its schedule function, its end); this one moves into it.
    let end = HomeEnd { home: home.clone() };
    let schedule = WithInfo(move |runnable: RawRunnable, info: ScheduleInfo| {
        home.schedule(Runnable::new(runnable), info.woken_while_running)
    });
    // Without a registry the task carries no registration (24 bytes less in every local
    // task's allocation), as `Shared::spawn` builds an ordinary task.
    let spawned = match registry {
        None => Some(M::make(TaskMeta::new(info, None), end, Polled { future, key }, schedule)),
        Some(registry) => registry
            .register(
                context::shard_hint(),
                |registration: Registration| {
                    M::make(TaskMeta::new(info, None), (end, registration), Polled { future, key }, schedule)
                },
                |(runnable, _): &(Runnable, M::Handle)| (runnable.waker(), Some(runnable.metadata().info().clone())),
            )
            .ok(),
    };
    // Refused by the pool (shutting down): its future was dropped with the closure, here.
    let Some((runnable, handle)) = spawned else {
        forget_key();
        return M::refused(id, location);
    };
    with_here(|here| {
        here.tasks.borrow_mut().fill(key, runnable.waker());
        here.home.live.incr();
    });
    context::count_local_spawn();
    runnable.schedule();
    handle
}

pin_project_lite::pin_project! {
    /// A local task's future, counted in its thread's [`POLLING`] while polled, so that a
    /// `block_on` inside it does not run the thread's other local tasks; with the task's key in
    /// its thread's [`Tasks`], given back when the future is dropped (on its thread: async-task
    /// drops a local task's future nowhere else).
    struct Polled<F> {
        #[pin]
        future: F,
        key: TaskKey,
    }

    impl<F> PinnedDrop for Polled<F> {
        fn drop(this: Pin<&mut Self>) {
            let key = *this.project().key;
            // While the thread-locals are destroyed, `close` already took every waker.
            let waker = HERE
                .try_with(|here| here.get().and_then(|here| here.tasks.try_borrow_mut().ok()?.remove(key)))
                .ok()
                .flatten();
            drop(waker);
        }
    }
}

impl<F: Future> Future for Polled<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _polling = Counted::raise(&POLLING);
        self.project().future.poll(cx)
    }
}

/// What `block_on`'s future's waker does while `block_on` drives the thread's local tasks: marks
/// the future woken and unparks the thread. `woken` is a `std` atomic, also under loom: the
/// waker reaches other threads through async-task's atomics, which loom cannot see, and the
/// parker's (loom's) lock orders the flag with the park.
struct MainWake {
    woken: std::sync::atomic::AtomicBool,
    unparker: Unparker,
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

/// `block_on`'s loop: polls `future` (through `poll`) whenever it was woken, runs the thread's
/// local tasks in between (at most [`DRIVE_BATCH`] before looking at the future's wake again),
/// and parks when neither has anything to do. `None`, with `future` never polled, where
/// `block_on` must not run them: inside a local task's poll (its other local tasks run after
/// it returns), or while this thread's locals are being destroyed. The caller then blocks on a
/// parker of its own.
pub(crate) fn drive<F: Future>(
    mut future: Pin<&mut F>,
    poll: &mut impl FnMut(Pin<&mut F>, &mut Context<'_>) -> Poll<F::Output>,
) -> Option<F::Output> {
    let (home, main) = with_here(|here| {
        if in_local_poll() {
            return None;
        }
        let main = here.main.borrow_mut().take().unwrap_or_else(|| {
            let woken = std::sync::atomic::AtomicBool::new(true);
            let wake = StdArc::new(MainWake { woken, unparker: here.home.unparker.clone() });
            (wake.clone(), Waker::from(wake))
        });
        Some((here.home.clone(), main))
    })??;
    let (wake, waker) = &main;
    wake.woken.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut cx = Context::from_waker(waker);
    let output = loop {
        if wake.woken.swap(false, std::sync::atomic::Ordering::SeqCst) {
            if let Poll::Ready(output) = poll(future.as_mut(), &mut cx) {
                break output;
            }
        }
        // No local task alive (the owner counts them): none to run, none to wake this thread
        // but the future's waker.
        let (mut ran, mut streak) = (0, 0);
        while ran < DRIVE_BATCH && home.live() > 0 {
            let next = if streak < MAX_NEXT_POLLS { home.pop_next() } else { None };
            streak = if next.is_some() { streak + 1 } else { 0 };
            let Some(runnable) = next.or_else(|| home.pop()) else { break };
            run_off_core(runnable);
            ran += 1;
        }
        // The parker's token covers a wake that comes after these looks (`MainWake`, a push's
        // `wake_owner`: this thread runs no core while it blocks).
        if ran == 0
            && !wake.woken.load(std::sync::atomic::Ordering::SeqCst)
            && (home.live() == 0 || home.is_empty_locked())
        {
            with_here(|here| here.parker.park());
        }
    };
    with_here(|here| *here.main.borrow_mut() = Some(main));
    Some(output)
}

/// Runs a local task on its thread while the thread runs no core (`drive`, and
/// `finish_worker_thread`): as the worker loop's `begin_poll`/`finish_poll` do for a task with
/// a record, the task dump shows it running (off any worker) during the poll.
#[inline]
fn run_off_core(runnable: Runnable) {
    if runnable.metadata().info().record().is_none() {
        super::worker::run_task(runnable);
    } else {
        run_recorded_off_core(runnable);
    }
}

/// `run_off_core` for a task with a record, out of the common path. The identity is cloned:
/// the task may be freed when its poll returns.
#[cold]
#[inline(never)]
fn run_recorded_off_core(runnable: Runnable) {
    let info = runnable.metadata().info().clone();
    if let Some(record) = info.record() {
        record.running(Activity::NO_CORE);
    }
    super::worker::run_task(runnable);
    if let Some(record) = info.record() {
        record.poll_ended();
    }
}

/// The end of a worker thread's worker life (its core retired, given up or handed off): if it
/// owns local tasks, it runs them until none is alive, or until `shared`'s pool shuts down
/// (then [`close_thread_home`] drops what is left, see the module docs). Shutdown wakes it
/// (`orphans`).
pub(super) fn finish_worker_thread(shared: &Arc<Shared>) {
    let Some(home) = this_thread_home() else { return };
    // The thread stays its pool's: tasks its local tasks spawn go there.
    let _entered = context::enter_pool(shared);
    shared.note_orphan(&home, true);
    loop {
        // After `note_orphan`'s lock: shutdown sets its flag before it wakes the orphans.
        if shared.is_shutdown() {
            break;
        }
        if let Some(runnable) = home.pop() {
            run_off_core(runnable);
            continue;
        }
        if home.live() == 0 {
            break;
        }
        if home.is_empty_locked() {
            with_here(|here| here.parker.park());
        }
    }
    shared.note_orphan(&home, false);
}

/// Closes this thread's local home, if it has one, as its thread ends its life as a pool's
/// thread: no local task can be spawned on it after this, and what is left is dropped.
pub(super) fn close_thread_home() {
    if this_thread_home().is_some() {
        with_here(Here::close);
    }
}

impl Shared {
    /// Lists (`true`) or unlists a thread that finishes its local tasks after its worker life,
    /// so that shutdown wakes it.
    fn note_orphan(&self, home: &Arc<LocalHome>, listed: bool) {
        let mut orphans = lock(&self.orphans);
        if listed {
            orphans.push(home.clone());
        } else {
            orphans.retain(|orphan| !Arc::ptr_eq(orphan, home));
        }
    }

    /// Wakes the threads that finish their local tasks, for shutdown (after its flag is set).
    pub(super) fn wake_orphans(&self) {
        for orphan in lock(&self.orphans).iter() {
            orphan.unparker.unpark();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    fn sizes<F>(_: &F) -> [usize; 4] {
        [size_of::<F>(), size_of::<Option<F>>(), size_of::<Polled<F>>(), size_of::<Option<Polled<F>>>()]
    }

    #[test]
    fn the_key_beside_a_local_future_holds_the_tag_of_its_drop() {
        let number = std::rc::Rc::new(7_u64);
        let future = async move { *number };
        let [bare, optional, polled, optional_polled] = sizes(&future);
        // A coroutine has no niche: `Option` adds a word to it, which is why the key carries it.
        assert!(optional > bare, "Option<F>: {optional} bytes, F: {bare}");
        assert_eq!(polled, bare + size_of::<TaskKey>());
        assert_eq!(optional_polled, polled, "the key's niche holds Option's tag");
    }
}
