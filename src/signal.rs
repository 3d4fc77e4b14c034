//! Waiting for Unix signals (the `signal` feature): [`ctrl_c`] for `SIGINT`, [`signal`] for any
//! one signal (`SIGTERM`, `SIGHUP`, ...), and [`Signals`], a stream of several: what a service
//! needs to shut down cleanly. On crew's own driver: each signal listened for gets a socket
//! pair, whose write end signal-hook's handler writes a byte to (its safe
//! `low_level::pipe::register`), and whose read end the driver watches. Unix only.
//!
//! Invariants:
//! - A signal's handler is installed when [`ctrl_c`], [`signal`] or [`Signals::new`] is called,
//!   not when the future is first polled: a signal sent after the call is never missed (nor
//!   does it run its default action, such as ending the process).
//! - **Every listener made before a delivery sees it.** A signal's deliveries are counted:
//!   whichever listener finds bytes in the pipe drains it and counts one delivery, under the
//!   signal's lock, and every listener compares the count with the one it saw when it was made
//!   (or last completed), under the same lock, after its own drain. Deliveries that come
//!   before any listener looks are one delivery (the kernel coalesces pending signals too).
//! - Once listened for, a signal no longer runs its default action for the rest of the
//!   process, even after the future or stream is dropped: the handler stays in place (tokio's
//!   `signal` does the same). A delivery while nothing listens is counted and seen by no one.
//! - A signal that cannot be caught (`SIGKILL`, `SIGSTOP`) or that signal-hook refuses
//!   (`SIGILL`, `SIGFPE`, `SIGSEGV`: [`UNCATCHABLE`]) is never registered: [`signal`]'s future
//!   and [`Signals::new`] give an `InvalidInput` error naming it.
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

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};

use futures_lite::Stream;

use crate::driver::{Direction, IoSource};

