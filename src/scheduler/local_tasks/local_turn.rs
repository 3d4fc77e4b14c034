//! A turn of local tasks on a worker, run outside the context's borrow: once a worker's pick
//! began a turn of its thread's local tasks, or went on with one (`worker.rs`,
//! `Core::next_in_local_turn`), the loop runs the rest of the turn here, one task after another
//! as `block_on` runs its local tasks (`local.rs`, `drive`), instead of going back through the
//! context and the pick for each.
//!
//! Invariants:
//! - The turn takes exactly the tasks the core's picks would have taken, in the same order, and
//!   moves the picks' counts as they would have (`TurnCounts::next_local`, the one copy of that
//!   logic); it writes them back to the core when it ends. While it runs, nothing else reads
//!   or writes those counts: a task's wakes and spawns touch the core's queues only.
//! - Each poll is bracketed in the core's progress word (`progress.rs`) as the loops bracket
//!   theirs (`Core::begin_poll`, `Core::finish_poll`), by this thread and only while it owns the
//!   core: after each poll it first looks whether the thread still runs a core (its home's
//!   `core`, which every hand-off clears: a `block_on` or `block_in_place` inside the task hands
//!   the core off, ending that poll there with the poll's number read from the word,
//!   `Core::sync_polls`), and if not it touches neither the core nor its word again. The core's
//!   `polling` stays set for the whole turn, as for one poll.
//! - Local runs are counted once, when the turn ends (`Core::end_local_run`), or by
//!   `Core::sync_polls` at a hand-off: each poll the turn began is counted exactly once.
//! - A mark of the monitor seen at a poll's end (a takeover) ends the turn; the loop then gives
//!   the core up, as after any poll.
//! - Only in pools without poll hooks (a slow-poll hook, task records): their polls all go
//!   through the loops' begin and end, which record each task for the monitor and the dump.
//! - The turn stops after the loop's `budget` of tasks (the reactor loop's backstop between two
//!   turns of the reactor). It does not look for shutdown: a turn is at most `LOCAL_TURN` tasks,
//!   and the pick after it does.

use crate::scheduler::cores::context::{self, Queue};
use crate::scheduler::cores::shared::Shared;
use crate::scheduler::cores::task_run::run_task;
use crate::scheduler::cores::worker::{Flagged, TurnCounts};
use crate::sync::planted_bug;

/// The rest of a turn of local tasks, taken from the core whose loop began the turn's first
/// poll (see the module docs).
#[derive(Debug)]
pub(in crate::scheduler) struct LocalTurn {
    /// The core that runs the turn.
    index: usize,
    /// Polls begun on it: the poll under way is this one.
    polls: usize,
    /// Its picks' counts, moved as its picks would move them.
    turn: TurnCounts,
}

impl LocalTurn {
    /// The rest of the turn of core `index`, whose poll number `polls` is under way, its picks'
    /// counts `turn`.
    fn new(index: usize, polls: usize, turn: TurnCounts) -> LocalTurn {
        LocalTurn { index, polls, turn }
    }

    /// Once the loop ran the poll it began, of a local task whose turn goes on
    /// (`Core::local_turn_goes_on`): ends that poll, and runs the rest of the turn, at most
    /// `budget` more tasks. Returns how many it ran, and the poll the monitor flagged, if it
    /// flagged one (the turn then stopped). If the core went to another thread, returns at once:
    /// the loop finds it gone.
    pub(in crate::scheduler) fn run_rest(shared: &Shared, budget: u32) -> (u32, Option<Flagged>) {
        // `None`: the poll handed the core off.
        let Some((index, polls, turn)) = context::with_core(|_, core| core.local_turn_rest()) else {
            return (0, None);
        };
        // The turn began with a local task, so this thread has a home (were there none, the
        // loop's `finish_poll` would end the poll, still the core's own).
        let turn = LocalTurn::new(index, polls, turn);
        context::with_queue(|queue| turn.run_on(shared, &queue, budget)).unwrap_or((0, None))
    }

    fn run_on(mut self, shared: &Shared, queue: &Queue<'_>, budget: u32) -> (u32, Option<Flagged>) {
        let progress = &shared.remotes[self.index].progress;
        let mut ran = 0;
        let flagged = loop {
            // The poll that just returned may have handed the core off (and ended there).
            debug_assert_eq!(
                queue.runs_core(),
                context::owns_core(),
                "a home is attached while its thread runs a core"
            );
            if !queue.runs_core() {
                return (ran, None);
            }
            if let Some(seen) = progress.end_poll(self.polls) {
                if !planted_bug!("local_turn_ignores_mark") {
                    break Some(Flagged { index: self.index, taken: seen.taken() });
                }
            }
            if ran == budget || !self.turn.in_local_turn() {
                break None;
            }
            let Some(runnable) = self.turn.next_local(|| queue.pop_next(), || queue.pop_ready()) else {
                break None;
            };
            self.polls = self.polls.wrapping_add(1);
            progress.begin_poll(self.polls);
            run_task(runnable);
            ran += 1;
        };
        // Still the core's owner: no task ran since the look above.
        context::with_core(|_, core| core.end_local_run(self.polls, self.turn, ran, flagged));
        (ran, flagged)
    }
}
