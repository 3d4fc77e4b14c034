//! A worker's own state ([`Core`]): its queues, its polls' bookkeeping, pushing onto it, and
//! running a task.
//!
//! Invariants:
//! - A `Core` is owned by exactly one thread at a time, the one running its loop (it lives in
//!   that thread's context, see `context.rs`). Tasks scheduled on that thread for the same pool
//!   go into it; everything else goes to the pool's injector.
//! - A `Core` shares no cache line with anything else: it is aligned to, and sized in, 128-byte
//!   pairs of lines on x86-64, AArch64 and 64-bit PowerPC (as crossbeam's `CachePadded`), 64
//!   bytes elsewhere. Its owner writes it at every poll, and the pool boxes its cores one after
//!   another.
//! - Its pick order is `pick.rs`'s.
//! - A task woken while it runs (a yield, or any wake during its poll) goes to the core's
//!   deferred list, never the LIFO slot, and a local task to its thread's yielded list
//!   (`local.rs`), not its local queue: it runs once the worker has nothing else, or after the
//!   next fairness tick. So a task that wakes itself forever cannot starve the others, local
//!   or not, and a yielder does not delay work that is ready (tokio defers `yield_now` the same
//!   way).
//! - A worker never parks with a task in its LIFO slot, deque, deferred list, inbox or its
//!   thread's local queue.
//! - Every task that enters a deque or a deferred list is announced with `notify_one`, unless its
//!   worker pops it at once, or it is a task woken while it ran that its worker runs next (no
//!   other task queued there: `Core::nothing_queued_but`); every push into the LIFO slot with
//!   `notify_private`.

use crate::identity::{Activity, TaskInfo};
use crate::scheduler::cores::lifo::LifoOwner;
use crate::scheduler::cores::shared::Runnable;

use crate::scheduler::cores::counters::CoreCounters;
use crate::scheduler::cores::rand::FastRand;
use crate::scheduler::cores::seeded::SeededPick;
use crate::scheduler::cores::shared::LocalHome;
use crate::scheduler::cores::shared::Remote;
use crate::scheduler::cores::shared::Shared;
use crate::scheduler::reactor_loop::reactor_turn::ReactorTurn;
use crate::scheduler::sleep::WakeSource;
use crate::scheduler::takeover::progress::Watch;
use crate::sync::{lock, planted_bug, shrunk_under_loom, Arc, CachePadded, Worker};

/// Every this many ticks, a worker takes a task from the injector before its own queue.
pub(in crate::scheduler) const GLOBAL_QUEUE_INTERVAL: u32 = shrunk_under_loom(61, 2) as u32;

/// The most tasks a worker moves from the injector at the fairness interval.
pub(in crate::scheduler) const MAX_INTERVAL_BATCH: usize = shrunk_under_loom(128, 2);

/// The most tasks a worker moves from the injector when its own queues ran dry (crossbeam's
/// own cap for `Injector::steal_batch_and_pop`).
pub(in crate::scheduler) const MAX_INJECTOR_BATCH: usize = shrunk_under_loom(33, 2);

/// The fewest tasks a worker moves from the injector when its own queues ran dry, if there are
/// that many (crossbeam takes at most half of them): with a short injector and many workers,
/// the fair share alone would take them one or two at a time.
pub(in crate::scheduler) const MIN_INJECTOR_BATCH: usize = shrunk_under_loom(8, 2);

/// How many tasks in a row a worker takes from its LIFO slot before going back to its deque.
pub(in crate::scheduler) const MAX_LIFO_POLLS: u32 = 3;

// A local driver's run of the task its thread scheduled last is the LIFO slot's run.
const _: () = assert!(MAX_LIFO_POLLS == crate::scheduler::cores::local::MAX_NEXT_POLLS);

/// The most local tasks a worker runs in one turn of its thread's local tasks (`local.rs`)
/// before its other queues get a turn: `block_on`'s batch between two looks at its own future,
/// as tokio's `LocalSet` runs at most this many per poll of its own.
pub(in crate::scheduler) const LOCAL_TURN: u32 = crate::scheduler::cores::local::DRIVE_BATCH as u32;

