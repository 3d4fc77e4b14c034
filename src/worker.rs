//! The worker loop, the per-thread worker context, and handing a core to another thread.
//!
//! Invariants:
//! - A [`Core`] (a worker's LIFO slot, FIFO deque, tick and search state) lives in the thread-local
//!   `CURRENT` of the one thread running its loop. Tasks scheduled on that thread for the same pool
//!   go into it; everything else goes to the pool's injector.
//! - The `CURRENT` borrow is never held while user code runs: the loop borrows it to pick a task,
//!   releases it, then runs the task. A failed borrow (user code reached from inside one of crew's
//!   own borrows) falls back to the injector, so scheduling never panics.
//! - Order of picking: the LIFO slot, at most [`MAX_LIFO_POLLS`] times in a row, without a tick
//!   (a task run from it continues its waker's tick, as in tokio); then, one tick: every
//!   [`GLOBAL_QUEUE_INTERVAL`] ticks the deferred list moves to the back of the deque and this
//!   worker takes its share of the injector first (fairness to yielders and outside spawns); the
//!   LIFO slot's task, if it had its turns, goes to the back of the deque; then the deque; then a
//!   batch from the injector; then
//!   the deferred list; then, as a searcher, a batch stolen from a random victim or the injector,
//!   or the older half of a victim's deferred list as a last resort; then park (see `sleep`), as
//!   the watcher if another core's LIFO slot holds a task (see `watch`).
//! - A task woken while it runs (a yield) goes to the core's deferred list, never the LIFO slot:
//!   it runs once the worker has nothing else (LIFO slot, deque and injector empty, and, for a
//!   loop inside the reactor, after one reactor turn that does not block, if the last was
//!   [`REACTOR_TURN_GAP`] ago or more), or at the
//!   next fairness tick (every [`GLOBAL_QUEUE_INTERVAL`] ticks the list moves to the back of the
//!   deque). So a task that wakes itself forever cannot starve the others, and a yielder does not
//!   delay work that is ready (tokio defers `yield_now` the same way).
//! - A worker never parks with a task in its LIFO slot, deque or deferred list.
//! - Every task that enters a deque or a deferred list is announced with `notify_one`, unless its
//!   worker pops it at once; every push into the LIFO slot with `notify_private`. Searchers steal
//!   from deques, the injector and deferred lists; the LIFO slot is private to its owner, which
//!   keeps chains of wakes on one worker, and to the watcher, which takes its task when the owner
//!   is stuck inside one poll (a `std` lock, a barrier, long CPU work): a task is never stranded
//!   behind a blocked owner while another worker is idle.
//! - Nothing is stranded behind a blocked worker: `block_on` on a worker thread first hands the
//!   whole core (slot and deque included) to a fresh thread that carries on the loop; the blocked
//!   thread runs no more worker loop and exits once its current task's poll returns.

use std::cell::{Cell, RefCell};
#[cfg(not(loom))]
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::panic::{self, AssertUnwindSafe};
#[cfg(not(loom))]
use std::pin::Pin;
#[cfg(not(loom))]
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use async_task::Runnable;

use crate::pool::{Queued, Shared};
#[cfg(not(loom))]
use crate::sync::EventListener;
use crate::sync::{fence, lock, planted_bug, retry, thread_local, Arc, Ordering, Worker};
use crate::watch::Watch;

/// Every this many ticks, a worker takes a task from the injector before its own queue.
pub(crate) const GLOBAL_QUEUE_INTERVAL: u32 = if cfg!(loom) { 2 } else { 61 };

/// The most tasks a worker moves from the injector at the fairness interval.
pub(crate) const MAX_INTERVAL_BATCH: usize = if cfg!(loom) { 2 } else { 128 };

/// How many tasks in a row a worker takes from its LIFO slot before going back to its deque.
pub(crate) const MAX_LIFO_POLLS: u32 = 3;

thread_local! {
    // Not `const {}`: loom's `thread_local!` has no const form.
    #[allow(clippy::missing_const_for_thread_local)]
    static CURRENT: RefCell<Option<Current>> = RefCell::new(None);
}

/// What a worker thread knows about itself.
struct Current {
    shared: Arc<Shared>,
    /// `None` once the core was handed to another thread.
    core: Option<Box<Core>>,
}

