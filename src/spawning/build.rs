//! Spawning: the user's future, wrapped so that it can never unwind into a worker, handed to
//! async-task for a single allocation and a [`Runnable`] to schedule.
//!
//! Invariants:
//! - One allocation per task: async-task stores the header, the schedule function, and the
//!   [`TaskFuture`] (which holds the user's future inline) in one block. async-task 4.7 boxes a
//!   future of 2048 bytes or more separately: such tasks take two allocations.
//! - Every poll of the user's future runs inside `catch_unwind`. After it returns `Ready` or
//!   panics, the user's future is dropped at once, also inside `catch_unwind`, so a panicking
//!   `Drop` counts as a panic of the task rather than unwinding out of `Runnable::run`.
//! - A future dropped unfinished (cancelled, or dropped at pool shutdown) is dropped inside
//!   `catch_unwind` too: a panic there never reaches async-task, which would abort the process.
//! - A panic payload is kept for the awaiter (`Propagate`, `Catch`) or dropped right there on
//!   the worker (`Ignore`); a payload whose own `Drop` panics is leaked, never re-thrown.
//! - Nothing crew hands to async-task can unwind out of its `Drop`: not the future (above), not
//!   the output or payload of a task nobody awaits ([`TaskOutput`]'s guard), not the schedule
//!   function (crew's own `Arc`s). async-task aborts the process on such an unwind.
//! - A task tells whoever must know that it ended (its [`OnTaskEnd`]: a pool's registry entry,
//!   its counters) when its `TaskFuture` is dropped, however that happens.
//! - This module knows no pool: [`build`] makes the `Runnable`/handle pair from what the caller
//!   gives it (the schedule function, what to tell at the end), and the caller, a pool
//!   (`pool.rs`) or the blocking pool, schedules the `Runnable`.

use std::future::Future;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe, Location};
use std::pin::Pin;
use std::task::{Context, Poll};

use async_task::Schedule;
use pin_project_lite::pin_project;

use crate::handle::JoinHandle;
use crate::policy::{drop_payload, Policy};

use crate::handle::TaskOutput;
use crate::handle::{unhandled_note, watch};
use crate::identity::{current, OnTaskEnd, TaskId, TaskInfo, TaskLabel, Trace};
use crate::scheduler::{MakeLocal, Runnable, TaskMeta};

pin_project! {
    /// The future async-task polls: the user's future behind `catch_unwind`, and what to tell
    /// when it ends.
    pub(crate) struct TaskFuture<F, P, E: OnTaskEnd> {
        #[pin]
        future: Option<F>,
        end: E,
        trace: Trace,
        // What `crew::task::id` reads during each poll and drop (`identity/current.rs`), and the
        // name an unhandled panic's note gives (`handle/watched.rs`).
        label: TaskLabel,
        policy: PhantomData<P>,
    }

    impl<F, P, E: OnTaskEnd> PinnedDrop for TaskFuture<F, P, E> {
        fn drop(this: Pin<&mut Self>) {
            let mut this = this.project();
            // A finished task's span is not entered again: each entry is one poll.
            let _entered = this.future.is_some().then(|| this.trace.enter());
            let _polling = this.future.is_some().then(|| current::enter(this.label.id()));
            // A future dropped unfinished (cancelled, or dropped by its pool) may panic in its
            // `Drop`; async-task aborts the process if that unwinds into it, so it stops here.
            // The panic hook has reported it; the payload is dropped.
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| this.future.set(None))) {
                drop_payload(payload);
            }
            this.end.task_ended();
        }
    }
}

impl<F, P, E: OnTaskEnd> TaskFuture<F, P, E> {
    /// Wraps `future` for the task `info`, which tells `end` when it ends.
    pub(crate) fn new(future: F, end: E, info: &TaskInfo) -> TaskFuture<F, P, E> {
        TaskFuture {
            future: Some(future),
            end,
            trace: Trace::new(info, E::KIND),
            label: info.label(),
            policy: PhantomData,
        }
    }
}

impl<F: Future, P: Policy, E: OnTaskEnd> Future for TaskFuture<F, P, E> {
    type Output = TaskOutput<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _entered = this.trace.enter();
        let _polling = current::enter(this.label.id());
        let future = this.future.as_mut();
        let polled = this.trace.poll(cx, |cx| {
            panic::catch_unwind(AssertUnwindSafe(|| match future.as_pin_mut() {
                Some(future) => future.poll(cx),
                None => panic!("crew: a finished task was polled again"),
            }))
        });
        let mut output = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(value)) => Ok(value),
            Err(payload) => Err(payload),
        };
        // Drop the user's future now, so that a panic in its `Drop` is a panic of this task.
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| this.future.set(None))) {
            match output {
                Ok(value) => {
                    drop(value);
                    output = Err(payload);
                }
                Err(_) => drop_payload(payload),
            }
        }
        Poll::Ready(TaskOutput::new(output.map_err(|payload| {
            // In a pool that shuts down on a panic no awaiter sees (`handle/watched.rs`).
            let watching = crate::scheduler::current_watching_pool();
            if P::SWALLOW {
                if let Some(pool) = watching {
                    crate::scheduler::note_unhandled_panic(&pool, unhandled_note(this.label, payload.as_ref()));
                }
                drop_payload(payload);
                None
            } else {
                match watching {
                    Some(pool) => Some(watch(payload, pool, this.label.clone())),
                    None => Some(payload),
                }
            }
        })))
    }
}