/// The most tasks one tick runs: a chain of wakes (`MAX_LIFO_POLLS + 1`), or a turn of local
/// tasks (`LOCAL_TURN`), whichever is longer.
#[cfg_attr(loom, allow(dead_code))] // the reactor loop's backstop; loom builds have no reactor loop
pub(in crate::scheduler) const MAX_TASKS_PER_TICK: u32 =
    if LOCAL_TURN > MAX_LIFO_POLLS + 1 { LOCAL_TURN } else { MAX_LIFO_POLLS + 1 };

/// One worker's local state; owned by the thread running its loop.
///
/// Aligned (and so sized) to whole 128-byte pairs of cache lines where crossbeam's `CachePadded`
/// is, 64 bytes elsewhere: the pool boxes its cores one after another, and its owner writes a
/// core at every poll (`tick`, `polls`, `polling`), so two cores sharing a line would make both
/// workers pay for each other's polls.
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "powerpc64"), repr(align(128)))]
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "powerpc64")), repr(align(64)))]
pub(in crate::scheduler) struct Core {
    pub(in crate::scheduler) index: usize,
    /// This core's shared half (`Remote`, `shared.rs`), also `Shared::remotes[index]`: held here so that
    /// the per-poll path reaches it with one load, not an index into the pool's slice.
    pub(in crate::scheduler) remote: Arc<CachePadded<Remote>>,
    /// This core's counters, also `Shared::counters[index]`, held here for the same reason.
    pub(in crate::scheduler) counters: Arc<CachePadded<CoreCounters>>,
    /// The owner's end of this core's LIFO slot (`remote.lifo`): puts tasks in, and takes them
    /// without a read-modify-write (`sync/slot.rs`). Only this core's holder pushes or takes
    /// through it; the watcher and the monitor take through `remote.lifo`. A task left in it
    /// when the core is dropped is dropped as crew's `Runnable` (`lifo.rs`).
    pub(in crate::scheduler) lifo: LifoOwner<Shared>,
    /// Whether this core may have put a task in its LIFO slot since it last emptied it (a thief
    /// may have taken it since): saves an atomic take per task when the slot is unused.
    pub(in crate::scheduler) lifo_filled: bool,
    /// Whether this core may have deferred a task since it last flushed its deferred list (a
    /// thief may have taken them since): saves a lock per pick when nothing was deferred.
    pub(in crate::scheduler) deferred_filled: bool,
    pub(in crate::scheduler) local: Worker<Runnable>,
    /// How far the chain of wakes or the turn of local tasks under way went.
    pub(in crate::scheduler) turn: TurnCounts,
    pub(in crate::scheduler) tick: u32,
    /// Ticks left until the next fairness tick (`GLOBAL_QUEUE_INTERVAL` apart): a countdown, so
    /// that the per-task path does no division.
    pub(in crate::scheduler) until_interval: u32,
    pub(in crate::scheduler) searching: bool,
    /// Whether this core found a task since it last woke or spun: only then does it spin before
    /// parking (`search.rs`), so a worker woken for nothing, the watcher at its deadline say,
    /// parks again at once.
    pub(in crate::scheduler) spin_armed: bool,
    pub(in crate::scheduler) rng: FastRand,
    /// Spawns made on this core, to spread their registry entries over shards.
    pub(in crate::scheduler) spawns: usize,
    /// Listed as parked and waiting for its token, in a worker loop run as a future.
    pub(in crate::scheduler) parked: bool,
    /// Parked, this core woke itself for tasks its thread's reactor turn pushed onto it, counted
    /// as unparked but not searching (`Sleepers::wake_self_for_work`): it resumes with work of
    /// its own, and wakes another worker only if more than one task is queued (`park.rs`).
    pub(in crate::scheduler) woken_for_work: bool,
    /// The current term, while this core holds the watcher role or was last woken from it.
    pub(in crate::scheduler) watch: Option<Watch>,
    /// The last term saw an owner at work: take the role again at the next park (`watch.rs`).
    pub(in crate::scheduler) watch_next: bool,
    /// Set when this core's thread learnt, at the end of a poll, that the monitor took the core
    /// over: the thread gives it up instead of running its loop on (see `monitor.rs`).
    pub(in crate::scheduler) taken_over: bool,
    /// Polls begun on this core, wrapping: the count in its progress word.
    pub(in crate::scheduler) polls: usize,
    /// A poll began (`begin_poll`) and its end is not recorded yet (`finish_poll`).
    pub(in crate::scheduler) polling: bool,
    /// The identity of the task being polled, while its pool keeps task records (the dump).
    pub(in crate::scheduler) polling_task: Option<TaskInfo>,
    /// The pool records each poll for its slow-poll hook or keeps task records (the dump): its
    /// configuration, read once, so that a poll's begin tests one flag of its own core.
    pub(in crate::scheduler) poll_hooks: bool,
    pub(in crate::scheduler) reactor_turn: ReactorTurn,
    /// The local tasks' home of the thread that runs this core, once that thread spawned one
    /// (`local.rs`); taken off before the core goes to another thread (`detach_home`).
    pub(in crate::scheduler) home: Option<Arc<LocalHome>>,
    /// A seeded pool's one core: its ready list and generator (`seeded.rs`); `None` elsewhere.
    pub(in crate::scheduler) seeded: Option<Box<SeededPick<Runnable>>>,
}

