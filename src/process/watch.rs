//! How crew learns that a child exited ([`ExitWatch`]): a pidfd on crew's driver (Linux 5.3+),
//! else `SIGCHLD` through [`crate::signal`]; and which of the two the process uses ([`Mode`]).
//!
//! Invariants:
//! - **Only crew's own children are reaped.** A watch reaps with `std::process::Child::try_wait`
//!   (`waitpid(pid, WNOHANG)` for that one pid), never `waitpid(-1)`: a child spawned by other
//!   code of the process is never reaped behind its back, in either mode.
//! - **No exit is missed.** A wait looks (`try_wait`) only after its wakeup is in place: the
//!   pidfd is registered before the first look, and a readiness is cleared only by its own
//!   tick after a look that found the child running (`driver/source.rs`); in `SIGCHLD` mode the
//!   listener is made before the child is spawned and counts every delivery after it was made
//!   (`signal.rs`), so an exit after a look is a delivery the next poll sees.
//! - **The mode is chosen once per process** and only ever moves from pidfd to `SIGCHLD`:
//!   [`NO_PIDFD_ENV`] set to `1` forces `SIGCHLD` from the start; a `pidfd_open` that fails
//!   with `ENOSYS` (a kernel before 5.3) or `EPERM` (a seccomp filter) moves the process to
//!   `SIGCHLD` for good. Children watched by a pidfd keep it.
//! - **An ignored `SIGCHLD`** (`SIG_IGN`) makes the kernel reap children itself. With pidfds,
//!   whether the program set it or inherited it across `exec`, the pidfd still reads as ready
//!   (or `pidfd_open` finds the child gone already: `ESRCH`, [`ExitWatch::Gone`]) and
//!   `try_wait` fails with `ECHILD`: that error is what a wait returns (tested). In
//!   `SIGCHLD` mode crew's handler replaces an ignore set before the first spawn (tested); one
//!   set after it stops the deliveries, and a wait may then never end.

use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};

use futures_lite::Stream;

use crate::driver::{Direction, IoSource};
use crate::signal::{Signal, Signals};

/// The environment variable that forces the `SIGCHLD` path even where pidfds work: `1` forces
/// it, `0` (or unset) leaves the choice to the kernel. Read once, at the process's first spawn;
/// any other value fails every spawn with an error that quotes it. A knob for testing the
/// fallback (crew's own tests re-execute themselves with it), not for production.
///
/// # Examples
///
/// ```
/// // `CREW_PROCESS_NO_PIDFD=1 cargo test`: every child's exit comes through `SIGCHLD`.
/// assert_eq!(crew::process::NO_PIDFD_ENV, "CREW_PROCESS_NO_PIDFD");
/// ```
pub const NO_PIDFD_ENV: &str = "CREW_PROCESS_NO_PIDFD";

/// How the process's children's exits are watched (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A pidfd per child, on crew's driver.
    Pidfd,
    /// `SIGCHLD` deliveries, each followed by a `try_wait` of every child waited for.
    Sigchld,
}

/// [`NO_PIDFD_ENV`]'s value read as a mode: `Err` quotes a bad value.
pub(crate) fn mode_from_env(value: Option<&str>) -> Result<Mode, String> {
    match value {
        None | Some("0") => Ok(Mode::Pidfd),
        Some("1") => Ok(Mode::Sigchld),
        Some(bad) => Err(format!("crew::process: {NO_PIDFD_ENV}={bad:?} is not `0` or `1`")),
    }
}

/// The process's mode once chosen ([`current_mode`]), or the bad variable's error.
static MODE: OnceLock<Mutex<Result<Mode, String>>> = OnceLock::new();

/// The process's mode, or the error of a bad [`NO_PIDFD_ENV`]: the variable is read once.
fn current_mode() -> io::Result<Mode> {
    let mode = MODE.get_or_init(|| {
        let value = std::env::var_os(NO_PIDFD_ENV).map(|value| value.to_string_lossy().into_owned());
        let chosen = if cfg!(target_os = "linux") { mode_from_env(value.as_deref()) } else { Ok(Mode::Sigchld) };
        Mutex::new(chosen)
    });
    mode.lock().unwrap_or_else(PoisonError::into_inner).clone().map_err(|bad| io::Error::new(io::ErrorKind::InvalidInput, bad))
}

/// Moves the process to `SIGCHLD` for good (a `pidfd_open` said pidfds cannot be had).
fn fall_back_to_sigchld() {
    if let Some(mode) = MODE.get() {
        *mode.lock().unwrap_or_else(PoisonError::into_inner) = Ok(Mode::Sigchld);
    }
}


/// How one child's exit is watched.
#[derive(Debug)]
pub(crate) enum ExitWatch {
    /// The child's pidfd, readable once it exited.
    Pidfd(IoSource<OwnedFd>),
    /// A `SIGCHLD` listener made before the child was spawned.
    Sigchld(Signals),
    /// Nothing to watch: `pidfd_open` found no such process, so the child was reaped already,
    /// by the kernel (an ignored `SIGCHLD`) or by a `waitpid(-1)` elsewhere; `try_wait` says
    /// which (`ECHILD`).
    Gone,
}

