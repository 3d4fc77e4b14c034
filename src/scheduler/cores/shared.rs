//! A pool's shared state, and where a scheduled task goes.
//!
//! Invariants:
//! - A pool has a fixed number of *cores* (worker slots), each with a FIFO deque whose
//!   [`Stealer`] is in `stealers`, and a [`Remote`] (LIFO slot, deferred list), plus one
//!   [`Injector`] for tasks scheduled from outside. The deques, the injector and the deferred
//!   lists are *shared* queues: any searcher steals from them. The LIFO slot is *private* (see
//!   `watch.rs`). A core is owned by exactly one thread at a time (see `context.rs`); threads may
//!   outnumber cores while some are blocked in `block_on`, never the other way round.
//! - [`Shared::schedule`] puts a task in the scheduling worker's own core when that thread runs
//!   a worker of this pool, else in the injector; a push onto a shared queue ends with
//!   `Sleepers::notify_one` (but a yield its worker runs next, `Pushed::DeferredNext`), a push
//!   into a LIFO slot with `Sleepers::notify_private` (see `sleep/README.md` for why no wakeup
//!   is lost).
//! - No task is ever dropped inside `schedule`, that is inside someone's `wake()`: dropping a
//!   task drops its future, whose destructor may wake other tasks or take locks that the waker's
//!   caller holds (event-listener wakes under its list lock), so a drop there can deadlock the
//!   thread on itself. A task scheduled after shutdown began stays in the injector, for
//!   shutdown's drains or a reaper thread to drop (see `shutdown.rs`).
//! - The part of a core that threads other than its owner touch, besides its deque, is its
//!   [`Remote`], here: its LIFO slot is *private*, taken from by its owner, by the watcher only
//!   when the owner began no poll for a whole interval (see `watch.rs`), and by the monitor only
//!   as it takes the core over (see `monitor.rs`); its deferred list is *shared*: any searcher
//!   may take its older half as a last resort. Only the owner fills either, and only the owner
//!   begins and ends polls in the progress word (the monitor only flags them, see
//!   `progress.rs`); its mutexes are uncontended but for the watcher's, the monitor's and
//!   searchers' rare looks. `current` holds the task of the poll running now only while the
//!   pool has a slow-poll hook (`Shared::records_polls`): without one, the owner writes nothing
//!   per poll but the progress word.

use std::collections::VecDeque;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::time::Instant;

use crate::identity::{Activity, TaskInfo};
use crate::scheduler::cores::task;

use crate::clock::{ClockRef, PausedClock};
use crate::config::Config;
use crate::config::UnhandledPanic;
use crate::scheduler::cores::context;
use crate::scheduler::cores::counters::{Clock, CoreCounters, OutsideCounters};
use crate::scheduler::cores::lifo::LifoSlot;
use crate::scheduler::cores::local::{self, WakeCore};
use crate::scheduler::cores::registry::Registry;
use crate::scheduler::cores::seeded::Seeded;
use crate::scheduler::cores::unhandled::Unhandled;
use crate::scheduler::cores::worker::{Core, Pushed};
use crate::scheduler::sleep::{Sleepers, WakeSource};
use crate::scheduler::takeover::progress::Progress;
use crate::scheduler::takeover::reports::Reports;
use crate::scheduler::takeover::spare_threads::SpareThreads;
use crate::sync::{
    fence, lock, planted_bug, thread, Arc, AtomicBool, AtomicUsize, CachePadded, Event, Injector, Mutex, MutexGuard,
    Ordering, SharedCounter, SingleWriterCounter, Stealer, Worker,
};

/// What this scheduler's queues hold (`task.rs`): a task of a pool of [`Shared`].
pub(crate) type Runnable = task::Runnable<Shared>;
/// async-task's `Runnable` of such a task.
pub(crate) type RawRunnable = task::RawRunnable<Shared>;
/// The metadata of such a task.
pub(crate) type TaskMeta = task::TaskMeta<Shared>;
/// A thread's home of this scheduler's local tasks (`local.rs`).
pub(crate) type LocalHome = local::LocalHome<Shared>;

