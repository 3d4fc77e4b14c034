//! What identifies a task: its [`TaskId`], an optional name, and where it was spawned.
//!
//! Invariants:
//! - A task's [`TaskInfo`] is async-task's metadata: it lives in the task's single allocation,
//!   written once at spawn and never changed, readable from its `Runnable` and `JoinHandle`.
//! - Ids are unique within the process and never reused. Each thread takes them from its own
//!   block of [`ID_BLOCK`] ids, reserving a new block from one global counter when it runs out,
//!   so spawning threads do not share a cache line per spawn.
//! - The location is the caller's of the public spawn function (`#[track_caller]` all the way
//!   down), never a line inside crew.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::num::NonZeroU64;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::record::TaskRecord;
use crate::clock::ClockRef;
use crate::escape::Escaped;

/// How many ids a thread reserves at a time.
const ID_BLOCK: u64 = 1024;

/// A task's id: unique among all tasks of the process (every pool and the blocking pool), never
/// reused.
///
/// # Examples
///
/// ```
/// let a = crew::spawn(async {});
/// let b = crew::spawn(async {});
/// assert_ne!(a.id(), b.id());
/// println!("spawned task {}", a.id()); // "spawned task 17", say
/// # crew::block_on(a); crew::block_on(b);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(NonZeroU64);

impl TaskId {
    /// The next id of this thread's block: a fresh id, for a task or a `block_on` span.
    #[inline]
    pub(crate) fn next() -> TaskId {
        // Not under loom's model: a plain std atomic, outside every protocol crew checks.
        static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);
        thread_local! {
            static BLOCK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
        }
        let reserve = || {
            // Relaxed: only uniqueness matters, which the read-modify-write gives in any order.
            let start = NEXT_BLOCK.fetch_add(ID_BLOCK, Ordering::Relaxed);
            (start, start + ID_BLOCK)
        };
        let id = BLOCK
            .try_with(|block| {
                let (mut next, mut end) = block.get();
                if next == end {
                    (next, end) = reserve();
                }
                block.set((next + 1, end));
                next
            })
            // A spawn from a thread-local destructor: an id of its own block.
            .unwrap_or_else(|_| reserve().0);
        TaskId(NonZeroU64::new(id).expect("task ids start at 1 and a u64 does not wrap"))
    }

    /// The id `id`, as [`TaskId::as_u64`] gave it.
    pub(crate) fn from_u64(id: u64) -> TaskId {
        TaskId(NonZeroU64::new(id).expect("a task id is never 0"))
    }

    /// The id as a number.
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn(async {});
    /// assert!(handle.id().as_u64() > 0);
    /// # crew::block_on(handle);
    /// ```
    pub fn as_u64(self) -> u64 {
        self.0.get()
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A task's identity: its id, its name if it was given one ([`Builder::name`]), and the source
/// location it was spawned from. Slow-poll reports carry it ([`SlowPoll::task`]).
///
/// [`Builder::name`]: crate::task::Builder::name
/// [`SlowPoll::task`]: crate::SlowPoll::task
///
/// # Examples
///
/// ```
/// use std::sync::{mpsc, Mutex};
/// use std::time::Duration;
///
/// let (tx, rx) = mpsc::channel();
/// let tx = Mutex::new(tx);
/// let pool = crew::Pool::builder()
///     .workers(1)
///     .slow_poll_threshold(Duration::from_millis(1))
///     .on_slow_poll(move |report| drop(tx.lock().unwrap().send(report.task().cloned())))
///     .build()
///     .unwrap();
/// // One slow poll: it blocks its worker until this thread has the report.
/// let (release, released) = mpsc::channel::<()>();
/// let slow = async move { released.recv().unwrap() };
/// let builder = crew::task::Builder::new().name("fetch");
/// let (handle, line) = (builder.spawn_on(&pool, slow), line!());
/// let info = rx.recv().unwrap().expect("the hook records each poll's task");
/// release.send(()).unwrap();
/// assert_eq!(info.name(), Some("fetch"));
/// assert_eq!((info.location().file(), info.location().line()), (file!(), line));
/// assert_eq!(info.id(), handle.id());
/// crew::block_on(handle);
/// ```
#[derive(Clone)]
pub struct TaskInfo {
    id: TaskId,
    /// What only some tasks have: a name, a record for the task dump. One thin pointer, so that
    /// the identity stays 24 bytes in every task's allocation.
    extra: Option<Arc<Extra>>,
    location: &'static Location<'static>,
}

// The metadata's layout (`identity/mod.rs`, "The metadata"): each part's size, checked when the
// crate compiles. The last line is the 24 bytes that BENCHMARKS.md names.
const _: () = {
    use std::mem::size_of;
    assert!(size_of::<TaskId>() == 8);
    assert!(size_of::<Option<Arc<Extra>>>() == size_of::<usize>());
    assert!(size_of::<&'static Location<'static>>() == size_of::<usize>());
    assert!(size_of::<TaskInfo>() == size_of::<TaskId>() + 2 * size_of::<usize>());
    #[cfg(target_pointer_width = "64")]
    assert!(size_of::<TaskInfo>() == 24);
};

/// The part of a task's identity that only some tasks have.
/// A task's name: a `&'static str` is kept as it is (no allocation), a `String` is moved in.
pub(crate) type TaskName = Cow<'static, str>;

/// What a task whose end waits for its `Runnable` to be gone carries in its identity
/// (`TaskInfo`'s out-of-line part): told after each run and each drop of the task's `Runnable`.
pub(crate) trait DeferredEnd: Send + Sync + 'static {
    /// A `Runnable` of the task was run or dropped, and is gone: if that was the last one (the
    /// task's future was dropped meanwhile), the end may now be delivered.
    fn runnable_gone(&self);
}