/// A watch in the making: the part that must exist before the child is spawned.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The `SIGCHLD` listener, in `SIGCHLD` mode.
    sigchld: Option<Signals>,
}

impl Prepared {
    /// Before a spawn: checks the mode and, in `SIGCHLD` mode, installs the listener.
    ///
    /// # Errors
    ///
    /// A bad [`NO_PIDFD_ENV`] value, or the signal handler's or pipe's error.
    pub(crate) fn new() -> io::Result<Prepared> {
        let sigchld = match current_mode()? {
            Mode::Pidfd => None,
            Mode::Sigchld => Some(Signals::new([Signal::Child])?),
        };
        Ok(Prepared { sigchld })
    }

    /// After the spawn: the child's watch. `Err` if it cannot be watched; the caller then kills
    /// and reaps the child itself.
    pub(crate) fn watch(self, child: &std::process::Child) -> io::Result<ExitWatch> {
        if let Some(signals) = self.sigchld {
            return Ok(ExitWatch::Sigchld(signals));
        }
        match open_pidfd(child) {
            Ok(pidfd) => Ok(ExitWatch::Pidfd(IoSource::new(pidfd)?)),
            Err(error) if no_such_process(&error) => Ok(ExitWatch::Gone),
            Err(error) if pidfd_unavailable(&error) => {
                fall_back_to_sigchld();
                // The child may have exited already: the listener's first poll looks anyway.
                Ok(ExitWatch::Sigchld(Signals::new([Signal::Child])?))
            }
            Err(error) => Err(error),
        }
    }
}

/// `pidfd_open(child)`.
#[cfg(target_os = "linux")]
fn open_pidfd(child: &std::process::Child) -> io::Result<OwnedFd> {
    use rustix::process::{pidfd_open, Pid, PidfdFlags};
    pidfd_open(Pid::from_child(child), PidfdFlags::empty()).map_err(io::Error::from)
}

/// No pidfds off Linux: the mode is `SIGCHLD` from the start, so this is never called.
#[cfg(not(target_os = "linux"))]
fn open_pidfd(_child: &std::process::Child) -> io::Result<OwnedFd> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// True for the errors that say this process cannot have pidfds at all (not a lack of fds).
fn pidfd_unavailable(error: &io::Error) -> bool {
    use rustix::io::Errno;
    error.kind() == io::ErrorKind::Unsupported || matches!(Errno::from_io_error(error), Some(Errno::NOSYS | Errno::PERM))
}

/// True for `ESRCH`: the child is gone, reaped by someone else than crew.
fn no_such_process(error: &io::Error) -> bool {
    rustix::io::Errno::from_io_error(error) == Some(rustix::io::Errno::SRCH)
}

impl ExitWatch {
    /// `Ready` with the child's status once it exited (and was reaped); else `Pending` with
    /// `cx`'s waker where the exit will wake it.
    pub(crate) fn poll_exit(&mut self, child: &mut std::process::Child, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        match self {
            ExitWatch::Pidfd(pidfd) => loop {
                let event = match pidfd.poll_ready(Direction::Read, cx) {
                    Poll::Ready(Ok(event)) => event,
                    Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                    Poll::Pending => return Poll::Pending,
                };
                match child.try_wait() {
                    Ok(Some(status)) => return Poll::Ready(Ok(status)),
                    Ok(None) => pidfd.clear(event),
                    Err(error) => return Poll::Ready(Err(error)),
                }
            },
            ExitWatch::Sigchld(signals) => loop {
                match child.try_wait() {
                    Ok(Some(status)) => return Poll::Ready(Ok(status)),
                    Ok(None) => {}
                    Err(error) => return Poll::Ready(Err(error)),
                }
                match Pin::new(&mut *signals).poll_next(cx) {
                    Poll::Ready(Some(Ok(_))) => {}
                    Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(error)),
                    Poll::Ready(None) => return Poll::Ready(Err(io::Error::other("crew::process: the SIGCHLD stream ended"))),
                    Poll::Pending => return Poll::Pending,
                }
            },
            ExitWatch::Gone => Poll::Ready(match child.try_wait() {
                Ok(Some(status)) => Ok(status),
                Ok(None) => Err(io::Error::other("crew::process: pidfd_open found no such process, yet it runs")),
                Err(error) => Err(error),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_accepts_0_and_1_and_quotes_anything_else() {
        assert_eq!(mode_from_env(None), Ok(Mode::Pidfd));
        assert_eq!(mode_from_env(Some("0")), Ok(Mode::Pidfd));
        assert_eq!(mode_from_env(Some("1")), Ok(Mode::Sigchld));
        let error = mode_from_env(Some(" 1")).unwrap_err();
        assert!(error.contains("\" 1\"") && error.contains(NO_PIDFD_ENV), "{error}");
        assert!(mode_from_env(Some("yes")).is_err());
    }

    #[test]
    fn only_enosys_and_eperm_mean_no_pidfds() {
        use rustix::io::Errno;
        assert!(pidfd_unavailable(&Errno::NOSYS.into()));
        assert!(pidfd_unavailable(&Errno::PERM.into()));
        assert!(!pidfd_unavailable(&Errno::MFILE.into()), "EMFILE is a lack of fds, not of pidfds");
    }
}