/// A poll that the monitor flagged while it ran (see [`Core::finish_poll`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::scheduler) struct Flagged {
    /// The core it ran on.
    pub(in crate::scheduler) index: usize,
    /// The monitor took the core over during it: the thread gives the core up.
    pub(in crate::scheduler) taken: bool,
}

/// Where [`Core::push`] put a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::scheduler) enum Pushed {
    /// Into the deferred list or the deque of a running worker, core `.0` (the deque if it
    /// displaced the LIFO slot's task): other workers may steal it.
    Stealable(usize),
    /// Into the LIFO slot of a running worker, core `.0`: only it (or the watcher) takes it.
    Lifo(usize),
    /// A task woken while it ran, into the deferred list of its running worker, core `.0`, with
    /// nothing else queued there: that worker takes it next (`Core::nothing_queued_but`), so
    /// nobody is woken for it. Searchers may still take it.
    DeferredNext(usize),
    /// Into this core, which is parked: its thread runs the reactor, whose wake this is. The
    /// worker should wake itself.
    OwnParkedCore(usize),
}

/// How far a core went in the chain of wakes or the turn of local tasks under way (see the
/// module docs). A turn of local tasks run outside the context's borrow (`local_turn.rs`) takes
/// a copy, moves it as the core's picks would, and writes it back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::scheduler) struct TurnCounts {
    /// Tasks taken in a row from the LIFO slot (in a turn of local tasks, the thread's task
    /// scheduled last).
    pub(in crate::scheduler) lifo_polls: u32,
    /// Local tasks this core may still take before its other queues get a turn (a turn of
    /// local tasks began when it took one; see `Core::next_in_local_turn`).
    pub(in crate::scheduler) local_turn: u32,
}

impl TurnCounts {
    /// True while a turn of local tasks is under way.
    #[inline]
    pub(in crate::scheduler) fn in_local_turn(&self) -> bool {
        self.local_turn > 0
    }

    /// The next task of the turn of local tasks under way (see `Core::next_in_local_turn`):
    /// `pop_next`'s (the task the thread scheduled last) at most `MAX_LIFO_POLLS` times in a
    /// row, else `pop_ready`'s (the oldest). `None` once the turn ended: its tasks were taken,
    /// or none is queued.
    #[inline]
    pub(in crate::scheduler) fn next_local(
        &mut self,
        pop_next: impl FnOnce() -> Option<Runnable>,
        pop_ready: impl FnOnce() -> Option<Runnable>,
    ) -> Option<Runnable> {
        debug_assert!(self.in_local_turn(), "a turn of local tasks is under way");
        let next = if self.lifo_polls < MAX_LIFO_POLLS { pop_next() } else { None };
        self.lifo_polls = if next.is_some() { self.lifo_polls + 1 } else { 0 };
        let Some(runnable) = next.or_else(pop_ready) else {
            self.end_local_turn();
            return None;
        };
        self.local_turn -= 1;
        if self.local_turn == 0 {
            // The turn's last task.
            self.end_local_turn();
        }
        Some(runnable)
    }

    pub(in crate::scheduler) fn end_local_turn(&mut self) {
        self.local_turn = 0;
        // The LIFO slot's task, woken during the turn, goes first.
        self.lifo_polls = 0;
    }
}

