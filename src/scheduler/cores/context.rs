//! The thread-locals of a crew thread: the one that makes it a worker (the pool it works for
//! and the core it runs, `CURRENT`) and the one that holds its home of local tasks (`HERE`,
//! whose invariants are `local.rs`'s).
//!
//! Invariants:
//! - `CURRENT` is set by `run` when a worker thread starts and cleared before its core retires;
//!   its core is `None` once handed to another thread (`hand_off_core`), after which this
//!   thread runs no more worker loop.
//! - `Pool::block_on` sets it, with no core, on the thread it blocks, for as long as it blocks
//!   (first handing off the thread's core, if it had one), and puts back what was there before.
//! - The pool in `CURRENT`, if private, is the one `crew::spawn` targets on this thread: a
//!   worker of a private pool, a thread that worker's core was handed off from (blocked inside
//!   one of the pool's tasks), or a thread inside `Pool::block_on`.
//! - Every access but the set and the clear goes through [`with_current`], which never panics:
//!   it answers `None` on a thread that runs no worker, while the thread-local is being
//!   destroyed, and while the context is already borrowed (user code reached from inside one of
//!   crew's own borrows), so scheduling falls back to the injector instead.
//! - The borrow is never held while user code runs: the loops borrow it to pick a task, release
//!   it, then run the task.

use std::cell::{Cell, OnceCell, RefCell};
use std::hash::{BuildHasher, Hasher};

use crate::clock::ClockRef;
use crate::identity::TaskInfo;
use crate::scheduler::cores::shared::Runnable;

use crate::scheduler::cores::local;
use crate::scheduler::cores::registry::{Registry, SPAWN_RUN};
use crate::scheduler::cores::shared::LocalHome;
use crate::scheduler::cores::shared::{PoolKind, Shared};
use crate::scheduler::cores::worker::{Core, Pushed};
use crate::sync::{thread_local, Arc};

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

/// Makes this thread the one running `core` of `shared`'s pool.
pub(in crate::scheduler) fn enter(shared: Arc<Shared>, core: Box<Core>) {
    CURRENT.with(|current| *current.borrow_mut() = Some(Current { shared, core: Some(core) }));
}

/// Ends this thread's worker life: the core, if it still owns it.
pub(in crate::scheduler) fn leave() -> Option<Box<Core>> {
    CURRENT.with(|current| current.borrow_mut().take()).and_then(|current| current.core)
}

/// Runs `f` on this thread's worker context, if it has one and it is not borrowed already.
#[inline]
fn with_current<R>(f: impl FnOnce(&mut Current) -> Option<R>) -> Option<R> {
    CURRENT.try_with(|current| f(current.try_borrow_mut().ok()?.as_mut()?)).ok().flatten()
}

