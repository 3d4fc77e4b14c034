//! The worker loop as a future, run by `driver::run` for the thread's worker life, so that idle
//! workers turn crew's I/O driver (not built under loom: mio does not build there, and loom's
//! configs never turn the driver).
//!
//! Invariants:
//! - The loop picks and parks exactly as the blocking loop does (`find_task`, `prepare_park`,
//!   `resume_after_wake`), except that it waits by *polling*: parked, it returns `Pending` with
//!   its listener registered ([`poll_park`], the same token protocol as a blocking park, through
//!   `Sleepers::take_or_listen`), and `driver::run` waits in the driver meanwhile if it is free. A task woken there
//!   is pushed onto this same parked core, which then wakes itself (`Sleepers::wake_self`).
//! - The watcher's deadline is a timer of the driver's, registered alongside the listener.
//! - Every `GLOBAL_QUEUE_INTERVAL` ticks (and at the latest every [`MAX_POLLS_PER_TURN`] tasks),
//!   and before its deferred tasks when `reactor_turn.rs` asks for it, the loop wakes itself and
//!   returns `Pending`, so that `driver::run` turns the driver without blocking even while there
//!   is always work.
//! - The context's borrow ends before a task runs and before `Pending` hands the thread to the
//!   reactor, whose wakes then reach this core through `context::schedule_local`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::scheduler::cores::shared::Runnable;

use crate::scheduler::cores::context;
use crate::scheduler::cores::shared::Shared;
use crate::scheduler::cores::task_run::run_task;
use crate::scheduler::cores::worker::{Core, GLOBAL_QUEUE_INTERVAL, MAX_TASKS_PER_TICK};
use crate::scheduler::local_tasks::local_turn::LocalTurn;
use crate::scheduler::sleep::Sleepers;
use crate::sync::EventListener;

/// The most tasks the loop runs between two turns of the reactor: a turn is due every
/// `GLOBAL_QUEUE_INTERVAL` ticks, and a tick runs at most `MAX_TASKS_PER_TICK` tasks (see
/// `reactor_turn.rs`). Only a backstop: the tick count ends the run first.
const MAX_POLLS_PER_TURN: u32 = GLOBAL_QUEUE_INTERVAL * MAX_TASKS_PER_TICK;

/// Runs the worker loop inside the reactor until shutdown, or until the core went to another
/// thread.
pub(in crate::scheduler) fn run_loop(shared: &Shared) {
    crate::driver::run(WorkerLoop { shared, park: Park::default() }, crate::driver::Role::Worker);
}

/// What a loop parked inside the reactor waits on. Empty whenever the core is not parked (and
/// so whenever it could be handed to another thread: only a running task hands it off).
#[derive(Debug, Default)]
struct Park {
    /// The registered listener for this core's token.
    listener: Option<EventListener>,
    /// The watcher's deadline.
    watch_timer: Option<crate::driver::Timer>,
}

/// The worker loop as a future (see the module docs). `Ready` at shutdown or once the core went
/// to another thread.
struct WorkerLoop<'a> {
    shared: &'a Shared,
    park: Park,
}

impl Future for WorkerLoop<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let WorkerLoop { shared, park } = &mut *self;
        // Tasks run since this poll of the loop began.
        let mut ran = 0;
        loop {
            let step = context::with_core(|_, core| match core.finish_poll() {
                Some(flagged) => Err(flagged),
                // The periodic turn (or the backstop's), once the poll that ended is recorded: a
                // turn is not part of a poll.
                None if core.reactor_turn.take_periodic(ran == MAX_POLLS_PER_TURN) => {
                    cx.waker().wake_by_ref();
                    Ok(Poll::Pending)
                }
                None => {
                    let next = match core.next_quick(shared) {
                        Some(runnable) => Poll::Ready(Some(runnable)),
                        None => core.poll_next_task(shared, park, cx),
                    };
                    Ok(next.map(|next| {
                        next.map(|runnable| {
                            core.begin_poll(shared, &runnable);
                            (runnable, core.local_turn_goes_on())
                        })
                    }))
                }
            });
            let flagged = match step {
                Some(Ok(Poll::Ready(Some((runnable, turn))))) => {
                    run_task(runnable);
                    ran += 1;
                    if !turn {
                        continue;
                    }
                    // The rest of a turn of local tasks (`local_turn.rs`), within the backstop.
                    let (more, flagged) = LocalTurn::run_rest(shared, MAX_POLLS_PER_TURN - ran);
                    ran += more;
                    let Some(flagged) = flagged else { continue };
                    flagged
                }
                Some(Ok(Poll::Pending)) => return Poll::Pending,
                // Shutdown.
                Some(Ok(Poll::Ready(None))) => return Poll::Ready(()),
                Some(Err(flagged)) => flagged,
                // The core went to another thread (`block_on` in the last task).
                None => return Poll::Ready(()),
            };
            // A poll the monitor flagged ended (the step's last, or the turn's).
            shared.report_returned(flagged.index);
            if flagged.taken {
                return Poll::Ready(());
            }
        }
    }
}

