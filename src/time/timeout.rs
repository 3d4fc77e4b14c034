//! [`Timeout`]: a future raced against a [`Sleep`]; [`timeout`] and [`timeout_at`] make it,
//! [`Elapsed`] is its error.
//!
//! Invariants:
//! - A future that finishes is never reported as timed out: the future is polled before the
//!   sleep, so even a zero-duration timeout returns `Ok` for a ready future.
//! - The future is dropped when the result is returned, timed out or not (`future` is `None`
//!   from then on), so whatever it holds is released then, not when the `Timeout` is dropped.
//!   Polled again after that, the `Timeout` panics with a message, like any finished `async`
//!   block.
//! - The accessors ([`Timeout::get_ref`], [`Timeout::get_mut`], [`Timeout::into_inner`]) give
//!   the future while the `Timeout` holds it, that is until it returned its result; called
//!   after, they panic with a message naming that rule (there is no future left to give). They
//!   never pin-project: `get_mut` takes `&mut self`, which a pinned `Timeout` of a `!Unpin`
//!   future cannot give, so the future is never moved once pinned.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use pin_project_lite::pin_project;

use super::sleep::{sleep, sleep_until, Sleep};

/// Runs `future` for at most `duration`: `Ok` with its output if it finishes first, else
/// `Err(`[`Elapsed`]`)`. Either way the future is dropped when the result is returned (not
/// later, with the `Timeout`), so whatever it holds is released by then.
///
/// The future is polled before the clock is read, so a future that is ready at once wins even
/// against `Duration::ZERO`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use crew::time::{sleep, timeout};
///
/// crew::block_on(async {
///     assert_eq!(timeout(Duration::from_secs(5), async { 7 }).await, Ok(7));
///     let err = timeout(Duration::from_millis(5), sleep(Duration::from_secs(3600))).await.unwrap_err();
///     assert_eq!(err.to_string(), "crew::time::timeout: the future did not finish within 5ms");
/// });
/// ```
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout { future: Some(future), sleep: sleep(duration), limit: Limit::Duration(duration) }
}

/// Runs `future` until `deadline` at the latest: `Ok` with its output if it finishes first,
/// else `Err(`[`Elapsed`]`)`; the future is dropped when the result is returned, as in
/// [`timeout`].
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let deadline = Instant::now() + Duration::from_millis(5);
/// let result = crew::block_on(crew::time::timeout_at(deadline, std::future::pending::<()>()));
/// assert!(result.is_err());
/// ```
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout { future: Some(future), sleep: sleep_until(deadline), limit: Limit::Deadline }
}

pin_project! {
    /// The future returned by [`timeout`] and [`timeout_at`].
    ///
    /// It holds its future until it returns its result, and drops it then: [`get_ref`],
    /// [`get_mut`] and [`into_inner`] reach the future until that moment.
    ///
    /// # Panics
    ///
    /// If polled again after it returned its result (like any finished `async` block).
    ///
    /// [`get_ref`]: Timeout::get_ref
    /// [`get_mut`]: Timeout::get_mut
    /// [`into_inner`]: Timeout::into_inner
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let limited: crew::time::Timeout<_> = crew::time::timeout(Duration::from_secs(1), async { "done" });
    /// assert_eq!(crew::block_on(limited), Ok("done"));
    /// ```
    #[derive(Debug)]
    pub struct Timeout<F> {
        // `None` once the result was returned: the future is dropped then.
        #[pin]
        future: Option<F>,
        sleep: Sleep,
        limit: Limit,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    Duration(Duration),
    Deadline,
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let Some(future) = this.future.as_mut().as_pin_mut() else {
            panic!("crew::time::Timeout polled after it returned its result");
        };
        let result = match future.poll(cx) {
            Poll::Ready(output) => Ok(output),
            // Outside the budget: a future that spends it must still time out.
            Poll::Pending => match this.sleep.poll_unbudgeted(cx) {
                Poll::Ready(()) => Err(Elapsed { limit: *this.limit }),
                Poll::Pending => return Poll::Pending,
            },
        };
        this.future.set(None);
        Poll::Ready(result)
    }
}

