//! Spawning a local (`!Send`) task on this thread ([`spawn`]): registered in the thread's home
//! (`local.rs`, whose module docs state the invariants), and in the pool's registry where the
//! pool keeps task records.
//!
//! Invariants:
//! - A spawn on a thread that runs no local tasks panics, naming where `spawn_local` works; one
//!   that the home or the pool refuses (closing) drops its future on this thread and returns a
//!   handle that reports the task cancelled.
//! - [`spawn_told`]'s `place` gets the handle before the task's extra end can be told: before the
//!   first schedule, and, for a refused spawn, before that end is dropped (which tells it).
//! - A local task's future carries its key in the home's `Tasks` ([`Polled`]), given back when
//!   the future is dropped, and counts itself in `POLLING` while polled (`local_drive.rs`).

use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll};

use async_task::{Schedule, ScheduleInfo, WithInfo};

use crate::identity::{OnTaskEnd, TaskId, TaskInfo};
use crate::scheduler::cores::context;
use crate::scheduler::cores::context::{with_here, HERE};
use crate::scheduler::cores::local::TaskKey;
use crate::scheduler::cores::registry::LocalRegistration;
use crate::scheduler::cores::schedule::count_scheduled;
use crate::scheduler::cores::shared::LocalHome;
use crate::scheduler::cores::shared::{RawRunnable, Runnable, TaskMeta};
use crate::scheduler::local_tasks::local_drive::{in_block_on, in_local_poll, Counted, POLLING};
use crate::sync::{Arc, Ordering};

/// What a local task tells at its end: its home's live count (its [`Polled`] future gave its
/// key in `Tasks` (`local.rs`) back when it was dropped, just before).
struct HomeEnd {
    home: Arc<LocalHome>,
}

impl OnTaskEnd for HomeEnd {
    #[inline]
    fn task_ended(&mut self) {
        // One writer: the owner (a local task's future is dropped on its thread only).
        self.home.live.decr();
    }
}

/// How a local task's allocation and handle are made, for [`spawn`]: by the layer that owns the
/// handles (`spawning/build.rs`), from the metadata, the end, the future as this thread's home
/// wraps it, and the schedule function that [`spawn`] gives it.
pub(crate) trait MakeLocal<F: Future> {
    /// The task's handle.
    type Handle;

    /// The task `meta` from `future`, scheduled by `schedule`, telling `end` when it ends.
    fn make<G, S, E>(meta: TaskMeta, end: E, future: G, schedule: S) -> (Runnable, Self::Handle)
    where
        G: Future<Output = F::Output> + 'static,
        S: Schedule<TaskMeta> + Send + Sync + 'static,
        E: OnTaskEnd;

    /// The handle of a task refused before it was made, with the identity it would have had.
    fn refused(id: TaskId, location: &'static Location<'static>) -> Self::Handle;
}

/// Spawns the local task `info` from `future` on this thread (see the module docs), registered
/// in the thread's `Tasks` (`local.rs`) and, if the pool the thread works for or blocks in keeps task
/// records, in that pool's registry. A task refused (the home or the pool closing) has its
/// future dropped here and a handle that reports it cancelled.
///
/// # Panics
///
/// On a thread that runs no local tasks (see [`crate::spawn_local`]).
#[track_caller]
pub(crate) fn spawn<M, F>(info: TaskInfo, future: F) -> M::Handle
where
    M: MakeLocal<F>,
    F: Future + 'static,
    F::Output: 'static,
{
    spawn_told::<M, F, (), M::Handle>(info, future, (), |handle| handle)
}

