//! Waiting for Unix signals (the `signal` feature): [`ctrl_c`] for `SIGINT`, [`signal`] for any
//! one signal (`SIGTERM`, `SIGHUP`, ...), and [`Signals`], a stream of several: what a service
//! needs to shut down cleanly. Built on the smol project's async-signal, whose notifications
//! come through a socket pair on async-io's reactor, the one crew's sockets use. Unix only.
//!
//! Invariants:
//! - A signal's handler is installed when [`ctrl_c`], [`signal`] or [`Signals::new`] is called,
//!   not when the future is first polled: a signal sent after the call is never missed (nor
//!   does it run its default action, such as ending the process).
//! - Once listened for, a signal no longer runs its default action for the rest of the
//!   process, even after the future or stream is dropped: signal-hook-registry, which
//!   async-signal installs handlers with, keeps its handler in place (tokio's `signal` does the
//!   same). A signal that arrives while nothing listens is dropped.
//! - A signal that cannot be caught (`SIGKILL`, `SIGSTOP`) or that signal-hook-registry
//!   refuses (`SIGILL`, `SIGFPE`, `SIGSEGV`: [`UNCATCHABLE`]) is never registered: [`signal`]'s
//!   future gives an `InvalidInput` error naming it at its first poll, as it gives any error of
//!   the registration. ([`Signals::new`] panics on them: it is async-signal's own.)
//!
//! # Examples
//!
//! ```no_run
//! use crew::signal::{self, Signal};
//!
//! # async fn run() -> std::io::Result<()> {
//! // Whichever comes first: Ctrl-C, or the `SIGTERM` of `kill` or a container runtime.
//! let ctrl_c = signal::ctrl_c();
//! let terminate = signal::signal(Signal::Term);
//! futures_lite::future::or(ctrl_c, terminate).await?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_lite::Stream;

/// The signals one can listen for: async-signal's `Signal` (`Signal::Int`, `Signal::Term`,
/// `Signal::Hup`, `Signal::Usr1`, ...), re-exported.
///
/// # Examples
///
/// ```
/// assert_eq!(crew::signal::Signal::Term as i32, 15);
/// ```
pub use async_signal::Signal;

/// A stream of the signals of a set, as they arrive: async-signal's `Signals`, re-exported.
/// `Signals::new([Signal::Term, Signal::Hup])?` registers them at once; the stream never ends.
///
/// # Panics
///
/// `Signals::new` and `add_signals` panic for the signals in [`UNCATCHABLE`] (where
/// [`signal`] gives an error instead).
///
/// # Examples
///
/// ```no_run
/// use crew::signal::{Signal, Signals};
/// use futures_lite::StreamExt;
///
/// # async fn run() -> std::io::Result<()> {
/// let mut signals = Signals::new([Signal::Hup, Signal::Term])?;
/// while let Some(signal) = signals.next().await {
///     match signal? {
///         Signal::Hup => println!("reloading the configuration"),
///         _ => break,
///     }
/// }
/// # Ok(()) }
/// ```
pub use async_signal::Signals;

/// The signals [`signal`] refuses with an error: `SIGKILL` and `SIGSTOP` cannot be caught, and
/// signal-hook-registry refuses `SIGILL`, `SIGFPE` and `SIGSEGV` (their handlers could not
/// return safely).
///
/// # Examples
///
/// ```
/// use crew::signal::{Signal, UNCATCHABLE};
///
/// assert!(UNCATCHABLE.contains(&Signal::Kill));
/// assert!(!UNCATCHABLE.contains(&Signal::Term));
/// ```
pub const UNCATCHABLE: [Signal; 5] = [Signal::Kill, Signal::Stop, Signal::Ill, Signal::Fpe, Signal::Segv];

/// Completes at the next `SIGINT` (Ctrl-C in a terminal) after this call: [`signal`]`(Signal::Int)`.
///
/// # Examples
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// crew::signal::ctrl_c().await?;
/// println!("shutting down");
/// # Ok(()) }
/// ```
pub fn ctrl_c() -> NextSignal {
    signal(Signal::Int)
}

/// Completes at the next delivery of `signal` after this call, which installs its handler.
///
/// # Examples
///
/// ```
/// use crew::signal::{signal, Signal};
///
/// // SIGKILL cannot be caught: the future says so.
/// let error = crew::block_on(signal(Signal::Kill)).unwrap_err();
/// assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
/// assert!(error.to_string().contains("Kill"), "{error}");
/// ```
pub fn signal(signal: Signal) -> NextSignal {
    let signals = if UNCATCHABLE.contains(&signal) {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("crew::signal::signal({signal:?}): that signal cannot be listened for (any signal but {UNCATCHABLE:?} can)"),
        ))
    } else {
        Signals::new([signal])
    };
    NextSignal { signals: signals.map_err(Some), signal }
}

/// The future of [`ctrl_c`] and [`signal`]: `Ok(())` at the signal's next delivery, `Err` if
/// its handler could not be installed. Dropping it stops listening.
///
/// # Examples
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let terminate: crew::signal::NextSignal = crew::signal::signal(crew::signal::Signal::Term);
/// terminate.await
/// # }
/// ```
#[must_use = "a signal is waited for only when the future is awaited"]
pub struct NextSignal {
    /// The registration, or its error until the first poll gives it (`None` after).
    signals: Result<Signals, Option<io::Error>>,
    signal: Signal,
}

impl Future for NextSignal {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let signal = self.signal;
        match &mut self.signals {
            Ok(signals) => match Pin::new(signals).poll_next(cx) {
                Poll::Ready(Some(delivered)) => Poll::Ready(delivered.map(|_| ())),
                Poll::Ready(None) => {
                    Poll::Ready(Err(io::Error::other(format!("the stream of {signal:?} signals ended"))))
                }
                Poll::Pending => Poll::Pending,
            },
            Err(error) => {
                let error =
                    error.take().unwrap_or_else(|| io::Error::other("NextSignal polled after it gave its error"));
                Poll::Ready(Err(error))
            }
        }
    }
}

impl fmt::Debug for NextSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NextSignal").field("signal", &self.signal).field("registered", &self.signals.is_ok()).finish()
    }
}