/// Whether a private pool was ever made in this process. Until then no thread can have one as
/// its current pool, and `crew::spawn` skips the thread-local. A plain `std` atomic, also under
/// loom: it only goes from false to true, before the first private pool's threads start.
static PRIVATE_POOLS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that a private pool exists, before its threads start (see [`current_private_pool`]).
pub(in crate::scheduler) fn note_private_pool() {
    // Relaxed: every thread that can see the pool as current learned of the pool through the
    // synchronisation that follows this store (its start, or the handing over of the `Pool`).
    PRIVATE_POOLS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The private pool this thread works for, or blocks in (see the module docs), or whose task
/// started the blocking job it runs ([`JOB_HOME`]): where `crew::spawn` puts a task spawned on
/// this thread. `None` elsewhere, and on the global pool's threads.
#[inline(always)]
pub(crate) fn current_private_pool() -> Option<Arc<Shared>> {
    // Relaxed: see `note_private_pool`.
    if !PRIVATE_POOLS.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    with_current(|current| (current.shared.kind == PoolKind::Private).then(|| current.shared.clone())).or_else(job_home)
}

#[cfg(not(loom))]
std::thread_local! {
    /// The private pool whose task or `block_on` started the blocking job this thread runs now
    /// (`blocking.rs`): where a `crew::spawn` inside the job goes. Only a job's own code sees
    /// it: it is no worker context (no core, no paused clock, no local tasks).
    static JOB_HOME: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// Makes `home` the pool a blocking job's spawns go to, until the guard drops (see
/// [`JOB_HOME`]). Nothing for `None` (a job started off every private pool).
#[cfg(not(loom))]
pub(crate) fn enter_job_home(home: Option<Arc<Shared>>) -> JobHome {
    let Some(home) = home else { return JobHome(false) };
    let set =
        JOB_HOME.try_with(|job_home| job_home.try_borrow_mut().map(|mut job_home| *job_home = Some(home)).is_ok());
    JobHome(set.unwrap_or(false))
}

/// What [`enter_job_home`] returns: clears the job's home when dropped.
#[cfg(not(loom))]
#[derive(Debug)]
#[must_use]
pub(crate) struct JobHome(bool);

#[cfg(not(loom))]
impl Drop for JobHome {
    fn drop(&mut self) {
        if self.0 {
            let home = JOB_HOME.try_with(|job_home| job_home.try_borrow_mut().ok()?.take()).ok().flatten();
            drop(home);
        }
    }
}

/// The home of the blocking job this thread runs, if any (see [`JOB_HOME`]).
#[inline(never)]
fn job_home() -> Option<Arc<Shared>> {
    #[cfg(not(loom))]
    {
        JOB_HOME.try_with(|job_home| job_home.try_borrow().ok()?.clone()).ok().flatten()
    }
    #[cfg(loom)]
    {
        None
    }
}

/// The pool this thread works for or blocks in, if it shuts down on an unhandled panic
/// (`unhandled.rs`): where a panic caught on this thread is noted.
pub(crate) fn current_watching_pool() -> Option<Arc<Shared>> {
    with_current(|current| current.shared.unhandled.is_some().then(|| current.shared.clone()))
}

/// True if this thread works for `shared`'s pool (a worker, a thread its core was handed off
/// from, a takeover's thread) or blocks in it (`Pool::block_on`): the one place where code
/// dropping the pool may itself be inside a poll or a drop of one of its tasks.
pub(in crate::scheduler) fn works_for(shared: &Shared) -> bool {
    with_current(|current| Some(std::ptr::eq(&*current.shared, shared))).unwrap_or(false)
}

/// Whether a paused pool was ever made in this process: until then no thread can have one as
/// its current pool, and a timer made anywhere skips the thread-local (one load, the cost of
/// the paused clock to a process that never pauses one). A plain `std` atomic, as
/// `PRIVATE_POOLS`.
static PAUSED_POOLS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that a paused pool exists, before its threads start (see [`current_paused_clock`]).
pub(in crate::scheduler) fn note_paused_pool() {
    // Relaxed: as `note_private_pool`'s store.
    PAUSED_POOLS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The clock of the pool this thread works for or blocks in, if that pool is paused
/// (`clock.rs`): the clock `crew::time`'s timers made here read.
#[inline]
pub(crate) fn current_paused_clock() -> Option<ClockRef> {
    // Relaxed: see `note_private_pool`.
    if !PAUSED_POOLS.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    with_current(|current| current.shared.paused.clone())
}

/// `info`, of a task made on this thread outside a pool's spawn (a local task, a blocking job):
/// if the pool this thread works for or blocks in is paused, the task carries its clock, so
/// that it counts as the pool's work (`clock.rs`).
pub(crate) fn with_current_clock(info: TaskInfo) -> TaskInfo {
    match current_paused_clock() {
        Some(clock) => info.with_paused(clock, None),
        None => info,
    }
}

/// Runs `f` with this thread's core set aside, so that what `f` wakes goes to the injector, in
/// the order woken, not into this core's LIFO slot: a paused clock's firing, whose timers due
/// at one instant run in the order they were made (`clock.rs`). The core is put back after
/// `f`, even if it unwinds.
pub(in crate::scheduler) fn without_core<R>(f: impl FnOnce() -> R) -> R {
    struct PutBack(Option<Box<Core>>);
    impl Drop for PutBack {
        fn drop(&mut self) {
            if let Some(core) = self.0.take() {
                with_current(|current| {
                    current.core = Some(core);
                    Some(())
                });
            }
        }
    }
    let _put_back = PutBack(with_current(|current| current.core.take()));
    f()
}

/// Makes `shared`'s pool this thread's current pool (with no core) until the guard drops, which
/// puts back what was there before. Hands off this thread's core first, if it runs one.
///
/// # Panics
///
/// As [`hand_off_core`].
#[track_caller]
pub(crate) fn enter_pool(shared: &Arc<Shared>) -> Entered {
    hand_off_core();
    let entered = Current { shared: shared.clone(), core: None };
    let previous = CURRENT
        .try_with(|current| {
            let mut current = current.try_borrow_mut().expect(
                "Pool::block_on was called from inside crew's own use of this thread's context (a destructor \
                 that crew ran while scheduling?): block there in a thread of its own instead",
            );
            current.replace(entered)
        })
        .ok()
        .flatten();
    debug_assert!(previous.as_ref().map_or(true, |previous| previous.core.is_none()), "the core was handed off");
    Entered { previous }
}

/// What [`enter_pool`] returns: puts back the thread's previous context when dropped.
#[must_use]
pub(crate) struct Entered {
    previous: Option<Current>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        // `try_borrow_mut`: a panic here, maybe while unwinding, would abort the process; and
        // `enter_pool` got the borrow, so only a thread-local being destroyed can refuse it.
        let _ = CURRENT.try_with(|current| current.try_borrow_mut().map(|mut current| *current = previous));
    }
}

/// Runs `f` on this thread's core and pool, if it still owns a core (see [`with_current`]).
#[inline]
pub(in crate::scheduler) fn with_core<R>(f: impl FnOnce(&Arc<Shared>, &mut Core) -> R) -> Option<R> {
    with_current(|current| Some(f(&current.shared, current.core.as_mut()?)))
}

/// Whether this thread still runs a core: a task's poll may have handed it to another thread.
#[inline]
pub(in crate::scheduler) fn owns_core() -> bool {
    with_current(|current| current.core.as_ref().map(|_| ())).is_some()
}

/// Puts `runnable` into the current thread's core, if this thread runs a worker of `shared`'s
/// pool. `Err(runnable)` if it belongs in the injector.
#[inline]
pub(in crate::scheduler) fn schedule_local(
    shared: &Shared,
    runnable: Runnable,
    woken_while_running: bool,
    spawned: bool,
) -> Result<Pushed, Runnable> {
    let mut task = Some(runnable);
    // A task pushed here by a poll whose core was taken over meanwhile is not stranded: a deque
    // or deferred task is stolen by the worker that took over, a LIFO task rescued by the
    // watcher, and whatever is left goes to the injector when the poll returns (`monitor.rs`).
    let pushed = with_core(|current, core| {
        if !std::ptr::eq(Arc::as_ptr(current), shared) {
            return None;
        }
        if spawned {
            core.counters().spawned.incr();
        }
        Some(core.push(shared, task.take()?, woken_while_running))
    });
    match pushed.flatten() {
        Some(pushed) => Ok(pushed),
        None => Err(task.take().expect("the task was not pushed, so it is still here")),
    }
}

/// Puts `runnable` into the current thread's core and wakes whom the push needs, if this thread
/// runs a worker of the pool at `pool` (a private pool's task's schedule function: the worker's
/// own reference reaches the pool, so the task's is not cloned). `Err(runnable)` if it belongs
/// in the injector. [`schedule_local`]'s twin for a pool known only by address: it notifies
/// under the context borrow, having no other reference to the pool. Merged into one function
/// (the notify inside the borrow for both), the wake path lost its inlining: about 30 more
/// instructions per wake (`scripts/locked-count`).
#[inline]
pub(in crate::scheduler) fn schedule_on_own_core(
    pool: *const Shared,
    runnable: Runnable,
    woken_while_running: bool,
) -> Result<(), Runnable> {
    let mut task = Some(runnable);
    // The notify runs under this thread's context borrow: it never reads the context.
    with_core(|current, core| {
        if std::ptr::eq(Arc::as_ptr(current), pool) {
            let pushed = core.push(current, task.take().expect("taken once"), woken_while_running);
            current.notify_pushed(pushed);
        }
    });
    match task {
        None => Ok(()),
        Some(runnable) => Err(runnable),
    }
}

/// For a local spawn: `Some` on a thread that runs a pool's core, ran one (a worker thread after
/// a hand-off), or blocks in `Pool::block_on` (where `spawn_local` works outside
/// `crew::block_on`), holding that pool's registry if it keeps task records (where a local task
/// spawned here registers, for the dump).
#[inline]
pub(in crate::scheduler) fn local_spawn_pool() -> Option<Option<Arc<Registry>>> {
    with_current(|current| Some(current.shared.registry().filter(|_| current.shared.keeps_task_records()).cloned()))
}

/// The pool and core this thread runs now, if it runs one.
pub(in crate::scheduler) fn current_core() -> Option<(Arc<Shared>, usize)> {
    with_core(|shared, core| (shared.clone(), core.index))
}

/// Attaches this thread's new local home to the core it runs, if any (see `local.rs`).
pub(in crate::scheduler) fn attach_home(home: &Arc<LocalHome>) {
    with_core(|_, core| core.attach_home(home));
}

/// After a local task was pushed onto this thread's own home: if the thread's core is parked (a
/// wake from inside the reactor), it wakes itself, as for `Pushed::OwnParkedCore`.
pub(in crate::scheduler) fn wake_own_parked_core() {
    with_core(|shared, core| {
        if core.parked {
            shared.sleepers.wake_self(core.index);
        }
    });
}

/// Counts a local task spawned on this thread's core, if it runs one.
#[inline]
pub(in crate::scheduler) fn count_local_spawn() {
    with_core(|_, core| core.counters().local_spawned.incr());
}

/// Counts the end of one of `shared`'s tasks: on this thread's core if it runs one of that
/// pool's, else as outside the workers.
#[inline]
pub(crate) fn count_task_end(shared: &Shared) {
    let on_core = with_core(|current, core| {
        let mine = std::ptr::eq(Arc::as_ptr(current), shared);
        if mine {
            core.counters().ended.incr();
        }
        mine
    });
    if on_core != Some(true) {
        shared.outside.ended.incr();
    }
}

/// If this thread runs a worker loop (of any pool), hands its core to a fresh thread, so the
/// caller may block this thread without stranding the core's tasks.
///
/// # Panics
///
/// If the fresh thread cannot start (the core stays with this thread).
#[track_caller]
pub(crate) fn hand_off_core() {
    if let Err(err) = try_hand_off_core() {
        panic!("crew: blocking on a worker thread needs a replacement worker thread, which could not start: {err}");
    }
}

/// As [`hand_off_core`], but if the fresh thread cannot start, the core stays with this thread,
/// its poll marked running again (so the monitor may take the core over if a thread can start
/// later), and the error is returned.
pub(crate) fn try_hand_off_core() -> std::io::Result<()> {
    if with_current(|current| Some(current.core.is_some() && current.shared.is_seeded())) == Some(true) {
        panic!(
            "crew: a seeded pool's task cannot block its worker (crew::block_on, Pool::block_on, crew::scope, \
             crew::block_in_place): the pool has one worker and runs its tasks in the seed's order; await the \
             future instead"
        );
    }
    let Some((shared, mut core)) = with_current(|current| Some((current.shared.clone(), current.core.take()?))) else {
        return Ok(());
    };
    // This thread's poll goes on without a core: its record on the core ends here (its number
    // from the word, in case a turn of local tasks moved it on, `local_turn.rs`), and its local
    // tasks stay with it (run inside its `block_on`, or after its poll, `local.rs`).
    core.sync_polls();
    let _ = core.finish_poll();
    core.detach_home();
    if core.taken_over {
        // Taken over during this poll: a new thread already runs for it. Give this core up.
        shared.give_up_core(core);
        return Ok(());
    }
    if let Err((mut core, err)) = Shared::start_worker(&shared, core) {
        if let Some(home) = this_thread_home() {
            core.attach_home(&home);
        }
        // The caller's poll runs on with the core: the monitor must see it as a poll again.
        core.resume_poll();
        with_current(|current| {
            current.core = Some(core);
            Some(())
        });
        return Err(err);
    }
    Ok(())
}

/// A number that spreads spawns over the registry's shards in runs of `SPAWN_RUN` spawns (see
/// `registry.rs`): from the worker index on a worker thread; elsewhere from a per-thread
/// counter (seeded from a per-thread hash), so one thread spawning many tasks does not funnel
/// their ends into one lock, and a run's tasks, ending one after another, fill one shard's batch.
pub(crate) fn shard_hint() -> usize {
    shard_hint_at_spawn() / SPAWN_RUN
}

/// The spawn count that [`shard_hint`] divides into runs.
fn shard_hint_at_spawn() -> usize {
    std::thread_local! {
        static NEXT: Cell<Option<usize>> = const { Cell::new(None) };
    }
    let worker = with_core(|_, core| {
        core.spawns = core.spawns.wrapping_add(1);
        // Workers start 17 runs apart (odd, so every shard of a power-of-two count comes
        // round), so two spawning at once seldom meet.
        core.index.wrapping_mul(17 * SPAWN_RUN).wrapping_add(core.spawns)
    });
    worker.unwrap_or_else(|| {
        // Under loom a model's runs must make the same steps: a thread-local outlives a run, and
        // the shard a spawn lands on decides whether ends fill a batch.
        if cfg!(loom) {
            return 0;
        }
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

// This thread's home of local tasks (`local.rs`): the thread-local that holds it, and what
// reaches it through that thread-local (the home's own methods that pop, and a local task's
// schedule, which looks whether it runs on the owner).

/// A home of this scheduler's local tasks.
pub(in crate::scheduler) type Here = local::Here<Shared>;

/// This thread's local queue, as a worker's turn of local tasks pops it.
pub(in crate::scheduler) type Queue<'a> = local::Queue<'a, Shared>;

thread_local! {
    // Not `const {}`: loom's `thread_local!` has no const form.
    #[allow(clippy::missing_const_for_thread_local)]
    pub(in crate::scheduler) static HERE: OnceCell<Here> = OnceCell::new();
}

/// Runs `f` on this thread's [`Here`], making it first (and attaching it to the core the thread
/// runs, if any). `None` while the thread-locals are being destroyed.
pub(in crate::scheduler) fn with_here<R>(f: impl FnOnce(&Here) -> R) -> Option<R> {
    HERE.try_with(|here| {
        let mut made = false;
        let here = here.get_or_init(|| {
            made = true;
            Here::new(current_core().map(|(pool, _)| pool))
        });
        if made {
            attach_home(&here.home);
        }
        f(here)
    })
    .ok()
}

/// Notes that this thread's core parks (`true`) or woke, for a wake of one of its local tasks
/// from inside the reactor (`LocalHome::schedule`). Called only by a thread with a home.
pub(in crate::scheduler) fn note_core_parked(parked: bool) {
    let _ = HERE.try_with(|here| here.get().map(|here| here.core_parked.set(parked)));
}

/// This thread's home, if it has one.
pub(in crate::scheduler) fn this_thread_home() -> Option<Arc<LocalHome>> {
    HERE.try_with(|here| here.get().map(|here| here.home.clone())).ok().flatten()
}

/// Runs `f` on this thread's local queue; `None` if the thread has no home (or while its
/// thread-locals are being destroyed).
#[inline]
pub(in crate::scheduler) fn with_queue<R>(f: impl FnOnce(Queue<'_>) -> R) -> Option<R> {
    HERE.try_with(|here| here.get().map(|here| f(local::Queue(here)))).ok().flatten()
}

impl LocalHome {
    /// The next queued task, if any. Called by the owner.
    #[inline]
    pub(in crate::scheduler) fn pop(&self) -> Option<Runnable> {
        HERE.try_with(|here| here.get().and_then(Here::pop)).ok().flatten()
    }

    /// The next queued task that did not yield, if any (a worker's pick). Called by the owner.
    #[inline]
    pub(in crate::scheduler) fn pop_ready(&self) -> Option<Runnable> {
        HERE.try_with(|here| here.get().and_then(Here::pop_ready)).ok().flatten()
    }

    /// Whether a yielded task waits (see [`Here::yielded`]). Called by the owner.
    pub(in crate::scheduler) fn has_yielded(&self) -> bool {
        HERE.try_with(|here| here.get().is_some_and(|here| !here.yielded.borrow().is_empty())).unwrap_or(false)
    }

    /// Moves the yielded tasks to the back of the queue, in the order they yielded: a worker's
    /// fairness tick, and its pick once it has nothing else. Returns whether there were any.
    /// Called by the owner.
    pub(in crate::scheduler) fn release_yielded(&self) -> bool {
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
    pub(in crate::scheduler) fn pop_next(&self) -> Option<Runnable> {
        HERE.try_with(|here| here.get().and_then(Here::pop_next)).ok().flatten()
    }

    /// Whether no task is queued, looked at under the lock of the queue other threads push to:
    /// the owner's look before a wait.
    pub(in crate::scheduler) fn is_empty_locked(&self) -> bool {
        HERE.try_with(|here| here.get().map_or(true, Here::is_empty)).unwrap_or(true)
    }

    /// A local task's schedule: on the owner, into `next` (the one before goes to the back of
    /// its own queue), or, if the task woke itself while it ran (a yield), into `yielded`,
    /// behind the others; its core woken if it is parked (a wake from inside the reactor). From
    /// any other thread, onto `remote`, then wake the owner (see the module docs). Never drops
    /// the task (a wake).
    #[inline]
    pub(in crate::scheduler) fn schedule(&self, runnable: Runnable, woken_while_running: bool) {
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
            None if matches!(core_parked, Ok(true)) => wake_own_parked_core(),
            None => {}
        }
    }
}