impl<F> Timeout<F> {
    /// The future this timeout runs.
    ///
    /// # Panics
    ///
    /// If the timeout already returned its result: it drops its future then (see the module
    /// docs of [`crew::time`](super)); the message says so.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let wake_at = Instant::now() + Duration::from_secs(60);
    /// let limited = crew::time::timeout(Duration::from_secs(1), crew::time::sleep_until(wake_at));
    /// assert_eq!(limited.get_ref().deadline(), Some(wake_at));
    /// ```
    #[track_caller]
    pub fn get_ref(&self) -> &F {
        match &self.future {
            Some(future) => future,
            None => returned("get_ref"),
        }
    }

    /// The future this timeout runs, to change it between polls.
    ///
    /// # Panics
    ///
    /// If the timeout already returned its result: it drops its future then; the message says
    /// so.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let nap = crew::time::sleep(Duration::from_secs(3600));
    /// let mut limited = crew::time::timeout(Duration::from_secs(60), nap);
    /// // Wake the sleep now: it finishes before the limit.
    /// limited.get_mut().reset(Instant::now());
    /// assert_eq!(crew::block_on(limited), Ok(()));
    /// ```
    #[track_caller]
    pub fn get_mut(&mut self) -> &mut F {
        match &mut self.future {
            Some(future) => future,
            None => returned("get_mut"),
        }
    }

    /// The future this timeout runs, without the time limit (its timer is dropped).
    ///
    /// # Panics
    ///
    /// If the timeout already returned its result: it drops its future then; the message says
    /// so.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
    /// pool.block_on(async {
    ///     let slow = crew::time::sleep(Duration::from_secs(60));
    ///     let limited = crew::time::timeout(Duration::from_secs(1), slow);
    ///     // No limit any more: the sleep runs its full minute.
    ///     let start = crew::time::now();
    ///     limited.into_inner().await;
    ///     assert_eq!(crew::time::now() - start, Duration::from_secs(60));
    /// });
    /// ```
    #[track_caller]
    pub fn into_inner(self) -> F {
        match self.future {
            Some(future) => future,
            None => returned("into_inner"),
        }
    }
}

/// The panic of an accessor called after the result was returned.
#[cold]
#[track_caller]
fn returned(accessor: &str) -> ! {
    panic!(
        "crew::time::Timeout::{accessor} called after the timeout returned its result: a Timeout drops its \
         future when it returns, so there is no future left"
    );
}

/// The error of a [`timeout`] whose future did not finish in time.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// let err = crew::block_on(crew::time::timeout(Duration::ZERO, std::future::pending::<()>())).unwrap_err();
/// assert_eq!(err.limit(), Some(Duration::ZERO));
/// let err = crew::block_on(crew::time::timeout_at(Instant::now(), std::future::pending::<()>())).unwrap_err();
/// assert_eq!(err.to_string(), "crew::time::timeout_at: the future did not finish before its deadline");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed {
    limit: Limit,
}

impl Elapsed {
    /// The duration given to [`timeout`]; `None` for [`timeout_at`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let err = crew::block_on(crew::time::timeout(Duration::from_millis(1), std::future::pending::<()>()));
    /// assert_eq!(err.unwrap_err().limit(), Some(Duration::from_millis(1)));
    /// ```
    pub fn limit(&self) -> Option<Duration> {
        match self.limit {
            Limit::Duration(duration) => Some(duration),
            Limit::Deadline => None,
        }
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.limit {
            Limit::Duration(duration) => {
                write!(f, "crew::time::timeout: the future did not finish within {duration:?}")
            }
            Limit::Deadline => f.write_str("crew::time::timeout_at: the future did not finish before its deadline"),
        }
    }
}

impl Error for Elapsed {}

