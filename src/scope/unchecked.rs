//! The one module of crew that uses `unsafe`: a scoped task's allocation, made with
//! async-task's `spawn_unchecked` because its future borrows from the scope's caller (it is
//! not `'static`).
//!
//! Invariant it rests on (`scope/mod.rs`, `count.rs`, `task.rs`): `crew::scope` returns or
//! unwinds only after the count of its tasks reached zero, and a task leaves the count only once
//! async-task's run or drop of its `Runnable` that dropped its future has returned (crew's
//! `Runnable` tells the task's end, `scheduler/cores/task.rs`), after the user's future and its output
//! were dropped or handed to a handle (which cannot outlive the scope: its type borrows
//! `'scope`). So nothing borrowed is touched after `scope` returns, and every borrowed variable
//! outlives the task's `Runnable`.

#![allow(unsafe_code)]

use std::future::Future;

use async_task::Schedule;

use super::task::ScopedTask;
use crate::handle::JoinHandle;
use crate::identity::OnTaskEnd;
use crate::policy::Policy;
use crate::scheduler::{Runnable, TaskMeta};
use crate::spawning::{Build, TaskFuture};

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
        let mut task = self.0;
        let meta = meta.with_deferred_end(task.defer_end());
        let future = TaskFuture::<ScopedTask<'scope, F>, P, E>::new(task, end, meta.info());
        // SAFETY: `spawn_unchecked` asks three things of a future that is not `'static` and
        // whose type is `Send` (as here: `F`, its output, the schedule function and `E` are all
        // `Send`, and the schedule function and the metadata are `'static`):
        // - "borrowed non-metadata variables must outlive its Runnable": what `F` and its output
        //   borrow lives until `crew::scope` returns, and that waits for this task's count to
        //   end (the module's invariant). The count ends only after the run or the drop of the
        //   `Runnable` during which the future was dropped has returned: the future's drop
        //   notes the end, and crew's `Runnable` delivers it when async-task's `run` or drop
        //   returned (`scheduler/cores/task.rs`; the end is in the metadata, `'static`, so this reads
        //   nothing borrowed). No later `Runnable` of the task exists: a task whose future was
        //   dropped is completed or closed, and async-task schedules neither again. The user
        //   code that can run meanwhile (the future's and the output's drops, the handle's
        //   awaiter's waker, a scope-spawning `Drop`) runs before the note, inside the count.
        //   A future that async-task dropped outside a `Runnable` (it does not) would leave the
        //   count above zero: the scope would hang, never return early.
        // - the task's output is `TaskOutput<()>`, `'static`: a task handle that outlives
        //   the scope (it is detached at once) holds nothing borrowed.
        // - `Send` bounds: the future is `Send`, so running and dropping its `Runnable` on
        //   any thread is sound; the schedule function is `Send + Sync + 'static`.
        let (runnable, task) =
            unsafe { async_task::Builder::new().metadata(meta).spawn_unchecked(move |_| future, schedule) };
        (Runnable::new(runnable), JoinHandle::new(task))
    }
}
