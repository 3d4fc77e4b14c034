//! The poll this thread is running: its task (what [`crew::task::id`](crate::task::id) and
//! [`crew::task::try_id`](crate::task::try_id) read) and its cooperative budget (what crew's own
//! resources spend: [`budgeted`], [`crew::task::unconstrained`](crate::task::unconstrained),
//! [`crew::task::consume_budget`](crate::task::consume_budget)).
//!
//! Invariants:
//! - Set by every poll of a task's future and every drop of a future dropped unfinished
//!   (`spawning/build.rs`, for ordinary and local tasks and blocking jobs alike), and by every
//!   poll of a `block_on`'s own future (no task, a budget), and put back as it was when that
//!   poll or drop ends, unwinding included: a `block_on` inside a task's poll that runs another
//!   task's poll (a local task) sees that task, then its own again.
//! - A thread's task is `None` outside every task's poll: on a thread of no pool, in a
//!   `block_on`'s own future, in a worker between two runs. Its budget is unconstrained there,
//!   except inside a `block_on`'s poll: code polled by another executor (futures' `block_on`,
//!   tokio's runtime) is never held back by crew's budget.
//! - Each poll starts with [`BUDGET`] units. A crew resource polled there ([`budgeted`]) that
//!   would return `Ready` spends one; once none is left, it returns `Pending` once, waking the
//!   task at once, so the task goes back to its scheduler and the next poll starts afresh. A
//!   `Pending` result spends nothing. Nested polls (a `block_on` inside a task) get a budget of
//!   their own and give the outer one back untouched.
//! - One `const` thread-local, of one word (the id and the budget packed): a poll's entry and
//!   exit are one replace and one store.

use std::cell::Cell;
use std::task::{Context, Poll};

use super::TaskId;
use crate::sync::const_thread_local;

/// The units a poll starts with: tokio's number.
pub(crate) const BUDGET: u8 = 128;

/// What this thread's running poll is, in one word: the task's id in the low bits (0: no
/// task; ids never reach 2^56), the units left in the top byte ([`UNCONSTRAINED`]: no budget).
#[derive(Clone, Copy)]
struct Running(u64);

/// The top byte of a poll with no budget.
const UNCONSTRAINED: u64 = 0xff;
const BUDGET_SHIFT: u32 = 56;
const ID_MASK: u64 = (1 << BUDGET_SHIFT) - 1;

impl Running {
    fn new(task: Option<TaskId>, budget: Option<u8>) -> Running {
        let id = task.map_or(0, TaskId::as_u64);
        debug_assert_eq!(id & !ID_MASK, 0, "task ids never reach 2^56");
        Running(id | (budget.map_or(UNCONSTRAINED, u64::from) << BUDGET_SHIFT))
    }

    fn task(self) -> Option<TaskId> {
        let id = self.0 & ID_MASK;
        (id != 0).then(|| TaskId::from_u64(id))
    }

    fn budget(self) -> Option<u8> {
        let units = self.0 >> BUDGET_SHIFT;
        (units != UNCONSTRAINED).then_some(units as u8)
    }
}

const_thread_local! {
    static CURRENT: Cell<Running> = Cell::new(Running(UNCONSTRAINED << BUDGET_SHIFT));
}

/// The task being polled on this thread, if any.
#[inline]
pub(crate) fn current() -> Option<TaskId> {
    CURRENT.try_with(|current| current.get().task()).ok().flatten()
}

/// Marks the poll of task `id` (with a full budget) as running on this thread until the guard
/// drops.
#[inline]
pub(crate) fn enter(id: TaskId) -> Polling {
    set(Running::new(Some(id), Some(BUDGET)))
}

/// Marks the poll of a `block_on`'s own future (no task, a full budget) as running on this
/// thread until the guard drops.
#[inline]
pub(crate) fn enter_block_on() -> Polling {
    set(Running::new(None, Some(BUDGET)))
}

/// Lifts the budget on this thread until the guard drops (`crew::task::unconstrained`).
#[inline]
pub(crate) fn unconstrained() -> Polling {
    set(Running::new(current(), None))
}

#[inline]
fn set(running: Running) -> Polling {
    Polling(CURRENT.try_with(|current| current.replace(running)).ok())
}

/// What [`enter`] and its kin return: puts back the poll that ran before, when dropped.
#[must_use]
pub(crate) struct Polling(Option<Running>);

impl Drop for Polling {
    #[inline]
    fn drop(&mut self) {
        if let Some(previous) = self.0 {
            let _ = CURRENT.try_with(|current| current.set(previous));
        }
    }
}

impl std::fmt::Debug for Polling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Polling")
    }
}

/// `poll` under the running poll's budget (see the module docs): `Pending`, with the task
/// woken, if the budget is spent; else `poll`'s result, a `Ready` one spending a unit.
#[inline]
pub(crate) fn budgeted<T>(cx: &mut Context<'_>, poll: impl FnOnce(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
    if !proceed(cx) {
        return Poll::Pending;
    }
    let result = poll(cx);
    if result.is_ready() {
        // Read again in `spend`: `poll` may have run a nested poll, which put back what it found.
        spend();
    }
    result
}

/// Whether the running poll may go on: false (with the task woken) once its budget is spent.
/// [`budgeted`] calls [`spend`] after a `Ready` result.
#[inline]
fn proceed(cx: &mut Context<'_>) -> bool {
    match CURRENT.try_with(|current| current.get().budget()) {
        Ok(Some(0)) => {
            out_of_budget(cx);
            false
        }
        _ => true,
    }
}

#[cold]
#[inline(never)]
fn out_of_budget(cx: &mut Context<'_>) {
    cx.waker().wake_by_ref();
}

/// Spends one unit of the running poll's budget, if it has one (see [`proceed`]).
#[inline]
fn spend() {
    let _ = CURRENT.try_with(|current| {
        let now = current.get();
        if let Some(1..) = now.budget() {
            current.set(Running(now.0 - (1 << BUDGET_SHIFT)));
        }
    });
}

/// The budget left to this thread's running poll: `None` if unconstrained.
#[cfg(test)]
pub(crate) fn budget_left() -> Option<u8> {
    CURRENT.try_with(|current| current.get().budget()).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(std::sync::atomic::AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn a_poll_spends_its_budget_then_returns_pending_once_and_wakes() {
        let count = Arc::new(Count(Default::default()));
        let waker = std::task::Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        assert_eq!(budget_left(), None, "outside every poll: unconstrained");
        assert!(budgeted(&mut cx, |_| Poll::Ready(())).is_ready());
        let outer = enter_block_on();
        for _ in 0..BUDGET - 1 {
            assert!(budgeted(&mut cx, |_| Poll::Ready(())).is_ready());
        }
        assert!(budgeted(&mut cx, |_| Poll::<()>::Pending).is_pending());
        assert_eq!(budget_left(), Some(1), "a Pending result spends nothing");
        assert!(budgeted(&mut cx, |_| Poll::Ready(())).is_ready());
        assert_eq!(budget_left(), Some(0));
        assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert!(budgeted(&mut cx, |_| Poll::Ready(())).is_pending());
        assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1, "woken at once");
        {
            let _free = unconstrained();
            assert!(budgeted(&mut cx, |_| Poll::Ready(())).is_ready());
        }
        assert_eq!(budget_left(), Some(0), "put back");
        drop(outer);
        assert_eq!(budget_left(), None);
    }
}