impl WakeCore for Shared {
    #[inline]
    fn wake_core(&self, core: usize) {
        Shared::wake_core(self, core);
    }
}

/// Which pool a [`Shared`] is: the global one, never dropped, or a private one, whose live tasks
/// are registered so that dropping it drops them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PoolKind {
    /// The global pool: no registry.
    Global,
    /// A private pool: a registry of its live tasks.
    Private,
}

/// What a parking worker's re-scan found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::scheduler) enum Queued {
    /// A task in the injector, a deque or a deferred list: a searcher can take it.
    Stealable,
    /// No stealable task, but one in another core's LIFO slot: only the watcher may take it.
    LifoOnly,
    /// Nothing.
    Nothing,
}

/// The state every worker, schedule function and handle of one pool shares.
pub(crate) struct Shared {
    pub(in crate::scheduler) injector: CachePadded<Injector<Runnable>>,
    pub(in crate::scheduler) stealers: Box<[Stealer<Runnable>]>,
    /// Each core's LIFO slot and deferred list, by core index. Apart from `stealers`: thieves
    /// read the stealers all the time, and the owner writes here at every task it takes from
    /// its LIFO slot. Each in an allocation of its own, which its core holds too (`Core` reaches
    /// its own with one load at every poll, not an index into this slice).
    pub(in crate::scheduler) remotes: Box<[Arc<CachePadded<Remote>>]>,
    /// Each core slot's state (running or spare, worker number), read-mostly: apart from
    /// `remotes`, whose lines their owners write at every poll.
    pub(in crate::scheduler) slot_states: Box<[SlotState]>,
    /// The slots that have ever been active, a prefix (spares are handed out lowest index
    /// first): the workers, then the spares a takeover handed out. Sweeps over the cores (the
    /// steals, the re-scan before parking, the watcher's term) walk only these, not every spare.
    active_prefix: AtomicUsize,
    pub(in crate::scheduler) sleepers: Sleepers,
    /// Each core slot's counters, by core index, each on lines of its own (see `counters.rs`),
    /// held by its core too, as `remotes` are.
    pub(crate) counters: Box<[Arc<CachePadded<CoreCounters>>]>,
    /// What is counted away from the cores.
    pub(crate) outside: CachePadded<OutsideCounters>,
    /// The clock of busy time.
    pub(crate) clock: Clock,
    /// The live tasks of a private pool; `None` for the global pool, which is never dropped.
    /// Its own `Arc`, so that each task's reference to it does not share a cache line with the
    /// references its metadata holds to `Shared`.
    registry: Option<Arc<Registry>>,
    /// Whether a searcher is spinning before it parks (`search.rs`): one at a time, so that
    /// the other searchers park and are woken for batches (see `Core::spin_steal`).
    pub(in crate::scheduler) spinning: CachePadded<AtomicBool>,
    pub(in crate::scheduler) shutdown: AtomicBool,
    /// Set by shutdown before its last drain of the injector: from then on, whoever pushes a
    /// task into the injector also drops it (through a reaper thread, never inside a wake).
    pub(in crate::scheduler) reaped: AtomicBool,
    /// Cores whose worker loop has not exited yet.
    pub(in crate::scheduler) cores_running: AtomicUsize,
    pub(in crate::scheduler) cores_exited: Event,
    pub(in crate::scheduler) threads: Mutex<Vec<thread::JoinHandle<()>>>,
    /// Spare cores, not run by any thread: what a takeover hands to a new thread, and where a
    /// core given up by a stuck thread goes back (see `monitor.rs`). Their slots (indices
    /// `workers..` at the start) are in `stealers`, `remotes` and the sleepers like any core's.
    // Boxed: a core travels between threads as `Box<Core>` everywhere else (hand-off, start).
    #[allow(clippy::vec_box)]
    pub(in crate::scheduler) spares: Mutex<Vec<Box<Core>>>,
    /// Threads whose worker life ended early, waiting to run the next core a takeover or a
    /// hand-off starts (`spare_threads.rs`).
    pub(in crate::scheduler) spare_threads: SpareThreads<Box<Core>>,
    /// Worker threads this pool started (its first workers, takeovers', hand-offs'), not the
    /// times a spare thread took a core.
    pub(in crate::scheduler) threads_started: SharedCounter,
    /// The queue of reports for the slow-poll hook, read by the reporter thread; `None` without
    /// a hook (see `reporter.rs`).
    pub(in crate::scheduler) reports: Option<Reports>,
    /// Worker threads that finish their local tasks after their worker life: shutdown wakes
    /// them (`local.rs`).
    pub(in crate::scheduler) orphans: Mutex<Vec<Arc<LocalHome>>>,
    /// `spawn_pinned`'s round over the cores, one of its two candidates (`pinned.rs`).
    pub(in crate::scheduler) pinned_next: AtomicUsize,
    /// Set before this pool's first `spawn_pinned` push: until then, a worker about to park does
    /// not lock its inbox (`pinned.rs`).
    pub(in crate::scheduler) pinned_used: AtomicBool,
    /// Global or private: `crew::spawn` on this pool's threads targets it if private.
    pub(in crate::scheduler) kind: PoolKind,
    /// A paused pool's clock and its count of work in flight (`clock.rs`): counted at each
    /// schedule of the pool's tasks (`schedule.rs`, a local task's schedule) and given back
    /// after each run (`task_run.rs`'s `run_task`). `None`: real time, nothing counted.
    pub(in crate::scheduler) paused: Option<ClockRef>,
    /// A seeded pool's ordinals and trace (`seeded.rs`).
    pub(in crate::scheduler) seeded: Option<Seeded>,
    /// With `unhandled_panic(ShutdownPool)`: the panic that shut it down (`unhandled.rs`).
    pub(in crate::scheduler) unhandled: Option<Unhandled>,
    pub(in crate::scheduler) config: Config,
}

