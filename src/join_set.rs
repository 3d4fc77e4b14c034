//! [`JoinSet`]: a group of tasks joined in the order they finish; and [`TaskGroup`], the same
//! group with no outputs kept, for long-lived sets of connection tasks.
//!
//! Invariants:
//! - A member's spawn files its handle in the set (a lock-free push) before the member can
//!   first run; its [`OnTaskEnd`] pushes its id to the set's ended queue when its future is
//!   dropped (finished, panicked, cancelled or aborted), then wakes the one waiting in
//!   `join_next` or `shutdown`. So an ended id always finds its handle (in the members' map,
//!   or still in the filed queue if it was filed after the joiner took the lock: a joiner that
//!   does not find an id looks there again), `join_next` never polls a member that has not
//!   ended (no O(members) sweep), and `shutdown` knows when every member's future is gone.
//! - A `JoinSet`'s spawns and ends take no lock: the lock is the joiners' (and aborts'), who
//!   move filed handles into the members' map. A `TaskGroup`'s end takes it to drop the handle.
//! - The set's lock is never held while user code runs or while a member's handle is dropped
//!   (a handle's drop may drop a task's output): handles are taken out under it and dropped
//!   after.
//! - Every member ends exactly once: joined (`join_next`), aborted (its future dropped at its
//!   next return from poll; a `Propagate` or `Ignore` set then skips it, a `Catch` set gives
//!   `Err(is_aborted)`), detached (`detach_all`: it runs on, nobody joins it), or cancelled by
//!   the set's drop. A spawn its pool refused ends at once (its end hook, dropped untold,
//!   tells).
//! - A member taken out of the set before its end (detached, or cancelled by the set's drop)
//!   is kept among the set's unjoined members, with its handle if detached, until its end hook
//!   removes it (then detaching the handle, so that its output is dropped as it ends): so its
//!   abort handle still aborts it, and `is_finished` is true exactly once its future is gone
//!   (tokio's rule), whatever became of the set. The end hook takes the lock for that only once
//!   a member was ever taken out early (`has_unjoined`).
//! - Whoever waits (`join_next`, however many tasks call it at once, `shutdown`, `wait`) waits
//!   on one event-listener `Event`, notified to all after each end and after each change that
//!   can end a wait (a shutdown, a detach): each waiter looks again after it registered, so no
//!   wake is lost, and a set shut down (or detached) and empty gives `None` to every
//!   `join_next`.
//! - `&self` everywhere: the set is `Send + Sync`, so tasks may spawn into it (behind an `Arc`)
//!   while another joins it.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::{poll_fn, Future};
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::Location;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use crossbeam_queue::SegQueue;
use crossbeam_utils::CachePadded;
use event_listener::{Event, EventListener};

use crate::abort::{noop_waker, Abort, AbortHandle};
use crate::join::JoinHandle;
use crate::policy::{Outcome, Policy, Propagate};
use crate::pool::Pool;
use crate::target::Target;
use crate::task::info::{SetLabel, TaskName};
use crate::task::{OnTaskEnd, Spawnable, TaskId, TaskInfo};

/// A group of tasks whose outputs are taken in the order the tasks finish.
///
/// Spawn into it from anywhere (`spawn` takes `&self`; the set is `Send + Sync`), take outputs
/// with [`join_next`](JoinSet::join_next) as members finish, cancel them all with
/// [`abort_all`](JoinSet::abort_all) or [`shutdown`](JoinSet::shutdown). Dropping the set cancels
/// every member. The policy `P` decides what a member's end gives, as for a
/// [`JoinHandle`]: `JoinSet::<T, Catch>::with_policy()` makes a set whose
/// `join_next` gives `Result<T, JoinError>`. The task dump and slow-poll reports name a member's
/// set (`set 3 "fanout"`). `docs/join-set.md` compares it with tokio's `JoinSet` and
/// `FuturesUnordered`.
///
/// # Examples
///
/// ```
/// use crew::task::JoinSet;
///
/// crew::block_on(async {
///     let set = JoinSet::new();
///     for backend in 0..4u64 {
///         set.spawn(async move { backend * 10 });
///     }
///     let mut answers = Vec::new();
///     while let Some(answer) = set.join_next().await {
///         answers.push(answer);
///     }
///     answers.sort();
///     assert_eq!(answers, [0, 10, 20, 30]);
/// });
/// ```
pub struct JoinSet<T, P: Policy = Propagate> {
    inner: Arc<Inner<T, P>>,
}

