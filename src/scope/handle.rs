//! [`ScopedJoinHandle`] and the [`Slot`] it shares with its task: where a scoped task's end (its
//! output, its panic, or its cancellation) waits for the handle.
//!
//! Invariants:
//! - A task delivers its end to its slot once, before its count's end (`task.rs`). If the
//!   handle is gone by then, the task disposes of the end itself (drops the output; notes a
//!   panic as unobserved); else the slot keeps it for the handle, the scope lists the slot, and
//!   then the task wakes the handle's awaiter.
//! - Whoever takes an end out of a slot disposes of it or hands it on: the handle's poll gives
//!   it to the awaiter, the handle's drop disposes of it, and the scope, once every task has
//!   ended, disposes of what is left in the slots it listed (the ends of handles that were
//!   leaked), and waits again if that spawned more. So every output is dropped before the scope
//!   returns, even a leaked handle's.
//! - No user code (an output's or payload's `Drop`) runs under a slot's lock.

use std::fmt;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use super::count::ScopeCount;
use crate::policy::{drop_payload, Payload};

/// How a scoped task ended.
pub(super) enum Ended<T> {
    Output(T),
    Panicked(Payload),
    /// Its future was dropped unfinished: its pool shut down.
    Cancelled,
}

impl<T> Ended<T> {
    /// Drops the end nobody will see: the output (a panic in its `Drop` is reported by the hook
    /// and dropped), or the payload, noted as an unobserved panic.
    pub(super) fn dispose(self, count: &ScopeCount) {
        match self {
            Ended::Output(output) => {
                if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(output))) {
                    drop_payload(payload);
                }
            }
            Ended::Panicked(payload) => {
                count.note_unobserved_panic();
                drop_payload(payload);
            }
            Ended::Cancelled => {}
        }
    }
}

/// A task's end, waiting for its handle.
pub(super) struct Slot<T> {
    state: Mutex<SlotState<T>>,
}

struct SlotState<T> {
    ended: Option<Ended<T>>,
    /// The awaiting task, woken by the delivery.
    waker: Option<Waker>,
    /// The handle was dropped: the task disposes of its own end.
    handle_gone: bool,
    /// The handle's poll gave the end.
    taken: bool,
}

impl<T> Slot<T> {
    pub(super) fn new() -> Slot<T> {
        Slot { state: Mutex::new(SlotState { ended: None, waker: None, handle_gone: false, taken: false }) }
    }

    fn lock(&self) -> MutexGuard<'_, SlotState<T>> {
        // No code under this lock panics halfway; take the state as it is.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task's end: kept for the handle (`Ok`, with the awaiter's waker to wake once the
    /// scope lists the slot), or given back to be disposed of by the task (the handle is gone).
    pub(super) fn deliver(&self, ended: Ended<T>) -> Result<Option<Waker>, Ended<T>> {
        let mut state = self.lock();
        if state.handle_gone {
            return Err(ended);
        }
        state.ended = Some(ended);
        Ok(state.waker.take())
    }
}

/// A slot the scope lists, to dispose of an end no handle took.
pub(super) trait Unclaimed: Send + Sync {
    fn dispose_unclaimed(&self, count: &ScopeCount);
}

impl<T: Send> Unclaimed for Slot<T> {
    fn dispose_unclaimed(&self, count: &ScopeCount) {
        let ended = self.lock().ended.take();
        if let Some(ended) = ended {
            ended.dispose(count);
        }
    }
}

/// The handle of a task spawned with [`Scope::spawn`](super::Scope::spawn): a future whose
/// output is the task's, as a [`JoinHandle`](crate::JoinHandle)'s with the default
/// [`Propagate`](crate::Propagate) policy (a panic of the task resumes in the awaiter; a task
/// dropped by its pool's shutdown panics with [`CANCELLED_MESSAGE`](crate::CANCELLED_MESSAGE)).
///
/// Dropping it detaches the task: it runs on, and ends before [`scope`](super::scope) returns;
/// its output is dropped when it ends, and its panic, if it panics, makes `scope` panic.
///
/// # Examples
///
/// ```
/// let words = ["scoped", "tasks"];
/// let total = crew::scope(|s| {
///     let lengths: Vec<_> = words.iter().map(|word| s.spawn(async move { word.len() })).collect();
///     crew::block_on(async {
///         let mut total = 0;
///         for length in lengths {
///             total += length.await;
///         }
///         total
///     })
/// });
/// assert_eq!(total, 11);
/// ```
pub struct ScopedJoinHandle<'scope, T> {
    slot: Arc<Slot<T>>,
    count: &'scope ScopeCount,
}

impl<'scope, T> ScopedJoinHandle<'scope, T> {
    pub(super) fn new(slot: Arc<Slot<T>>, count: &'scope ScopeCount) -> ScopedJoinHandle<'scope, T> {
        ScopedJoinHandle { slot, count }
    }

    /// True once the task has ended (finished, panicked or been dropped by its pool), so that
    /// awaiting the handle returns (or panics) at once.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::scope(|s| {
    ///     let handle = s.spawn(async { 1 });
    ///     while !handle.is_finished() {
    ///         std::thread::yield_now();
    ///     }
    ///     assert_eq!(crew::block_on(handle), 1);
    /// });
    /// ```
    pub fn is_finished(&self) -> bool {
        let state = self.slot.lock();
        state.ended.is_some() || state.taken
    }
}

impl<T> Future for ScopedJoinHandle<'_, T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let ended = {
            let mut state = self.slot.lock();
            match state.ended.take() {
                Some(ended) => {
                    state.taken = true;
                    ended
                }
                None if state.taken => panic!("crew: a ScopedJoinHandle was polled after it returned"),
                None => {
                    let replaced = state.waker.replace(cx.waker().clone());
                    drop(state);
                    drop(replaced);
                    return Poll::Pending;
                }
            }
        };
        match ended {
            Ended::Output(output) => Poll::Ready(output),
            Ended::Panicked(payload) => panic::resume_unwind(payload),
            Ended::Cancelled => panic!("{}", crate::CANCELLED_MESSAGE),
        }
    }
}

impl<T> Drop for ScopedJoinHandle<'_, T> {
    fn drop(&mut self) {
        let (ended, waker) = {
            let mut state = self.slot.lock();
            state.handle_gone = true;
            (state.ended.take(), state.waker.take())
        };
        drop(waker);
        if let Some(ended) = ended {
            ended.dispose(self.count);
        }
    }
}

impl<T> fmt::Debug for ScopedJoinHandle<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopedJoinHandle").field("finished", &self.is_finished()).finish()
    }
}
