//! A pool's threads: starting a pool (its workers, monitor and reporter, or the `membarrier`
//! registration where it has no monitor), starting and keeping worker threads, and the body of
//! a worker thread: its loop, from the first task to shutdown, hand-off or takeover.
//!
//! Invariants:
//! - Every worker thread's handle is kept in `Shared::threads` for shutdown to join; threads
//!   that gave their core away and returned are joined as new ones start. The monitor's is kept
//!   too; the reporter's is not (`reporter.rs`).
//! - A core reaches its new thread through a slot locked until the starter decided (see
//!   [`Shared::start_worker_if`]): a thread never runs a core its starter took back.
//! - A worker thread runs its core's loop until the pool shuts down (then it retires the core,
//!   dropping its queued tasks with the thread's context cleared, so that whatever their drops
//!   schedule goes to the injector), until its core is handed to another thread (`block_on` on
//!   this thread), or until a poll ends and finds the core taken over by the monitor (then it
//!   gives the core up: its queued tasks go to the injector, the core becomes a spare). In the
//!   last two cases it runs no more loop and exits once its current poll returns.
//! - Every poll is bracketed in the core's progress word (`progress.rs`) by the thread that
//!   owns the core: begun as the loop hands out the task, ended as the loop comes back for the
//!   next (before it picks, parks or lets the reactor turn), in the same borrow of the context.
//!   A `block_on` inside the poll, which hands the core to another thread, ends it there.
//! - Nothing a task does kills a worker: a panic is caught inside the task (`spawning/build.rs`),
//!   and [`run_task`] catches anything that would still unwind.

use std::io;

use crate::config::{BuildError, Config};
use crate::scheduler::cores::context;
use crate::scheduler::cores::shared::{PoolKind, Runnable, Shared};
use crate::scheduler::cores::task_run::run_task;
use crate::scheduler::cores::worker::Core;
use crate::scheduler::local_tasks::local_turn::LocalTurn;
use crate::sync::{lock, thread, Arc, Mutex, Ordering};

/// For a pool with no monitor thread (takeover and slow-poll reports both off), which is where
/// the process otherwise registers for `membarrier` (`asymmetric::prepare`, about 10 ms): does
/// it on a short-lived thread of its own, once per process, so that the owners' LIFO takes drop
/// their `SeqCst` fence without waiting for a watcher's first rescue, and no worker pays the
/// wait. A failed spawn leaves fence mode, which is as correct, only slower: the first rescue
/// registers then. Not under loom (which runs fence mode) nor miri (which has no `membarrier`).
fn prepare_fences_off_path() {
    #[cfg(not(any(loom, miri)))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if !crate::sync::asymmetric::is_membarrier() {
                let _ = std::thread::Builder::new()
                    .name("crew-membarrier".to_owned())
                    .spawn(crate::sync::asymmetric::prepare);
            }
        });
    }
}

/// The body of a worker thread: runs `core`'s loop until shutdown, hand-off or takeover, then,
/// if its worker life ended early, waits as a spare thread for the next core to run
/// (`spare_threads.rs`).
fn run(shared: Arc<Shared>, core: Box<Core>) {
    // The `tokio` feature: this thread holds a tokio context for its whole life.
    #[cfg(feature = "tokio")]
    let tokio = shared.config.tokio_handle.clone().unwrap_or_else(crate::tokio_context::own);
    #[cfg(feature = "tokio")]
    let _tokio = tokio.enter();
    // `on_thread_start` before any task, `on_thread_stop` after the last (`config/hooks.rs`).
    shared.config.hooks.started();
    let _stop = StopHook(&shared.config.hooks);
    // The worker number this thread is named for (`start_worker_if`): the cores it may run.
    let named = shared.worker_number(core.index);
    let mut core = core;
    loop {
        let early = run_core(&shared, core);
        // Until none of this thread's local tasks is alive, or shutdown.
        crate::scheduler::local_tasks::local_drive::finish_worker_thread(&shared);
        let spare = early && !shared.is_shutdown();
        // As many spares as the stuck threads a takeover may leave, and at least one per worker
        // (hand-offs, with takeover off too).
        let cap = shared.config.max_stuck_threads.max(shared.workers());
        let next = spare.then(|| shared.spare_threads.wait(named, cap, || shared.is_shutdown()));
        match next.flatten() {
            // Its local home, if it has one, goes on with the next core (`run_core`).
            Some(next) => core = next,
            None => {
                crate::scheduler::local_tasks::local_drive::close_thread_home();
                return;
            }
        }
    }
}

/// Runs the `on_thread_stop` hook when dropped: as a worker thread's body returns.
struct StopHook<'a>(&'a crate::config::ThreadHooks);

impl Drop for StopHook<'_> {
    fn drop(&mut self) {
        self.0.stopping();
    }
}

