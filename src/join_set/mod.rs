//! [`JoinSet`]: a group of tasks joined in the order they finish; and [`TaskGroup`], the same
//! group with no outputs kept, for long-lived sets of connection tasks.
//!
//! Invariants:
//! - A member's spawn files its handle in the set (a lock-free push) before the member can
//!   first run; its [`OnTaskEnd`](crate::identity::OnTaskEnd) pushes its id to the set's ended queue when its future is
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
//! - `join_next`, `join_next_with_id` (so `join_all`) and `TaskGroup::wait` run under the running
//!   task's cooperative budget (`identity/current.rs`): a set of ended members returns `Pending`
//!   once the budget is spent.
//! - `&self` everywhere: the set is `Send + Sync`, so tasks may spawn into it (behind an `Arc`)
//!   while another joins it.
//! - Bulk operations (`abort_all`, `shutdown`, `detach_all`, the drop) take their members in
//!   spawn order (task ids, counted up), never the members' map's order, which follows the ids'
//!   values: a seeded pool's replay must not depend on how many tasks the process spawned before.

//!
//! Files: `inner.rs` (the shared state and the members' end hook), `group.rs` ([`TaskGroup`]);
//! this file is [`JoinSet`].

mod group;
mod inner;

use std::fmt;
use std::future::{poll_fn, Future};
use std::sync::Arc;

use crate::handle::AbortHandle;
use crate::identity::current::budgeted;
use crate::identity::info::TaskName;
use crate::identity::TaskId;
use crate::policy::{Policy, Propagate};
use crate::pool::Pool;
use crate::target::Target;

pub use group::TaskGroup;
use inner::Inner;

