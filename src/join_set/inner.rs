//! What a set and its members' end hooks share: the members, the filed and ended queues, the
//! unjoined members, the waiters' event (the invariants are `mod.rs`'s).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::Location;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use crossbeam_queue::SegQueue;
use crossbeam_utils::CachePadded;
use event_listener::{Event, EventListener};

use crate::handle::JoinHandle;
use crate::handle::{noop_waker, Abort, AbortHandle};
use crate::identity::info::{SetLabel, TaskName};
use crate::identity::{OnTaskEnd, TaskId, TaskInfo, TaskNameRef};
use crate::policy::{Outcome, Policy};
use crate::spawning::{LocalHandles, Spawnable};
use crate::target::Target;

/// What a set and its members' end hooks share.
pub(super) struct Inner<T, P: Policy> {
    pub(super) label: SetLabel,
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
    /// Its name, once aborted (its handle is gone), for a `JoinError`.
    aborted_name: TaskNameRef,
    /// Its id was taken from `ended` into `ready`.
    ended: bool,
    aborted: bool,
}

/// Set ids: counted from 1, process-wide.
static NEXT_SET: AtomicU64 = AtomicU64::new(1);

impl<T, P: Policy> Inner<T, P> {
    pub(super) fn new(name: Option<String>, discard: bool) -> Arc<Inner<T, P>> {
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

    /// How many members the set holds (spawned, not yet joined, aborted away or detached).
    pub(super) fn member_count(&self) -> usize {
        self.state().members.len()
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
            state.members.insert(
                id,
                Member { handle: Some(handle), aborted_name: TaskNameRef::default(), ended: false, aborted: false },
            );
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
    pub(super) fn take_all(&self, keep: bool) -> Vec<JoinHandle<T, P>> {
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
        let mut members: Vec<(TaskId, Member<T, P>)> = state.members.drain().collect();
        // In spawn order, not the map's: what the drops wake is woken in an order that does
        // not depend on task ids' values (a seeded pool's replay, `scheduler/cores/seeded.rs`).
        members.sort_unstable_by_key(|(id, _)| *id);
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
    pub(super) fn notify_waiters(&self) {
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
                    let handle = member.handle.take();
                    member.aborted_name = handle.as_ref().map(JoinHandle::name_ref).unwrap_or_default();
                    handle
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
    /// A new member's identity (named `name`, spawned at `location`) and the end it tells,
    /// counted among the set's spawns before it can end (see `ends`).
    fn new_member(
        self: &Arc<Self>,
        name: Option<TaskName>,
        location: &'static Location<'static>,
    ) -> (TaskInfo, MemberEnd<T, P>) {
        let info = TaskInfo::new(name, location);
        // SeqCst: before the member can end (see `ends`).
        self.spawns.fetch_add(1, Ordering::SeqCst);
        let end = MemberEnd { set: self.clone(), id: info.id(), told: false };
        (info, end)
    }

    /// Files member `id`'s handle: what each spawn path calls before the member can run, and
    /// before a refused spawn's end is told, so before its end.
    fn file(&self, id: TaskId) -> impl FnOnce(JoinHandle<T, P>) + '_ {
        move |handle| self.spawned.push((id, handle))
    }

    /// Spawns `future` named `name` onto `target` as a member; its abort handle.
    #[track_caller]
    pub(super) fn spawn<F>(self: &Arc<Self>, target: Target<'_>, name: Option<TaskName>, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
    {
        let (info, end) = self.new_member(name, Location::caller());
        let id = info.id();
        crate::target::spawn_told(target, info, Spawnable(future), end, self.file(id));
        AbortHandle::new(self.clone(), id)
    }

    /// Spawns the blocking closure `f` as a member on the process's blocking pool; its abort
    /// handle (an abort before the job starts drops it unrun, as for a `JoinHandle`).
    #[track_caller]
    #[cfg(not(loom))]
    pub(super) fn spawn_blocking<F>(self: &Arc<Self>, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        let (info, end) = self.new_member(None, Location::caller());
        let id = info.id();
        crate::blocking::spawn_told(info, f, end, self.file(id));
        AbortHandle::new(self.clone(), id)
    }

    /// Spawns `future` as a member and a local task of this thread (where `spawn_local` works);
    /// its abort handle.
    #[track_caller]
    pub(super) fn spawn_local<F>(self: &Arc<Self>, future: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        let (info, end) = self.new_member(None, Location::caller());
        let id = info.id();
        crate::scheduler::spawn_local_told::<LocalHandles<P>, F, _, _>(info, future, end, self.file(id));
        AbortHandle::new(self.clone(), id)
    }

    /// `join_next`'s poll: the next ended member's output as the policy gives it (aborted
    /// members skipped under `Propagate` and `Ignore`), `Ready(None)` once the set is empty.
    /// Cancel-safe: a member is taken out only in the poll that returns its output. `listener`
    /// is the caller's registration with `changed`, kept across polls.
    pub(super) fn poll_next(
        &self,
        cx: &mut Context<'_>,
        listener: &mut Option<EventListener>,
    ) -> Poll<Option<(TaskId, P::Output<T>)>> {
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
                return Poll::Ready(Some((id, P::complete(Outcome::Aborted, member.aborted_name.label(id)))));
            };
            // Its future is gone; async-task may still be storing its output: then the handle
            // registers `cx`, and it goes back first in line.
            match handle.poll_outcome(cx) {
                // Aborted through its own abort handle's path (the set's), or dropped by the pool.
                Poll::Ready(Outcome::Aborted) if P::SKIP_ABORTED => continue,
                Poll::Ready(ended) => return Poll::Ready(Some((id, P::complete(ended, handle.label())))),
                Poll::Pending => {
                    let mut state = self.state();
                    state.members.insert(
                        id,
                        Member {
                            handle: Some(handle),
                            aborted_name: TaskNameRef::default(),
                            ended: true,
                            aborted: false,
                        },
                    );
                    state.ready.push_front(id);
                    return Poll::Pending;
                }
            }
        }
    }

    /// `try_join_next`: as [`poll_next`](Inner::poll_next), taking only a member whose output
    /// is already stored, and registering no waker.
    pub(super) fn try_next(&self) -> Option<(TaskId, P::Output<T>)> {
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
                Some(handle) => return Some((id, now_or_never(handle))),
                None if P::SKIP_ABORTED => continue,
                None => return Some((id, P::complete(Outcome::Aborted, member.aborted_name.label(id)))),
            }
        }
    }

    /// Aborts every member; their handles are dropped outside the lock, in spawn order (as
    /// in `take_all`).
    pub(super) fn abort_all(&self) {
        let mut handles: Vec<(TaskId, JoinHandle<T, P>)> = {
            let mut state = self.state_with_ends();
            state
                .members
                .iter_mut()
                .filter(|(_, member)| !member.ended)
                .filter_map(|(id, member)| {
                    member.aborted = true;
                    let handle = member.handle.take()?;
                    member.aborted_name = handle.name_ref();
                    Some((*id, handle))
                })
                .collect()
        };
        handles.sort_unstable_by_key(|(id, _)| *id);
        for (_, handle) in handles {
            drop(handle);
        }
    }

    /// Members whose future is not yet dropped. `ends` first: it never passes `spawns`, so
    /// `spawns` read after it is at least as large, and equal only if at that moment none was
    /// live.
    pub(super) fn live(&self) -> usize {
        let ends = self.ends.load(Ordering::SeqCst);
        self.spawns.load(Ordering::SeqCst) - ends
    }

    /// Waits until no member's future is left.
    pub(super) async fn wait_until_none_live(&self) {
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
