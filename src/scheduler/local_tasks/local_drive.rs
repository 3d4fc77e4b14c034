//! Driving a thread's local tasks when it runs no core: inside `block_on` ([`drive`]), and as a
//! worker thread whose worker life ended ([`finish_worker_thread`]); and the per-thread counts
//! that say where `spawn_local` works (`BLOCK_ON_DEPTH`, `POLLING`). The invariants are the
//! home's (`local.rs`).
//!
//! Invariants:
//! - `block_on` never drives the thread's local tasks from inside a local task's poll (they run
//!   after it returns); a thread finishing its local tasks stays its pool's, and shutdown wakes
//!   it (`Shared::wake_orphans`).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Waker};

use crate::identity::Activity;
use crate::scheduler::cores::context;
use crate::scheduler::cores::context::{this_thread_home, with_here, Here};
use crate::scheduler::cores::local::{MainWake, DRIVE_BATCH, MAX_NEXT_POLLS};
use crate::scheduler::cores::shared::{LocalHome, Runnable, Shared};
use crate::sync::thread::LocalKey;
use crate::sync::{lock, thread_local, Arc};

thread_local! {
    /// `block_on` calls running on this thread now: `spawn_local` works inside them.
    // Not `const {}`: loom's `thread_local!` has no const form.
    #[allow(clippy::missing_const_for_thread_local)]
    static BLOCK_ON_DEPTH: Cell<usize> = Cell::new(0);
}

/// True inside a `block_on` on this thread.
pub(in crate::scheduler) fn in_block_on() -> bool {
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
    pub(in crate::scheduler) static POLLING: Cell<usize> = Cell::new(0);
}

/// True while a local task is being polled on this thread.
pub(in crate::scheduler) fn in_local_poll() -> bool {
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
    pub(in crate::scheduler) fn raise(count: &'static LocalKey<Cell<usize>>) -> Counted {
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
        crate::scheduler::cores::task_run::run_task(runnable);
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
    crate::scheduler::cores::task_run::run_task(runnable);
    if let Some(record) = info.record() {
        record.poll_ended();
    }
}

/// The end of a worker thread's worker life (its core retired, given up or handed off): if it
/// owns local tasks, it runs them until none is alive, or until `shared`'s pool shuts down
/// (then [`close_thread_home`] drops what is left, see the module docs). Shutdown wakes it
/// (`orphans`).
pub(in crate::scheduler) fn finish_worker_thread(shared: &Arc<Shared>) {
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
pub(in crate::scheduler) fn close_thread_home() {
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
    pub(in crate::scheduler) fn wake_orphans(&self) {
        for orphan in lock(&self.orphans).iter() {
            orphan.unparker.unpark();
        }
    }
}