/// A group of tasks whose outputs are dropped as they finish: for long-lived groups (a task per
/// connection) that are waited for or shut down as a whole, never joined one by one, so no
/// output piles up. What tokio-util's `TaskTracker` is to tokio.
///
/// A member's panic is reported by the panic hook and dropped, whatever the policy.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let served = Arc::new(AtomicUsize::new(0));
/// let connections = crew::task::TaskGroup::named("connections");
/// for _ in 0..10 {
///     let served = served.clone();
///     connections.spawn(async move { served.fetch_add(1, Ordering::SeqCst); });
/// }
/// crew::block_on(connections.wait());
/// assert_eq!((served.load(Ordering::SeqCst), connections.len()), (10, 0));
/// ```
pub struct TaskGroup {
    inner: Arc<Inner<(), Propagate>>,
}

/// What a set and its members' end hooks share.
struct Inner<T, P: Policy> {
    label: SetLabel,
    /// A `TaskGroup`: outputs are dropped as members end.
    discard: bool,
    /// Members spawned: counted before the spawn, by the spawning threads only.
    spawns: CachePadded<AtomicUsize>,
    /// Members whose future was dropped: counted by the end hook after it pushed to `ended`
    /// and before it wakes the waiter, who registers before reading it. `spawns - ends` are
    /// live (detached ones included until they end); two counters on two cache lines, so that
    /// a spawn and an end on other threads do not pass one line back and forth.
    ends: CachePadded<AtomicUsize>,
    /// Handles of new members, pushed by their spawn before the member can first run, moved
    /// into [`State::members`] by whoever takes the lock next.
    spawned: SegQueue<(TaskId, JoinHandle<T, P>)>,
    /// Members whose future was dropped, in that order (a `JoinSet`'s only): pushed by the end
    /// hook, taken by `join_next`. A member's id comes after its handle in `spawned`.
    ended: SegQueue<TaskId>,
    /// Who waits in `join_next`, `shutdown` or `wait`: all of them, notified after each end
    /// and each change that can end a wait.
    changed: Event,
    /// A member was ever taken out before its end (`State::unjoined`): the end hook then looks
    /// there.
    has_unjoined: AtomicBool,
    /// What joiners, aborts and the `TaskGroup`'s end hooks share; a `JoinSet`'s spawns and end
    /// hooks never take it.
    state: Mutex<State<T, P>>,
}

struct State<T, P: Policy> {
    /// Members whose handle was moved here from `spawned` and who were not yet joined.
    members: HashMap<TaskId, Member<T, P>, BuildHasherDefault<IdHasher>>,
    /// Ended members taken from `ended` by an abort (to see which members ended), or put back
    /// by a `join_next` whose output was not yet stored: joined before `ended`'s.
    ready: VecDeque<TaskId>,
    /// Members taken out of the set before their end: detached (with their handle, not
    /// detached in async-task until the end, so that their abort handles still abort them) or
    /// cancelled by the set's drop (`None`). Each is removed by its end hook.
    unjoined: HashMap<TaskId, Option<JoinHandle<T, P>>, BuildHasherDefault<IdHasher>>,
}

/// A member as the set knows it.
struct Member<T, P: Policy> {
    /// `None` once aborted.
    handle: Option<JoinHandle<T, P>>,
    /// Its id was taken from `ended` into `ready`.
    ended: bool,
    aborted: bool,
}

/// Set ids: counted from 1, process-wide.
static NEXT_SET: AtomicU64 = AtomicU64::new(1);