/// One worker's local state; owned by the thread running its loop.
pub(crate) struct Core {
    index: usize,
    /// Whether this core may have put a task in its LIFO slot since it last emptied it (a thief
    /// may have taken it since): saves locking the slot per task when it is unused.
    lifo_filled: bool,
    /// Whether this core may have deferred a task since it last flushed its deferred list (a
    /// thief may have taken them since): saves a lock per pick when nothing was deferred.
    deferred_filled: bool,
    local: Worker<Runnable>,
    lifo_polls: u32,
    tick: u32,
    searching: bool,
    rng: FastRand,
    /// Spawns made on this core, to spread their registry entries over shards.
    spawns: usize,
    /// Listed as parked and waiting for its token, in a worker loop run as a future.
    parked: bool,
    /// That loop's registered listener while it is parked.
    #[cfg(not(loom))]
    listener: Option<EventListener>,
    /// The current term, while this core holds the watcher role or was last woken from it.
    watch: Option<Watch>,
    /// The watcher's deadline as an async-io timer, in a worker loop run as a future.
    #[cfg(not(loom))]
    watch_timer: Option<async_io::Timer>,
    /// Where this core stands on looking at the reactor before it runs its deferred tasks.
    reactor_turn: ReactorTurn,
    /// When this core last gave the reactor a turn before its deferred tasks (`None`: never).
    last_reactor_turn: Option<Instant>,
}

/// A worker gives the reactor a turn before its deferred tasks at most once per this long. A
/// turn costs several syscalls (polling's epoll wait and timer re-arm): one per yield of a lone
/// task that yields fast made async-executor's `web_server` workload 30% slower (median of five
/// runs, 1.56 to 2.09 ms); with this gap it was level (1.62 ms). Tasks that compute for longer
/// than this between yields get a turn before every one of their runs.
pub(crate) const REACTOR_TURN_GAP: Duration = Duration::from_micros(250);

/// Before a worker that drives the reactor runs its deferred tasks (yields) for want of other
/// work, it lets the reactor turn once without blocking (at most once per [`REACTOR_TURN_GAP`]),
/// so that tasks woken by I/O and timers run before tasks that merely yielded (tokio polls its
/// driver before waking its deferred tasks likewise). Without that, workers kept busy by
/// yielding tasks would leave I/O and timer wakes to the turn every [`GLOBAL_QUEUE_INTERVAL`]
/// tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(loom, allow(dead_code))] // loom builds have no reactor: nothing gives the turn
enum ReactorTurn {
    /// This loop does not run inside the reactor (`drive_reactor(false)`, or loom).
    Off,
    /// No turn asked for since the deferred tasks last ran.
    Idle,
    /// `next_local` stopped short of the deferred tasks: the loop is to give the reactor a turn.
    Wanted,
    /// The turn was given: the deferred tasks run at the next look.
    Given,
}

