//! The order in which a worker picks its next task: the methods of [`Core`] that take from its
//! own queues, its thread's local tasks, its inbox and the injector (`worker.rs` holds the
//! state, `search.rs` the steals from other workers).
//!
//! Invariants:
//! - Order of picking: the rest of a turn of local tasks (`next_in_local_turn`: once the worker
//!   took one of its thread's local tasks, up to `LOCAL_TURN` in a row while any is queued,
//!   the one this thread woke last first, at most `MAX_LIFO_POLLS` times in a row; one tick in
//!   all, its tasks after the first run by the loop outside the context, `local_turn.rs`); else the
//!   LIFO slot, at most `MAX_LIFO_POLLS` times in a row, without a tick (a task run from it
//!   continues its waker's tick, as in tokio); then, one tick: every
//!   `GLOBAL_QUEUE_INTERVAL` ticks the deferred list moves to the back of the deque (and the
//!   thread's yielded local tasks to the back of its local queue) and this worker takes a task
//!   from its inbox (`pinned.rs`), else its share of the injector first
//!   (fairness to yielders and outside spawns), and a worker in the reactor lets it turn once
//!   that task ran (`reactor_turn.rs`); the LIFO slot's task, if it had its turns, goes to the
//!   back of the deque; the deque and this thread's local tasks (`local.rs`), the local tasks
//!   first on odd ticks; then a batch from the injector; then the inbox; then the deferred list
//!   and the thread's yielded local tasks (after a reactor turn, see `reactor_turn.rs`); then,
//!   as a searcher, a batch stolen from a random victim or the injector, or the older half of a
//!   victim's deferred list as a last resort (`search.rs`); then park (`park.rs`), as the
//!   watcher if another core's LIFO slot holds a task (`watch.rs`).

use crate::identity::Activity;
use crate::scheduler::cores::shared::LocalHome;
use crate::scheduler::cores::shared::{Runnable, Shared};
use crate::scheduler::cores::worker::{
    Core, GLOBAL_QUEUE_INTERVAL, LOCAL_TURN, MAX_INJECTOR_BATCH, MAX_INTERVAL_BATCH, MAX_LIFO_POLLS, MIN_INJECTOR_BATCH,
};
use crate::sync::retry;

impl Core {
    /// A task from this worker's own queues or an injector batch, without searching. `None`
    /// also when it stopped short of its deferred tasks to let the reactor turn
    /// (`self.reactor_turn.is_wanted()`).
    pub(in crate::scheduler) fn next_local(&mut self, shared: &Shared) -> Option<Runnable> {
        if self.seeded.is_some() {
            return self.next_seeded(shared).or_else(|| self.next_seeded_local());
        }
        if let Some(runnable) = self.next_in_chain() {
            return Some(runnable);
        }
        self.tick = self.tick.wrapping_add(1);
        self.until_interval -= 1;
        if self.until_interval == 0 {
            self.until_interval = GLOBAL_QUEUE_INTERVAL;
            self.reactor_turn.interval_reached();
            // Fairness: yielded tasks wait at most this long behind a stream of new work, and
            // in the deque other workers may take them. One task flushed into an empty deque,
            // with nothing else queued, is popped below, unless the inbox's task comes first:
            // announced only then.
            let flushed = self.flush_deferred(shared);
            self.release_local_yielded();
            let unannounced = flushed && self.nothing_queued_but(1);
            if flushed && !unannounced {
                self.announce_deque(shared);
            }
            if let Some(runnable) = self.take_inbox(shared) {
                if unannounced {
                    self.announce_deque(shared);
                }
                self.turn.lifo_polls = 0;
                return Some(runnable);
            }
            if let Some(runnable) = self.injector_batch(shared) {
                self.turn.lifo_polls = 0;
                return Some(runnable);
            }
        }
        if let Some(runnable) = self.take_lifo() {
            // The slot had its turns: its task waits behind the deque like any other, and may
            // be stolen there, so it is announced unless it is the only one (popped just below).
            let behind_others = !self.local.is_empty();
            shared.record_queued(&runnable, Activity::Deque(self.index));
            self.local.push(runnable);
            if behind_others {
                self.notify_one(shared);
            }
        }
        self.turn.lifo_polls = 0;
        // This thread's local tasks and the deque take turns, a tick each, while both have
        // tasks: neither can keep the other waiting. The injector comes after both, as after
        // the deque alone: at the fairness tick, its share comes first.
        let local_first = self.tick % 2 == 1;
        if local_first {
            if let Some(runnable) = self.take_local::<true>(LocalHome::pop_ready) {
                return Some(runnable);
            }
        }
        if let Some(runnable) = self.local.pop() {
            return Some(runnable);
        }
        if !local_first {
            if let Some(runnable) = self.take_local::<true>(LocalHome::pop_ready) {
                return Some(runnable);
            }
        }
        if let Some(runnable) = self.steal_injector(shared) {
            self.announce_deque(shared);
            return Some(runnable);
        }
        if let Some(runnable) = self.take_inbox(shared) {
            return Some(runnable);
        }
        // Nothing else to do: the yielded tasks' turn, after the reactor's. The first runs now;
        // the others wait in the deque, where idle workers may take them, and this thread's
        // yielded local tasks in its local queue, for the next ticks.
        let local_yielded = self.home.as_ref().is_some_and(|home| home.has_yielded());
        if self.reactor_turn.wanted_before_deferred(self.deferred_filled || local_yielded) {
            return None;
        }
        let local_released = local_yielded && self.release_local_yielded();
        if self.flush_deferred(shared) {
            let first = self.local.pop();
            self.announce_deque(shared);
            return first;
        }
        if local_released {
            return self.take_local::<false>(LocalHome::pop_ready);
        }
        None
    }