impl<T, P: Policy> Inner<T, P> {
    fn new(name: Option<String>, discard: bool) -> Arc<Inner<T, P>> {
        // Relaxed: only uniqueness matters.
        let id = NEXT_SET.fetch_add(1, Ordering::Relaxed);
        let state = State { members: HashMap::default(), ready: VecDeque::new(), unjoined: HashMap::default() };
        Arc::new(Inner {
            label: SetLabel { id, name: name.map(Arc::from) },
            discard,
            spawns: CachePadded::new(AtomicUsize::new(0)),
            ends: CachePadded::new(AtomicUsize::new(0)),
            spawned: SegQueue::new(),
            ended: SegQueue::new(),
            changed: Event::new(),
            has_unjoined: AtomicBool::new(false),
            state: Mutex::new(state),
        })
    }

    /// The joiners' state, with every handle spawned so far moved in.
    fn state(&self) -> MutexGuard<'_, State<T, P>> {
        // No code under this lock panics halfway; take the state as it is.
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.take_spawned(&mut state);
        state
    }

    /// Moves every handle filed in `spawned` so far into `state`.
    fn take_spawned(&self, state: &mut State<T, P>) {
        while let Some((id, handle)) = self.spawned.pop() {
            state.members.insert(id, Member { handle: Some(handle), ended: false, aborted: false });
        }
    }

    /// Whether `id`, taken from `ended` under the lock, is a member. Its handle may still be in
    /// `spawned`: the member may have been filed, run and ended after the lock was taken. Its
    /// handle was pushed before its id, so a look at `spawned` now finds it; not found then, it
    /// was detached or cleared by `shutdown`.
    fn is_member(&self, state: &mut State<T, P>, id: TaskId) -> bool {
        if !state.members.contains_key(&id) {
            self.take_spawned(state);
        }
        state.members.contains_key(&id)
    }

    /// [`state`](Inner::state), with every end so far taken from `ended` into `ready`, so that
    /// each member's `ended` is up to date.
    fn state_with_ends(&self) -> MutexGuard<'_, State<T, P>> {
        let mut state = self.state();
        while let Some(id) = self.ended.pop() {
            if self.is_member(&mut state, id) {
                state.members.get_mut(&id).expect("the member was just found").ended = true;
                state.ready.push_back(id);
            }
        }
        state
    }

    /// Takes every member out, for `shutdown`, `detach_all` and drop: those not yet ended go to
    /// the unjoined members, with their handle if `keep` (detached) or cancelled (the handle is
    /// returned, to drop), and the ended ones' handles are returned. Every end so far is taken
    /// first, so that none is of a member moved to the unjoined ones (a later end finds its
    /// member there: `has_unjoined` is set before).
    fn take_all(&self, keep: bool) -> Vec<JoinHandle<T, P>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // SeqCst: before the ends are taken; an end hook pushes, then reads it.
        self.has_unjoined.store(true, Ordering::SeqCst);
        self.take_spawned(&mut state);
        while let Some(id) = self.ended.pop() {
            if let Some(member) = state.members.get_mut(&id) {
                member.ended = true;
            }
        }
        state.ready.clear();
        let members: Vec<(TaskId, Member<T, P>)> = state.members.drain().collect();
        let mut handles = Vec::new();
        for (id, member) in members {
            if member.ended {
                handles.extend(member.handle);
            } else if keep {
                state.unjoined.insert(id, member.handle);
            } else {
                state.unjoined.insert(id, None);
                handles.extend(member.handle);
            }
        }
        if state.unjoined.is_empty() {
            // Nothing for an end hook to find: ends go lock-free again (one that read `true`
            // meanwhile finds nothing).
            self.has_unjoined.store(false, Ordering::SeqCst);
        }
        handles
    }

    /// A member's future was dropped (its end hook), or its spawn was refused.
    fn member_ended(&self, id: TaskId) {
        if self.discard {
            // Nothing to join: forget the member, detach its handle.
            let handle = self.state().members.remove(&id).and_then(|member| member.handle);
            if let Some(handle) = handle {
                handle.detach();
            }
        } else {
            self.ended.push(id);
            // SeqCst: after the push, as `take_all` sets it before taking the ends.
            if self.has_unjoined.load(Ordering::SeqCst) {
                let unjoined = self.state.lock().unwrap_or_else(PoisonError::into_inner).unjoined.remove(&id);
                // A detached member's handle, detached now that its future is gone: async-task
                // drops its output as it stores it.
                if let Some(Some(handle)) = unjoined {
                    handle.detach();
                }
            }
        }
        // SeqCst: after the push, before the notify (see `ends`).
        self.ends.fetch_add(1, Ordering::SeqCst);
        self.changed.notify(usize::MAX);
    }

    /// Wakes every waiter to look again (a change that can end a wait).
    fn notify_waiters(&self) {
        self.changed.notify(usize::MAX);
    }
}