struct Extra {
    name: Option<TaskName>,
    record: Option<TaskRecord>,
    /// The set the task was spawned into, for the dump and the reports.
    set: Option<SetLabel>,
    /// A scoped task's end, told once no `Runnable` of the task exists (`scheduler/cores/task.rs`).
    deferred: Option<Arc<dyn DeferredEnd>>,
    /// A paused pool's task's clock and, in a seeded pool, its spawn ordinal (`clock.rs`,
    /// `scheduler/cores/seeded.rs`): one word here, so that other tasks pay 8 bytes for it.
    paused: Option<Box<Paused>>,
}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extra")
            .field("name", &self.name)
            .field("record", &self.record)
            .field("set", &self.set)
            .field("deferred", &self.deferred.is_some())
            .field("paused", &self.paused)
            .finish()
    }
}

/// A paused pool's task's part of its identity (see `Extra::paused`).
#[derive(Debug, Clone)]
struct Paused {
    clock: ClockRef,
    ordinal: Option<u64>,
}

/// Which [`JoinSet`](crate::task::JoinSet) a task belongs to: its id, and its name if given.
#[derive(Debug, Clone)]
pub(crate) struct SetLabel {
    pub(crate) id: u64,
    pub(crate) name: Option<Arc<str>>,
}

impl fmt::Display for SetLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "set {}", self.id)?;
        if let Some(name) = &self.name {
            write!(f, " \"{}\"", Escaped(name))?;
        }
        Ok(())
    }
}

impl Extra {
    /// A named task's: out of the spawn path's line, which most tasks take unnamed.
    #[cold]
    #[inline(never)]
    fn named(name: TaskName) -> Arc<Extra> {
        Arc::new(Extra { name: Some(name), record: None, set: None, deferred: None, paused: None })
    }

    /// This part's fields, taken out (moved if this was the last reference, else copied; a
    /// record is never copied: it belongs to one task), for a new part with one field changed.
    fn into_parts(extra: Option<Arc<Extra>>) -> Extra {
        match extra.map(Arc::try_unwrap) {
            Some(Ok(extra)) => extra,
            Some(Err(shared)) => Extra {
                name: shared.name.clone(),
                record: None,
                set: shared.set.clone(),
                deferred: shared.deferred.clone(),
                paused: shared.paused.clone(),
            },
            None => Extra { name: None, record: None, set: None, deferred: None, paused: None },
        }
    }
}

impl TaskInfo {
    /// A new task's identity: a fresh id.
    #[inline]
    pub(crate) fn new(name: Option<TaskName>, location: &'static Location<'static>) -> TaskInfo {
        let extra = name.map(Extra::named);
        TaskInfo { id: TaskId::next(), extra, location }
    }