impl Core {
    /// Core `index` of a pool whose loops run inside the reactor if `in_reactor`.
    pub(crate) fn new(index: usize, local: Worker<Runnable>, in_reactor: bool) -> Core {
        Core {
            index,
            lifo_filled: false,
            deferred_filled: false,
            local,
            lifo_polls: 0,
            tick: 0,
            searching: false,
            rng: FastRand::new(index as u64),
            spawns: 0,
            parked: false,
            #[cfg(not(loom))]
            listener: None,
            watch: None,
            #[cfg(not(loom))]
            watch_timer: None,
            reactor_turn: if in_reactor { ReactorTurn::Idle } else { ReactorTurn::Off },
            last_reactor_turn: None,
        }
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// Puts a task scheduled on this worker's thread into its queues (a yield into the deferred
    /// list, anything else into the LIFO slot, whose previous task goes to the deque). Returns
    /// true if a task entered a queue that searchers steal from (the deferred list or the
    /// deque), false if only the private LIFO slot changed.
    fn push(&mut self, shared: &Shared, runnable: Runnable, is_yield: bool) -> bool {
        let remote = shared.remote(self.index);
        if is_yield {
            self.deferred_filled = true;
            if planted_bug!("lost_yield") {
                drop(runnable);
            } else {
                lock(&remote.deferred).push(runnable);
            }
            return true;
        }
        self.lifo_filled = true;
        match remote.lifo.swap(runnable) {
            Some(previous) => {
                self.local.push(previous);
                true
            }
            None => false,
        }
    }

    /// True if the reactor had no turn before this core's deferred tasks for
    /// [`REACTOR_TURN_GAP`].
    fn reactor_turn_due(&self) -> bool {
        self.last_reactor_turn.map_or(true, |last| last.elapsed() >= REACTOR_TURN_GAP)
    }

    /// The next task to run, parking (blocking the thread) while there is none. `None`: the
    /// pool shuts down.
    fn next_task(&mut self, shared: &Shared) -> Option<Runnable> {
        loop {
            if shared.is_shutdown() {
                return None;
            }
            if let Some(runnable) = self.find_task(shared) {
                return Some(runnable);
            }
            if self.prepare_park(shared) {
                match &self.watch {
                    Some(watch) => shared.sleepers.park_until(self.index, watch.deadline()),
                    None => shared.sleepers.park(self.index),
                }
                self.unparked(shared);
            }
        }
    }

    /// As [`next_task`](Core::next_task) for a worker loop run as a future: instead of blocking,
    /// returns `Pending` while parked, with `cx` registered to be woken with the token.
    #[cfg(not(loom))]
    fn poll_next_task(&mut self, shared: &Shared, cx: &mut Context<'_>) -> Poll<Option<Runnable>> {
        loop {
            if self.parked {
                if shared.sleepers.poll_park(self.index, &mut self.listener, cx).is_pending() {
                    // The watcher's deadline: wake itself (its token is then there, or on its
                    // way from a notify that picked it first) and poll the parker again.
                    let expired = self.watch_timer.as_mut().is_some_and(|timer| Pin::new(timer).poll(cx).is_ready());
                    if !expired {
                        return Poll::Pending;
                    }
                    self.watch_timer = None;
                    shared.sleepers.wake_self(self.index);
                    continue;
                }
                self.parked = false;
                self.watch_timer = None;
                self.unparked(shared);
            }
            if shared.is_shutdown() {
                return Poll::Ready(None);
            }
            if let Some(runnable) = self.find_task(shared) {
                return Poll::Ready(Some(runnable));
            }
            if self.reactor_turn == ReactorTurn::Wanted {
                // `async_io::block_on` turns the reactor (if no other thread holds it) when the
                // future it polls returns `Pending` having woken itself, then polls it again.
                self.reactor_turn = ReactorTurn::Given;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.parked = self.prepare_park(shared);
            if self.parked {
                self.watch_timer = self.watch.as_ref().map(|watch| async_io::Timer::at(watch.deadline()));
            }
        }
    }

    /// A task from this core's queues, the injector, or (as a searcher) other workers.
    fn find_task(&mut self, shared: &Shared) -> Option<Runnable> {
        let found = match self.next_local(shared) {
            Some(runnable) => Some(runnable),
            // Back after the reactor's turn, to run the deferred tasks.
            None if self.reactor_turn == ReactorTurn::Wanted => None,
            None if self.searching || self.start_searching(shared) => self.steal(shared),
            None => None,
        };
        if found.is_some() {
            self.stop_searching(shared);
        }
        found
    }

    /// A task from this worker's own queues or an injector batch, without searching.
    fn next_local(&mut self, shared: &Shared) -> Option<Runnable> {
        // The LIFO slot first, while it has turns left: a task it runs continues the tick of
        // the task that woke it (as in tokio), so a chain of wakes counts one tick per
        // `MAX_LIFO_POLLS + 1` tasks, not one per task.
        if self.lifo_polls < MAX_LIFO_POLLS {
            if let Some(runnable) = self.take_lifo(shared) {
                self.lifo_polls += 1;
                return Some(runnable);
            }
        }
        self.tick = self.tick.wrapping_add(1);
        if self.tick % GLOBAL_QUEUE_INTERVAL == 0 {
            // Fairness: yielded tasks wait at most this long behind a stream of new work, and
            // in the deque other workers may take them.
            if self.flush_deferred(shared) {
                self.share_batch(shared);
            }
            if let Some(runnable) = self.injector_batch(shared) {
                self.lifo_polls = 0;
                return Some(runnable);
            }
        }
        if let Some(runnable) = self.take_lifo(shared) {
            // The slot had its turns: its task waits behind the deque like any other, and may
            // be stolen there, so it is announced unless it is the only one (popped just below).
            let behind_others = !self.local.is_empty();
            self.local.push(runnable);
            if behind_others {
                shared.sleepers.notify_one();
            }
        }
        self.lifo_polls = 0;
        if let Some(runnable) = self.local.pop() {
            return Some(runnable);
        }
        if let Some(runnable) = retry(|| shared.injector().steal_batch_and_pop(&self.local)) {
            self.share_batch(shared);
            return Some(runnable);
        }
        // Nothing else to do: the yielded tasks' turn, after the reactor's (see `ReactorTurn`).
        // The first runs now; the others wait in the deque, where idle workers may take them.
        match self.reactor_turn {
            ReactorTurn::Idle if self.deferred_filled && self.reactor_turn_due() => {
                self.reactor_turn = ReactorTurn::Wanted;
                return None;
            }
            ReactorTurn::Given => {
                self.reactor_turn = ReactorTurn::Idle;
                self.last_reactor_turn = Some(Instant::now());
            }
            _ => {}
        }
        if self.flush_deferred(shared) {
            let first = self.local.pop();
            self.share_batch(shared);
            return first;
        }
        None
    }

    /// Moves this core's deferred tasks to the back of its deque, in the order they yielded.
    /// Returns whether there were any.
    fn flush_deferred(&mut self, shared: &Shared) -> bool {
        if !std::mem::replace(&mut self.deferred_filled, false) {
            return false;
        }
        let remote = shared.remote(self.index);
        let mut deferred = lock(&remote.deferred);
        let any = !deferred.is_empty();
        for runnable in deferred.drain(..) {
            self.local.push(runnable);
        }
        any
    }

    /// At the fairness interval: this worker's share of the injector (its length divided by the
    /// worker count, at most [`MAX_INTERVAL_BATCH`]), so that under a steady stream of yields,
    /// which keeps the deque from ever emptying, outside spawns do not trickle in one batch per
    /// interval. crossbeam moves at most one block per call, hence the loop.
    fn injector_batch(&mut self, shared: &Shared) -> Option<Runnable> {
        let injector = shared.injector();
        let share = (injector.len() / shared.stealers().len()).clamp(1, MAX_INTERVAL_BATCH);
        let target = self.local.len() + share - 1;
        let first = retry(|| injector.steal_batch_with_limit_and_pop(&self.local, share))?;
        while self.local.len() < target {
            if retry(|| injector.steal_batch_with_limit(&self.local, target - self.local.len())).is_none() {
                break;
            }
        }
        self.share_batch(shared);
        Some(first)
    }

    /// After moving a batch into the deque: tasks there are stealable, so an idle worker may
    /// take some (a parking worker's re-scan could have missed them while they were in transit).
    fn share_batch(&self, shared: &Shared) {
        if !self.local.is_empty() {
            shared.sleepers.notify_one();
        }
    }

    fn take_lifo(&mut self, shared: &Shared) -> Option<Runnable> {
        if !std::mem::replace(&mut self.lifo_filled, false) {
            return None;
        }
        let remote = shared.remote(self.index);
        let runnable = remote.lifo.take()?;
        remote.count_take();
        Some(runnable)
    }

    fn start_searching(&mut self, shared: &Shared) -> bool {
        self.searching = shared.sleepers.try_start_searching();
        self.searching
    }

    fn stop_searching(&mut self, shared: &Shared) {
        if std::mem::replace(&mut self.searching, false) && shared.sleepers.stop_searching() {
            // The last searcher leaves: make sure any other queued work gets one.
            shared.sleepers.notify_one();
        }
    }

    /// One sweep over the other workers' deques (from a random one) and the injector, then, as
    /// a last resort, their deferred lists. Their LIFO slots are not touched (see `watch`).
    fn steal(&mut self, shared: &Shared) -> Option<Runnable> {
        // A scan starts after a SeqCst fence (see `sleep`'s proof).
        fence(Ordering::SeqCst);
        let stealers = shared.stealers();
        let start = self.rng.below(stealers.len());
        for offset in 0..stealers.len() {
            let victim = (start + offset) % stealers.len();
            if victim == self.index {
                continue;
            }
            if let Some(runnable) = retry(|| stealers[victim].steal_batch_and_pop(&self.local)) {
                return Some(runnable);
            }
        }
        if let Some(runnable) = retry(|| shared.injector().steal_batch_and_pop(&self.local)) {
            return Some(runnable);
        }
        for offset in 0..stealers.len() {
            let victim = (start + offset) % stealers.len();
            if victim == self.index {
                continue;
            }
            let mut deferred = lock(&shared.remote(victim).deferred);
            if deferred.is_empty() {
                continue;
            }
            // The older half (rounded up), as a batch steal takes half a deque: the owner keeps
            // the rest, so two workers sharing yielders do not hand all of them back and forth.
            let half = deferred.len().div_ceil(2);
            for runnable in deferred.drain(..half) {
                self.local.push(runnable);
            }
            drop(deferred);
            return self.local.pop();
        }
        None
    }

    /// Lists this core as parked (see `sleep`), re-scanning first if no searcher is left, and
    /// taking the watcher role if the re-scan saw a task in another core's LIFO slot (see
    /// `watch`).
    /// Returns whether the caller should now wait for its token (until `self.watch`'s deadline,
    /// if set): false if this core has local work or the pool shuts down.
    fn prepare_park(&mut self, shared: &Shared) -> bool {
        self.watch = None;
        if let Some(runnable) = self.take_lifo(shared) {
            self.local.push(runnable);
            return false;
        }
        if self.flush_deferred(shared) {
            self.share_batch(shared);
            return false;
        }
        if !self.local.is_empty() {
            return false;
        }
        let was_searching = std::mem::replace(&mut self.searching, false);
        let rescan = shared.sleepers.to_parked(self.index, was_searching);
        // `to_parked` locked the sleepers' mutex; if shutdown's `notify_all` ran before that, we
        // see its flag here, else it will find us listed.
        if shared.is_shutdown() {
            return false;
        }
        if rescan {
            fence(Ordering::SeqCst);
            match shared.queued(self.index) {
                Queued::Shared => {
                    shared.sleepers.notify_one();
                }
                Queued::Private => {
                    if !planted_bug!("no_watch") && shared.sleepers.watch(self.index) {
                        self.watch = Some(Watch::start(shared));
                    }
                }
                Queued::Nothing => {}
            }
        }
        true
    }

    /// After the token came: woken by `notify_one` or `wake_self`, which counted this worker as
    /// a searcher, or by shutdown's `notify_all`, which did not. A watcher whose interval is
    /// over first takes the LIFO tasks of owners that are stuck (see `watch`).
    fn unparked(&mut self, shared: &Shared) {
        self.searching = !shared.is_shutdown();
        if let Some(watch) = self.watch.take() {
            if self.searching {
                watch.rescue(shared, self.index, &self.local);
            }
        }
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        // Queued tasks are dropped one by one (dropping their futures) when a core retires;
        // `Shared::retire_core` empties the LIFO slot.
        while let Some(runnable) = self.local.pop() {
            drop(runnable);
        }
    }
}

/// Runs one task. A panic is already caught inside the task; this guard only keeps the worker
/// alive should `run` unwind anyway (it never does for crew's own tasks).
fn run_task(runnable: Runnable) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| runnable.run())) {
        crate::task::drop_payload(payload);
    }
}