impl Core {
    /// Core `index` of a pool whose loops run inside the reactor if `in_reactor`; `remote` and
    /// `counters` are the pool's for that index.
    pub(in crate::scheduler) fn new(
        index: usize,
        local: Worker<Runnable>,
        remote: Arc<CachePadded<Remote>>,
        counters: Arc<CachePadded<CoreCounters>>,
        in_reactor: bool,
        poll_hooks: bool,
        seeded: Option<SeededPick<Runnable>>,
    ) -> Core {
        Core {
            index,
            lifo: remote.lifo.claim().expect("one core per LIFO slot"),
            remote,
            counters,
            lifo_filled: false,
            deferred_filled: false,
            local,
            turn: TurnCounts::default(),
            tick: 0,
            until_interval: GLOBAL_QUEUE_INTERVAL,
            searching: false,
            spin_armed: false,
            rng: FastRand::new(index as u64),
            spawns: 0,
            parked: false,
            woken_for_work: false,
            watch: None,
            watch_next: false,
            taken_over: false,
            polls: 0,
            polling: false,
            polling_task: None,
            poll_hooks,
            reactor_turn: ReactorTurn::new(in_reactor),
            home: None,
            seeded: seeded.map(Box::new),
        }
    }

    /// This core's shared half (`Remote`, `shared.rs`): the progress word, the LIFO slot, the inbox.
    #[inline]
    pub(in crate::scheduler) fn remote(&self) -> &Remote {
        &self.remote
    }

    /// Records the start of a poll of `runnable` in this core's progress word (and, with a
    /// slow-poll hook, its task). The loops call it as they hand out the task they picked.
    #[inline]
    pub(in crate::scheduler) fn begin_poll(&mut self, shared: &Shared, runnable: &Runnable) {
        if self.poll_hooks {
            self.begin_hooked_poll(shared, runnable);
        }
        self.polls = self.polls.wrapping_add(1);
        self.polling = true;
        self.remote.progress.begin_poll(self.polls);
    }

    /// A hand-off that ended this thread's poll on its core failed (no thread could start,
    /// `context.rs`): the poll goes on, on this core, so it is marked running again, as a new
    /// poll of the same task (its record for reports stays the one `begin_poll` made), so that
    /// the monitor can see it stuck and take the core over.
    pub(in crate::scheduler) fn resume_poll(&mut self) {
        self.polls = self.polls.wrapping_add(1);
        self.polling = true;
        self.remote.progress.begin_poll(self.polls);
    }

    /// Records the end of the poll begun last, if any: the loops call it before they pick the
    /// next task (or park, or yield to the reactor). `Some` only in the rare case that the
    /// monitor flagged the poll (reported it as slow, or took the core over, which also sets
    /// `taken_over`): the caller then reports the poll's end outside the context's borrow, and
    /// stops if the core was taken.
    #[inline]
    pub(in crate::scheduler) fn finish_poll(&mut self) -> Option<Flagged> {
        if !std::mem::replace(&mut self.polling, false) {
            return None;
        }
        if self.polling_task.is_some() {
            self.end_recorded_poll();
        }
        let seen = self.remote.progress.end_poll(self.polls)?;
        self.taken_over = seen.taken();
        Some(Flagged { index: self.index, taken: seen.taken() })
    }

    /// Once the loop began the poll of a task it took: whether a turn of local tasks is under
    /// way, whose rest the loop runs outside the context's borrow once that poll returned
    /// (`local_turn.rs`). Never in a pool with poll hooks, whose polls all go through
    /// `begin_poll` and `finish_poll`.
    #[inline]
    pub(in crate::scheduler) fn local_turn_goes_on(&self) -> bool {
        self.turn.in_local_turn() && !self.poll_hooks
    }

    /// The rest of the turn of local tasks under way (see `local_turn_goes_on`), for
    /// `local_turn.rs`: this core's index, its poll under way, and its picks' counts.
    pub(in crate::scheduler) fn local_turn_rest(&self) -> (usize, usize, TurnCounts) {
        (self.index, self.polls, self.turn)
    }

    /// A turn of local tasks run outside the borrow ended (`local_turn.rs`), its last poll ended
    /// too: the count of polls begun, the picks' counts, the local tasks it ran after the first
    /// (which the pick counted), and whether the monitor flagged the last poll (`taken_over` as
    /// `finish_poll` sets it).
    pub(in crate::scheduler) fn end_local_run(
        &mut self,
        polls: usize,
        turn: TurnCounts,
        ran: u32,
        flagged: Option<Flagged>,
    ) {
        self.polls = polls;
        self.polling = false;
        self.turn = turn;
        self.counters().local_runs.add(u64::from(ran));
        if let Some(flagged) = flagged {
            self.taken_over = flagged.taken;
        }
    }