/// Runs `core`'s loop on this thread until shutdown, hand-off or takeover: true if the worker
/// life ended early (the core handed off or taken over), false at shutdown.
fn run_core(shared: &Arc<Shared>, core: Box<Core>) -> bool {
    // A no-op for a core handed over busy (`block_on`).
    shared.counters[core.index].busy.begin(shared.clock.now());
    context::enter(shared.clone(), core);
    // A spare thread that ran local tasks in an earlier worker life: its new core runs them.
    if let Some(home) = crate::scheduler::cores::context::this_thread_home() {
        context::attach_home(&home);
    }
    if shared.drives_reactor() {
        #[cfg(not(loom))] // mio does not build under loom, whose configs never turn the driver
        crate::scheduler::reactor_loop::reactor::run_loop(shared);
    } else {
        blocking_loop(shared);
    }
    // Dropped with the context cleared, so that anything the tasks' drops schedule goes to the
    // injector. `None`: the core went to another thread.
    let Some(mut core) = context::leave() else { return true };
    // The thread's local tasks stay with it (`finish_worker_thread`).
    core.detach_home();
    shared.counters[core.index].busy.end(shared.clock.now());
    // Relaxed: read by the monitor's heuristics (is some worker free to take work?) and by
    // loom's checks once the pool is idle.
    shared.slot_states[core.index].active.store(false, Ordering::Relaxed);
    if core.taken_over {
        shared.give_up_core(core);
        true
    } else {
        shared.retire_core(core);
        false
    }
}

/// The worker loop on a thread that blocks to park. Returns at shutdown, once the core went to
/// another thread, or once it was taken over.
///
/// A seeded pool's worker (the one pool kind that runs this loop outside loom) turns the
/// driver without blocking each time its ready list runs dry, before it parks: the I/O and
/// timers its tasks wait on are then served by the pool itself, not only by a thread in
/// `block_on` (`driver::turn_if_made`).
fn blocking_loop(shared: &Shared) {
    let seeded = !cfg!(loom) && shared.is_seeded();
    // Whether the next pick that finds nothing turns the driver instead of parking: once per
    // dry spell.
    let mut turn_when_dry = seeded;
    loop {
        let step = context::with_core(|_, core| match core.finish_poll() {
            Some(flagged) => Err(flagged),
            None => {
                let runnable = match core.next_quick(shared) {
                    Some(runnable) => runnable,
                    None if turn_when_dry && !shared.is_shutdown() => match core.find_task(shared) {
                        Some(runnable) => runnable,
                        None => return Ok(Pick::TurnDriver),
                    },
                    None => match core.next_task(shared) {
                        Some(runnable) => runnable,
                        None => return Ok(Pick::Shutdown),
                    },
                };
                core.begin_poll(shared, &runnable);
                Ok(Pick::Run(runnable, core.local_turn_goes_on()))
            }
        });
        let flagged = match step {
            Some(Ok(Pick::Shutdown)) => return,
            Some(Ok(Pick::TurnDriver)) => {
                // Outside the context's borrow: the turn's wakes reach this core through it.
                #[cfg(not(loom))]
                crate::driver::turn_if_made();
                turn_when_dry = false;
                continue;
            }
            Some(Ok(Pick::Run(runnable, turn))) => {
                turn_when_dry = seeded;
                run_task(runnable);
                if !turn {
                    continue;
                }
                // The rest of a turn of local tasks (`local_turn.rs`).
                let (_, Some(flagged)) = LocalTurn::run_rest(shared, u32::MAX) else { continue };
                flagged
            }
            Some(Err(flagged)) => flagged,
            // The core went to another thread (`block_on` in the last task).
            None => return,
        };
        // A poll the monitor flagged ended (the step's last, or the turn's).
        shared.report_returned(flagged.index);
        if flagged.taken {
            return;
        }
    }
}

/// What the blocking loop does next.
enum Pick {
    /// Runs the task; true if a turn of local tasks goes on after it.
    Run(Runnable, bool),
    /// Turns the driver without blocking, then picks again (a seeded pool's dry ready list).
    TurnDriver,
    /// The pool shuts down.
    Shutdown,
}

impl Shared {
    /// Starts the workers (and the monitor, if the configuration wants one) of a pool with a
    /// checked configuration.
    pub(crate) fn start(config: Config, kind: PoolKind) -> Result<Arc<Shared>, BuildError> {
        let workers = config.workers;
        if kind == PoolKind::Private {
            context::note_private_pool();
        }
        if config.start_paused {
            context::note_paused_pool();
        }
        let (shared, cores) = Shared::new(config, kind);
        for (index, core) in cores.into_iter().enumerate() {
            if let Err((_, err)) = Shared::start_worker(&shared, Box::new(core)) {
                // This core and the ones after it never ran.
                shared.cores_running.fetch_sub(workers - index, Ordering::SeqCst);
                shared.shutdown();
                return Err(BuildError::spawn(err));
            }
        }
        if shared.config.monitor {
            if let Err(err) = crate::scheduler::takeover::monitor::start(&shared) {
                shared.shutdown();
                return Err(BuildError::spawn(err));
            }
        } else {
            prepare_fences_off_path();
        }
        if shared.reports.is_some() {
            if let Err(err) = crate::scheduler::takeover::reporter::start(&shared) {
                shared.shutdown();
                return Err(BuildError::spawn(err));
            }
        }
        Ok(shared)
    }

