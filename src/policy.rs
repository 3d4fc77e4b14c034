//! The three panic policies and [`JoinError`].
//!
//! Invariants:
//! - A task's future is always polled inside `catch_unwind` (see `task`), whatever the policy,
//!   so a panic never reaches a worker thread. The policy only decides what the *awaiter* sees.
//! - The panic hook reports every panic when it happens, as for any Rust panic; no policy
//!   installs or changes a hook.
//! - [`Propagate`]: the awaiter resumes the original payload. [`Catch`]: the awaiter gets
//!   `Err(JoinError)` carrying the payload. [`Ignore`]: the payload is dropped on the worker;
//!   awaiting panics with [`IGNORED_PANIC_MESSAGE`].
//! - A task dropped before it finished is reported as cancelled: `Err(JoinError)` with
//!   [`JoinError::is_cancelled`] under `Catch`, a panic under the other two, whose message says
//!   why: [`CANCELLED_MESSAGE`] (its pool shut down) or [`ABORTED_MESSAGE`] (an
//!   [`AbortHandle`](crate::task::AbortHandle) or its set aborted it; then
//!   [`JoinError::is_aborted`] too).
//! - Every message a user may compare a payload with is a `&str` at the crate root named
//!   `..._MESSAGE` ([`CANCELLED_MESSAGE`], [`ABORTED_MESSAGE`], [`IGNORED_PANIC_MESSAGE`], and
//!   `scope`'s `SCOPED_TASK_PANICKED_MESSAGE`); an old name stays as a deprecated alias.

use std::any::Any;
use std::fmt;
use std::panic;

use crate::identity::{TaskId, TaskLabel};

/// A panic payload, as `catch_unwind` returns it.
pub(crate) type Payload = Box<dyn Any + Send + 'static>;

/// Drops a panic payload; if its own `Drop` panics, leaks that second payload.
pub(crate) fn drop_payload(payload: Payload) {
    if let Err(second) = panic::catch_unwind(panic::AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(second);
    }
}

/// What the awaiter of a task whose pool dropped it before it finished is told.
///
/// # Examples
///
/// ```
/// let pool = crew::Pool::builder().workers(1).build().unwrap();
/// let handle = pool.spawn(std::future::pending::<()>());
/// drop(pool);
/// let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(handle))).unwrap_err();
/// assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some(crew::CANCELLED_MESSAGE));
/// ```
pub const CANCELLED_MESSAGE: &str = "crew: the task was dropped before it finished, because its pool shut down";

/// What the awaiter of a task that was aborted ([`AbortHandle::abort`](crate::task::AbortHandle::abort),
/// [`JoinSet::abort_all`](crate::task::JoinSet::abort_all)) before it finished is told.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn(std::future::pending::<()>());
/// handle.abort_handle().abort();
/// let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(handle))).unwrap_err();
/// assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some(crew::ABORTED_MESSAGE));
/// ```
pub const ABORTED_MESSAGE: &str = "crew: the task was dropped before it finished, because it was aborted";

/// What awaiting the handle of an [`Ignore`] task that panicked panics with (the payload itself
/// was dropped by the pool).
///
/// # Examples
///
/// ```
/// let handle = crew::spawn_with(crew::Ignore, async { panic!("the payload") });
/// let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(handle))).unwrap_err();
/// assert_eq!(payload.downcast_ref::<String>().map(String::as_str), Some(crew::IGNORED_PANIC_MESSAGE));
/// ```
pub const IGNORED_PANIC_MESSAGE: &str =
    "crew: the awaited task panicked; its payload was dropped by the Ignore policy (the panic hook reported it)";

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Propagate {}
    impl Sealed for super::Catch {}
    impl Sealed for super::Ignore {}

    /// How a task ended, before the policy turns it into the awaiter's output. Public only so
    /// that the sealed [`Policy`](super::Policy) trait can name it; not reachable by users.
    #[allow(unreachable_pub)]
    #[derive(Debug)]
    pub enum Outcome<T> {
        /// The future returned a value.
        Finished(T),
        /// The future panicked; the payload is kept for the awaiter.
        Panicked(super::Payload),
        /// The future panicked; the pool dropped the payload (the `Ignore` policy).
        Swallowed,
        /// The task was dropped before it finished, by its pool's shutdown.
        Cancelled,
        /// The task was dropped before it finished, because it was aborted.
        Aborted,
    }
}