impl Shared {
    /// The state of a pool of `config.workers` cores (and `config.max_stuck_threads` spare
    /// ones), and the cores, whose loops are yet to start (counted as running from here on).
    pub(in crate::scheduler) fn new(config: Config, kind: PoolKind) -> (Arc<Shared>, Vec<Core>) {
        let (workers, in_reactor) = (config.workers, config.drive_reactor);
        let slots = workers + config.max_stuck_threads;
        let locals: Vec<Worker<Runnable>> = (0..slots).map(|_| Worker::new_fifo()).collect();
        let shared = Arc::new(Shared {
            injector: CachePadded::new(Injector::new()),
            stealers: locals.iter().map(Worker::stealer).collect(),
            remotes: (0..slots).map(|_| Arc::new(CachePadded::new(Remote::new()))).collect(),
            slot_states: (0..slots).map(|_| SlotState::spare()).collect(),
            active_prefix: AtomicUsize::new(workers),
            sleepers: Sleepers::new(workers, slots, config.monitor),
            counters: (0..slots).map(|_| Arc::new(CachePadded::new(CoreCounters::default()))).collect(),
            outside: CachePadded::new(OutsideCounters::default()),
            clock: Clock::start(),
            registry: match kind {
                // The global pool registers its tasks only for the task dump.
                PoolKind::Global => config.task_dump.then(|| Arc::new(Registry::new(workers, true))),
                PoolKind::Private => Some(Arc::new(Registry::new(workers, config.task_dump))),
            },
            spinning: CachePadded::new(AtomicBool::new(false)),
            shutdown: AtomicBool::new(false),
            reaped: AtomicBool::new(false),
            cores_running: AtomicUsize::new(workers),
            cores_exited: Event::new(),
            threads: Mutex::new(Vec::with_capacity(workers)),
            spares: Mutex::new(Vec::with_capacity(slots - workers)),
            spare_threads: SpareThreads::default(),
            threads_started: SharedCounter::default(),
            reports: config.on_slow_poll.is_some().then(Reports::new),
            orphans: Mutex::new(Vec::new()),
            pinned_next: AtomicUsize::new(0),
            pinned_used: AtomicBool::new(false),
            kind,
            paused: config.start_paused.then(|| ClockRef::new(PausedClock::new(Instant::now()))),
            seeded: config.seed.map(Seeded::new),
            unhandled: (config.unhandled_panic == UnhandledPanic::ShutdownPool).then(Unhandled::default),
            config,
        });
        for (index, state) in shared.slot_states.iter().enumerate().take(workers) {
            // Relaxed: set before any thread that reads them starts.
            state.worker.store(index, Ordering::Relaxed);
            state.active.store(true, Ordering::Relaxed);
        }
        let poll_hooks = shared.records_polls() || shared.keeps_task_records();
        let mut cores: Vec<Core> = locals
            .into_iter()
            .enumerate()
            .map(|(index, local)| {
                let (remote, counters) = (shared.remotes[index].clone(), shared.counters[index].clone());
                let seeded = shared.seeded.as_ref().filter(|_| index == 0).map(Seeded::pick);
                Core::new(index, local, remote, counters, in_reactor, poll_hooks, seeded)
            })
            .collect();
        // Handed out last-in first-out: the lowest spare index first.
        lock(&shared.spares).extend(cores.drain(workers..).rev().map(Box::new));
        (shared, cores)
    }