/// A group of tasks whose outputs are taken in the order the tasks finish.
///
/// Spawn into it from anywhere (`spawn` takes `&self`; the set is `Send + Sync`), take outputs
/// with [`join_next`](JoinSet::join_next) as members finish, cancel them all with
/// [`abort_all`](JoinSet::abort_all) or [`shutdown`](JoinSet::shutdown). Dropping the set cancels
/// every member. The policy `P` decides what a member's end gives, as for a
/// [`JoinHandle`](crate::JoinHandle): `JoinSet::<T, Catch>::with_policy()` makes a set whose
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

    /// The set's id, which [`TaskInfo::set_id`](crate::task::TaskInfo::set_id) gives for its members.
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

    /// Runs the blocking closure `f` on crew's blocking pool as a member of the set, as
    /// [`spawn_blocking`](crate::spawn_blocking) does (tokio's `JoinSet::spawn_blocking`).
    /// Aborting it before it starts drops it unrun; once running, it runs to its end (a thread
    /// cannot be interrupted), and its output is dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::new();
    /// set.spawn_blocking(|| std::fs::read("Cargo.toml").map(|bytes| bytes.len()).unwrap());
    /// assert!(crew::block_on(set.join_next()).unwrap() > 0);
    /// ```
    #[track_caller]
    #[cfg(not(loom))] // the blocking pool is left out of loom builds
    pub fn spawn_blocking<F>(&self, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
    {
        self.inner.spawn_blocking(f)
    }

    /// Spawns the `!Send` future `future` into the set as a local task of this thread, as
    /// [`spawn_local`](crate::spawn_local) does (tokio's `JoinSet::spawn_local`): it runs only
    /// on this thread; the set is joined from anywhere.
    ///
    /// # Panics
    ///
    /// Where [`crew::spawn_local`](crate::spawn_local) panics: outside a crew worker's task and
    /// outside `block_on`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::rc::Rc;
    ///
    /// let total = crew::block_on(async {
    ///     let set = crew::task::JoinSet::new();
    ///     for n in 1..=3u32 {
    ///         let shared = Rc::new(n); // !Send
    ///         set.spawn_local(async move { *shared * 10 });
    ///     }
    ///     set.join_all().await.into_iter().sum::<u32>()
    /// });
    /// assert_eq!(total, 60);
    /// ```
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
    {
        self.inner.spawn_local(future)
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
    /// `Catch`), as a [`JoinHandle`](crate::JoinHandle) does.
    ///
    /// # Panics
    ///
    /// Under `Propagate`, resumes a member's panic; under `Ignore`, panics with
    /// [`IGNORED_PANIC_MESSAGE`](crate::IGNORED_PANIC_MESSAGE) for a member that panicked.
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
        poll_fn(|cx| budgeted(cx, |cx| self.inner.poll_next(cx, &mut listener))).await.map(|(_, output)| output)
    }

    /// As [`join_next`](JoinSet::join_next), with the id of the member that ended (its
    /// [`AbortHandle::id`]), as tokio's `join_next_with_id`. Under [`Catch`](crate::Catch) the
    /// error also carries it ([`JoinError::id`](crate::JoinError::id)).
    ///
    /// # Panics
    ///
    /// As [`join_next`](JoinSet::join_next).
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::new();
    /// let id = set.spawn(async { "one" }).id();
    /// assert_eq!(crew::block_on(set.join_next_with_id()), Some((id, "one")));
    /// ```
    pub async fn join_next_with_id(&self) -> Option<(TaskId, P::Output<T>)> {
        let mut listener = None;
        poll_fn(|cx| budgeted(cx, |cx| self.inner.poll_next(cx, &mut listener))).await
    }

    /// Waits for every member and returns their outputs in the order they ended (not the order
    /// they were spawned), as tokio's `join_all`. Aborted members are skipped or given as `Err`
    /// as [`join_next`](JoinSet::join_next) says.
    ///
    /// # Panics
    ///
    /// Under `Propagate`, resumes the first panic of a member it meets, and under `Ignore`
    /// panics for a member that panicked; the set is dropped as the panic unwinds, which
    /// cancels the members left (tokio's rule). Under `Catch`, never: every end is in the
    /// vector.
    ///
    /// # Examples
    ///
    /// ```
    /// let set: crew::task::JoinSet<u32> = (1..=3u32).map(|n| async move { n * n }).collect();
    /// let mut squares = crew::block_on(set.join_all());
    /// squares.sort();
    /// assert_eq!(squares, [1, 4, 9]);
    /// ```
    pub async fn join_all(self) -> Vec<P::Output<T>> {
        let mut outputs = Vec::with_capacity(self.len());
        while let Some(output) = self.join_next().await {
            outputs.push(output);
        }
        outputs
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
        self.inner.try_next().map(|(_, output)| output)
    }

    /// As [`try_join_next`](JoinSet::try_join_next), with the member's id.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::new();
    /// let id = set.spawn(async { 2 }).id();
    /// let ended = loop {
    ///     if let Some(ended) = set.try_join_next_with_id() { break ended; }
    ///     std::thread::yield_now();
    /// };
    /// assert_eq!(ended, (id, 2));
    /// ```
    pub fn try_join_next_with_id(&self) -> Option<(TaskId, P::Output<T>)> {
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
        self.inner.member_count()
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
/// A set of the futures spawned from an iterator, each as [`spawn`](JoinSet::spawn) does (onto
/// the current pool), as tokio's `JoinSet` collects.
///
/// # Examples
///
/// ```
/// use crew::task::JoinSet;
///
/// let set: JoinSet<_, crew::Catch> = (0..4).map(|n| async move { n + 1 }).collect();
/// let total: i32 = crew::block_on(set.join_all()).into_iter().map(Result::unwrap).sum();
/// assert_eq!(total, 10);
/// ```
impl<T, P, F> FromIterator<F> for JoinSet<T, P>
where
    T: Send + 'static,
    P: Policy,
    F: Future<Output = T> + Send + 'static,
{
    #[track_caller]
    fn from_iter<I: IntoIterator<Item = F>>(futures: I) -> JoinSet<T, P> {
        let mut set = JoinSet::with_policy();
        set.extend(futures);
        set
    }
}

/// Spawns each future into the set, as [`spawn`](JoinSet::spawn) does.
///
/// # Examples
///
/// ```
/// let mut set = crew::task::JoinSet::new();
/// set.extend((0..3).map(|n| async move { n }));
/// assert_eq!(set.len(), 3);
/// let mut all = crew::block_on(set.join_all());
/// all.sort();
/// assert_eq!(all, [0, 1, 2]);
/// ```
impl<T, P, F> Extend<F> for JoinSet<T, P>
where
    T: Send + 'static,
    P: Policy,
    F: Future<Output = T> + Send + 'static,
{
    #[track_caller]
    fn extend<I: IntoIterator<Item = F>>(&mut self, futures: I) {
        for future in futures {
            self.spawn(future);
        }
    }
}

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
            .field("len", &self.inner.member_count())
            .finish()
    }
}