/// The body of a worker thread: runs `core`'s loop until shutdown or until the core is handed
/// to another thread.
pub(crate) fn run(shared: Arc<Shared>, core: Box<Core>) {
    CURRENT.with(|current| {
        *current.borrow_mut() = Some(Current { shared: shared.clone(), core: Some(core) });
    });
    #[cfg(not(loom))]
    let still_owned = if shared.drives_reactor() {
        async_io::block_on(WorkerLoop { shared: &shared })
    } else {
        blocking_loop(&shared)
    };
    #[cfg(loom)]
    let still_owned = blocking_loop(&shared);
    if !still_owned {
        CURRENT.with(|current| current.borrow_mut().take());
        return;
    }
    let core = CURRENT.with(|current| current.borrow_mut().take().and_then(|c| c.core));
    // Dropped with `CURRENT` cleared, so that anything the tasks' drops schedule goes remote.
    if let Some(core) = core {
        shared.retire_core(core);
    }
}

/// The worker loop on a thread that blocks to park. Returns true at shutdown, false once the
/// core went to another thread (`block_on` on this one).
fn blocking_loop(shared: &Arc<Shared>) -> bool {
    loop {
        let next = CURRENT.with(|current| {
            let mut current = current.borrow_mut();
            let core = current.as_mut().and_then(|c| c.core.as_mut())?;
            Some(core.next_task(shared))
        });
        match next {
            Some(Some(runnable)) => run_task(runnable),
            // Shutdown: this thread still owns the core.
            Some(None) => return true,
            // The core went to another thread (`block_on` on this one): nothing left to do.
            None => return false,
        }
    }
}