    /// Takes the count of polls begun from the progress word, which a turn of local tasks run
    /// outside the context's borrow moves on without the core (`local_turn.rs`), counting each
    /// of those polls as a local task run: before a poll's end that another path records (a
    /// hand-off during such a turn).
    pub(in crate::scheduler) fn sync_polls(&mut self) {
        let begun = self.remote.progress.polls_since(self.polls);
        self.polls = self.polls.wrapping_add(begun);
        self.counters().local_runs.add(begun as u64);
    }

    /// `begin_poll`'s part in a pool with a slow-poll hook (the poll's record, which the monitor
    /// reads) or task records (the task dump), out of the common path.
    #[cold]
    #[inline(never)]
    fn begin_hooked_poll(&mut self, shared: &Shared, runnable: &Runnable) {
        if shared.records_polls() {
            self.remote.record_poll(runnable.metadata().info());
        }
        if shared.keeps_task_records() {
            if let Some(record) = runnable.metadata().info().record() {
                record.running(self.index);
                self.polling_task = Some(runnable.metadata().info().clone());
            }
        }
    }

    /// `finish_poll`'s part for a task with a record, out of the common path.
    #[cold]
    #[inline(never)]
    fn end_recorded_poll(&mut self) {
        if let Some(task) = self.polling_task.take() {
            if let Some(record) = task.record() {
                record.poll_ended();
            }
        }
    }

    /// Makes a core given up after a takeover, its queues emptied, ready to be a spare.
    pub(in crate::scheduler) fn reset_as_spare(&mut self) {
        self.lifo_filled = false;
        self.deferred_filled = false;
        self.turn = TurnCounts::default();
        self.searching = false;
        self.parked = false;
        self.watch = None;
        self.watch_next = false;
        self.taken_over = false;
        self.polling = false;
        self.polling_task = None;
    }

    /// Puts a task scheduled on this worker's thread into its queues: a task woken while it ran
    /// into the deferred list, anything else into the LIFO slot, whose previous task goes to
    /// the deque.
    #[inline]
    pub(in crate::scheduler) fn push(
        &mut self,
        shared: &Shared,
        runnable: Runnable,
        woken_while_running: bool,
    ) -> Pushed {
        let stealable = self.push_task(shared, runnable, woken_while_running);
        match (self.parked, stealable) {
            (true, _) => {
                // The first push of the turn takes this core off the list (the lock once per
                // turn); a core another thread's notify picked first is no longer listed.
                if !self.woken_for_work {
                    self.woken_for_work = shared.sleepers.wake_self_for_work(self.index);
                }
                Pushed::OwnParkedCore(self.index)
            }
            // A yield with nothing queued ahead of it on this worker: taken back next.
            (false, true)
                if woken_while_running
                    && (planted_bug!("hidden_yield_ignores_queue") || self.nothing_queued_but(0)) =>
            {
                Pushed::DeferredNext(self.index)
            }
            (false, true) => Pushed::Stealable(self.index),
            (false, false) => Pushed::Lifo(self.index),
        }
    }

    /// Whether nothing is queued on this worker but `in_deque` tasks in its deque: its LIFO slot
    /// and (by the hint) its thread's local queue are empty. A task that yields then (with none
    /// in the deque), or is the only one flushed from the deferred list into an empty deque at a
    /// fairness tick (`pick.rs`), runs next on this worker (after a reactor turn, or a task
    /// pushed from outside meanwhile, whose push woke a searcher of its own), so no other worker
    /// is woken for it, as tokio's yielded task wakes none. With work queued ahead of it, an
    /// idle worker is woken to take some, so that a yielder is not held behind a task that
    /// blocks the worker. (A task joining ready handles woke the other worker at every budget
    /// yield: BENCHMARKS.md, "What the cooperative budget costs".)
    #[inline]
    pub(in crate::scheduler) fn nothing_queued_but(&self, in_deque: usize) -> bool {
        self.local.len() == in_deque && !self.remote.has_lifo_task() && !self.has_local_task_hint()
    }

