//! The one module of crew that uses `unsafe`: a scoped task's allocation, made with
//! async-task's `spawn_unchecked` because its future borrows from the scope's caller (it is
//! not `'static`).
//!
//! Invariant it rests on (`scope/mod.rs`, `count.rs`, `task.rs`): `crew::scope` returns or
//! unwinds only after the count of its tasks reached zero, and a task leaves the count only
//! from its [`ScopedTask`]'s `Drop`, after the user's future and its output were dropped or
//! handed to a handle (which cannot outlive the scope: its type borrows `'scope`). So nothing
//! borrowed is touched after `scope` returns.

#![allow(unsafe_code)]

use std::future::Future;

use async_task::Schedule;

use super::task::ScopedTask;
use crate::join::JoinHandle;
use crate::policy::Policy;
use crate::task::{Build, OnTaskEnd, Runnable, TaskFuture, TaskMeta};

/// A scoped task, for a pool to spawn ([`Build`]). Only `Scope::spawn_to` makes one.
pub(super) struct Borrowing<'scope, F>(pub(super) ScopedTask<'scope, F>)
where
    F: Future,
    F::Output: Send + 'scope;

impl<'scope, F> Build for Borrowing<'scope, F>
where
    F: Future + Send + 'scope,
    F::Output: Send + 'scope,
{
    type Output = ();

    fn build<P, S, E>(self, meta: TaskMeta, end: E, schedule: S) -> (Runnable, JoinHandle<(), P>)
    where
        P: Policy,
        S: Schedule<TaskMeta> + Send + Sync + 'static,
        E: OnTaskEnd,
    {
        let future = TaskFuture::<ScopedTask<'scope, F>, P, E>::new(self.0, end, meta.info());
        // SAFETY: `spawn_unchecked` asks three things of a future that is not `'static` and
        // whose type is `Send` (as here: `F`, its output, the schedule function and `E` are all
        // `Send`, and the schedule function and the metadata are `'static`):
        // - "borrowed variables must outlive its Runnable": what `F` and its output borrow
        //   lives until `crew::scope` returns, and that waits for this task's count to end
        //   (the module's invariant). The count ends inside the drop of `future`, which
        //   async-task runs from the last `Runnable` (when the task returns `Ready`, or when
        //   its pool drops or runs the `Runnable` of a closed task) or from the task handle
        //   when no `Runnable` exists; after that drop async-task reads and writes only its
        //   header, the `()` output and the `'static` schedule function and metadata, never
        //   the future's memory as an `F`, so the rest of that `Runnable`'s run or drop
        //   touches nothing borrowed.
        // - the task's output is `TaskOutput<()>`, `'static`: a task handle that outlives
        //   the scope (it is detached at once) holds nothing borrowed.
        // - `Send` bounds: the future is `Send`, so running and dropping its `Runnable` on
        //   any thread is sound; the schedule function is `Send + Sync + 'static`.
        let (runnable, task) =
            unsafe { async_task::Builder::new().metadata(meta).spawn_unchecked(move |_| future, schedule) };
        (runnable, JoinHandle::new(task))
    }
}