pub(crate) use sealed::Outcome;

/// A panic policy: what awaiting a [`JoinHandle`](crate::JoinHandle) gives when its task panics.
///
/// Implemented by [`Propagate`] (the default), [`Catch`] and [`Ignore`]; sealed.
///
/// # Examples
///
/// ```
/// fn run<P: crew::Policy>(policy: P) -> P::Output<u8> {
///     crew::block_on(crew::spawn_with(policy, async { 7 }))
/// }
/// assert_eq!(run(crew::Propagate), 7);
/// assert_eq!(run(crew::Catch).unwrap(), 7);
/// assert_eq!(run(crew::Ignore), 7);
/// ```
pub trait Policy: sealed::Sealed + Copy + Send + Sync + fmt::Debug + 'static {
    /// What awaiting a handle of a task returning `T` yields under this policy.
    type Output<T>;

    /// Whether the pool drops the panic payload itself (on the worker) rather than keep it for
    /// the awaiter.
    #[doc(hidden)]
    const SWALLOW: bool;

    /// Whether a set's `join_next` skips a member that was aborted (the user asked for it)
    /// rather than give it as an error.
    #[doc(hidden)]
    const SKIP_ABORTED: bool;

    /// Turns how the task ended into the awaiter's output.
    #[doc(hidden)]
    fn complete<T>(outcome: Outcome<T>, task: TaskLabel) -> Self::Output<T>;
}

/// The default policy: awaiting the handle of a task that panicked resumes the original panic
/// payload in the awaiter.
///
/// # Examples
///
/// ```
/// let handle = crew::spawn(async { panic!("boom") });
/// let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(handle)));
/// let payload = caught.unwrap_err();
/// assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Propagate;

/// The "Result" policy: awaiting the handle yields `Result<T, JoinError>`, with the panic payload
/// in the error.
///
/// # Examples
///
/// ```
/// let err = crew::block_on(crew::spawn_with(crew::Catch, async { panic!("bad input: {}", 3) }))
///     .unwrap_err();
/// assert!(err.is_panic());
/// assert_eq!(err.panic_message(), Some("bad input: 3"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Catch;

/// The "fire and forget" policy: a panic is reported by the panic hook as usual, then swallowed
/// by the pool; awaiting the handle of a task that panicked panics with
/// [`IGNORED_PANIC_MESSAGE`], not the payload.
///
/// # Examples
///
/// ```
/// // Detached: the panic is reported and forgotten; the pool carries on.
/// crew::spawn_with(crew::Ignore, async { panic!("logged, then ignored") }).detach();
/// assert_eq!(crew::block_on(crew::spawn(async { 1 })), 1);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ignore;

impl Ignore {
    /// The message awaiting an `Ignore` task's handle panics with, if the task panicked: the
    /// old name of [`IGNORED_PANIC_MESSAGE`].
    #[deprecated(note = "renamed to `crew::IGNORED_PANIC_MESSAGE`")]
    pub const PANIC_MESSAGE: &'static str = IGNORED_PANIC_MESSAGE;
}

impl Policy for Propagate {
    type Output<T> = T;
    const SWALLOW: bool = false;
    const SKIP_ABORTED: bool = true;

    fn complete<T>(outcome: Outcome<T>, _task: TaskLabel) -> T {
        match outcome {
            Outcome::Finished(value) => value,
            Outcome::Panicked(payload) => panic::resume_unwind(payload),
            Outcome::Swallowed => panic!("{IGNORED_PANIC_MESSAGE}"),
            Outcome::Cancelled => panic!("{CANCELLED_MESSAGE}"),
            Outcome::Aborted => panic!("{ABORTED_MESSAGE}"),
        }
    }
}