/// A member's end hook: tells its set. Also told when dropped untold: the spawn was refused
/// (the pool shut down) or never happened (the global pool could not start).
struct MemberEnd<T: Send + 'static, P: Policy> {
    set: Arc<Inner<T, P>>,
    id: TaskId,
    told: bool,
}

impl<T: Send + 'static, P: Policy> OnTaskEnd for MemberEnd<T, P> {
    fn task_ended(&mut self) {
        self.told = true;
        self.set.member_ended(self.id);
    }

    fn set_label(&self) -> Option<&SetLabel> {
        Some(&self.set.label)
    }
}

impl<T: Send + 'static, P: Policy> Drop for MemberEnd<T, P> {
    fn drop(&mut self) {
        if !self.told {
            self.task_ended();
        }
    }
}

impl<T: Send + 'static, P: Policy> Abort for Inner<T, P> {
    fn abort(&self, id: TaskId) {
        let handle = {
            let mut state = self.state_with_ends();
            match state.members.get_mut(&id) {
                Some(member) if !member.ended && member.handle.as_ref().is_some_and(|h| !h.is_finished()) => {
                    member.aborted = true;
                    member.handle.take()
                }
                Some(_) => None,
                // Detached: aborted all the same (its end hook removes the entry).
                None => state.unjoined.get_mut(&id).and_then(Option::take),
            }
        };
        // Outside the lock: dropping the handle cancels the task; its end hook then runs.
        drop(handle);
    }

    /// Tokio's rule: true once the member's future is gone (its end hook ran).
    fn is_finished(&self, id: TaskId) -> bool {
        let state = self.state_with_ends();
        match state.members.get(&id) {
            Some(member) => member.ended,
            // Joined, or taken out early and ended since; else still running.
            None => !state.unjoined.contains_key(&id),
        }
    }
}

