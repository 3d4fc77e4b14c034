//! The `tracing` span each task's polls run in (the `tracing` feature), so that what a task logs
//! says which task it came from.
//!
//! Invariants:
//! - With the feature, a task's span is created once, at spawn, from its [`TaskInfo`]: target
//!   `crew::task`, name `task`, level INFO, fields `task.id`, `task.name` (when it has one),
//!   `loc.file`, `loc.line` and `loc.col` (where it was spawned). Every poll of the task, and
//!   the drop of its future, runs inside it.
//! - Without the feature, [`Trace`] is zero-sized and entering it is nothing: no field, no call,
//!   no byte in the task's allocation.

use super::TaskInfo;

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
    /// The span of the task `info`.
    #[cfg(feature = "tracing")]
    #[inline]
    pub(crate) fn new(info: &TaskInfo) -> Trace {
        let location = info.location();
        let span = tracing::info_span!(
            target: "crew::task",
            "task",
            task.id = info.id().as_u64(),
            task.name = tracing::field::Empty,
            loc.file = location.file(),
            loc.line = location.line(),
            loc.col = location.column(),
        );
        if let Some(name) = info.name() {
            span.record("task.name", name);
        }
        Trace(span)
    }

    /// Nothing, without the `tracing` feature.
    #[cfg(not(feature = "tracing"))]
    #[inline]
    pub(crate) fn new(_info: &TaskInfo) -> Trace {
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
}