/// The worker loop as a future, run by `async_io::block_on` for the thread's whole life (see
/// `sleep`'s `# Reactor`). Parked, it returns `Pending`, and `block_on` runs the reactor while
/// it waits. Every [`GLOBAL_QUEUE_INTERVAL`] tasks it wakes itself and returns `Pending`, so that
/// `block_on` processes ready I/O events (without blocking) even while there is always work.
/// Output as `blocking_loop`'s.
#[cfg(not(loom))]
struct WorkerLoop<'a> {
    shared: &'a Arc<Shared>,
}

#[cfg(not(loom))]
impl Future for WorkerLoop<'_> {
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let shared = self.shared;
        for _ in 0..GLOBAL_QUEUE_INTERVAL {
            // The borrow ends before the task runs, and before `Pending` hands the thread to the
            // reactor, whose wakes then reach this core through `schedule_local`.
            let next = CURRENT.with(|current| {
                let mut current = current.borrow_mut();
                let core = current.as_mut().and_then(|c| c.core.as_mut())?;
                Some(core.poll_next_task(shared, cx))
            });
            match next {
                Some(Poll::Ready(Some(runnable))) => run_task(runnable),
                Some(Poll::Ready(None)) => return Poll::Ready(true),
                Some(Poll::Pending) => return Poll::Pending,
                None => return Poll::Ready(false),
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Where [`schedule_local`] put a task.
pub(crate) enum Pushed {
    /// Into the deferred list or the deque of a running worker (the deque if it displaced the
    /// LIFO slot's task): other workers may steal it.
    Shared,
    /// Into the LIFO slot of a running worker: only it (or the watcher) takes it.
    Private,
    /// Into the core of this worker, which is parked: its thread runs the reactor, whose wake
    /// this is. The worker should wake itself.
    Parked(usize),
}

/// Tries to put `runnable` into the current thread's core, if this thread runs a worker of
/// `shared`'s pool. `Err(runnable)` if it belongs in the injector.
pub(crate) fn schedule_local(shared: &Shared, runnable: Runnable, is_yield: bool) -> Result<Pushed, Runnable> {
    let mut slot = Some(runnable);
    let pushed = CURRENT.try_with(|current| {
        let mut current = current.try_borrow_mut().ok()?;
        let current = current.as_mut()?;
        if !std::ptr::eq(Arc::as_ptr(&current.shared), shared) {
            return None;
        }
        let core = current.core.as_mut()?;
        let stealable = core.push(shared, slot.take()?, is_yield);
        Some(match (core.parked, stealable) {
            (true, _) => Pushed::Parked(core.index),
            (false, true) => Pushed::Shared,
            (false, false) => Pushed::Private,
        })
    });
    match pushed {
        Ok(Some(pushed)) => Ok(pushed),
        _ => Err(slot.take().expect("the task was not pushed, so it is still here")),
    }
}

/// If this thread runs a worker loop (of any pool), hands its core to a fresh thread, so the
/// caller may block this thread without stranding the core's tasks.
#[track_caller]
pub(crate) fn hand_off_core() {
    let taken = CURRENT
        .try_with(|current| {
            let mut current = current.try_borrow_mut().ok()?;
            let current = current.as_mut()?;
            Some((current.shared.clone(), current.core.take()?))
        })
        .ok()
        .flatten();
    let Some((shared, core)) = taken else { return };
    if let Err((core, err)) = Shared::start_worker(&shared, core) {
        CURRENT.with(|current| {
            if let Some(current) = current.borrow_mut().as_mut() {
                current.core = Some(core);
            }
        });
        panic!("crew: blocking on a worker thread needs a replacement worker thread, which could not start: {err}");
    }
}

/// A number that spreads spawns over the registry's shards: the worker index on a worker
/// thread; elsewhere a per-thread counter (seeded from a per-thread hash) that moves on at every
/// spawn, so one thread spawning many tasks does not funnel their completions into one lock.
pub(crate) fn spawn_hint() -> usize {
    std::thread_local! {
        static NEXT: Cell<Option<usize>> = const { Cell::new(None) };
    }
    let worker = CURRENT
        .try_with(|current| {
            let mut current = current.try_borrow_mut().ok()?;
            let core = current.as_mut()?.core.as_mut()?;
            core.spawns = core.spawns.wrapping_add(1);
            Some(core.index.wrapping_add(core.spawns))
        })
        .ok()
        .flatten();
    worker.unwrap_or_else(|| {
        NEXT.try_with(|next| {
            let hint = next.get().unwrap_or_else(|| {
                let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
                hasher.write_usize(0);
                hasher.finish() as usize
            });
            next.set(Some(hint.wrapping_add(1)));
            hint
        })
        .unwrap_or(0)
    })
}

/// A small xorshift generator for picking steal victims.
#[derive(Debug)]
struct FastRand {
    state: u64,
}

impl FastRand {
    fn new(seed: u64) -> FastRand {
        // Any non-zero state works; mix the seed so neighbouring workers diverge at once.
        FastRand { state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1 }
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        ((u128::from(x >> 32) * n as u128) >> 32) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::FastRand;

    #[cfg(not(loom))]
    mod reactor_turn {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        use std::task::{Context, Poll, Wake, Waker};

        use super::super::Core;
        use crate::pool::Shared;

        #[derive(Default)]
        struct CountWakes(AtomicUsize);

        impl Wake for CountWakes {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }

        /// A one-core pool whose loop never started, its core (inside the reactor if
        /// `in_reactor`) holding one task that yielded, or one woken (into the LIFO slot).
        fn core_with_task(in_reactor: bool, yielded: bool) -> (Arc<Shared>, Core) {
            let config = crate::Builder::new().workers(1).drive_reactor(in_reactor).check(None).unwrap();
            let (shared, mut cores) = Shared::new(config, false);
            let mut core = cores.pop().unwrap();
            let (runnable, task) = async_task::spawn(async {}, |_| {});
            task.detach();
            core.push(&shared, runnable, yielded);
            (shared, core)
        }

        /// Polls `core` for its next task with a waker that counts its wakes.
        fn poll_next(shared: &Shared, core: &mut Core, wakes: &Arc<CountWakes>) -> Poll<bool> {
            let waker = Waker::from(wakes.clone());
            core.poll_next_task(shared, &mut Context::from_waker(&waker)).map(|task| task.is_some())
        }

        #[test]
        fn a_worker_in_the_reactor_lets_it_turn_before_running_a_yielded_task() {
            let (shared, mut core) = core_with_task(true, true);
            let wakes = Arc::new(CountWakes::default());
            // Pending with its own waker woken: `async_io::block_on` turns the reactor, then
            // polls again.
            assert_eq!(poll_next(&shared, &mut core, &wakes), Poll::Pending);
            assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
            assert_eq!(poll_next(&shared, &mut core, &wakes), Poll::Ready(true));
            assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        }

        #[test]
        fn a_yielded_task_runs_without_a_turn_while_the_last_turn_is_within_the_gap() {
            let (shared, mut core) = core_with_task(true, true);
            // A turn "now" (or later): never `REACTOR_TURN_GAP` ago, however slow this test runs.
            core.last_reactor_turn = Some(std::time::Instant::now() + std::time::Duration::from_secs(3600));
            let wakes = Arc::new(CountWakes::default());
            assert_eq!(poll_next(&shared, &mut core, &wakes), Poll::Ready(true));
            assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
        }

        #[test]
        fn a_woken_task_and_a_worker_outside_the_reactor_run_without_a_turn() {
            for (in_reactor, yielded) in [(true, false), (false, true)] {
                let (shared, mut core) = core_with_task(in_reactor, yielded);
                let wakes = Arc::new(CountWakes::default());
                assert_eq!(poll_next(&shared, &mut core, &wakes), Poll::Ready(true));
                assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
            }
        }
    }

    #[test]
    fn victims_cover_every_index() {
        let mut rng = FastRand::new(3);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            seen[rng.below(7)] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