    /// The next task that continues what this core ran last, without a tick of its own: the
    /// next local task of a turn of them (`next_in_local_turn`), else the next link of a chain
    /// of wakes, the LIFO slot's task, while the chain has turns left. A task run from the chain
    /// continues the tick of the task that woke it (as in tokio), so a chain of wakes counts one
    /// tick per `MAX_LIFO_POLLS + 1` tasks, not one per task. The first step of `next_local`.
    #[inline]
    fn next_in_chain(&mut self) -> Option<Runnable> {
        if self.turn.local_turn > 0 {
            if let Some(runnable) = self.next_in_local_turn() {
                return Some(runnable);
            }
        }
        // A seeded pool follows no chain: its pick draws from every queue (`seeded.rs`).
        if self.turn.lifo_polls >= MAX_LIFO_POLLS || self.seeded.is_some() {
            return None;
        }
        let runnable = self.take_lifo()?;
        self.turn.lifo_polls += 1;
        self.counters().lifo_runs.incr();
        Some(runnable)
    }

    /// The next task of a turn of local tasks: once this core took one of its thread's local
    /// tasks, it takes the next (the one woken last, at most `MAX_LIFO_POLLS` in a row, else
    /// the oldest) before anything else, up to [`LOCAL_TURN`] in all, while any is queued. So a
    /// local task that wakes an ordinary one (a handle's awaiter, say) does not hand the worker
    /// back and forth at every wake: the awaiter, in the LIFO slot, runs once the turn ends, as
    /// `block_on` polls its future once per batch. The whole turn counts one tick, the tick of
    /// the pick that began it, as tokio counts a `LocalSet`'s poll (up to 61 local tasks) as
    /// one; the loop runs its tasks after the first outside the context's borrow
    /// (`local_turn.rs`).
    #[inline]
    fn next_in_local_turn(&mut self) -> Option<Runnable> {
        let next = match &self.home {
            Some(home) => self.turn.next_local(|| home.pop_next(), || home.pop_ready()),
            None => {
                self.turn.end_local_turn();
                None
            }
        };
        if next.is_some() {
            self.counters().local_runs.incr();
        }
        next
    }

    /// The loops' first try at their next task, the common case of a busy worker: the next link
    /// of a chain of wakes (see `next_in_chain`), taken before the full pick (`next_task`,
    /// `poll_next_task`) when that would take it first anyway, that is while this core is not
    /// parked nor searching and the pool is not shutting down. Saves the full pick's steps for
    /// a task that one of them would have found at once.
    #[inline]
    pub(in crate::scheduler) fn next_quick(&mut self, shared: &Shared) -> Option<Runnable> {
        if self.parked || self.searching || shared.is_shutdown() {
            return None;
        }
        let runnable = self.next_in_chain()?;
        // As `find_task` does for any task it finds.
        self.spin_armed = true;
        Some(runnable)
    }

    /// Moves this core's deferred tasks to the back of its deque, in the order they were woken.
    /// Returns whether there were any.
    #[inline]
    pub(in crate::scheduler) fn flush_deferred(&mut self, shared: &Shared) -> bool {
        if !std::mem::replace(&mut self.deferred_filled, false) {
            return false;
        }
        let mut deferred = self.remote.deferred.lock();
        let any = !deferred.is_empty();
        for runnable in deferred.drain(..) {
            shared.record_queued(&runnable, Activity::Deque(self.index));
            self.local.push(runnable);
        }
        any
    }

    /// A batch from the injector into the deque, and its first task: this worker's share (the
    /// injector's length divided by the worker count, plus one, as tokio takes; from
    /// [`MIN_INJECTOR_BATCH`] to [`MAX_INJECTOR_BATCH`]), so that the first worker woken for a
    /// burst of outside spawns leaves the rest to the workers woken after it (measured:
    /// `docs/performance-notes.md`, "Message passing"). The length is a snapshot: a share a
    /// little off only moves tasks between workers, which steal them back. Counts the batch.
    #[inline]
    pub(in crate::scheduler) fn steal_injector(&self, shared: &Shared) -> Option<Runnable> {
        let injector = &shared.injector;
        let share = injector_share(injector.len(), shared.workers());
        let first = retry(|| injector.steal_batch_with_limit_and_pop(&self.local, share))?;
        self.counters().injector_batches.incr();
        Some(first)
    }