    /// The number of cores that run at once: the pool's workers.
    #[inline]
    pub(crate) fn workers(&self) -> usize {
        self.config.workers
    }

    /// The number of core slots: the workers and the spare cores.
    #[inline]
    pub(in crate::scheduler) fn slots(&self) -> usize {
        self.stealers.len()
    }

    /// The worker number core `index` runs as (see `SlotState::worker`).
    pub(in crate::scheduler) fn worker_number(&self, index: usize) -> usize {
        // Relaxed: written before the thread that runs the core starts, or by the monitor for a
        // spare it is about to start; read for names and reports.
        self.slot_states[index].worker.load(Ordering::Relaxed)
    }

    /// The slots a sweep over the cores must look at: every slot at or past it is a spare that
    /// never ran, whose queues are empty.
    #[inline]
    pub(in crate::scheduler) fn active_slots(&self) -> usize {
        // Relaxed: as `is_active`'s; a core a takeover hands out starts with the only task the
        // monitor moved, which its new thread runs.
        self.active_prefix.load(Ordering::Relaxed)
    }

    /// Core `index`, a spare a takeover hands out, is active from now on.
    pub(in crate::scheduler) fn note_active(&self, index: usize) {
        // Relaxed: see `active_slots`. The monitor is the one writer.
        self.active_prefix.fetch_max(index + 1, Ordering::Relaxed);
        // Relaxed: see `is_active`.
        self.slot_states[index].active.store(true, Ordering::Relaxed);
    }

    /// True unless core `index` is a spare, whose queues are empty.
    #[inline]
    pub(in crate::scheduler) fn is_active(&self, index: usize) -> bool {
        // Relaxed: a spare's queues are empty whatever this reads, and a core handed out by a
        // takeover starts with the only task the monitor moved, which its new thread runs.
        self.slot_states[index].active.load(Ordering::Relaxed)
    }

    /// Whether each poll records its task for the slow-poll reports (a hook is set).
    #[inline]
    pub(crate) fn records_polls(&self) -> bool {
        self.config.on_slow_poll.is_some()
    }

    /// Notes in `runnable`'s record for the task dump, if the pool keeps records, where it is being
    /// queued. Without records, one test of the pool's configuration.
    #[inline]
    pub(in crate::scheduler) fn record_queued(&self, runnable: &Runnable, queued_in: Activity) {
        if self.keeps_task_records() {
            if let Some(record) = runnable.metadata().info().record() {
                record.queued(queued_in);
            }
        }
    }

    /// Whether each task keeps a record for the task dump (`Builder::task_dump`).
    #[inline]
    pub(crate) fn keeps_task_records(&self) -> bool {
        self.config.task_dump
    }

    /// The tokio runtime this pool's threads enter (`None`: crew's own; the `tokio` feature).
    #[cfg(feature = "tokio")]
    pub(crate) fn tokio_handle(&self) -> Option<&tokio::runtime::Handle> {
        self.config.tokio_handle.as_ref()
    }

    /// The prefix of the worker threads' names.
    pub(crate) fn thread_name(&self) -> &str {
        &self.config.thread_name
    }