impl<T: Send + 'static, P: Policy> Inner<T, P> {
    /// Spawns `future` named `name` onto `target` as a member; its abort handle.
    #[track_caller]
    fn spawn<F>(self: &Arc<Self>, target: Target<'_>, name: Option<TaskName>, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        let info = TaskInfo::new(name, Location::caller());
        let id = info.id();
        // SeqCst: before the member can end (see `ends`).
        self.spawns.fetch_add(1, Ordering::SeqCst);
        let end = MemberEnd { set: self.clone(), id, told: false };
        // Filed before the member can run, so before its end.
        let place = |handle: JoinHandle<T, P>| self.spawned.push((id, handle));
        crate::target::spawn_told(target, info, Spawnable(future), end, place);
        AbortHandle::new(self.clone(), id)
    }

    /// `join_next`'s poll: the next ended member's output as the policy gives it (aborted
    /// members skipped under `Propagate` and `Ignore`), `Ready(None)` once the set is empty.
    /// Cancel-safe: a member is taken out only in the poll that returns its output. `listener`
    /// is the caller's registration with `changed`, kept across polls.
    fn poll_next(&self, cx: &mut Context<'_>, listener: &mut Option<EventListener>) -> Poll<Option<P::Output<T>>> {
        loop {
            let mut state = self.state();
            let Some(id) = state.ready.pop_front().or_else(|| self.ended.pop()) else {
                if state.members.is_empty() {
                    return Poll::Ready(None);
                }
                drop(state);
                match listener {
                    // Registered, then look again: a change before this notified nobody.
                    None => *listener = Some(self.changed.listen()),
                    Some(registered) => match Pin::new(registered).poll(cx) {
                        Poll::Ready(()) => *listener = None,
                        Poll::Pending => return Poll::Pending,
                    },
                }
                continue;
            };
            if !self.is_member(&mut state, id) {
                continue;
            }
            let member = state.members.remove(&id).expect("the member was just found");
            drop(state);
            let Some(mut handle) = member.handle else {
                if P::SKIP_ABORTED {
                    continue;
                }
                return Poll::Ready(Some(P::complete(Outcome::Aborted)));
            };
            // Its future is gone; async-task may still be storing its output: then the handle
            // registers `cx`, and it goes back first in line.
            match handle.poll_outcome(cx) {
                // Aborted through its own abort handle's path (the set's), or dropped by the pool.
                Poll::Ready(Outcome::Aborted) if P::SKIP_ABORTED => continue,
                Poll::Ready(ended) => return Poll::Ready(Some(P::complete(ended))),
                Poll::Pending => {
                    let mut state = self.state();
                    state.members.insert(id, Member { handle: Some(handle), ended: true, aborted: false });
                    state.ready.push_front(id);
                    return Poll::Pending;
                }
            }
        }
    }

    /// `try_join_next`: as [`poll_next`](Inner::poll_next), taking only a member whose output
    /// is already stored, and registering no waker.
    fn try_next(&self) -> Option<P::Output<T>> {
        loop {
            let mut state = self.state();
            let id = state.ready.pop_front().or_else(|| self.ended.pop())?;
            if !self.is_member(&mut state, id) {
                continue;
            }
            let member = &state.members[&id];
            let ready = member.aborted || member.handle.as_ref().is_some_and(JoinHandle::is_finished);
            if !ready {
                state.members.get_mut(&id).expect("the member was just found").ended = true;
                state.ready.push_front(id);
                return None;
            }
            let member = state.members.remove(&id).expect("the member was just found");
            drop(state);
            match member.handle {
                // Finished: its poll returns at once, and registers nothing that is ever woken.
                Some(handle) => return Some(now_or_never(handle)),
                None if P::SKIP_ABORTED => continue,
                None => return Some(P::complete(Outcome::Aborted)),
            }
        }
    }

    /// Aborts every member; their handles are dropped outside the lock.
    fn abort_all(&self) {
        let handles: Vec<JoinHandle<T, P>> = {
            let mut state = self.state_with_ends();
            state
                .members
                .values_mut()
                .filter(|member| !member.ended)
                .filter_map(|member| {
                    member.aborted = true;
                    member.handle.take()
                })
                .collect()
        };
        drop(handles);
    }

    /// Members whose future is not yet dropped. `ends` first: it never passes `spawns`, so
    /// `spawns` read after it is at least as large, and equal only if at that moment none was
    /// live.
    fn live(&self) -> usize {
        let ends = self.ends.load(Ordering::SeqCst);
        self.spawns.load(Ordering::SeqCst) - ends
    }

    /// Waits until no member's future is left.
    async fn wait_until_none_live(&self) {
        loop {
            if self.live() == 0 {
                return;
            }
            let listener = self.changed.listen();
            // An end before the registration has not notified us: look again.
            if self.live() == 0 {
                return;
            }
            listener.await;
        }
    }
}

impl<T: Send + 'static> JoinSet<T, Propagate> {
    /// An empty set of the default [`Propagate`] policy.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::<u32>::new();
    /// assert!(set.is_empty());
    /// ```
    pub fn new() -> JoinSet<T, Propagate> {
        JoinSet::with_policy()
    }

    /// An empty set of the default [`Propagate`] policy named `name`: the task dump and
    /// slow-poll reports name its members' set by it (`with_name` names a set of any policy).
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::<()>::named("fanout");
    /// let member = set.spawn(std::future::pending());
    /// assert_eq!(set.name(), Some("fanout"));
    /// member.abort();
    /// ```
    pub fn named(name: impl Into<String>) -> JoinSet<T, Propagate> {
        JoinSet::new().with_name(name)
    }
}

