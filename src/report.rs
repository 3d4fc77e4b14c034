//! [`SlowPoll`]: what a pool tells its slow-poll hook ([`Builder::on_slow_poll`]) about a poll
//! that runs too long, a takeover, and the poll's end.
//!
//! Invariants: the hook runs on one thread only, the pool's reporter thread
//! (`scheduler/takeover/reporter.rs`), outside every lock of crew's and never inside a task's poll; the
//! monitor and the workers only queue reports for it, so no hook delays a takeover, a worker or
//! a task. A panicking hook is caught and the panic dropped (the hook then misses that report,
//! nothing else).
//!
//! [`Builder::on_slow_poll`]: crate::Builder::on_slow_poll

use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use crate::escape::Escaped;
use crate::identity::TaskInfo;
use crate::policy::drop_payload;

/// What happened to the poll a [`SlowPoll`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SlowPollKind {
    /// The poll has been running for at least the slow-poll threshold, and still runs.
    Slow,
    /// The poll has been running for at least the takeover threshold while other tasks waited:
    /// its worker's queues were handed to a new thread, and this thread leaves the pool once the
    /// poll returns.
    TakenOver,
    /// A takeover was due, but the pool already has its most stuck threads
    /// ([`Builder::max_stuck_threads`](crate::Builder::max_stuck_threads)): the tasks behind
    /// this poll wait for it. Reported once per poll.
    CapReached,
    /// A poll reported before has returned, after [`SlowPoll::elapsed`] in all.
    Returned,
}

/// A report on one long poll, for [`Builder::on_slow_poll`](crate::Builder::on_slow_poll).
///
/// `Display` writes one line, e.g. `crew: task 17 "fetch" spawned at src/main.rs:9:5 has been
/// in one poll for 12.4ms on crew-worker-1 (taken over: its queues went to a new thread)`.
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
///     .slow_poll_threshold(Duration::from_millis(5))
///     .on_slow_poll(move |report| drop(tx.lock().unwrap().send(report.clone())))
///     .build()
///     .unwrap();
/// let (release, released) = mpsc::channel::<()>();
/// let handle = crew::task::Builder::new().name("blocked").spawn_on(&pool, async move {
///     released.recv().unwrap(); // blocks its worker until the report came: a slow poll
/// });
/// let report = rx.recv().unwrap();
/// release.send(()).unwrap();
/// crew::block_on(handle);
/// assert_eq!(report.task().and_then(|task| task.name()), Some("blocked"));
/// assert!(report.elapsed() >= Duration::from_millis(5));
/// ```
#[derive(Debug, Clone)]
pub struct SlowPoll {
    pub(crate) kind: SlowPollKind,
    pub(crate) task: Option<TaskInfo>,
    pub(crate) thread_name: String,
    pub(crate) worker: usize,
    pub(crate) elapsed: Duration,
    pub(crate) local_tasks: u64,
}

impl SlowPoll {
    /// What happened.
    ///
    /// # Examples
    ///
    /// See [`SlowPoll`].
    /// ```
    /// # let _ = crew::SlowPollKind::Slow;
    /// ```
    pub fn kind(&self) -> SlowPollKind {
        self.kind
    }

    /// The task being polled (`None` only if the poll began before the hook could record it).
    ///
    /// # Examples
    ///
    /// See [`SlowPoll`].
    /// ```
    /// # let _ = crew::SlowPoll::task;
    /// ```
    pub fn task(&self) -> Option<&TaskInfo> {
        self.task.as_ref()
    }

    /// The index of the worker core the poll runs on (its thread is named
    /// `"{thread_name}-{worker}"`).
    ///
    /// # Examples
    ///
    /// See [`SlowPoll`].
    /// ```
    /// # let _ = crew::SlowPoll::worker;
    /// ```
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// How long the poll has run: at least this long (`Slow`, `TakenOver`, `CapReached`: measured
    /// by the monitor's samples, so up to one sampling interval short), or in all (`Returned`).
    ///
    /// # Examples
    ///
    /// See [`SlowPoll`].
    /// ```
    /// # let _ = crew::SlowPoll::elapsed;
    /// ```
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The local tasks ([`spawn_local`](crate::spawn_local)) of the polling thread alive when
    /// the report was made: they wait behind this poll, since no takeover moves a local task
    /// off its thread.
    ///
    /// # Examples
    ///
    /// See [`SlowPoll`].
    /// ```
    /// # let _ = crew::SlowPoll::local_tasks;
    /// ```
    pub fn local_tasks(&self) -> u64 {
        self.local_tasks
    }
}

impl fmt::Display for SlowPoll {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("crew: ")?;
        match &self.task {
            Some(task) => write!(f, "{task}")?,
            None => f.write_str("a task")?,
        }
        let thread = format!("{}-{}", Escaped(&self.thread_name), self.worker);
        let elapsed = self.elapsed;
        match self.kind {
            SlowPollKind::Slow => write!(f, " has been in one poll for {elapsed:.1?} on {thread}"),
            SlowPollKind::TakenOver => write!(
                f,
                " has been in one poll for {elapsed:.1?} on {thread} (taken over: its queues went to a new thread)"
            ),
            SlowPollKind::CapReached => write!(
                f,
                " has been in one poll for {elapsed:.1?} on {thread}; no takeover: the pool has its most stuck threads"
            ),
            SlowPollKind::Returned => write!(f, " returned from a poll of {elapsed:.1?} on {thread}"),
        }?;
        match (self.kind, self.local_tasks) {
            (SlowPollKind::Returned, _) | (_, 0) => Ok(()),
            (_, tasks) => write!(f, "; {tasks} local task(s) of that thread wait behind it"),
        }
    }
}

/// A pool's slow-poll hook.
#[derive(Clone)]
pub(crate) struct Hook(Arc<dyn Fn(&SlowPoll) + Send + Sync>);

impl Hook {
    pub(crate) fn new(hook: impl Fn(&SlowPoll) + Send + Sync + 'static) -> Hook {
        Hook(Arc::new(hook))
    }

    /// Calls the hook; a panic in it is caught and dropped.
    pub(crate) fn call(&self, report: &SlowPoll) {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| (self.0)(report))) {
            drop_payload(payload);
        }
    }
}

impl fmt::Debug for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Hook")
    }
}
