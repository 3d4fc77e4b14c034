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
//! - A private pool's task holds a [`Registration`] and leaves the registry when its
//!   `TaskFuture` is dropped, however that happens (see `scheduler/registry.rs`).
//! - Spawning never looks up a pool: the caller passes the pool's state, its schedule function
//!   and, for a private pool, the registry shard hint.

use std::future::Future;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use async_task::{Schedule, ScheduleInfo, Task, WithInfo};
use pin_project_lite::pin_project;

use crate::join::JoinHandle;
use crate::policy::{drop_payload, Payload, Policy};
use crate::scheduler::{Key, Registry, Shared};
use crate::sync::Arc;

use super::trace::{Kind, Trace};
use super::{Runnable, TaskInfo};

/// What a task's future resolves to inside async-task: the value, or the panic payload
/// (`None` once the `Ignore` policy has dropped it), behind a guard whose `Drop` never unwinds.
///
/// async-task drops an output that nobody takes (a detached task's, or that of a task cancelled
/// while it ran) under its abort-on-unwind guard, so a value or payload whose `Drop` panics must
/// not reach it: the guard catches that panic (the panic hook has reported it).
pub(crate) struct TaskOutput<T>(Option<Result<T, Option<Payload>>>);

impl<T> TaskOutput<T> {
    fn new(output: Result<T, Option<Payload>>) -> TaskOutput<T> {
        TaskOutput(Some(output))
    }

    /// The output, for the awaiter, who drops it as any value it owns.
    pub(crate) fn into_inner(mut self) -> Result<T, Option<Payload>> {
        self.0.take().expect("a task's output is taken once")
    }
}

impl<T> Drop for TaskOutput<T> {
    fn drop(&mut self) {
        if let Some(output) = self.0.take() {
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(output))) {
                drop_payload(payload);
            }
        }
    }
}

/// Where a task belongs, which must learn when it ends: its future is dropped, finished or not
/// (async-task drops a finished task's future as soon as it returned).
pub(crate) trait Home: Send + 'static {
    /// What kind of work this home's tasks are, for their `tracing` span.
    const KIND: Kind = Kind::Task;

    /// The task ended. Called once, from the task's `Drop`, on whatever thread drops it.
    fn task_ended(&mut self);
}

/// A private pool task's entry in its pool's registry, which is also its count of live tasks.
#[derive(Debug)]
pub(crate) struct Registration {
    registry: Arc<Registry>,
    key: Key,
}

impl Home for Registration {
    fn task_ended(&mut self) {
        self.registry.remove(self.key);
    }
}

pin_project! {
    /// The future async-task polls: the user's future behind `catch_unwind`, and its [`Home`].
    pub(crate) struct TaskFuture<F, P, H: Home> {
        #[pin]
        future: Option<F>,
        home: H,
        trace: Trace,
        policy: PhantomData<P>,
    }

    impl<F, P, H: Home> PinnedDrop for TaskFuture<F, P, H> {
        fn drop(this: Pin<&mut Self>) {
            let mut this = this.project();
            // A finished task's span is not entered again: each entry is one poll.
            let _entered = this.future.is_some().then(|| this.trace.enter());
            // A future dropped unfinished (cancelled, or dropped by its pool) may panic in its
            // `Drop`; async-task aborts the process if that unwinds into it, so it stops here.
            // The panic hook has reported it; the payload is dropped.
            if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| this.future.set(None))) {
                drop_payload(payload);
            }
            this.home.task_ended();
        }
    }
}

impl<F, P, H: Home> TaskFuture<F, P, H> {
    /// Wraps `future` for the task `info`, which belongs to `home`.
    pub(crate) fn new(future: F, home: H, info: &TaskInfo) -> TaskFuture<F, P, H> {
        TaskFuture { future: Some(future), home, trace: Trace::new(info, H::KIND), policy: PhantomData }
    }
}

impl<F: Future, P: Policy, H: Home> Future for TaskFuture<F, P, H> {
    type Output = TaskOutput<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let _entered = this.trace.enter();
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
            if P::SWALLOW {
                drop_payload(payload);
                None
            } else {
                Some(payload)
            }
        })))
    }
}

/// Spawns `future` as the task `info` that belongs to no registry but to `home` (the global
/// pool's), scheduled by `schedule`, and schedules its first run on `shared`.
pub(crate) fn spawn_unregistered<P, F, S, H>(
    shared: &Shared,
    info: TaskInfo,
    home: H,
    future: F,
    schedule: S,
) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule<TaskInfo> + Send + Sync + 'static,
    H: Home,
{
    let task = TaskFuture::<F, P, H>::new(future, home, &info);
    launch(shared, async_task::Builder::new().metadata(info).spawn(move |_| task, schedule))
}

/// The schedule function of a private pool's tasks: each holds a reference to the pool.
pub(crate) fn schedule_on(shared: &Arc<Shared>) -> impl Schedule<TaskInfo> + Send + Sync + 'static {
    let for_schedule = shared.clone();
    WithInfo(move |runnable: Runnable, info: ScheduleInfo| {
        for_schedule.schedule(runnable, info.woken_while_running);
    })
}

/// Spawns `future` as the task `info` on the pool `shared`, which has a registry (a private
/// pool, or the global one with the task dump on), registered in the shard `hint` picks so that
/// dropping the pool drops it and the dump lists it; scheduled by `schedule`.
pub(crate) fn spawn_registered<P, F, S>(
    shared: &Shared,
    hint: usize,
    info: TaskInfo,
    future: F,
    schedule: S,
) -> JoinHandle<F::Output, P>
where
    P: Policy,
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule<TaskInfo> + Send + Sync + 'static,
{
    let registry = shared.registry().expect("spawn_registered is for a pool with a registry");
    let records = shared.keeps_task_records();
    let info = if records { info.with_record() } else { info };
    // For a refused spawn's cancelled handle: `spawn` is given back with `info` inside it.
    let (id, location) = (info.id(), info.location());
    let spawn = |key| {
        let registration = Registration { registry: registry.clone(), key };
        let task = TaskFuture::<F, P, Registration>::new(future, registration, &info);
        async_task::Builder::new().metadata(info).spawn(move |_| task, schedule)
    };
    let entry = |(runnable, _): &(Runnable, Task<TaskOutput<F::Output>, TaskInfo>)| {
        let info = runnable.metadata();
        (runnable.waker(), records.then(|| info.clone()))
    };
    match registry.register(hint, spawn, entry) {
        Ok(spawned) => launch(shared, spawned),
        Err(spawn) => {
            // The pool is shutting down: drop the future and hand back a cancelled handle.
            drop(spawn);
            let (runnable, task) = async_task::Builder::new()
                .metadata(TaskInfo::unnamed(id, location))
                .spawn(|_| std::future::pending::<TaskOutput<F::Output>>(), |_| {});
            drop(runnable);
            JoinHandle::new(task)
        }
    }
}

/// Schedules a new task's first run on `shared` and hands its handle to the spawner.
fn launch<T, P: Policy>(
    shared: &Shared,
    (runnable, task): (Runnable, Task<TaskOutput<T>, TaskInfo>),
) -> JoinHandle<T, P> {
    shared.schedule_spawned(runnable);
    JoinHandle::new(task)
}