    /// A private pool's registry of live tasks; `None` for the global pool.
    pub(crate) fn registry(&self) -> Option<&Arc<Registry>> {
        self.registry.as_ref()
    }

    /// Whether the worker loops run as futures that turn crew's driver (`driver::run`).
    pub(in crate::scheduler) fn drives_reactor(&self) -> bool {
        self.config.drive_reactor
    }

    /// True once shutdown has begun.
    #[inline]
    pub(crate) fn is_shutdown(&self) -> bool {
        // Acquire pairs with the SeqCst swap in `shutdown`; a late `false` only delays a
        // worker's exit until `notify_all` wakes it, and pushes re-check after a fence.
        self.shutdown.load(Ordering::Acquire)
    }

    /// Where a task is queued, for the re-scan of worker `me` before it parks: a shared queue
    /// first, else another core's LIFO slot. Takes nothing.
    pub(in crate::scheduler) fn queued(&self, me: usize) -> Queued {
        let active = || (0..self.active_slots()).filter(|&index| self.is_active(index));
        if !self.injector.is_empty() || active().any(|index| !self.stealers[index].is_empty()) {
            return Queued::Stealable;
        }
        if active().any(|index| !self.remotes[index].deferred.lock().is_empty()) {
            return Queued::Stealable;
        }
        if active().any(|index| index != me && self.remotes[index].has_lifo_task()) {
            return Queued::LifoOnly;
        }
        Queued::Nothing
    }

    /// Whether the pool is paused (or seeded).
    #[inline]
    pub(crate) fn is_paused(&self) -> bool {
        self.paused.is_some()
    }

    /// A paused pool's new task's identity: its clock (`clock.rs`), and a seeded pool's
    /// spawn ordinal (`seeded.rs`).
    #[cold]
    #[inline(never)]
    pub(crate) fn paused_info(&self, info: TaskInfo) -> TaskInfo {
        match &self.paused {
            Some(clock) => info.with_paused(clock.clone(), self.seeded.as_ref().map(Seeded::next_ordinal)),
            None => info,
        }
    }

    /// Whether this is a seeded pool (`seeded.rs`).
    #[inline]
    pub(crate) fn is_seeded(&self) -> bool {
        self.seeded.is_some()
    }

    /// A seeded pool's poll trace: the spawn ordinals of the tasks it picked, in order.
    pub(crate) fn poll_trace(&self) -> Option<Vec<u64>> {
        self.seeded.as_ref().map(Seeded::trace)
    }

    /// Where a woken or newly spawned task goes. `woken_while_running`: async-task's flag, set
    /// for any wake during the task's own poll (a yield, or a wake from any thread meanwhile),
    /// so it goes to the deferred list rather than the LIFO slot.
    #[inline]
    pub(crate) fn schedule(&self, runnable: Runnable, woken_while_running: bool) {
        self.schedule_counted(runnable, woken_while_running, false);
    }

    /// [`schedule`](Shared::schedule) for a task's first run, counted as a spawn.
    #[inline]
    pub(crate) fn schedule_spawned(&self, runnable: Runnable) {
        self.schedule_counted(runnable, false, true);
    }

    #[inline]
    fn schedule_counted(&self, runnable: Runnable, woken_while_running: bool, spawned: bool) {
        match context::schedule_local(self, runnable, woken_while_running, spawned) {
            Ok(pushed) => self.notify_pushed(pushed),
            Err(runnable) => {
                if spawned {
                    self.outside.spawned.incr();
                }
                self.push_remote(runnable);
            }
        }
    }

    /// After a push into a worker's own queues (by a thread running that worker): wakes whom
    /// the push needs.
    #[inline]
    pub(in crate::scheduler) fn notify_pushed(&self, pushed: Pushed) {
        match pushed {
            Pushed::Stealable(index) => {
                if !planted_bug!("no_local_notify") {
                    self.sleepers.notify_one_from(WakeSource::Core(&self.counters[index]));
                }
            }
            // Into this worker's LIFO slot: this worker will take it, unless it is stuck inside a
            // poll, in which case the watcher will (see `watch.rs`).
            Pushed::Lifo(index) => {
                if !planted_bug!("no_local_notify") {
                    self.sleepers.notify_private_from(WakeSource::Core(&self.counters[index]));
                }
            }
            // Pushed from inside the reactor onto this thread's own parked core, which `push`
            // woke (`Sleepers::wake_self_for_work`): it runs the task rather than wake another
            // worker. If another thread's notify picked it first, its token is on the way and
            // the task is in its queues all the same.
            Pushed::OwnParkedCore(_) => {}
            // A yield into the deferred list of a worker with nothing else queued: it runs next
            // there, and that worker never parks with its deferred list full.
            Pushed::DeferredNext(_) => {}
        }
    }