macro_rules! signals {
    ($($(#[$doc:meta])* $name:ident = $number:ident,)*) => {
        /// A Unix signal one can listen for. `Signal::Term as i32` is its number on this
        /// platform.
        ///
        /// # Examples
        ///
        /// ```
        /// assert_eq!(crew::signal::Signal::Term as i32, 15);
        /// assert_eq!(format!("{:?}", crew::signal::Signal::Hup), "Hup");
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i32)]
        #[non_exhaustive]
        pub enum Signal {
            $($(#[$doc])* $name = signal_hook::consts::$number,)*
        }

        #[cfg(test)]
        impl Signal {
            /// Every signal this enum names.
            const ALL: &'static [Signal] = &[$(Signal::$name,)*];
        }
    };
}

signals! {
    /// `SIGHUP`: the terminal hung up; by convention, reload the configuration.
    Hup = SIGHUP,
    /// `SIGINT`: Ctrl-C.
    Int = SIGINT,
    /// `SIGQUIT`: Ctrl-\.
    Quit = SIGQUIT,
    /// `SIGILL` (cannot be listened for).
    Ill = SIGILL,
    /// `SIGTRAP`.
    Trap = SIGTRAP,
    /// `SIGABRT`.
    Abort = SIGABRT,
    /// `SIGBUS`.
    Bus = SIGBUS,
    /// `SIGFPE` (cannot be listened for).
    Fpe = SIGFPE,
    /// `SIGKILL` (cannot be caught).
    Kill = SIGKILL,
    /// `SIGUSR1`.
    Usr1 = SIGUSR1,
    /// `SIGSEGV` (cannot be listened for).
    Segv = SIGSEGV,
    /// `SIGUSR2`.
    Usr2 = SIGUSR2,
    /// `SIGPIPE`.
    Pipe = SIGPIPE,
    /// `SIGALRM`.
    Alarm = SIGALRM,
    /// `SIGTERM`: the polite request to end (`kill`'s default, a container runtime's stop).
    Term = SIGTERM,
    /// `SIGCHLD`: a child process changed state.
    Child = SIGCHLD,
    /// `SIGCONT`.
    Cont = SIGCONT,
    /// `SIGSTOP` (cannot be caught).
    Stop = SIGSTOP,
    /// `SIGTSTP`: Ctrl-Z.
    Tstp = SIGTSTP,
    /// `SIGTTIN`.
    Ttin = SIGTTIN,
    /// `SIGTTOU`.
    Ttou = SIGTTOU,
    /// `SIGURG`.
    Urg = SIGURG,
    /// `SIGXCPU`.
    Xcpu = SIGXCPU,
    /// `SIGXFSZ`.
    Xfsz = SIGXFSZ,
    /// `SIGVTALRM`.
    Vtalarm = SIGVTALRM,
    /// `SIGPROF`.
    Prof = SIGPROF,
    /// `SIGWINCH`: the terminal's size changed.
    Winch = SIGWINCH,
    /// `SIGIO`.
    Io = SIGIO,
    /// `SIGSYS`.
    Sys = SIGSYS,
}

/// The signals crew refuses with an error: `SIGKILL` and `SIGSTOP` cannot be caught, and
/// signal-hook refuses `SIGILL`, `SIGFPE` and `SIGSEGV` (their handlers could not return
/// safely).
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

/// A signal's handler, pipe and count of deliveries, made once per process.
struct Delivery {
    /// The pipe's read end, which the handler's byte makes readable.
    pipe: IoSource<UnixStream>,
    /// Deliveries counted so far (see the module docs), under the lock every listener takes.
    count: Mutex<u64>,
}

/// The registered signals, by number.
fn deliveries() -> &'static Mutex<HashMap<i32, Arc<Delivery>>> {
    static DELIVERIES: OnceLock<Mutex<HashMap<i32, Arc<Delivery>>>> = OnceLock::new();
    DELIVERIES.get_or_init(Mutex::default)
}

/// `signal`'s delivery, its handler installed by the first call.
fn delivery(signal: Signal) -> io::Result<Arc<Delivery>> {
    if UNCATCHABLE.contains(&signal) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("crew::signal: {signal:?} cannot be listened for (any signal but {UNCATCHABLE:?} can)"),
        ));
    }
    let mut registered = deliveries().lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(delivery) = registered.get(&(signal as i32)) {
        return Ok(delivery.clone());
    }
    let (read, write) = UnixStream::pair()?;
    read.set_nonblocking(true)?;
    // A full pipe drops the handler's byte: a delivery is pending then anyway.
    write.set_nonblocking(true)?;
    let pipe = IoSource::new(read)?;
    signal_hook::low_level::pipe::register(signal as i32, write)?;
    let delivery = Arc::new(Delivery { pipe, count: Mutex::new(0) });
    registered.insert(signal as i32, delivery.clone());
    Ok(delivery)
}

impl Delivery {
    /// The count now, after draining what the pipe holds (one delivery if anything).
    fn drain_and_count(&self) -> io::Result<u64> {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        let mut drained = false;
        let mut buf = [0; 64];
        loop {
            // Through the readiness, so that a `WouldBlock` clears what it saw (no waiter then
            // spins on a drained pipe); then past it: a byte written since its last
            // `WouldBlock` and not yet seen by a driver turn is a delivery before this call,
            // which a listener made now must not hear.
            let read = match self.pipe.try_io(Direction::Read, |pipe| (&*pipe).read(&mut buf)) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => self.pipe.get_ref().read(&mut buf),
                read => read,
            };
            match read {
                Ok(0) => return Err(io::Error::other("crew::signal: the signal pipe closed")),
                Ok(_) => drained = true,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        *count += u64::from(drained);
        Ok(*count)
    }
}

/// One signal's listener: ready once the count passed the one it saw.
struct Listener {
    signal: Signal,
    delivery: Arc<Delivery>,
    seen: u64,
    /// Its place among the pipe's waiters, while it waits.
    waiting: Option<crate::driver::WaiterId>,
}

impl Listener {
    fn new(signal: Signal) -> io::Result<Listener> {
        let delivery = delivery(signal)?;
        let seen = delivery.drain_and_count()?;
        Ok(Listener { signal, delivery, seen, waiting: None })
    }

