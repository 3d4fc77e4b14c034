//! [`TaskGroup`]: a set whose outputs are dropped as members end.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::handle::AbortHandle;
use crate::identity::info::TaskName;
use crate::policy::Propagate;
use crate::pool::Pool;
use crate::target::Target;

use super::inner::Inner;

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
    pub(super) inner: Arc<Inner<(), Propagate>>,
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

    /// The group's id, which [`TaskInfo::set_id`](crate::task::TaskInfo::set_id) gives for its members.
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
        // Under the running task's budget (`identity/current.rs`): a wait that ends at once
        // spends a unit, and yields once none is left.
        std::future::poll_fn(|cx| crate::identity::current::budgeted(cx, |_| std::task::Poll::Ready(()))).await;
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
