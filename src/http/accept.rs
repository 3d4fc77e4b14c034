//! The accept loop: admits, accepts and spawns a task for each connection until the shutdown
//! signal or a broken listener, looking at the signal before every accept.
//!
//! Invariants:
//! - The signal is polled before each wait of the loop (for a place under the limit, for a
//!   connection, for the end of a backoff) and that wait only if the signal is still pending:
//!   once the signal has completed, no connection is accepted, whatever is queued in the
//!   backlog.
//! - At most [`ACCEPT_BATCH`] accepts happen in one poll of the loop: after that many, it yields
//!   ([`crate::yield_now()`]) so that the tasks queued on its worker run before it accepts again.
//!   The count starts over at each poll (a wait that returns `Pending` ends the poll).
//! - The loop owns the listener: when it returns, the listener is closed.
//! - An accept error never ends the loop, except one that says the listener itself is broken
//!   (`InvalidInput`); the loop backs off ([`FIRST_BACKOFF`], doubling up to [`MAX_BACKOFF`],
//!   back to the first after an accept) and reports the first error of each run with
//!   `tracing::warn!`.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use hyper::body::Incoming;

use super::config::Config;
use super::connection::{self, Connection, CONNECTION_TASK};
use super::gate::Gate;
use super::listener::{is_fatal, Listener};
use super::BoxError;
use crate::join_set::TaskGroup;

/// The most accepts in one poll of the accept loop before it yields.
pub(super) const ACCEPT_BATCH: u32 = 64;

/// Accepts connections and spawns a task for each into `group`, until `signal` completes
/// (`Ok`) or the listener breaks (its error). The listener is dropped on return.
pub(super) async fn accept_until<L, S, B>(
    listener: L,
    service: S,
    config: Config,
    group: &Arc<TaskGroup>,
    gate: &Arc<Gate>,
    signal: impl Future<Output = ()>,
) -> io::Result<()>
where
    L: Listener,
    S: tower_service::Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let builder = Arc::new(connection::builder(group, &config));
    let mut signal = pin!(signal);
    let mut batch = Batch::default();
    let mut backoff = Backoff::default();
    loop {
        let Some(permit) = unless_signalled(signal.as_mut(), &mut batch, gate.admit()).await else {
            return Ok(());
        };
        let (io, peer) = match unless_signalled(signal.as_mut(), &mut batch, listener.accept()).await {
            None => return Ok(()),
            Some(Ok(accepted)) => accepted,
            Some(Err(error)) if is_fatal(&error) => {
                tracing::error!(%error, "crew::http: the listener broke; shutting down");
                return Err(error);
            }
            Some(Err(error)) => {
                drop(permit);
                if unless_signalled(signal.as_mut(), &mut batch, backoff.failed(&error)).await.is_none() {
                    return Ok(());
                }
                continue;
            }
        };
        backoff.recovered();
        L::prepare(&io, config.tcp_nodelay);
        let connection = Connection { builder: builder.clone(), service: service.clone(), peer, config, permit };
        crate::task::Builder::new().name(CONNECTION_TASK).spawn_in_group(group, connection.serve(io));
        if batch.accepted() {
            crate::yield_now().await;
        }
    }
}

/// The accepts of the current poll of the loop.
#[derive(Debug, Default)]
struct Batch {
    accepts: u32,
}

impl Batch {
    /// One more accept in this poll: whether the batch is full, and the loop must yield now
    /// (the count then starts over).
    fn accepted(&mut self) -> bool {
        self.accepts += 1;
        let full = self.accepts >= ACCEPT_BATCH;
        if full {
            self.accepts = 0;
        }
        full
    }

    /// The poll ends here: the next accept is the first of the next poll's batch.
    fn poll_ends(&mut self) {
        self.accepts = 0;
    }
}

/// `work`'s output, unless `signal` completes first; the signal is polled first, at every poll.
async fn unless_signalled<T>(
    mut signal: Pin<&mut impl Future<Output = ()>>,
    batch: &mut Batch,
    work: impl Future<Output = T>,
) -> Option<T> {
    let mut work = pin!(work);
    poll_fn(|cx| {
        if signal.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        match work.as_mut().poll(cx) {
            Poll::Ready(output) => Poll::Ready(Some(output)),
            Poll::Pending => {
                batch.poll_ends();
                Poll::Pending
            }
        }
    })
    .await
}

/// The first wait after an accept error.
const FIRST_BACKOFF: Duration = Duration::from_millis(10);

/// The longest wait between accept errors (axum's one wait after an `EMFILE`).
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// The accept loop's waits after errors: [`FIRST_BACKOFF`], doubling up to [`MAX_BACKOFF`],
/// back to the first after an accept.
#[derive(Debug, Default)]
struct Backoff {
    /// Accept errors since the last accept.
    failures: u64,
}

impl Backoff {
    /// The wait after the `failures`-th error of a run (counted from 0).
    fn delay(failures: u64) -> Duration {
        let doublings = failures.min(u64::from(u32::BITS)) as u32;
        FIRST_BACKOFF.saturating_mul(1u32.checked_shl(doublings).unwrap_or(u32::MAX)).min(MAX_BACKOFF)
    }

    /// Reports `error` (`warn` for the first of a run, `debug` after) and waits.
    async fn failed(&mut self, error: &io::Error) {
        let delay = Backoff::delay(self.failures);
        if self.failures == 0 {
            tracing::warn!(%error, "crew::http: accept failed; retrying, backing off up to 1 s while it fails");
        } else {
            tracing::debug!(%error, failures = self.failures + 1, "crew::http: accept failed again");
        }
        self.failures += 1;
        crate::time::sleep(delay).await;
    }

    /// An accept succeeded: a run of errors, if any, has ended.
    fn recovered(&mut self) {
        if self.failures > 0 {
            tracing::info!(failures = self.failures, "crew::http: accepting again");
            self.failures = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_10_ms_up_to_1_s() {
        let delays: Vec<u128> = (0..10).map(|n| Backoff::delay(n).as_millis()).collect();
        assert_eq!(delays, [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
        assert_eq!(Backoff::delay(u64::MAX), MAX_BACKOFF);
    }

    #[test]
    fn a_batch_is_full_at_64_accepts_and_starts_over_when_a_poll_ends() {
        let mut batch = Batch::default();
        let full: Vec<bool> = (0..ACCEPT_BATCH * 2).map(|_| batch.accepted()).collect();
        let at: Vec<usize> = full.iter().enumerate().filter(|(_, full)| **full).map(|(n, _)| n + 1).collect();
        assert_eq!(at, [64, 128]);
        for _ in 0..10 {
            batch.accepted();
        }
        batch.poll_ends();
        assert!(!(1..ACCEPT_BATCH).any(|_| batch.accepted()), "63 accepts after a new poll began");
        assert!(batch.accepted(), "the 64th");
    }
}