/// [`spawn`] of a task that also tells `told` when it ends, and hands its handle to `place`
/// before its end can be told (a set's member: its set files the handle, then hears of the
/// end), refused spawns included. Returns what `place` returns.
#[track_caller]
pub(crate) fn spawn_told<M, F, E, R>(info: TaskInfo, future: F, told: E, place: impl FnOnce(M::Handle) -> R) -> R
where
    M: MakeLocal<F>,
    F: Future + 'static,
    F::Output: 'static,
    E: OnTaskEnd,
{
    // Kept here until the task takes it: a refused spawn places its handle, then drops it.
    let mut told = Some(told);
    // A refused spawn: its handle placed, then its extra end dropped (which tells it).
    fn refused<M: MakeLocal<F>, F: Future, E, R>(
        id: TaskId,
        location: &'static Location<'static>,
        told: &mut Option<E>,
        place: impl FnOnce(M::Handle) -> R,
    ) -> R {
        let placed = place(M::refused(id, location));
        drop(told.take());
        placed
    }
    let pool = context::local_spawn_pool();
    if !(pool.is_some() || in_block_on() || in_local_poll()) {
        panic!(
            "crew::spawn_local works only where crew runs local tasks: inside a task on a crew worker \
             thread, or inside crew::block_on or Pool::block_on; from any other thread, use crew::spawn_pinned"
        );
    }
    let Some((home, key)) = with_here(|here| (here.home.clone(), here.tasks.borrow_mut().reserve())) else {
        panic!("crew::spawn_local was called while this thread's thread-locals are being destroyed");
    };
    let (id, location) = (info.id(), info.location());
    let forget_key = || with_here(|here| drop(here.tasks.borrow_mut().remove(key)));
    // Only the owner closes its home: no close can begin between this check and the register.
    if home.closed.load(Ordering::SeqCst) {
        return refused::<M, F, E, R>(id, location, &mut told, place);
    }
    // The pool's registry lists a local task only for the dump (and `#[crew::test]`'s check of
    // leftovers): a pool's shutdown drops its threads' local tasks through their homes.
    let registry = pool.flatten();
    let info = if registry.is_some() { info.with_record() } else { info };
    // The task holds the home twice (its schedule function, its end); this one moves into it.
    let end = HomeEnd { home: home.clone() };
    // `told` moves into the task only as it is made: a spawn the registry refuses keeps it here.
    let told_once = "a local task's end is taken once";
    // A paused pool's local task carries its clock, so that its schedules and runs count as
    // the pool's work (`clock.rs`).
    let info = crate::scheduler::with_current_clock(info);
    let schedule = WithInfo(move |runnable: RawRunnable, info: ScheduleInfo| {
        let runnable = Runnable::new(runnable);
        count_scheduled(runnable.metadata());
        home.schedule(runnable, info.woken_while_running)
    });
    // Without a registry the task carries no registration (24 bytes less in every local
    // task's allocation), as `Shared::spawn` builds an ordinary task.
    let spawned = match registry {
        None => {
            let end = (end, told.take().expect(told_once));
            Some(M::make(TaskMeta::new(info, None), end, Polled { future, key }, schedule))
        }
        Some(registry) => registry
            .register_local(
                context::shard_hint(),
                |registration: LocalRegistration| {
                    let end = ((end, told.take().expect(told_once)), registration);
                    M::make(TaskMeta::new(info, None), end, Polled { future, key }, schedule)
                },
                |(runnable, _): &(Runnable, M::Handle)| (runnable.waker(), Some(runnable.metadata().info().clone())),
            )
            .ok(),
    };
    // Refused by the pool (shutting down): its future was dropped with the closure, here.
    let Some((runnable, handle)) = spawned else {
        forget_key();
        return refused::<M, F, E, R>(id, location, &mut told, place);
    };
    with_here(|here| {
        here.tasks.borrow_mut().fill(key, runnable.waker());
        here.home.live.incr();
    });
    context::count_local_spawn();
    let placed = place(handle);
    runnable.schedule();
    placed
}

pin_project_lite::pin_project! {
    /// A local task's future, counted in its thread's [`POLLING`] while polled, so that a
    /// `block_on` inside it does not run the thread's other local tasks; with the task's key in
    /// its thread's `Tasks` (`local.rs`), given back when the future is dropped (on its thread: async-task
    /// drops a local task's future nowhere else).
    struct Polled<F> {
        #[pin]
        future: F,
        key: TaskKey,
    }

    impl<F> PinnedDrop for Polled<F> {
        fn drop(this: Pin<&mut Self>) {
            let key = *this.project().key;
            // While the thread-locals are destroyed, `close` already took every waker.
            let waker = HERE
                .try_with(|here| here.get().and_then(|here| here.tasks.try_borrow_mut().ok()?.remove(key)))
                .ok()
                .flatten();
            drop(waker);
        }
    }
}

impl<F: Future> Future for Polled<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _polling = Counted::raise(&POLLING);
        self.project().future.poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    fn sizes<F>(_: &F) -> [usize; 4] {
        [size_of::<F>(), size_of::<Option<F>>(), size_of::<Polled<F>>(), size_of::<Option<Polled<F>>>()]
    }

    #[test]
    fn the_key_beside_a_local_future_holds_the_tag_of_its_drop() {
        let number = std::rc::Rc::new(7_u64);
        let future = async move { *number };
        let [bare, optional, polled, optional_polled] = sizes(&future);
        // A coroutine has no niche: `Option` adds a word to it, which is why the key carries it.
        assert!(optional > bare, "Option<F>: {optional} bytes, F: {bare}");
        assert_eq!(polled, bare + size_of::<TaskKey>());
        assert_eq!(optional_polled, polled, "the key's niche holds Option's tag");
    }
}
