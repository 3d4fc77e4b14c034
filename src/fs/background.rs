//! [`Background`]: a blocking job of the file system's whose handle lets it run to its end when
//! dropped, where a dropped [`JoinHandle`] would cancel a job not yet started.
//!
//! Invariants:
//! - Dropped before its output was taken, the job is detached: it runs, and its output is
//!   dropped on the blocking pool. A file's writes behind and a directory's batch thus never
//!   stop halfway because their future or their owner was dropped.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::handle::JoinHandle;

/// A blocking job, detached if dropped before its output was taken.
pub(super) struct Background<T>(Option<JoinHandle<T>>);

impl<T: Send + 'static> Background<T> {
    /// Starts `job` on the blocking pool.
    pub(super) fn spawn(job: impl FnOnce() -> T + Send + 'static) -> Background<T> {
        Background(Some(crate::spawn_blocking(job)))
    }

    /// Whether its output has not been taken yet.
    pub(super) fn in_flight(&self) -> bool {
        self.0.is_some()
    }
}

impl<T> Future for Background<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let handle = self.0.as_mut().expect("crew::fs: a job polled after its output was taken");
        let output = ready!(Pin::new(handle).poll(cx));
        self.0 = None;
        Poll::Ready(output)
    }
}

impl<T> Drop for Background<T> {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.detach();
        }
    }
}
