//! [`UnhandledPanic`] and [`Builder::unhandled_panic`]: what a private pool does with a panic
//! that no awaiter will see (tokio's `unhandled_panic`).
//!
//! Invariants: the default, [`UnhandledPanic::Ignore`], changes nothing; `ShutdownPool` is a
//! private pool's only (`build_global` refuses it: the global pool is never shut down).

use super::Builder;

/// What a pool does when one of its tasks panics and no awaiter will see the panic: a detached
/// task's, an [`Ignore`](crate::Ignore) task's, a dropped [`JoinSet`](crate::task::JoinSet)'s
/// member's, or that of a task whose handle is dropped unawaited after it ended. Set with
/// [`Builder::unhandled_panic`].
///
/// # Examples
///
/// ```
/// let pool = crew::Pool::builder().unhandled_panic(crew::UnhandledPanic::Ignore).build().unwrap();
/// crew::spawn_with(crew::Ignore, async {}).detach();
/// assert_eq!(pool.block_on(async { 1 }), 1);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnhandledPanic {
    /// The panic is reported by the panic hook, as every panic is, and the pool goes on (the
    /// default, tokio's too).
    #[default]
    Ignore,
    /// The pool shuts down, as if dropped: its workers stop and its unfinished tasks are
    /// dropped; [`Pool::block_on`](crate::Pool::block_on) then panics (at once if it is
    /// running), naming the task and its panic. For tests and services that must stop on
    /// any panic.
    ShutdownPool,
}

impl Builder {
    /// Sets what the pool does with a panic that no awaiter will see (see [`UnhandledPanic`]);
    /// [`UnhandledPanic::Ignore`] unless set. [`build_global`](Builder::build_global) refuses
    /// `ShutdownPool`: the global pool never shuts down.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).unhandled_panic(crew::UnhandledPanic::ShutdownPool).build().unwrap();
    /// let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
    ///     pool.block_on(async {
    ///         crew::spawn(async { panic!("expected: nobody awaits me") }).detach();
    ///         std::future::pending::<()>().await // the pool's shutdown ends this wait
    ///     })
    /// }));
    /// let message = caught.unwrap_err().downcast::<String>().unwrap();
    /// assert!(message.contains("expected: nobody awaits me"), "{message}");
    /// ```
    pub fn unhandled_panic(mut self, behavior: UnhandledPanic) -> Builder {
        self.unhandled_panic = Some(behavior);
        self
    }
}
