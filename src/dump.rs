//! [`TaskDump`]: every live task of a pool, what it is doing and for how long, from
//! [`crew::dump`](fn@crate::dump) or [`Pool::dump`](crate::Pool::dump), with
//! [`Builder::task_dump`](crate::Builder::task_dump) on.
//!
//! Invariants:
//! - Taking a dump never pauses the pool: it locks each registry shard only while it clones the
//!   identities listed there (a reference count each), and reads every task's state without a
//!   lock. Spawns and ends on other shards, and every poll, go on meanwhile.
//! - A task whose future was dropped before the dump began is never listed (its registry entry
//!   is gone, and a record marked ended is skipped).
//! - A task's state is the last one written: a task stolen from one worker's deque by another
//!   still shows the first worker's deque.
//! - `Display` writes one line per task: a name is written escaped (`escape.rs`), so no name
//!   splits a row or writes a control character.

use std::fmt;
use std::panic::Location;
use std::time::Duration;

use crate::escape::Escaped;
use crate::identity::{TaskId, TaskInfo};

/// Every live task of a pool, sorted by id: [`crew::dump`](fn@crate::dump) for the global pool,
/// [`Pool::dump`](crate::Pool::dump) for a private one. `Display` prints a table; [`tasks`]
/// gives the data.
///
/// A pool lists its tasks only with [`Builder::task_dump`](crate::Builder::task_dump) on
/// (`CREW_TASK_DUMP=on` for the global pool); otherwise the dump is empty and
/// [`is_enabled`](TaskDump::is_enabled) is false.
///
/// [`tasks`]: TaskDump::tasks
///
/// # Examples
///
/// ```
/// // No takeover: the blocked worker keeps its queue, for the dump to show.
/// let pool = crew::Pool::builder().workers(1).takeover(false).task_dump(true).build().unwrap();
/// let (tx, rx) = std::sync::mpsc::channel::<()>();
/// let (started_tx, started_rx) = std::sync::mpsc::channel();
/// let blocked = crew::task::Builder::new().name("blocked").spawn_on(&pool, async move {
///     started_tx.send(()).unwrap();
///     rx.recv().unwrap(); // blocks its worker
/// });
/// started_rx.recv().unwrap();
/// let queued = pool.spawn(async {});
/// let dump = pool.dump();
/// assert!(matches!(dump.tasks()[0].state(), crew::TaskState::Running { worker: 0, .. }));
/// assert!(matches!(dump.tasks()[1].state(), crew::TaskState::Queued { place: crew::QueuedIn::Injector, .. }));
/// println!("{dump}");
/// tx.send(()).unwrap();
/// crew::block_on(blocked);
/// crew::block_on(queued);
/// ```
#[derive(Debug, Clone)]
pub struct TaskDump {
    tasks: Vec<TaskSnapshot>,
    enabled: bool,
}

/// One live task in a [`TaskDump`].
///
/// # Examples
///
/// ```
/// fn describe(task: &crew::TaskSnapshot) -> String {
///     format!("{} ({} polls, {:?} old): {:?}", task.info(), task.polls(), task.age(), task.state())
/// }
/// ```
#[derive(Debug, Clone)]
pub struct TaskSnapshot {
    info: TaskInfo,
    state: TaskState,
    polls: u64,
    age: Duration,
}

/// What a task was doing when the dump read it.
///
/// # Examples
///
/// ```
/// fn is_stuck(state: &crew::TaskState) -> bool {
///     matches!(state, crew::TaskState::Running { elapsed, .. } if elapsed.as_secs() >= 1)
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskState {
    /// Being polled by `worker` (its thread's number) for `elapsed`.
    Running {
        /// The worker number of the thread polling it.
        worker: usize,
        /// How long this poll has run.
        elapsed: Duration,
    },
    /// A local task (`crew::spawn_local`) being polled for `elapsed` by its own thread while
    /// that thread runs no worker: inside [`Pool::block_on`](crate::Pool::block_on), or
    /// finishing its local tasks after its worker went to another thread.
    RunningOffWorker {
        /// How long this poll has run.
        elapsed: Duration,
    },
    /// Queued in `place` for `elapsed`, waiting for a worker to run it.
    Queued {
        /// Where it was queued.
        place: QueuedIn,
        /// How long it has waited there.
        elapsed: Duration,
    },
    /// Waiting for a wake (its last poll returned `Pending`) for `elapsed`.
    Waiting {
        /// How long since its last poll returned.
        elapsed: Duration,
    },
}