    /// Pushes a task woken outside this pool's workers into the injector. After shutdown the
    /// task stays there to be dropped by shutdown's drains, never here (see the module docs).
    pub(in crate::scheduler) fn push_remote(&self, runnable: Runnable) {
        // Relaxed: a test's switch, set before the pools it slows start (`delay_test_push`).
        if PUSH_DELAY_NANOS.load(std::sync::atomic::Ordering::Relaxed) != 0 {
            self.delay_test_push();
        }
        self.record_queued(&runnable, Activity::Injector);
        self.injector.push(runnable);
        // Pairs with the fence in `shutdown`: either this load sees the flag, or shutdown's
        // drain sees the push. It is also the notify's fence (pairing with the one after
        // `list_parked`): nothing is stored between it and the notify's load of the state.
        fence(Ordering::SeqCst);
        if !planted_bug!("no_shutdown_recheck") && self.shutdown.load(Ordering::SeqCst) {
            // Pairs with the store + fence in `reap`: either this load sees `reaped`, or
            // shutdown's last drain sees the push.
            if !planted_bug!("no_late_reap") && self.reaped.load(Ordering::SeqCst) {
                self.reap_late();
            }
            return;
        }
        self.sleepers.notify_one_fenced_from(WakeSource::Outside(&self.outside));
    }
}

/// How long a remote push that finds its pool shutting down (its registry not yet closed)
/// sleeps before it pushes, in
/// nanoseconds: a test's switch (`crew::__private::delay_remote_pushes_during_shutdown`) that
/// widens the window between a wake and its push, which shutdown's drains race; 0 otherwise. A
/// plain `std` atomic, also under loom: no model sets it.
static PUSH_DELAY_NANOS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Makes every remote push that finds its pool shutting down sleep `delay` first.
pub(crate) fn delay_remote_pushes_during_shutdown(delay: std::time::Duration) {
    let nanos = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
    // Relaxed: set by a test before it starts the pools it slows.
    PUSH_DELAY_NANOS.store(nanos, std::sync::atomic::Ordering::Relaxed);
}

impl Shared {
    /// The test's delay (see [`delay_remote_pushes_during_shutdown`]), out of the common path.
    #[cold]
    #[inline(never)]
    fn delay_test_push(&self) {
        // Not the shutdown's own wakes of the tasks it found pending (after the close).
        if self.shutdown.load(Ordering::SeqCst) && !self.registry().is_some_and(|registry| registry.is_closed()) {
            let nanos = PUSH_DELAY_NANOS.load(std::sync::atomic::Ordering::Relaxed);
            std::thread::sleep(std::time::Duration::from_nanos(nanos));
        }
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared").field("workers", &self.stealers.len()).finish_non_exhaustive()
    }
}

