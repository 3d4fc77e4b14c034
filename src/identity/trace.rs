//! The `tracing` span each task's polls run in (the `tracing` feature), so that what a task logs
//! says which task it came from; and, with the `console` feature, the waker events that let
//! tokio-console show each task's wakes and wakers.
//!
//! Invariants:
//! - With the feature, a task's span is created once, at spawn, from its [`TaskInfo`], with every
//!   field given at creation (console-subscriber reads fields only then): target `crew::task`,
//!   name `runtime.spawn` (the name tokio-console looks for), level INFO, no parent (a spawning
//!   task's span is not kept open by its children), fields `kind` (`task`, `blocking` or
//!   `block_on`), `task.id`, `task.name` (when it has one), `loc.file`, `loc.line` and
//!   `loc.col` (where it was spawned).
//! - Every poll of the task runs inside it, and so does the drop of a future dropped unfinished;
//!   a finished task's span is not entered again, so each entry is one poll.
//! - With the `console` feature, while a subscriber has the span enabled, each poll hands the
//!   future a waker of its own (`ConsoleWaker`) that reports to the span's id: `waker.clone`
//!   when crew makes it, `waker.wake_by_ref` on every wake, `waker.drop` when its last handle
//!   goes. So the console's count of live wakers is the number of such wakers the task's future
//!   (or anything it gave them to) still holds, and "lost its waker" means exactly that none is
//!   left.
//! - Without the feature, [`Trace`] is zero-sized, entering it is nothing, and a poll gets the
//!   waker it was given: no field, no call, no byte in the task's allocation.

use std::panic::Location;
use std::task::Context;

use super::TaskInfo;

/// What kind of work a span is for: tokio-console's `kind` field, which switches off its lints
/// for `blocking` and `block_on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A task on a pool.
    Task,
    /// A `spawn_blocking` job.
    #[cfg_attr(loom, allow(dead_code))] // the blocking pool is left out of loom builds
    Blocking,
    /// The future of a `block_on` call.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    BlockOn,
}

impl Kind {
    /// The value of the span's `kind` field.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    fn as_str(self) -> &'static str {
        match self {
            Kind::Task => "task",
            Kind::Blocking => "blocking",
            Kind::BlockOn => "block_on",
        }
    }
}

/// A task's span (see the module docs).
#[cfg(feature = "tracing")]
#[derive(Debug)]
pub(crate) struct Trace(tracing::Span);

/// A task's span: nothing, without the `tracing` feature.
#[cfg(not(feature = "tracing"))]
#[derive(Debug)]
pub(crate) struct Trace;

/// What [`Trace::enter`] returns: leaves the span when dropped.
#[cfg(feature = "tracing")]
pub(crate) type Entered<'a> = tracing::span::Entered<'a>;

/// What [`Trace::enter`] returns: nothing, without the `tracing` feature.
#[cfg(not(feature = "tracing"))]
pub(crate) type Entered<'a> = std::marker::PhantomData<&'a ()>;

impl Trace {
    /// The span of the task `info`, of kind `kind`.
    #[cfg(feature = "tracing")]
    #[inline]
    pub(crate) fn new(info: &TaskInfo, kind: Kind) -> Trace {
        Trace::span(info.id().as_u64(), info.name(), info.location(), kind)
    }

    /// The span of a `block_on` call made at `location`.
    #[cfg(feature = "tracing")]
    pub(crate) fn block_on(location: &'static Location<'static>) -> Trace {
        Trace::span(super::TaskId::next().as_u64(), None, location, Kind::BlockOn)
    }

    #[cfg(feature = "tracing")]
    fn span(id: u64, name: Option<&str>, location: &Location<'_>, kind: Kind) -> Trace {
        Trace(tracing::info_span!(
            target: "crew::task",
            parent: None,
            "runtime.spawn",
            kind = kind.as_str(),
            task.id = id,
            task.name = name,
            loc.file = location.file(),
            loc.line = location.line(),
            loc.col = location.column(),
        ))
    }

    /// Nothing, without the `tracing` feature.
    #[cfg(not(feature = "tracing"))]
    #[inline]
    pub(crate) fn new(_info: &TaskInfo, _kind: Kind) -> Trace {
        Trace
    }

    /// Nothing, without the `tracing` feature.
    #[cfg(not(feature = "tracing"))]
    #[inline]
    pub(crate) fn block_on(_location: &'static Location<'static>) -> Trace {
        Trace
    }

    /// Enters the span until the returned guard drops.
    #[cfg(feature = "tracing")]
    #[inline]
    pub(crate) fn enter(&self) -> Entered<'_> {
        self.0.enter()
    }

    /// Nothing, without the `tracing` feature.
    #[cfg(not(feature = "tracing"))]
    #[inline]
    pub(crate) fn enter(&self) -> Entered<'_> {
        std::marker::PhantomData
    }

    /// Runs `poll` with `cx`, or, with the `console` feature and a subscriber that has this
    /// span, with a context whose waker reports to the span (see the module docs).
    #[inline]
    pub(crate) fn poll<R>(&self, cx: &mut Context<'_>, poll: impl FnOnce(&mut Context<'_>) -> R) -> R {
        #[cfg(feature = "console")]
        if let Some(id) = self.0.id() {
            let waker = console::ConsoleWaker::waker(id.into_u64(), cx.waker());
            return poll(&mut Context::from_waker(&waker));
        }
        poll(cx)
    }
}

#[cfg(feature = "console")]
mod console {
    // `Waker::from` takes std's `Arc`; the console feature is not built under loom.
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    /// A waker of a task's poll that reports what happens to it to the task's span `span`, and
    /// passes each wake on to `inner`, the waker async-task gave the poll.
    pub(super) struct ConsoleWaker {
        span: u64,
        inner: Waker,
    }

    /// One waker event, as tokio-console reads it: target `runtime::waker`, `op`, and `task.id`
    /// holding the task span's id.
    fn event(span: u64, op: &'static str) {
        tracing::trace!(target: "runtime::waker", op, task.id = span);
    }

    impl ConsoleWaker {
        /// A new waker for the task whose span is `span`, over `inner`.
        pub(super) fn waker(span: u64, inner: &Waker) -> Waker {
            event(span, "waker.clone");
            Waker::from(Arc::new(ConsoleWaker { span, inner: inner.clone() }))
        }
    }

    impl Wake for ConsoleWaker {
        fn wake(self: Arc<Self>) {
            // Not "waker.wake", which the console also counts as a drop: this handle may not be
            // the last, and the drop is reported when the last one goes.
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            event(self.span, "waker.wake_by_ref");
            self.inner.wake_by_ref();
        }
    }

    impl Drop for ConsoleWaker {
        fn drop(&mut self) {
            event(self.span, "waker.drop");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(not(feature = "tracing"))]
    fn without_the_feature_a_task_carries_nothing_for_tracing() {
        assert_eq!(std::mem::size_of::<Trace>(), 0);
        assert_eq!(std::mem::size_of::<Entered<'_>>(), 0);
    }

    #[test]
    #[cfg(feature = "tracing")]
    fn with_the_feature_a_task_carries_one_span() {
        assert_eq!(std::mem::size_of::<Trace>(), std::mem::size_of::<tracing::Span>());
    }

    #[test]
    fn kinds_are_the_names_the_console_knows() {
        assert_eq!(Kind::Task.as_str(), "task");
        assert_eq!(Kind::Blocking.as_str(), "blocking");
        assert_eq!(Kind::BlockOn.as_str(), "block_on");
    }
}