    /// This identity with a fresh record for the task dump (see `record.rs`).
    #[cold]
    #[inline(never)]
    pub(crate) fn with_record(self) -> TaskInfo {
        let extra = Extra { record: Some(TaskRecord::new()), ..Extra::into_parts(self.extra) };
        TaskInfo { id: self.id, extra: Some(Arc::new(extra)), location: self.location }
    }

    /// This identity, labelled as a member of the set `set`.
    #[cold]
    #[inline(never)]
    pub(crate) fn in_set(self, set: SetLabel) -> TaskInfo {
        let extra = Extra { set: Some(set), ..Extra::into_parts(self.extra) };
        TaskInfo { id: self.id, extra: Some(Arc::new(extra)), location: self.location }
    }

    /// This identity, whose task tells `end` after each run and drop of its `Runnable`
    /// (`scheduler/cores/task.rs`): a scoped task's.
    #[cold]
    #[inline(never)]
    pub(crate) fn with_deferred_end(self, end: Arc<dyn DeferredEnd>) -> TaskInfo {
        let extra = Extra { deferred: Some(end), ..Extra::into_parts(self.extra) };
        TaskInfo { id: self.id, extra: Some(Arc::new(extra)), location: self.location }
    }

    /// This identity, of a task of the paused pool whose clock is `clock`, numbered `ordinal`
    /// among its spawns if the pool is seeded.
    #[cold]
    #[inline(never)]
    pub(crate) fn with_paused(self, clock: ClockRef, ordinal: Option<u64>) -> TaskInfo {
        let extra = Extra { paused: Some(Box::new(Paused { clock, ordinal })), ..Extra::into_parts(self.extra) };
        TaskInfo { id: self.id, extra: Some(Arc::new(extra)), location: self.location }
    }

    /// The clock of the paused pool the task belongs to, if any (`clock.rs`).
    #[inline(always)]
    pub(crate) fn paused_clock(&self) -> Option<&ClockRef> {
        Some(&self.extra.as_deref()?.paused.as_deref()?.clock)
    }

    /// The task's spawn ordinal in its seeded pool, if it has one.
    pub(crate) fn ordinal(&self) -> Option<u64> {
        self.extra.as_deref()?.paused.as_deref()?.ordinal
    }

    /// The task's deferred end, if it has one (see `scheduler/cores/task.rs`).
    #[inline(always)]
    pub(crate) fn deferred_end(&self) -> Option<&Arc<dyn DeferredEnd>> {
        self.extra.as_deref()?.deferred.as_ref()
    }

    /// The set the task was spawned into, if any.
    pub(crate) fn set(&self) -> Option<&SetLabel> {
        self.extra.as_deref()?.set.as_ref()
    }

    /// The task's record for the task dump, if its pool keeps one.
    #[inline]
    pub(crate) fn record(&self) -> Option<&TaskRecord> {
        self.extra.as_deref()?.record.as_ref()
    }

    /// The identity of a task that will never run (a spawn refused by a pool shutting down):
    /// `id` and `location` of the task it stands for, without its name.
    pub(crate) fn unnamed(id: TaskId, location: &'static Location<'static>) -> TaskInfo {
        TaskInfo { id, extra: None, location }
    }

    /// The task's id.
    ///
    /// # Examples
    ///
    /// ```
    /// fn log(task: &crew::task::TaskInfo) {
    ///     println!("task {} is slow", task.id());
    /// }
    /// ```
    pub fn id(&self) -> TaskId {
        self.id
    }

    /// The id of the [`JoinSet`](crate::task::JoinSet) (or [`TaskGroup`](crate::task::TaskGroup))
    /// the task was spawned into, if any: what [`JoinSet::id`](crate::task::JoinSet::id) gives.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = crew::task::JoinSet::<()>::named("fanout");
    /// set.spawn(std::future::pending());
    /// # let _ = set;
    /// ```
    pub fn set_id(&self) -> Option<u64> {
        self.set().map(|set| set.id)
    }

    /// The name of the set the task was spawned into, if it has one.
    ///
    /// # Examples
    ///
    /// See [`TaskInfo::set_id`].
    /// ```
    /// # let _ = crew::task::TaskInfo::set_name;
    /// ```
    pub fn set_name(&self) -> Option<&str> {
        self.set()?.name.as_deref()
    }

