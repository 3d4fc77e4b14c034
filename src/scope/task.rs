//! [`ScopedTask`]: the future a scoped task's allocation holds around the user's future.
//!
//! Invariants:
//! - Before the task's count ends, the user's future is dropped (after it returned, or
//!   unfinished when its pool drops the task) and its end is delivered to its slot or disposed
//!   of (`handle.rs`), and the task's references to its slot and to the scope's list are
//!   released; then [`ScopeCount::end`], from this future's `Drop` (which async-task runs
//!   however the task goes: right after the poll that returned `Ready`, which keeps the end
//!   here for it), in a frame that holds no reference to the scope's data.
//! - Nothing unwinds out of it: each poll of the user's future, and its drop, runs inside
//!   `catch_unwind`; a panic in the future's `Drop` is the task's panic.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::count::ScopeCount;
use super::handle::{Ended, Slot, Unclaimed};
use crate::policy::drop_payload;
use crate::sync::planted_bug;

/// The scope's list of slots whose end waited for a handle (see `handle.rs`).
pub(super) type UnclaimedList<'scope> = Mutex<Vec<Arc<dyn Unclaimed + 'scope>>>;

/// What a scope shares with its tasks, each of which holds an `Arc` of it: the count (whose
/// end, the task's last access, then touches memory the task owns) and the list of slots (which
/// a late push, were the count ever to end early, would still find alive).
pub(super) struct Shared<'scope> {
    pub(super) count: ScopeCount,
    /// Emptied, down to no allocation, by the scope before it returns. `ManuallyDrop`: the
    /// `Arc` may be dropped last by a task after `'scope` ended, and a list whose type could
    /// reach `'scope` data must not be dropped then (nor may the borrow checker think so).
    pub(super) unclaimed: ManuallyDrop<UnclaimedList<'scope>>,
}

pin_project! {
    /// A scoped task's future: the user's, its end until the future's own drop delivers it,
    /// its slot, and what the scope shares with its tasks.
    pub(super) struct ScopedTask<'scope, F>
    where
        F: Future,
        F::Output: Send,
        F::Output: 'scope,
    {
        #[pin]
        future: Option<F>,
        ended: Option<Ended<F::Output>>,
        slot: Option<Arc<Slot<F::Output>>>,
        shared: Arc<Shared<'scope>>,
    }

    impl<'scope, F> PinnedDrop for ScopedTask<'scope, F>
    where
        F: Future,
        F::Output: Send,
        F::Output: 'scope,
    {
        fn drop(this: Pin<&mut Self>) {
            let mut this = this.project();
            if planted_bug!("scope_end_before_drop") {
                this.shared.count.end();
            }
            // Still here: dropped unfinished (its pool shut down). A panic in its `Drop` is
            // reported by the hook; the task ends as cancelled all the same.
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| this.future.set(None))) {
                drop_payload(payload);
            }
            if let Some(slot) = this.slot.take() {
                deliver(slot, this.ended.take().unwrap_or(Ended::Cancelled), this.shared);
            }
            // Last, in this frame, once every call that held a reference to the scope's data
            // (`deliver`, the future's drop) has returned.
            if !planted_bug!("scope_end_before_drop") {
                this.shared.count.end();
            }
        }
    }
}

impl<'scope, F> ScopedTask<'scope, F>
where
    F: Future,
    F::Output: Send + 'scope,
{
    /// `future`, whose end goes to `slot`; counted in `shared`'s count already.
    pub(super) fn new(future: F, slot: Arc<Slot<F::Output>>, shared: Arc<Shared<'scope>>) -> ScopedTask<'scope, F> {
        ScopedTask { future: Some(future), ended: None, slot: Some(slot), shared }
    }
}

impl<'scope, F> Future for ScopedTask<'scope, F>
where
    F: Future,
    F::Output: Send + 'scope,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        let future = this.future.as_mut();
        let polled = panic::catch_unwind(AssertUnwindSafe(|| match future.as_pin_mut() {
            Some(future) => future.poll(cx),
            None => panic!("crew: a finished scoped task was polled again"),
        }));
        let mut ended = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(output)) => Ended::Output(output),
            Err(payload) => Ended::Panicked(payload),
        };
        // Drop the user's future now, so that a panic in its `Drop` is a panic of this task.
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| this.future.set(None))) {
            match std::mem::replace(&mut ended, Ended::Panicked(payload)) {
                Ended::Output(output) => {
                    if let Err(second) = panic::catch_unwind(AssertUnwindSafe(move || drop(output))) {
                        drop_payload(second);
                    }
                }
                Ended::Panicked(first) => drop_payload(first),
                Ended::Cancelled => {}
            }
        }
        // Delivered by this future's drop, which async-task runs right after this returns.
        *this.ended = Some(ended);
        Poll::Ready(())
    }
}

/// Hands `ended` to `slot`'s handle (listing the slot with the scope), or disposes of it if the
/// handle is gone; releases the task's reference to the slot.
fn deliver<'scope, T: Send + 'scope>(slot: Arc<Slot<T>>, ended: Ended<T>, shared: &Shared<'scope>) {
    match slot.deliver(ended) {
        // No user code runs under this lock: a push.
        Ok(()) => shared.unclaimed.lock().unwrap_or_else(PoisonError::into_inner).push(slot),
        Err(ended) => {
            drop(slot);
            ended.dispose(&shared.count);
        }
    }
}