/// A core's LIFO slot and deferred list, and the sign of its progress that the watcher reads.
pub(in crate::scheduler) struct Remote {
    /// The task woken last on this core (by a task it ran), run next. Private (see `watch.rs`):
    /// its owner is the core's `LifoOwner` (`Core::lifo`), the watcher and the monitor take
    /// through this; a task comes out of either only as crew's `Runnable` (`lifo.rs`). Its own
    /// allocation, on lines of its own (crew-slot aligns it): searchers lock the deferred list
    /// beside it as a last resort, and must not take the owner's line.
    pub(in crate::scheduler) lifo: LifoSlot<Shared>,
    /// Tasks woken while they ran (yields, and any wake during the poll, from any thread), held
    /// back until the owner runs out of other work or reaches its fairness tick. Searchers take
    /// from it as a last resort.
    pub(in crate::scheduler) deferred: Deferred,
    /// The owner's polls (see `progress.rs`): a value that does not move while it is inside a
    /// poll means the owner is stuck in that poll.
    pub(in crate::scheduler) progress: Progress,
    /// The poll running now, for slow-poll reports (see the module docs).
    pub(in crate::scheduler) current: Mutex<CurrentPoll>,
    /// The local tasks' home of the thread running this core, if it has one: for the metrics
    /// and `spawn_pinned`'s choice. Locked by the owner only as a home attaches or leaves.
    pub(in crate::scheduler) home: Mutex<Option<Arc<LocalHome>>>,
    /// `spawn_pinned` tasks sent to this core: only its owner takes them (see `pinned.rs`).
    pub(in crate::scheduler) inbox: Inbox,
}

/// A core's inbox of `spawn_pinned` tasks' first runs (see `pinned.rs`), its length mirrored for
/// the owner's look without the lock.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct Inbox {
    pub(in crate::scheduler) queue: Mutex<VecDeque<Runnable>>,
    pub(in crate::scheduler) len: AtomicUsize,
}

/// What is known of a core slot besides its queues: read by searchers at every steal sweep and
/// written only when a core is handed out or given back, so kept apart from the `Remote`, whose
/// progress word its owner writes at every poll.
#[derive(Debug)]
pub(in crate::scheduler) struct SlotState {
    /// Set while the core is a running worker's, not a spare: from the pool's start (or the
    /// takeover that hands it out) until its thread retires it or gives it up; kept across a
    /// hand-off, which moves the loop to another thread.
    pub(in crate::scheduler) active: AtomicBool,
    /// The worker number this core runs as: its thread is named `{prefix}-{worker}`, and reports
    /// name it. A core that takes over a stuck one runs as that one's number, so the pool's
    /// workers keep their names; `usize::MAX` for a spare.
    pub(in crate::scheduler) worker: AtomicUsize,
}

impl SlotState {
    pub(in crate::scheduler) fn spare() -> SlotState {
        SlotState { active: AtomicBool::new(false), worker: AtomicUsize::new(usize::MAX) }
    }
}

/// What the slow-poll reports know of a core's current poll.
#[derive(Debug, Default)]
pub(in crate::scheduler) struct CurrentPoll {
    /// The task being polled (recorded only while the pool has a slow-poll hook).
    pub(in crate::scheduler) task: Option<TaskInfo>,
    /// When the monitor first saw this poll running, once it reported it as slow.
    pub(in crate::scheduler) slow_since: Option<Instant>,
}

impl Remote {
    pub(in crate::scheduler) fn new() -> Remote {
        Remote {
            lifo: LifoSlot::new(),
            deferred: Deferred { list: Mutex::new(Vec::new()), len: SingleWriterCounter::default() },
            progress: Progress::default(),
            current: Mutex::new(CurrentPoll::default()),
            home: Mutex::new(None),
            inbox: Inbox::default(),
        }
    }

    /// Records `task` as the one this core polls now (for slow-poll reports).
    pub(in crate::scheduler) fn record_poll(&self, task: &TaskInfo) {
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
    pub(in crate::scheduler) fn has_lifo_task(&self) -> bool {
        self.lifo.is_occupied()
    }
}

/// A core's deferred list, its length mirrored (under its lock) for the metrics to read without
/// locking.
#[derive(Debug)]
pub(in crate::scheduler) struct Deferred {
    list: Mutex<Vec<Runnable>>,
    len: SingleWriterCounter,
}

impl Deferred {
    /// Locks the list; the length is written back as the guard drops.
    #[inline]
    pub(in crate::scheduler) fn lock(&self) -> DeferredGuard<'_> {
        DeferredGuard { list: lock(&self.list), len: &self.len }
    }

    /// The length as of the last unlock, read without the lock: for statistics only.
    pub(in crate::scheduler) fn len_hint(&self) -> usize {
        self.len.get() as usize
    }
}

/// The locked deferred list (see [`Deferred::lock`]).
pub(in crate::scheduler) struct DeferredGuard<'a> {
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
