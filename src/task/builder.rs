//! [`Builder`]: spawning a task with a name and a panic policy.
//!
//! Invariants: a builder only gathers what goes into the task's [`TaskInfo`](crate::task::TaskInfo) and picks the
//! policy type; spawning goes through the same functions as `crew::spawn` and `Pool::spawn`, so a
//! task spawned by a builder is scheduled exactly like any other.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use crate::handle::AbortHandle;
use crate::handle::JoinHandle;
use crate::identity::info::TaskName;
use crate::join_set::{JoinSet, TaskGroup};
use crate::policy::{Policy, Propagate};
use crate::pool::Pool;
use crate::target::Target;

/// Spawns a task with a name (shown in slow-poll reports and [`TaskInfo`](crate::task::TaskInfo)) and a panic policy.
///
/// # Examples
///
/// ```
/// let handle = crew::task::Builder::new().name("fetch").spawn(async { 7 });
/// assert_eq!(crew::block_on(handle), 7);
///
/// // On a private pool, with the `Catch` policy.
/// let pool = crew::Pool::builder().workers(1).build().unwrap();
/// let handle = crew::task::Builder::new().name("risky").policy(crew::Catch).spawn_on(&pool, async { panic!("no") });
/// assert_eq!(crew::block_on(handle).unwrap_err().panic_message(), Some("no"));
/// ```
pub struct Builder<P: Policy = Propagate> {
    name: Option<TaskName>,
    policy: PhantomData<fn() -> P>,
}

impl Builder {
    /// A builder for an unnamed task with the default [`Propagate`] policy.
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::task::Builder::new().spawn(async { 1 });
    /// assert_eq!(crew::block_on(handle), 1);
    /// ```
    pub fn new() -> Builder {
        Builder { name: None, policy: PhantomData }
    }
}

impl Default for Builder {
    fn default() -> Builder {
        Builder::new()
    }
}

impl<P: Policy> Builder<P> {
    /// Names the task: a `&'static str` (kept as it is) or a `String` (moved in). A named task
    /// costs one allocation besides the task's own, for its name's out-of-line part.
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::task::Builder::new().name(format!("conn-{}", 3)).spawn(async {});
    /// crew::block_on(handle);
    /// let handle = crew::task::Builder::new().name("flush").spawn(async {});
    /// crew::block_on(handle);
    /// ```
    pub fn name(mut self, name: impl Into<Cow<'static, str>>) -> Builder<P> {
        self.name = Some(name.into());
        self
    }

    /// Sets the panic policy: [`Propagate`] (the default), [`Catch`](crate::Catch) or
    /// [`Ignore`](crate::Ignore).
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::task::Builder::new().policy(crew::Catch).spawn(async { panic!("oops") });
    /// assert!(crew::block_on(handle).unwrap_err().is_panic());
    /// ```
    pub fn policy<Q: Policy>(self, policy: Q) -> Builder<Q> {
        let _ = policy;
        Builder { name: self.name, policy: PhantomData }
    }

    /// Spawns `future` on the current pool, as [`crew::spawn`](crate::spawn) does (the global
    /// pool, except on a private pool's threads and inside [`Pool::block_on`](crate::Pool::block_on)).
    ///
    /// # Panics
    ///
    /// As [`crew::spawn`](crate::spawn): if the global pool cannot start.
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::task::Builder::new().name("answer").spawn(async { 42 });
    /// assert_eq!(crew::block_on(handle), 42);
    /// ```
    #[track_caller]
    pub fn spawn<F>(self, future: F) -> JoinHandle<F::Output, P>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        crate::target::spawn_named(Target::Current, self.name, future)
    }

    /// Spawns the `!Send` `future` as a local task of this thread, as
    /// [`crew::spawn_local`](crate::spawn_local) does, named as this builder says.
    ///
    /// # Panics
    ///
    /// As [`crew::spawn_local`](crate::spawn_local): where no local tasks run.
    ///
    /// # Examples
    ///
    /// ```
    /// let value = crew::block_on(async {
    ///     let rc = std::rc::Rc::new(3);
    ///     crew::task::Builder::new().name("local").spawn_local(async move { *rc }).await
    /// });
    /// assert_eq!(value, 3);
    /// ```
    #[track_caller]
    pub fn spawn_local<F>(self, future: F) -> JoinHandle<F::Output, P>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        crate::local::spawn_local_as(self.name, std::panic::Location::caller(), future)
    }

    /// Spawns `future` on `pool`, as [`Pool::spawn`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let handle = crew::task::Builder::new().name("on-pool").spawn_on(&pool, async { 5 });
    /// assert_eq!(crew::block_on(handle), 5);
    /// ```
    #[track_caller]
    pub fn spawn_on<F>(self, pool: &Pool, future: F) -> JoinHandle<F::Output, P>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        crate::target::spawn_named(Target::Private(pool.shared_arc()), self.name, future)
    }
}

impl<P: Policy> Builder<P> {
    /// Spawns `future` into `set` on the current pool, as [`JoinSet::spawn`] does, named as this
    /// builder says. The set's policy is the set's, not the builder's.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::new();
    /// let member = crew::task::Builder::new().name("backend-1").spawn_in(&set, async { 1 });
    /// assert_eq!(crew::block_on(set.join_next()), Some(1));
    /// assert!(member.is_finished());
    /// ```
    #[track_caller]
    pub fn spawn_in<T, Q, F>(self, set: &JoinSet<T, Q>, future: F) -> AbortHandle
    where
        T: Send + 'static,
        Q: Policy,
        F: Future<Output = T> + Send + 'static,
    {
        set.spawn_named(Target::Current, self.name, future)
    }

    /// Spawns `future` into `group` on the current pool, as [`TaskGroup::spawn`] does, named as
    /// this builder says.
    ///
    /// # Examples
    ///
    /// ```
    /// let group = crew::task::TaskGroup::named("connections");
    /// crew::task::Builder::new().name("connection 1").spawn_in_group(&group, async {});
    /// crew::block_on(group.wait());
    /// ```
    #[track_caller]
    pub fn spawn_in_group<F>(self, group: &TaskGroup, future: F) -> AbortHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        group.spawn_named(Target::Current, self.name, future)
    }
}

impl<P: Policy> fmt::Debug for Builder<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder").field("name", &self.name.as_deref()).finish_non_exhaustive()
    }
}