    /// The task's id and name, as a `JoinError` keeps them.
    pub(crate) fn label(&self) -> TaskLabel {
        TaskLabel { id: self.id, named: self.extra.as_ref().filter(|extra| extra.name.is_some()).cloned() }
    }

    /// The task's name, if it was given one.
    ///
    /// # Examples
    ///
    /// ```
    /// fn label(task: &crew::task::TaskInfo) -> &str {
    ///     task.name().unwrap_or("(unnamed)")
    /// }
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.extra.as_deref()?.name.as_deref()
    }

    /// Where the task was spawned: the caller of `spawn` (or of the task builder's `spawn*`).
    ///
    /// # Examples
    ///
    /// ```
    /// fn origin(task: &crew::task::TaskInfo) -> String {
    ///     format!("{}:{}", task.location().file(), task.location().line())
    /// }
    /// ```
    pub fn location(&self) -> &'static Location<'static> {
        self.location
    }
}

/// A task's id and name, as a [`JoinError`](crate::JoinError) keeps them: the name shares the
/// task's out-of-line identity (one pointer, none for an unnamed task).
///
/// Public only so that the sealed `Policy` trait can name it; not reachable by users.
#[allow(unreachable_pub)]
#[derive(Clone)]
pub struct TaskLabel {
    id: TaskId,
    /// Only a named task's part: a label does not keep a record or a set alive.
    named: Option<Arc<Extra>>,
}

impl TaskLabel {
    /// The task's id.
    pub(crate) fn id(&self) -> TaskId {
        self.id
    }

    /// The task's name, if it was given one.
    pub(crate) fn name(&self) -> Option<&str> {
        self.named.as_deref()?.name.as_deref()
    }

    /// The name's part alone, for a holder that keeps the id elsewhere (a `JoinHandle`).
    pub(crate) fn into_name(self) -> TaskNameRef {
        TaskNameRef(self.named)
    }
}

/// A named task's name, kept as one pointer (see [`TaskLabel`]); `None` for an unnamed task.
#[derive(Clone, Default)]
pub(crate) struct TaskNameRef(Option<Arc<Extra>>);

impl TaskNameRef {
    /// The label of the task `id` whose name this is.
    pub(crate) fn label(&self, id: TaskId) -> TaskLabel {
        TaskLabel { id, named: self.0.clone() }
    }
}

impl fmt::Debug for TaskLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLabel").field("id", &self.id.as_u64()).field("name", &self.name()).finish()
    }
}

/// `task 17 "fetch"`, or `task 17` when unnamed.
impl fmt::Display for TaskLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task {}", self.id)?;
        if let Some(name) = self.name() {
            write!(f, " \"{}\"", Escaped(name))?;
        }
        Ok(())
    }
}

impl fmt::Debug for TaskInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskInfo")
            .field("id", &self.id.as_u64())
            .field("name", &self.name())
            .field("location", &format_args!("{}", self.location))
            .finish()
    }
}

/// `task 17 "fetch" spawned at src/main.rs:12:5`, or `task 17 spawned at ...` when unnamed.
impl fmt::Display for TaskInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task {}", self.id)?;
        if let Some(name) = self.name() {
            write!(f, " \"{}\"", Escaped(name))?;
        }
        if let Some(set) = self.set() {
            write!(f, " in {set}")?;
        }
        write!(f, " spawned at {}", self.location)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_across_threads_and_blocks() {
        let mut ids: Vec<u64> = (0..4)
            .map(|_| std::thread::spawn(|| (0..3 * ID_BLOCK).map(|_| TaskId::next().as_u64()).collect::<Vec<_>>()))
            .flat_map(|thread| thread.join().unwrap())
            .collect();
        let len = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), len);
    }

    #[test]
    fn display_names_the_id_name_and_location() {
        let info = TaskInfo::new(Some("fetch".into()), Location::caller());
        let shown = info.to_string();
        assert!(shown.starts_with(&format!("task {} \"fetch\" spawned at ", info.id())), "{shown}");
        assert!(shown.contains(file!()), "{shown}");
    }
}