impl Core {
    /// As `next_task` for the loop run as a future: instead of blocking, returns `Pending`
    /// while parked, with `cx` registered to be woken with the token.
    fn poll_next_task(&mut self, shared: &Shared, park: &mut Park, cx: &mut Context<'_>) -> Poll<Option<Runnable>> {
        loop {
            if self.parked {
                if poll_park(&shared.sleepers, self.index, &mut park.listener, cx).is_pending() {
                    // The watcher's deadline: wake itself (its token is then there, or on its
                    // way from a notify that picked it first) and poll the parker again.
                    let expired = park.watch_timer.as_mut().is_some_and(|timer| timer.poll(cx).is_ready());
                    if !expired {
                        return Poll::Pending;
                    }
                    park.watch_timer = None;
                    shared.sleepers.wake_self(self.index);
                    continue;
                }
                self.set_parked(false);
                park.watch_timer = None;
                self.resume_after_wake(shared);
            }
            if shared.is_shutdown() {
                return Poll::Ready(None);
            }
            if let Some(runnable) = self.find_task(shared) {
                return Poll::Ready(Some(runnable));
            }
            if self.reactor_turn.give() {
                // `driver::run` turns the driver (if no other thread holds it) when the
                // future it polls returns `Pending` having woken itself, then polls it again.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let parked = self.prepare_park(shared);
            self.set_parked(parked);
            if self.parked {
                self.reactor_turn.parked();
                park.watch_timer = self.watch.as_ref().map(|watch| {
                    watch.deadline.instant().map_or_else(crate::driver::Timer::never, crate::driver::Timer::at)
                });
            }
        }
    }
}

/// The non-blocking park of worker `index`: `Ready` once its token is handed over (consumed),
/// as when `Sleepers::park` returns; else `Pending`, with `listener` registered to wake `cx`.
/// Keep `listener` across polls; it is cleared on `Ready`.
fn poll_park(
    sleepers: &Sleepers,
    index: usize,
    listener: &mut Option<EventListener>,
    cx: &mut Context<'_>,
) -> Poll<()> {
    loop {
        let Some(registered) = listener else {
            match sleepers.take_or_listen(index) {
                None => return Poll::Ready(()),
                Some(registered) => *listener = Some(registered),
            }
            continue;
        };
        // The token first: when it is there (the usual way back here), the listener is dropped
        // unpolled, which spares polling it.
        if sleepers.take_token(index) {
            *listener = None;
            return Poll::Ready(());
        }
        // `unpark` sets the token before it notifies: once notified, the token is there.
        match Pin::new(registered).poll(cx) {
            Poll::Ready(()) => *listener = None,
            Poll::Pending => return Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};
    use std::time::Instant;

    use super::{Core, Park};
    use crate::scheduler::cores::shared::{PoolKind, Shared};

    #[derive(Default)]
    struct CountWakes(AtomicUsize);

    impl Wake for CountWakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A one-core pool whose loop never started, its core (inside the reactor if `in_reactor`)
    /// holding one task that was woken while it ran (a yield), or one woken (into the LIFO slot).
    fn core_with_task(in_reactor: bool, yielded: bool) -> (Arc<Shared>, Core) {
        let mut config = crate::Builder::new().workers(1).check(crate::config::Env::none()).unwrap();
        // A loop outside the driver is a seeded pool's (and every loom build's).
        config.drive_reactor = in_reactor;
        let (shared, mut cores) = Shared::new(config, PoolKind::Private);
        let mut core = cores.pop().unwrap();
        core.push(&shared, task(), yielded);
        (shared, core)
    }

    /// An empty task, never run: its `Runnable` only stands in a queue.
    fn task() -> crate::scheduler::Runnable {
        let info = crate::identity::TaskInfo::new(None, std::panic::Location::caller());
        let (runnable, task) = async_task::Builder::new()
            .metadata(crate::scheduler::TaskMeta::new(info, None))
            .spawn(|_| async {}, |_| {});
        task.detach();
        crate::scheduler::Runnable::new(runnable)
    }

    /// How many periodic turns `core` asks for over `picks` picks, each picked task putting a new
    /// one in the LIFO slot if `chain` (a chain of wakes), else taken from a deque of `picks`;
    /// each pick as if the last turn were `REACTOR_TURN_GAP` ago or longer.
    fn periodic_turns(in_reactor: bool, chain: bool, picks: usize) -> usize {
        periodic_turns_within(in_reactor, chain, picks, None)
    }

    /// As `periodic_turns`, with the last turn at `last` before each pick (`None`: never).
    fn periodic_turns_within(in_reactor: bool, chain: bool, picks: usize, last: Option<Instant>) -> usize {
        let (shared, mut core) = core_with_task(in_reactor, false);
        if !chain {
            core.take_lifo().unwrap();
            for _ in 0..picks {
                core.local.push(task());
            }
        }
        let mut turns = 0;
        for _ in 0..picks {
            core.reactor_turn.last = last;
            core.find_task(&shared).expect("a task at every pick");
            if chain {
                core.push(&shared, task(), false);
            }
            turns += usize::from(core.reactor_turn.take_periodic(false));
        }
        turns
    }

    #[test]
    fn the_reactor_turns_every_interval_of_ticks_and_a_chain_of_wakes_ticks_once_per_run() {
        let interval = super::GLOBAL_QUEUE_INTERVAL as usize;
        let run = crate::scheduler::cores::worker::MAX_LIFO_POLLS as usize + 1;
        // Intervals to go through: one under miri, which runs about a thousand times slower.
        let n = if cfg!(miri) { 1 } else { 3 };
        assert_eq!(periodic_turns(true, false, n * interval), n, "one turn per interval of tasks from the deque");
        assert_eq!(periodic_turns(true, false, n * interval - 1), n - 1);
        assert_eq!(periodic_turns(true, true, n * interval * run), n, "a LIFO run of {run} tasks is one tick");
        assert_eq!(periodic_turns(true, true, n * interval * run - 1), n - 1);
        assert_eq!(periodic_turns(false, false, n * interval), 0, "no turn outside the reactor");
        assert_eq!(periodic_turns(false, true, n * interval * run), 0);
    }

    #[test]
    fn no_periodic_turn_comes_within_the_gap_of_the_last() {
        let interval = super::GLOBAL_QUEUE_INTERVAL as usize;
        // A turn "now" (or later): never `REACTOR_TURN_GAP` ago, however slow this test runs.
        let now = Some(Instant::now() + std::time::Duration::from_secs(3600));
        assert_eq!(periodic_turns_within(true, false, 2 * interval, now), 0);
        // A turn taken marks the time, which gates the next interval's.
        let (shared, mut core) = core_with_task(true, false);
        core.take_lifo().unwrap();
        for _ in 0..interval {
            core.local.push(task());
        }
        let before = Instant::now();
        for _ in 0..interval {
            core.find_task(&shared).expect("a task at every pick");
        }
        assert!(core.reactor_turn.take_periodic(false));
        assert!(core.reactor_turn.last.is_some_and(|last| last >= before));
        // The backstop's turn, with none due, marks the time too: it gates the next interval's.
        let (_shared, mut core) = core_with_task(true, false);
        let before = Instant::now();
        assert!(core.reactor_turn.take_periodic(true));
        assert!(core.reactor_turn.last.is_some_and(|last| last >= before));
    }

    /// Polls `core` for its next task with a waker that counts its wakes.
    fn poll_next(shared: &Shared, core: &mut Core, wakes: &Arc<CountWakes>) -> Poll<bool> {
        let waker = Waker::from(wakes.clone());
        core.poll_next_task(shared, &mut Park::default(), &mut Context::from_waker(&waker)).map(|task| task.is_some())
    }

    #[test]
    fn a_worker_in_the_reactor_lets_it_turn_before_running_a_yielded_task() {
        let (shared, mut core) = core_with_task(true, true);
        let wakes = Arc::new(CountWakes::default());
        // Pending with its own waker woken: `driver::run` turns the driver, then polls
        // again.
        assert_eq!(poll_next(&shared, &mut core, &wakes), Poll::Pending);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll_next(&shared, &mut core, &wakes), Poll::Ready(true));
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_yielded_task_runs_without_a_turn_while_the_last_turn_is_within_the_gap() {
        let (shared, mut core) = core_with_task(true, true);
        // A turn "now" (or later): never `REACTOR_TURN_GAP` ago, however slow this test runs.
        core.reactor_turn.last = Some(std::time::Instant::now() + std::time::Duration::from_secs(3600));
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