impl Policy for Catch {
    type Output<T> = Result<T, JoinError>;
    const SWALLOW: bool = false;
    const SKIP_ABORTED: bool = false;

    fn complete<T>(outcome: Outcome<T>, task: TaskLabel) -> Result<T, JoinError> {
        let repr = match outcome {
            Outcome::Finished(value) => return Ok(value),
            Outcome::Panicked(payload) => Repr::Panic(payload),
            Outcome::Swallowed => Repr::Panic(Box::new(IGNORED_PANIC_MESSAGE)),
            Outcome::Cancelled => Repr::Cancelled,
            Outcome::Aborted => Repr::Aborted,
        };
        Err(JoinError { repr, task })
    }
}

impl Policy for Ignore {
    type Output<T> = T;
    const SWALLOW: bool = true;
    const SKIP_ABORTED: bool = true;

    fn complete<T>(outcome: Outcome<T>, _task: TaskLabel) -> T {
        match outcome {
            Outcome::Finished(value) => value,
            Outcome::Panicked(_) | Outcome::Swallowed => panic!("{IGNORED_PANIC_MESSAGE}"),
            Outcome::Cancelled => panic!("{CANCELLED_MESSAGE}"),
            Outcome::Aborted => panic!("{ABORTED_MESSAGE}"),
        }
    }
}

/// Why a task spawned with [`Catch`] did not return a value: it panicked (the payload is kept
/// here, [`is_panic`](JoinError::is_panic)), it was dropped before finishing because its pool
/// shut down ([`is_cancelled`](JoinError::is_cancelled)), or it was aborted before it finished
/// ([`JoinHandle::abort`](crate::JoinHandle::abort), an
/// [`AbortHandle`](crate::task::AbortHandle), a set's `abort_all`: then both
/// [`is_aborted`](JoinError::is_aborted) and `is_cancelled`; a task that finished before the
/// abort took effect gives its output, not an error). It names the task: its
/// [`id`](JoinError::id) and [`name`](JoinError::name), which its `Display` says
/// (`task 17 "fetch" panicked: boom`).
///
/// # Examples
///
/// ```
/// let err = crew::block_on(crew::spawn_with(crew::Catch, async {
///     std::panic::panic_any(42_u32)
/// }))
/// .unwrap_err();
/// assert_eq!(err.panic_message(), None, "not a string payload");
/// assert_eq!(err.into_panic().downcast_ref::<u32>(), Some(&42));
/// ```
pub struct JoinError {
    repr: Repr,
    /// The task's id and name.
    task: TaskLabel,
}

enum Repr {
    Panic(Payload),
    Cancelled,
    Aborted,
}

impl JoinError {
    /// The id of the task this error is about, as its [`JoinHandle::id`](crate::JoinHandle::id)
    /// gave it.
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn_with(crew::Catch, async { panic!("boom") });
    /// let id = handle.id();
    /// let err = crew::block_on(handle).unwrap_err();
    /// assert_eq!(err.id(), id);
    /// assert_eq!(err.to_string(), format!("task {id} panicked: boom"));
    /// ```
    pub fn id(&self) -> TaskId {
        self.task.id()
    }