    /// `push`'s move. Returns true if a task entered a queue that searchers steal from (the
    /// deferred list or the deque), false if only the private LIFO slot changed.
    #[inline]
    fn push_task(&mut self, shared: &Shared, runnable: Runnable, woken_while_running: bool) -> bool {
        if woken_while_running {
            shared.record_queued(&runnable, Activity::Deferred(self.index));
            self.deferred_filled = true;
            if planted_bug!("lost_yield") {
                drop(runnable);
            } else {
                self.remote.deferred.lock().push(runnable);
            }
            return true;
        }
        self.lifo_filled = true;
        shared.record_queued(&runnable, Activity::Lifo(self.index));
        match self.lifo.push(runnable) {
            Some(previous) => {
                shared.record_queued(&previous, Activity::Deque(self.index));
                self.local.push(previous);
                true
            }
            None => false,
        }
    }

    /// After moving tasks into the deque: announces them with `notify_one` if any are left
    /// there, so that an idle worker may take some (a parking worker's re-scan could have
    /// missed them while they were in transit).
    #[inline]
    pub(in crate::scheduler) fn announce_deque(&self, shared: &Shared) {
        if !self.local.is_empty() {
            self.notify_one(shared);
        }
    }

    /// `Sleepers::notify_one`, counted as this core's.
    #[inline]
    pub(in crate::scheduler) fn notify_one(&self, shared: &Shared) {
        shared.sleepers.notify_one_from(WakeSource::Core(self.counters()));
    }

    /// This core's counters (see `counters.rs`).
    #[inline]
    pub(in crate::scheduler) fn counters(&self) -> &CoreCounters {
        &self.counters
    }

    /// True if this core's thread owns local tasks (a home).
    #[inline]
    pub(in crate::scheduler) fn has_home(&self) -> bool {
        self.home.is_some()
    }

    /// True if this core's thread may have a local task queued (a hint without the lock).
    #[inline]
    pub(in crate::scheduler) fn has_local_task_hint(&self) -> bool {
        self.home.as_ref().is_some_and(|home| home.has_queued())
    }

    /// True if this core's thread has a local task queued, looked at under the queue's lock:
    /// the re-check of a worker about to park (`park.rs`).
    pub(in crate::scheduler) fn has_local_task_locked(&self) -> bool {
        self.home.as_ref().is_some_and(|home| !home.is_empty_locked())
    }

    /// Marks this core parked (or not) in a worker loop run inside the reactor, telling its
    /// thread's home if it has one (see `local::note_core_parked`).
    #[cfg_attr(loom, allow(dead_code))] // loom builds have no reactor loop
    pub(in crate::scheduler) fn set_parked(&mut self, parked: bool) {
        self.parked = parked;
        if self.home.is_some() {
            crate::scheduler::cores::context::note_core_parked(parked);
        }
    }

    /// Makes `home`, this thread's, the one this core picks local tasks from, and the one a wake
    /// from another thread finds this core through.
    pub(in crate::scheduler) fn attach_home(&mut self, home: &Arc<LocalHome>) {
        home.attach(self.index);
        *lock(&self.remote.home) = Some(home.clone());
        self.home = Some(home.clone());
    }

    /// Before this core leaves its thread (handed off, retired, given up): the thread's home
    /// stays with the thread, which drives it from now on (`local_drive.rs`).
    pub(in crate::scheduler) fn detach_home(&mut self) {
        if let Some(home) = self.home.take() {
            crate::scheduler::cores::context::note_core_parked(false);
            lock(&self.remote.home).take();
            home.detach();
        }
    }