    /// Starts a thread running the worker loop of `core`. On failure gives `core` back.
    pub(in crate::scheduler) fn start_worker(this: &Arc<Self>, core: Box<Core>) -> Result<(), (Box<Core>, io::Error)> {
        match Shared::start_worker_if(this, core, |_| true) {
            Ok(_) => Ok(()),
            Err(failed) => Err(failed),
        }
    }

    /// Starts a thread for the worker loop of `core` (or hands it to a spare thread named for
    /// the same worker number), which it
    /// runs only if `go`, called with the core once the thread exists and before the thread can
    /// take it, says so. Gives `core` back if `go` said no (`Ok(Some)`; a new thread then exits
    /// at once, a spare waits on) or if no thread could start (`Err`, and `go` was not called).
    pub(in crate::scheduler) fn start_worker_if(
        this: &Arc<Self>,
        mut core: Box<Core>,
        go: impl FnOnce(&mut Core) -> bool,
    ) -> Result<Option<Box<Core>>, (Box<Core>, io::Error)> {
        // A spare thread first (`spare_threads.rs`): reserved, so that it waits for `go`.
        if let Some(spare) = this.spare_threads.reserve(this.worker_number(core.index)) {
            if !go(&mut core) {
                this.spare_threads.withdraw(spare);
                return Ok(Some(core));
            }
            this.spare_threads.give(spare, core);
            return Ok(None);
        }
        let number = this.worker_number(core.index);
        let name = match &this.config.thread_name_fn {
            Some(name) => name.name(number),
            None => format!("{}-{}", this.config.thread_name, number),
        };
        let mut builder = thread::Builder::new().name(name);
        if let Some(bytes) = this.config.stack_size {
            builder = builder.stack_size(bytes);
        }
        // The core travels through a slot, locked here until `go` decided: the thread waits for
        // the lock, and then finds the core, or nothing.
        if refuse_thread_start() {
            return Err((core, io::Error::new(io::ErrorKind::WouldBlock, "a thread start refused for a test")));
        }
        let slot = Arc::new(Mutex::new(Some(core)));
        let mut held = lock(&slot);
        let (for_thread, shared) = (slot.clone(), this.clone());
        let spawned = builder.spawn(move || {
            let core = lock(&for_thread).take();
            if let Some(core) = core {
                run(shared, core);
            }
        });
        match spawned {
            Ok(handle) => {
                this.threads_started.incr();
                let core = held.as_mut().expect("the core stays in its slot until released");
                let given_back = if go(core) { None } else { held.take() };
                drop(held);
                this.keep_thread(handle);
                Ok(given_back)
            }
            Err(err) => {
                let core = held.take().expect("a thread that failed to start cannot have taken its core");
                Err((core, err))
            }
        }
    }

    /// Keeps a new worker thread's handle for shutdown to join, joining the threads that gave
    /// their core away and returned, so that a long-lived pool (the global one is never dropped)
    /// does not pile up exited-but-unjoined threads, each holding its stack until joined.
    pub(in crate::scheduler) fn keep_thread(&self, handle: thread::JoinHandle<()>) {
        let finished = {
            let mut threads = lock(&self.threads);
            let (finished, running) = std::mem::take(&mut *threads).into_iter().partition(crate::sync::is_finished);
            *threads = running;
            threads.push(handle);
            finished
        };
        for thread in finished {
            // It has returned: joining does not block. A panic there is a crew bug.
            let _ = thread.join();
        }
    }
}

/// How many of the next worker thread starts fail, as they would at a thread limit (`clone`
/// failing with EAGAIN): a test's switch (`crew::__private::fail_next_thread_starts`), 0
/// otherwise. A plain `std` atomic, also under loom: no model sets it.
static REFUSED_STARTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Makes the next `starts` worker thread starts (a hand-off's, a takeover's) fail.
pub(crate) fn fail_next_thread_starts(starts: usize) {
    // SeqCst: the tests that set it then start threads from other threads.
    REFUSED_STARTS.store(starts, std::sync::atomic::Ordering::SeqCst);
}

/// Whether this thread start fails (see [`fail_next_thread_starts`]): one load when none does.
fn refuse_thread_start() -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    REFUSED_STARTS.load(SeqCst) != 0 && REFUSED_STARTS.fetch_update(SeqCst, SeqCst, |left| left.checked_sub(1)).is_ok()
}