impl<T: Send + 'static> Default for JoinSet<T, Propagate> {
    fn default() -> Self {
        JoinSet::new()
    }
}

impl<T: Send + 'static, P: Policy> JoinSet<T, P> {
    /// An empty set of policy `P`: `JoinSet::<T, crew::Catch>::with_policy()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::<u32, crew::Catch>::with_policy();
    /// set.spawn(async { panic!("backend down") });
    /// let err = crew::block_on(set.join_next()).unwrap().unwrap_err();
    /// assert_eq!(err.panic_message(), Some("backend down"));
    /// ```
    pub fn with_policy() -> JoinSet<T, P> {
        JoinSet { inner: Inner::new(None, false) }
    }

    /// This set, named `name`: the task dump and slow-poll reports name its members' set by it.
    ///
    /// # Panics
    ///
    /// If a task was already spawned into the set: name a set as you make it.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::<u32, crew::Catch>::with_policy().with_name("fanout");
    /// assert_eq!(set.name(), Some("fanout"));
    /// ```
    pub fn with_name(mut self, name: impl Into<String>) -> JoinSet<T, P> {
        let inner = Arc::get_mut(&mut self.inner).expect("crew: name a JoinSet before spawning into it");
        inner.label.name = Some(Arc::from(name.into()));
        self
    }

    /// The set's id, which [`TaskInfo::set_id`] gives for its members.
    ///
    /// # Examples
    ///
    /// ```
    /// let (a, b) = (crew::task::JoinSet::<()>::new(), crew::task::JoinSet::<()>::new());
    /// assert_ne!(a.id(), b.id());
    /// ```
    pub fn id(&self) -> u64 {
        self.inner.label.id
    }

    /// The set's name, if it was given one.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(crew::task::JoinSet::<()>::new().name(), None);
    /// assert_eq!(crew::task::JoinSet::<()>::named("n").name(), Some("n"));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.inner.label.name.as_deref()
    }

    /// Spawns `future` into the set on the current pool, as [`crew::spawn`](crate::spawn) picks
    /// it. Returns the member's [`AbortHandle`].
    ///
    /// # Panics
    ///
    /// As [`crew::spawn`](crate::spawn): if the global pool cannot start.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::new();
    /// let handle = set.spawn(async { 1 });
    /// assert_eq!(crew::block_on(set.join_next()), Some(1));
    /// assert!(handle.is_finished());
    /// ```
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.inner.spawn(Target::Current, None, future)
    }

    /// Spawns `future` into the set on `pool`.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(2).build().unwrap();
    /// let set = crew::task::JoinSet::new();
    /// set.spawn_on(&pool, async { 7 });
    /// assert_eq!(crew::block_on(set.join_next()), Some(7));
    /// ```
    #[track_caller]
    pub fn spawn_on<F>(&self, pool: &Pool, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.inner.spawn(Target::Private(pool.shared_arc()), None, future)
    }

    /// `task::Builder::spawn_in`'s path: a named member.
    #[track_caller]
    pub(crate) fn spawn_named<F>(&self, target: Target<'_>, name: Option<TaskName>, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        self.inner.spawn(target, name, future)
    }

    /// Waits for the next member to end and gives what its end gives under the policy, in the
    /// order members end; `None` once the set is empty. A member that was aborted is skipped
    /// under [`Propagate`] and [`Ignore`](crate::Ignore) (the user asked for it) and given as
    /// `Err` with [`JoinError::is_aborted`](crate::JoinError::is_aborted) under
    /// [`Catch`](crate::Catch); a member dropped by its pool's shutdown panics (`Err` under
    /// `Catch`), as a [`JoinHandle`] does.
    ///
    /// # Panics
    ///
    /// Under `Propagate`, resumes a member's panic; under `Ignore`, panics with
    /// [`Ignore::PANIC_MESSAGE`](crate::Ignore::PANIC_MESSAGE) for a member that panicked.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::new();
    /// set.spawn(async { "slow" });
    /// assert_eq!(crew::block_on(set.join_next()), Some("slow"));
    /// assert_eq!(crew::block_on(set.join_next()), None);
    /// ```
    pub async fn join_next(&self) -> Option<P::Output<T>> {
        let mut listener = None;
        poll_fn(|cx| self.inner.poll_next(cx, &mut listener)).await
    }

    /// The next member's output if one has ended and its output is ready, without waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::new();
    /// set.spawn(async { 2 });
    /// let two = loop {
    ///     if let Some(two) = set.try_join_next() { break two; }
    ///     std::thread::yield_now();
    /// };
    /// assert_eq!(two, 2);
    /// ```
    pub fn try_join_next(&self) -> Option<P::Output<T>> {
        self.inner.try_next()
    }

    /// The members not yet joined (running, or ended and not yet taken).
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::<()>::new();
    /// set.spawn(std::future::pending());
    /// assert_eq!(set.len(), 1);
    /// set.abort_all();
    /// ```
    pub fn len(&self) -> usize {
        self.inner.state().members.len()
    }

    /// True if the set has no member left to join.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(crew::task::JoinSet::<()>::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Aborts every member (see [`AbortHandle::abort`]); `join_next` then skips them (or gives
    /// `Err(is_aborted)` under [`Catch`](crate::Catch)). Returns at once: see
    /// [`shutdown`](JoinSet::shutdown) to wait until their futures are dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::<()>::new();
    /// for _ in 0..3 { set.spawn(std::future::pending()); }
    /// set.abort_all();
    /// assert_eq!(crew::block_on(set.join_next()), None);
    /// ```
    pub fn abort_all(&self) {
        self.inner.abort_all();
    }

    /// Aborts every member and returns once every member's future has been dropped; the set is
    /// then empty, and outputs not yet joined are dropped. Called from inside one of the set's
    /// own members, it aborts that member too: its future (this call's with it) is dropped when
    /// the poll that awaits this returns, after the others' or with them, as with tokio.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::<()>::new();
    /// for _ in 0..3 { set.spawn(std::future::pending()); }
    /// crew::block_on(set.shutdown());
    /// assert!(set.is_empty());
    /// ```
    pub async fn shutdown(&self) {
        self.inner.abort_all();
        self.inner.wait_until_none_live().await;
        // Finished before the abort: their outputs are dropped here, outside the lock.
        drop(self.inner.take_all(false));
        // The set is empty: every `join_next` gives `None`.
        self.inner.notify_waiters();
    }

    /// Lets every member run on with nobody joining it; the set is then empty. Their outputs are
    /// dropped as they finish.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let set = crew::task::JoinSet::new();
    /// set.spawn(async move { tx.send("ran anyway").unwrap() });
    /// set.detach_all();
    /// drop(set);
    /// assert_eq!(rx.recv().unwrap(), "ran anyway");
    /// ```
    pub fn detach_all(&self) {
        // The members not yet ended stay among the unjoined, for their abort handles; the
        // handles of those that ended are detached here (their outputs dropped).
        for handle in self.inner.take_all(true) {
            handle.detach();
        }
        self.inner.notify_waiters();
    }
}

