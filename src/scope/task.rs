//! [`ScopedTask`]: the future a scoped task's allocation holds around the user's future.
//!
//! Invariants:
//! - When it is dropped (after the user's future returned, or unfinished when its pool drops
//!   the task), the user's future is dropped, the task's end is delivered to its slot or
//!   disposed of (`handle.rs`), and the task's references to its slot and to the scope's list
//!   are released; then its [`TaskEnd`] is noted, and the count ends once async-task's run or
//!   drop of the task's `Runnable`, which dropped this future, has returned (`count.rs`). A task
//!   whose spawn failed before it had an allocation ends the count from this drop, last, in a
//!   frame that holds no reference to the scope's data.
//! - Nothing unwinds out of it, and nothing a user supplies unwinds past the count: each poll of
//!   the user's future, its drop, the drop of an output nobody will take, and the wake of the
//!   handle's awaiter run inside `catch_unwind`. A panic in the future's `Drop` is the task's
//!   panic; a panic of the awaiter's waker is noted as a panic nobody saw (the scope panics with
//!   `SCOPED_TASK_PANICKED_MESSAGE` once every task ended), as an unawaited task's panic is.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::count::{ScopeCount, TaskEnd};
use super::handle::{Ended, Slot, Unclaimed};
use crate::policy::drop_payload;
use crate::sync::planted_bug;

/// The scope's list of slots whose end waited for a handle (see `handle.rs`).
pub(super) type UnclaimedList<'scope> = Mutex<Vec<Arc<dyn Unclaimed + 'scope>>>;

/// What a scope shares with its tasks, each of which holds an `Arc` of it: the count (whose
/// end, the task's last access, then touches memory the task owns) and the list of slots (which
/// a late push, were the count ever to end early, would still find alive).
pub(super) struct Shared<'scope> {
    /// In an `Arc` of its own, which each task's [`TaskEnd`] holds too: the end is delivered
    /// after the task's allocation dropped everything else it held (`count.rs`).
    pub(super) count: Arc<ScopeCount>,
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
        shared: Option<Arc<Shared<'scope>>>,
        end: Arc<TaskEnd>,
        // Built into an allocation: the end waits for its `Runnable` (`count.rs`).
        deferred: bool,
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
                this.end.end_now();
            }
            let shared = this.shared.take().expect("a scoped task is dropped once");
            let delivered = panic::catch_unwind(AssertUnwindSafe(|| {
                // Still here: dropped unfinished (its pool shut down). A panic in its `Drop` is
                // reported by the hook; the task ends as cancelled all the same.
                if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| this.future.set(None))) {
                    drop_payload(payload);
                }
                if let Some(slot) = this.slot.take() {
                    deliver(slot, this.ended.take().unwrap_or(Ended::Cancelled), &shared);
                }
            }));
            if let Err(payload) = delivered {
                // A waker's `wake` (or something it dropped) panicked: reported as a task's panic
                // nobody saw.
                this.end.count().note_unobserved_panic();
                drop_payload(payload);
            }
            drop(shared);
            if planted_bug!("scope_end_before_drop") {
                return;
            }
            if *this.deferred {
                this.end.note();
            } else {
                // Last, in this frame, once every call that held a reference to the scope's data
                // (`deliver`, the future's drop) has returned.
                this.end.end_now();
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
        let end = Arc::new(TaskEnd::new(shared.count.clone()));
        ScopedTask { future: Some(future), ended: None, slot: Some(slot), shared: Some(shared), end, deferred: false }
    }

    /// The task is about to be built into an allocation: its end will wait until its
    /// `Runnable` is gone. The end, for the task's metadata to tell (`scheduler/cores/task.rs`).
    pub(super) fn defer_end(&mut self) -> Arc<TaskEnd> {
        self.deferred = true;
        self.end.clone()
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
        // Delivered by this future's drop, which follows this return (crew's `TaskFuture` drops
        // the future it wraps as soon as it returned `Ready`).
        *this.ended = Some(ended);
        Poll::Ready(())
    }
}

/// Hands `ended` to `slot`'s handle (listing the slot with the scope, then waking the handle's
/// awaiter), or disposes of it if the handle is gone; releases the task's reference to the slot.
/// The wake is user code, and may panic: the caller catches it.
fn deliver<'scope, T: Send + 'scope>(slot: Arc<Slot<T>>, ended: Ended<T>, shared: &Shared<'scope>) {
    match slot.deliver(ended) {
        Ok(waker) => {
            // No user code runs under this lock: a push.
            shared.unclaimed.lock().unwrap_or_else(PoisonError::into_inner).push(slot);
            if let Some(waker) = waker {
                waker.wake();
            }
        }
        Err(ended) => {
            drop(slot);
            ended.dispose(&shared.count);
        }
    }
}