/// Where a queued task waits.
///
/// # Examples
///
/// ```
/// fn on_worker(place: crew::QueuedIn) -> Option<usize> {
///     match place {
///         crew::QueuedIn::Injector => None,
///         crew::QueuedIn::Lifo { worker } | crew::QueuedIn::Deque { worker } | crew::QueuedIn::Deferred { worker } => Some(worker),
///         _ => None,
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueuedIn {
    /// The injector: tasks scheduled from outside the workers, or spawned there.
    Injector,
    /// A worker's LIFO slot: woken by the task it ran, it runs next.
    Lifo {
        /// The worker number.
        worker: usize,
    },
    /// A worker's deque (another worker may have stolen it since).
    Deque {
        /// The worker number.
        worker: usize,
    },
    /// A worker's deferred list: it yielded, or was woken while it ran.
    Deferred {
        /// The worker number.
        worker: usize,
    },
    /// Its thread's local queue ([`spawn_local`](crate::spawn_local)), which only that thread
    /// runs. A local task that such a thread runs outside a worker loop (in `block_on`, or
    /// finishing its local tasks after its worker life) shows here while it runs too.
    Local {
        /// The worker its thread ran when it was queued; `None` if that thread ran none.
        worker: Option<usize>,
    },
}

impl TaskDump {
    pub(crate) fn new(mut tasks: Vec<TaskSnapshot>, enabled: bool) -> TaskDump {
        tasks.sort_by_key(|task| task.info.id());
        TaskDump { tasks, enabled }
    }

    /// The live tasks, sorted by id.
    pub fn tasks(&self) -> &[TaskSnapshot] {
        &self.tasks
    }

    /// Whether the pool keeps task records ([`Builder::task_dump`](crate::Builder::task_dump));
    /// if not, the dump is empty.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }
}

impl TaskSnapshot {
    pub(crate) fn new(info: TaskInfo, state: TaskState, polls: u64, age: Duration) -> TaskSnapshot {
        TaskSnapshot { info, state, polls, age }
    }

    /// The task's identity: id, name, spawn location.
    pub fn info(&self) -> &TaskInfo {
        &self.info
    }

    /// The task's id.
    pub fn id(&self) -> TaskId {
        self.info.id()
    }

    /// The task's name, if it was given one.
    pub fn name(&self) -> Option<&str> {
        self.info.name()
    }

    /// Where the task was spawned.
    pub fn location(&self) -> &'static Location<'static> {
        self.info.location()
    }

    /// What it was doing when the dump read it.
    pub fn state(&self) -> TaskState {
        self.state
    }

    /// How many polls it has begun.
    pub fn polls(&self) -> u64 {
        self.polls
    }

    /// Time since it was spawned.
    pub fn age(&self) -> Duration {
        self.age
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TaskState::Running { worker, elapsed } => write!(f, "running on worker {worker} for {elapsed:.1?}"),
            TaskState::RunningOffWorker { elapsed } => {
                write!(f, "running on its own thread, which runs no worker, for {elapsed:.1?}")
            }
            TaskState::Queued { place, elapsed } => write!(f, "queued in {place} for {elapsed:.1?}"),
            TaskState::Waiting { elapsed } => write!(f, "waiting for a wake for {elapsed:.1?}"),
        }
    }
}

impl fmt::Display for QueuedIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            QueuedIn::Injector => f.write_str("the injector"),
            QueuedIn::Lifo { worker } => write!(f, "worker {worker}'s LIFO slot"),
            QueuedIn::Deque { worker } => write!(f, "worker {worker}'s deque"),
            QueuedIn::Deferred { worker } => write!(f, "worker {worker}'s deferred list"),
            QueuedIn::Local { worker: Some(worker) } => write!(f, "worker {worker}'s thread's local queue"),
            QueuedIn::Local { worker: None } => f.write_str("the local queue of a thread that runs no worker"),
        }
    }
}

/// A table: id, name, state, polls, age, spawn location; one line per task.
impl fmt::Display for TaskDump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.enabled {
            return f.write_str("(no task dump: turn it on with Builder::task_dump(true), or CREW_TASK_DUMP=on)");
        }
        writeln!(f, "{} live tasks", self.tasks.len())?;
        writeln!(f, "{:>8}  {:<20}  {:<48}  {:>8}  {:>10}  spawned at", "id", "name", "state", "polls", "age")?;
        for task in &self.tasks {
            writeln!(
                f,
                "{:>8}  {:<20}  {:<48}  {:>8}  {:>10}  {}{}",
                task.id().to_string(),
                Escaped(task.name().unwrap_or("-")),
                task.state.to_string(),
                task.polls,
                format!("{:.1?}", task.age),
                task.location(),
                task.info.set().map_or_else(String::new, |set| format!(" in {set}")),
            )?;
        }
        Ok(())
    }
}