/// Builds the task `meta` around `future`: one allocation holding the future behind
/// `catch_unwind`, `end` (told when the task ends) and `meta` as async-task's metadata, scheduled
/// by `schedule`. Returns the [`Runnable`] for its first run, which the caller (a pool)
/// schedules, and the awaiter's handle.
pub(crate) fn build<P, F, S, E>(meta: TaskMeta, end: E, future: F, schedule: S) -> (Runnable, JoinHandle<F::Output, P>)
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule<TaskMeta> + Send + Sync + 'static,
    E: OnTaskEnd,
{
    let task = TaskFuture::<F, P, E>::new(future, end, meta.info());
    let (runnable, task) = async_task::Builder::new().metadata(meta).spawn(move |_| task, schedule);
    (Runnable::new(runnable), JoinHandle::new(task))
}

/// [`build`] for a local (`!Send`) task, through async-task's `spawn_local`: its future is
/// polled and dropped only on the calling thread (async-task panics on any other), and its
/// output is `Send` only if `F::Output` is. The caller (`scheduler/local_tasks/local_spawn.rs`) schedules it on
/// this thread.
pub(crate) fn build_local<P, F, S, E>(
    meta: TaskMeta,
    end: E,
    future: F,
    schedule: S,
) -> (Runnable, JoinHandle<F::Output, P>)
where
    P: Policy,
    F: Future + 'static,
    F::Output: 'static,
    S: Schedule<TaskMeta> + Send + Sync + 'static,
    E: OnTaskEnd,
{
    let task = TaskFuture::<F, P, E>::new(future, end, meta.info());
    let (runnable, task) = async_task::Builder::new().metadata(meta).spawn_local(move |_| task, schedule);
    (Runnable::new(runnable), JoinHandle::new(task))
}

/// The handles of local tasks with the policy `P`: how the scheduler's local spawn makes them
/// (`scheduler/local_tasks/local_spawn.rs`).
pub(crate) struct LocalHandles<P>(PhantomData<P>);

impl<P: Policy, F: Future + 'static> MakeLocal<F> for LocalHandles<P>
where
    F::Output: 'static,
{
    type Handle = JoinHandle<F::Output, P>;

    #[inline]
    fn make<G, S, E>(meta: TaskMeta, end: E, future: G, schedule: S) -> (Runnable, Self::Handle)
    where
        G: Future<Output = F::Output> + 'static,
        S: Schedule<TaskMeta> + Send + Sync + 'static,
        E: OnTaskEnd,
    {
        build_local::<P, _, _, _>(meta, end, future, schedule)
    }

    fn refused(id: TaskId, location: &'static Location<'static>) -> Self::Handle {
        refused(id, location)
    }
}

/// What a pool spawns: something that builds a task's allocation once the pool has said how the
/// task is scheduled and what it tells at its end. [`Spawnable`] is every `'static` future's
/// (through [`build`]); `crew::scope`'s borrowing tasks have their own (`scope/unchecked.rs`).
/// Dropping it unbuilt (a refused spawn) drops the future.
pub(crate) trait Build: Send {
    /// What the task's handle gives.
    type Output: Send + 'static;

    /// The task `meta`, scheduled by `schedule`, telling `end` when it ends: its first
    /// [`Runnable`] and its handle, as [`build`] gives them.
    fn build<P, S, E>(self, meta: TaskMeta, end: E, schedule: S) -> (Runnable, JoinHandle<Self::Output, P>)
    where
        P: Policy,
        S: Schedule<TaskMeta> + Send + Sync + 'static,
        E: OnTaskEnd;
}

/// A `'static` future, spawned through [`build`].
pub(crate) struct Spawnable<F>(pub(crate) F);

impl<F> Build for Spawnable<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    type Output = F::Output;

    #[inline]
    fn build<P, S, E>(self, meta: TaskMeta, end: E, schedule: S) -> (Runnable, JoinHandle<F::Output, P>)
    where
        P: Policy,
        S: Schedule<TaskMeta> + Send + Sync + 'static,
        E: OnTaskEnd,
    {
        build(meta, end, self.0, schedule)
    }
}

/// The handle of a task that was never spawned (its pool refused it: shutting down), keeping
/// the identity of the task it stands for: awaiting it reports the task cancelled.
pub(crate) fn refused<T: 'static, P: Policy>(id: TaskId, location: &'static Location<'static>) -> JoinHandle<T, P> {
    let (runnable, task) = async_task::Builder::new()
        .metadata(TaskMeta::new(TaskInfo::unnamed(id, location), None))
        // `spawn_local`, so that a local task's output need not be `Send`: the future is dropped
        // here with the `Runnable`, on this thread.
        .spawn_local(|_| std::future::pending::<TaskOutput<T>>(), |_| {});
    drop(runnable);
    JoinHandle::new(task)
}