/// Dropping the set aborts every member.
impl<T, P: Policy> Drop for JoinSet<T, P> {
    fn drop(&mut self) {
        // Outside the lock: dropping the handles cancels the members.
        drop(self.inner.take_all(false));
    }
}

impl<T, P: Policy> fmt::Debug for JoinSet<T, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet")
            .field("id", &self.inner.label.id)
            .field("name", &self.inner.label.name)
            .field("len", &self.inner.state().members.len())
            .finish()
    }
}

impl TaskGroup {
    /// An empty group.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(crew::task::TaskGroup::new().is_empty());
    /// ```
    pub fn new() -> TaskGroup {
        TaskGroup { inner: Inner::new(None, true) }
    }

    /// An empty group named `name` (for the task dump and reports).
    ///
    /// # Examples
    ///
    /// See [`TaskGroup`].
    /// ```
    /// assert_eq!(crew::task::TaskGroup::named("conns").name(), Some("conns"));
    /// ```
    pub fn named(name: impl Into<String>) -> TaskGroup {
        TaskGroup { inner: Inner::new(Some(name.into()), true) }
    }

    /// The group's id, which [`TaskInfo::set_id`] gives for its members.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_ne!(crew::task::TaskGroup::new().id(), crew::task::TaskGroup::new().id());
    /// ```
    pub fn id(&self) -> u64 {
        self.inner.label.id
    }