    /// The name of the task this error is about, if it was given one
    /// ([`task::Builder::name`](crate::task::Builder::name)).
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::task::Builder::new().name("fetch").policy(crew::Catch).spawn(async { panic!("boom") });
    /// let err = crew::block_on(handle).unwrap_err();
    /// assert_eq!(err.name(), Some("fetch"));
    /// assert_eq!(err.to_string(), format!("task {} \"fetch\" panicked: boom", err.id()));
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.task.name()
    }

    /// True if the task panicked.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = crew::block_on(crew::spawn_with(crew::Catch, async { panic!() }));
    /// assert!(r.unwrap_err().is_panic());
    /// ```
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// True if the task was dropped before it finished: because its pool shut down, or because
    /// it was aborted ([`is_aborted`](JoinError::is_aborted)).
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).build().unwrap();
    /// let handle = pool.spawn_with(crew::Catch, std::future::pending::<()>());
    /// drop(pool);
    /// assert!(crew::block_on(handle).unwrap_err().is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled | Repr::Aborted)
    }

    /// True if the task was dropped before it finished because it was aborted
    /// ([`AbortHandle::abort`](crate::task::AbortHandle::abort), a set's `abort_all`).
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = crew::spawn_with(crew::Catch, std::future::pending::<()>());
    /// handle.abort_handle().abort();
    /// let err = crew::block_on(handle).unwrap_err();
    /// assert!(err.is_aborted() && err.is_cancelled());
    /// ```
    pub fn is_aborted(&self) -> bool {
        matches!(self.repr, Repr::Aborted)
    }

    /// The panic message, if the task panicked with a `&str` or `String` payload (as `panic!`
    /// with a message does).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = crew::block_on(crew::spawn_with(crew::Catch, async { panic!("at {}", "noon") }));
    /// assert_eq!(r.unwrap_err().panic_message(), Some("at noon"));
    /// ```
    pub fn panic_message(&self) -> Option<&str> {
        match &self.repr {
            Repr::Panic(payload) => payload_message(payload.as_ref()),
            Repr::Cancelled | Repr::Aborted => None,
        }
    }

    /// The panic payload, to inspect or to resume with [`std::panic::resume_unwind`].
    ///
    /// # Errors
    ///
    /// Gives the error back if the task did not panic (it was cancelled).
    ///
    /// # Examples
    ///
    /// ```
    /// let r = crew::block_on(crew::spawn_with(crew::Catch, async { panic!("x") }));
    /// let payload = r.unwrap_err().try_into_panic().ok().unwrap();
    /// assert_eq!(payload.downcast_ref::<&str>(), Some(&"x"));
    /// ```
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(payload) => Ok(payload),
            Repr::Cancelled | Repr::Aborted => Err(self),
        }
    }

    /// The panic payload.
    ///
    /// # Panics
    ///
    /// If the task did not panic (it was cancelled); the panic names the caller's location.
    ///
    /// # Examples
    ///
    /// ```
    /// let r = crew::block_on(crew::spawn_with(crew::Catch, async { panic!("y") }));
    /// assert_eq!(r.unwrap_err().into_panic().downcast_ref::<&str>(), Some(&"y"));
    /// ```
    #[track_caller]
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        match self.repr {
            Repr::Panic(payload) => payload,
            Repr::Cancelled => panic!("crew: JoinError::into_panic on a task that did not panic: {CANCELLED_MESSAGE}"),
            Repr::Aborted => panic!("crew: JoinError::into_panic on a task that did not panic: {ABORTED_MESSAGE}"),
        }
    }
}

/// The text of a `&str` or `String` panic payload.
pub(crate) fn payload_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.repr {
            Repr::Panic(_) => "JoinError::Panic",
            Repr::Cancelled => "JoinError::Cancelled",
            Repr::Aborted => "JoinError::Aborted",
        };
        let mut debug = f.debug_struct(kind);
        debug.field("id", &self.task.id().as_u64()).field("name", &self.task.name());
        if let Repr::Panic(_) = &self.repr {
            debug.field("message", &self.panic_message());
        }
        debug.finish()
    }
}

/// `task 17 "fetch" panicked: boom`, `task 17 was cancelled: its pool shut down before it
/// finished`, `task 17 was aborted before it finished`.
impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.repr, self.panic_message()) {
            (Repr::Panic(_), Some(message)) => write!(f, "{} panicked: {message}", self.task),
            (Repr::Panic(_), None) => write!(f, "{} panicked with a non-string payload", self.task),
            (Repr::Cancelled, _) => write!(f, "{} was cancelled: its pool shut down before it finished", self.task),
            (Repr::Aborted, _) => write!(f, "{} was aborted before it finished", self.task),
        }
    }
}

impl std::error::Error for JoinError {}