    /// Ready at the next delivery after the last one it saw.
    fn poll_delivery(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let count = self.delivery.drain_and_count()?;
            if count > self.seen {
                self.seen = count;
                self.stop_waiting();
                return Poll::Ready(Ok(()));
            }
            let id = *self.waiting.get_or_insert_with(|| self.delivery.pipe.waiter_id());
            match self.delivery.pipe.poll_waiter(id, Direction::Read, cx) {
                // Readable again: drain and count.
                Poll::Ready(Ok(())) => self.waiting = None,
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn stop_waiting(&mut self) {
        if let Some(id) = self.waiting.take() {
            self.delivery.pipe.forget_waiter(id);
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop_waiting();
    }
}

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
    NextSignal { listener: Listener::new(signal).map_err(Some), signal }
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
    /// The listener, or its error until the first poll gives it (`None` after).
    listener: Result<Listener, Option<io::Error>>,
    signal: Signal,
}

impl Future for NextSignal {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.listener {
            Ok(listener) => listener.poll_delivery(cx),
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
        f.debug_struct("NextSignal").field("signal", &self.signal).field("registered", &self.listener.is_ok()).finish()
    }
}

/// A stream of the signals of a set, as they arrive: `Signals::new([Signal::Term,
/// Signal::Hup])?` installs their handlers at once; the stream never ends. Deliveries of one
/// signal that come before the stream looks are one item.
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
pub struct Signals {
    listeners: Vec<Listener>,
    /// Where the next poll starts looking, so that one busy signal does not hide the others.
    next: usize,
}

impl Signals {
    /// Listens for each of `signals` from now on.
    ///
    /// # Errors
    ///
    /// `InvalidInput` naming a signal of [`UNCATCHABLE`]; the kernel's error if a handler or a
    /// pipe cannot be made.
    ///
    /// # Examples
    ///
    /// ```
    /// use crew::signal::{Signal, Signals};
    ///
    /// assert!(Signals::new([Signal::Usr1]).is_ok());
    /// let error = Signals::new([Signal::Usr1, Signal::Stop]).unwrap_err();
    /// assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    /// ```
    pub fn new(signals: impl IntoIterator<Item = Signal>) -> io::Result<Signals> {
        let mut listeners: Vec<Listener> = Vec::new();
        for signal in signals {
            if listeners.iter().all(|listener| listener.signal != signal) {
                listeners.push(Listener::new(signal)?);
            }
        }
        Ok(Signals { listeners, next: 0 })
    }
}

impl Stream for Signals {
    type Item = io::Result<Signal>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<io::Result<Signal>>> {
        let this = &mut *self;
        let len = this.listeners.len();
        for offset in 0..len {
            let index = (this.next + offset) % len;
            let listener = &mut this.listeners[index];
            if let Poll::Ready(delivered) = listener.poll_delivery(cx) {
                this.next = (index + 1) % len;
                return Poll::Ready(Some(delivered.map(|()| listener.signal)));
            }
        }
        Poll::Pending
    }
}

impl fmt::Debug for Signals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let signals: Vec<Signal> = self.listeners.iter().map(|listener| listener.signal).collect();
        f.debug_struct("Signals").field("signals", &signals).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_signal_has_its_platform_number_and_the_uncatchable_are_named() {
        assert_eq!(Signal::Int as i32, signal_hook::consts::SIGINT);
        assert_eq!(Signal::Term as i32, signal_hook::consts::SIGTERM);
        for signal in UNCATCHABLE {
            assert!(Signal::ALL.contains(&signal));
        }
        let mut numbers: Vec<i32> = Signal::ALL.iter().map(|signal| *signal as i32).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), Signal::ALL.len(), "no two names share a number");
    }
}