    /// The group's name, if it was given one.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(crew::task::TaskGroup::new().name(), None);
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.inner.label.name.as_deref()
    }

    /// Spawns `future` into the group on the current pool; its output is dropped when it ends.
    ///
    /// # Examples
    ///
    /// See [`TaskGroup`].
    /// ```
    /// let group = crew::task::TaskGroup::new();
    /// group.spawn(async {});
    /// crew::block_on(group.wait());
    /// ```
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> AbortHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.inner.spawn(Target::Current, None, future)
    }

    /// `task::Builder::spawn_in_group`'s path: a named member.
    #[track_caller]
    pub(crate) fn spawn_named<F>(&self, target: Target<'_>, name: Option<TaskName>, future: F) -> AbortHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.inner.spawn(target, name, future)
    }

    /// Spawns `future` into the group on `pool`.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let group = crew::task::TaskGroup::new();
    /// group.spawn_on(&pool, async {});
    /// crew::block_on(group.wait());
    /// ```
    #[track_caller]
    pub fn spawn_on<F>(&self, pool: &Pool, future: F) -> AbortHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.inner.spawn(Target::Private(pool.shared_arc()), None, future)
    }

    /// The members whose future is not yet dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// let group = crew::task::TaskGroup::new();
    /// group.spawn(std::future::pending());
    /// assert_eq!(group.len(), 1);
    /// crew::block_on(group.shutdown());
    /// assert_eq!(group.len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.live()
    }

    /// True if no member is left.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(crew::task::TaskGroup::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits until every member has ended (new members spawned meanwhile included).
    ///
    /// # Examples
    ///
    /// See [`TaskGroup`].
    /// ```
    /// crew::block_on(crew::task::TaskGroup::new().wait());
    /// ```
    pub async fn wait(&self) {
        self.inner.wait_until_none_live().await;
    }

    /// Aborts every member (see [`AbortHandle::abort`]), returning at once.
    ///
    /// # Examples
    ///
    /// ```
    /// let group = crew::task::TaskGroup::new();
    /// group.spawn(std::future::pending());
    /// group.abort_all();
    /// crew::block_on(group.wait());
    /// ```
    pub fn abort_all(&self) {
        self.inner.abort_all();
    }

    /// Aborts every member and returns once every member's future has been dropped.
    ///
    /// # Examples
    ///
    /// See [`TaskGroup::len`].
    /// ```
    /// crew::block_on(crew::task::TaskGroup::new().shutdown());
    /// ```
    pub async fn shutdown(&self) {
        self.inner.abort_all();
        self.inner.wait_until_none_live().await;
    }
}

impl Default for TaskGroup {
    fn default() -> Self {
        TaskGroup::new()
    }
}

/// Dropping the group aborts every member.
impl Drop for TaskGroup {
    fn drop(&mut self) {
        self.inner.abort_all();
    }
}

impl fmt::Debug for TaskGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskGroup").field("id", &self.inner.label.id).field("len", &self.len()).finish()
    }
}

/// The members' map's hasher: task ids are unique, counted up from 1, so a multiplication
/// spreads them well enough, at a fraction of SipHash's cost.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The output of a finished task's handle, which its first poll returns.
fn now_or_never<T, P: Policy>(mut handle: JoinHandle<T, P>) -> P::Output<T> {
    match Pin::new(&mut handle).poll(&mut Context::from_waker(&noop_waker())) {
        Poll::Ready(output) => output,
        Poll::Pending => unreachable!("a finished task's handle is ready"),
    }
}