    /// The task in this core's LIFO slot, counting the take for the watcher.
    #[inline]
    pub(in crate::scheduler) fn take_lifo(&mut self) -> Option<Runnable> {
        if !std::mem::replace(&mut self.lifo_filled, false) {
            return None;
        }
        self.lifo.take()
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        // Queued tasks are dropped one by one (dropping their futures) when a core retires;
        // `Shared::retire_core` empties the deferred list, and the LIFO slot's owner drops its
        // task after this, as crew's `Runnable` (`lifo.rs`).
        while let Some(runnable) = self.local.pop() {
            drop(runnable);
        }
        if let Some(seeded) = &mut self.seeded {
            for runnable in seeded.take_ready() {
                drop(runnable);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::cores::shared::PoolKind;
    use crate::scheduler::cores::task::TaskMeta;

    /// A pending task of no pool, and its handle (kept, so that dropping the runnable does
    /// not end it).
    fn pending() -> (Runnable, async_task::Task<(), TaskMeta<Shared>>) {
        let meta = TaskMeta::new(TaskInfo::new(None, std::panic::Location::caller()), None);
        let (raw, task) = async_task::Builder::new().metadata(meta).spawn(|_| std::future::pending::<()>(), |_| {});
        (Runnable::new(raw), task)
    }

    #[test]
    fn a_yield_wakes_another_worker_only_when_work_is_queued_ahead_of_it() {
        let config = crate::Builder::new().workers(2).check(crate::config::Env::none()).unwrap();
        let (shared, mut cores) = Shared::new(config, PoolKind::Private);
        let core = &mut cores[0];
        let (yielder, _yielder_task) = pending();
        assert_eq!(core.push(&shared, yielder, true), Pushed::DeferredNext(0), "nothing queued: it runs next");
        let (spawned, _spawned_task) = pending();
        assert_eq!(core.push(&shared, spawned, false), Pushed::Lifo(0), "a spawn into the empty slot");
        let (yielder, _yielder_task) = pending();
        assert_eq!(core.push(&shared, yielder, true), Pushed::Stealable(0), "behind the slot's task");
        let (spawned, _spawned_task) = pending();
        assert_eq!(core.push(&shared, spawned, false), Pushed::Stealable(0), "the slot's task into the deque");
        drop(core.take_lifo());
        let (yielder, _yielder_task) = pending();
        assert_eq!(core.push(&shared, yielder, true), Pushed::Stealable(0), "behind the deque's task");
        drop(core.local.pop());
        let (yielder, _yielder_task) = pending();
        assert_eq!(core.push(&shared, yielder, true), Pushed::DeferredNext(0), "with the others in the deferred list");
        assert_eq!(shared.remotes[0].deferred.lock().len(), 4, "every yield was queued");
    }

    /// Core 0 at its fairness tick with one yielded task (and, if `queued_ahead`, a task in its
    /// deque), core 1 parked: whether core 0 woke core 1, and whether the task it picked was
    /// the yielder.
    fn fairness_tick(queued_ahead: bool) -> (bool, bool) {
        let config = crate::Builder::new().workers(2).check(crate::config::Env::none()).unwrap();
        let (shared, mut cores) = Shared::new(config, PoolKind::Private);
        let (zero, one) = cores.split_at_mut(1);
        let (zero, one) = (&mut zero[0], &mut one[0]);
        assert!(one.prepare_park(&shared), "core 1 parks: nothing is queued");
        let (ahead, _ahead_task) = pending();
        if queued_ahead {
            zero.local.push(ahead);
        }
        let (yielder, yielder_task) = pending();
        zero.push(&shared, yielder, true);
        zero.until_interval = 1;
        let picked = zero.next_local(&shared).expect("a task is queued");
        let picked_yielder = picked.metadata().info().id() == yielder_task.metadata().info().id();
        (shared.counters[0].notifies.get() > 0, picked_yielder)
    }

    #[test]
    fn a_yield_alone_at_the_fairness_tick_wakes_nobody_and_runs_next() {
        assert_eq!(fairness_tick(false), (false, true), "alone: run at once, nobody woken");
        assert_eq!(fairness_tick(true), (true, false), "behind a task: the other worker is woken");
    }

    #[test]
    fn boxed_cores_never_share_a_cache_line() {
        let lines = if cfg!(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "powerpc64")) {
            128
        } else {
            64
        };
        assert_eq!(std::mem::align_of::<Core>(), lines);
        assert_eq!(std::mem::size_of::<Core>() % lines, 0, "a core ends on a boundary");
        // Boxed one after another, as the pool boxes them: each starts on a boundary.
        let cores: Vec<Box<Core>> = (0..4)
            .map(|index| {
                let remote = Arc::new(CachePadded::new(Remote::new()));
                let counters = Arc::new(CachePadded::new(CoreCounters::default()));
                Box::new(Core::new(index, Worker::new_fifo(), remote, counters, false, false, None))
            })
            .collect();
        for core in &cores {
            let start = (&**core as *const Core).addr();
            assert_eq!(start % lines, 0, "core {} starts inside a line pair", core.index);
        }
    }
}