    /// At the fairness interval: this worker's share of the injector (its length divided by the
    /// worker count, at most [`MAX_INTERVAL_BATCH`]), so that under a steady stream of yields,
    /// which keeps the deque from ever emptying, outside spawns do not trickle in one batch per
    /// interval. crossbeam moves at most one block per call, hence the loop.
    fn injector_batch(&mut self, shared: &Shared) -> Option<Runnable> {
        let injector = &shared.injector;
        let share = (injector.len() / shared.workers()).clamp(1, MAX_INTERVAL_BATCH);
        let target = self.local.len() + share - 1;
        let first = retry(|| injector.steal_batch_with_limit_and_pop(&self.local, share))?;
        self.counters().injector_batches.incr();
        while self.local.len() < target {
            if retry(|| injector.steal_batch_with_limit(&self.local, target - self.local.len())).is_none() {
                break;
            }
        }
        self.announce_deque(shared);
        Some(first)
    }

    /// A local task of this core's thread (`local.rs`), taken by `pop` (`LocalHome::pop_ready`,
    /// the oldest that did not yield; `LocalHome::pop_next`, the one the thread scheduled last),
    /// if one is queued.
    /// Counted in this core's turn of local tasks, which it begins if none is under way. `HINT`:
    /// look at the queue's lengths (two loads) before the thread-local, worth it where the queue
    /// is often empty (a tick's look); a turn under way, where a task is nearly always queued,
    /// goes to the thread-local at once (8 instructions fewer per local poll, callgrind).
    #[inline]
    fn take_local<const HINT: bool>(&mut self, pop: impl FnOnce(&LocalHome) -> Option<Runnable>) -> Option<Runnable> {
        let home = self.home.as_ref()?;
        if HINT && !home.has_queued() {
            return None;
        }
        let runnable = pop(home)?;
        self.counters().local_runs.incr();
        self.turn.local_turn = self.turn.local_turn.checked_sub(1).unwrap_or(LOCAL_TURN - 1);
        Some(runnable)
    }

    /// Makes this core's thread's yielded local tasks ready again (`LocalHome::release_yielded`).
    /// Returns whether there were any.
    #[inline]
    fn release_local_yielded(&self) -> bool {
        self.home.as_ref().is_some_and(|home| home.release_yielded())
    }
}

impl Core {
    /// A seeded pool's pick: every queued task into the ready list (its LIFO slot, deferred
    /// list, deque, inbox, then the injector), then the one the generator draws
    /// (`seeded.rs`); `None` when none is ready.
    #[cold]
    #[inline(never)]
    pub(in crate::scheduler) fn next_seeded(&mut self, shared: &Shared) -> Option<Runnable> {
        let seeded = shared.seeded.as_ref()?;
        let mut ready = self.seeded.take()?;
        self.lifo_filled = true;
        ready.extend(self.take_lifo());
        ready.extend(self.remote.deferred.lock().drain(..));
        self.deferred_filled = false;
        ready.extend(std::iter::from_fn(|| self.local.pop()));
        ready.extend(std::iter::from_fn(|| Core::take_inbox_of(shared, self.index)));
        ready.extend(std::iter::from_fn(|| retry(|| shared.injector.steal())));
        let picked = ready.draw();
        if let Some(runnable) = &picked {
            seeded.note_pick(runnable.metadata().info().ordinal().unwrap_or(u64::MAX));
        }
        self.seeded = Some(ready);
        picked
    }

    /// A seeded pool's pick once its ready list is empty: its thread's local tasks, in their
    /// queue's order (a turn of them under way, then the ready ones, then the yielded ones).
    /// Nothing else: a task that reaches the pool's queues meanwhile (from another thread) waits
    /// for the next draw, never taken past it (`seeded.rs`).
    #[cold]
    #[inline(never)]
    fn next_seeded_local(&mut self) -> Option<Runnable> {
        if let Some(runnable) = self.next_in_chain() {
            return Some(runnable);
        }
        if let Some(runnable) = self.take_local::<true>(LocalHome::pop_ready) {
            return Some(runnable);
        }
        if self.release_local_yielded() {
            return self.take_local::<false>(LocalHome::pop_ready);
        }
        None
    }
}

/// The most tasks a worker whose queues ran dry moves from an injector of `len` tasks (see
/// `Core::steal_injector`).
fn injector_share(len: usize, workers: usize) -> usize {
    (len / workers + 1).clamp(MIN_INJECTOR_BATCH, MAX_INJECTOR_BATCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injector_shares_are_fair_within_bounds() {
        // A burst of 200 outside spawns on 16 workers: a sixteenth each, plus one.
        assert_eq!(injector_share(200, 16), 13);
        // On 2 workers, crossbeam's own cap, as before the shares.
        assert_eq!(injector_share(200, 2), MAX_INJECTOR_BATCH);
        // A short injector: the floor (crossbeam then takes at most half of what is there).
        assert_eq!(injector_share(3, 16), MIN_INJECTOR_BATCH);
        assert_eq!(injector_share(0, 1), MIN_INJECTOR_BATCH);
    }
}
