//! The process's orphans: children whose [`Child`](super::Child) was dropped before they were
//! reaped, reaped in the background with no thread and no task of their own.
//!
//! Invariants:
//! - **No zombie is left behind** while crew's driver turns: an orphan stays in the queue until
//!   `try_wait` reaped it (or failed: `ECHILD`, someone else reaped it). Each orphan's wakeup is
//!   the [`Reaper`] waker, stored with its pidfd's readiness (a waiter of the source's list,
//!   outside any task's budget), or with the queue's one `SIGCHLD` listener; a wake runs a
//!   *pass* that `try_wait`s every orphan after its wakeup is in place again, so an exit after
//!   a look wakes the next pass.
//! - **Passes run on the thread that wakes the reaper**: the thread that turned the driver (a
//!   crew worker, a `block_on` thread), or the one that dropped the `Child`. So orphans are
//!   reaped when a crew thread turns the driver; a process whose crew threads are all gone keeps
//!   its last orphans as zombies until it exits.
//! - **A pass holds the queue's lock**; what it reaped is dropped after it released the lock (an
//!   orphan's drop deregisters its pidfd, which wakes that source's waiters). A wake on the
//!   thread of a pass, during it, comes from the pass's own calls and is skipped (it would
//!   deadlock on the lock): the pass looks at every orphan anyway.

use std::cell::Cell;
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use futures_lite::Stream;

use crate::driver::{Direction, IoSource, WaiterId};
use crate::signal::Signals;

use super::watch::ExitWatch;

/// A child no one will wait for: the std handle and its pidfd, if it has one.
struct Orphan {
    child: std::process::Child,
    /// The pidfd and the reaper's place among its waiters (`None` in `SIGCHLD` mode).
    pidfd: Option<(IoSource<OwnedFd>, WaiterId)>,
}

/// The queue of orphans, and the `SIGCHLD` listener that wakes the reaper in `SIGCHLD` mode.
#[derive(Default)]
struct Orphans {
    list: Vec<Orphan>,
    sigchld: Option<Signals>,
}

fn orphans() -> &'static Mutex<Orphans> {
    static ORPHANS: OnceLock<Mutex<Orphans>> = OnceLock::new();
    ORPHANS.get_or_init(Mutex::default)
}

/// The waker of every orphan: its wake runs a pass (see the module docs).
struct Reaper;

impl Wake for Reaper {
    fn wake(self: Arc<Self>) {
        reap();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        reap();
    }
}

thread_local! {
    /// True while this thread runs a pass (see the module docs).
    static IN_PASS: Cell<bool> = const { Cell::new(false) };
}

/// Hands `child`, not yet reaped, to the reaper, with its watch; reaps it now if it exited.
pub(crate) fn adopt(child: std::process::Child, watch: ExitWatch) {
    let (pidfd, signals) = match watch {
        ExitWatch::Pidfd(pidfd) => {
            let id = pidfd.waiter_id();
            (Some((pidfd, id)), None)
        }
        ExitWatch::Sigchld(signals) => (None, Some(signals)),
        // `try_wait` fails at once: the first pass drops it.
        ExitWatch::Gone => (None, None),
    };
    let unused = {
        let mut queue = orphans().lock().unwrap_or_else(PoisonError::into_inner);
        queue.list.push(Orphan { child, pidfd });
        // The queue's listener is the first orphan's (under the same lock as the push: a pass
        // drops it only when it finds the list empty); the others' are dropped, since the
        // queue's counts every delivery after it was made, before the pass below looks.
        match signals {
            Some(signals) if queue.sigchld.is_none() => {
                queue.sigchld = Some(signals);
                None
            }
            signals => signals,
        }
    };
    drop(unused);
    reap();
}

/// Runs a pass: `try_wait`s every orphan, its wakeup in place first.
fn reap() {
    let Some(_pass) = Pass::enter() else {
        return;
    };
    let waker = Waker::from(Arc::new(Reaper));
    let mut cx = Context::from_waker(&waker);
    let reaped = {
        let mut queue = orphans().lock().unwrap_or_else(PoisonError::into_inner);
        let queue = &mut *queue;
        if let Some(signals) = &mut queue.sigchld {
            // Consumes the deliveries so far and leaves the waker for the next one.
            // (An error of the signal's pipe, which crew never closes, would leave it unwaited:
            // the next orphan's pass polls it again.)
            while let Poll::Ready(Some(Ok(_))) = Pin::new(&mut *signals).poll_next(&mut cx) {}
        }
        let mut reaped = Vec::new();
        let mut index = 0;
        while index < queue.list.len() {
            if queue.list[index].poll_reaped(&mut cx) {
                reaped.push(queue.list.swap_remove(index));
            } else {
                index += 1;
            }
        }
        if queue.list.is_empty() {
            // No orphan to wake for: the listener stops waiting (a new orphan brings one).
            queue.sigchld = None;
        }
        reaped
    };
    drop(reaped);
}

/// Evidence that this thread runs a pass: [`IN_PASS`] is set while it lives (a panic included).
struct Pass(());

impl Pass {
    /// `None` if this thread runs a pass already.
    fn enter() -> Option<Pass> {
        IN_PASS.with(|in_pass| !in_pass.replace(true)).then_some(Pass(()))
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        IN_PASS.with(|in_pass| in_pass.set(false));
    }
}

impl Orphan {
    /// True once reaped (or beyond reaping: `try_wait` failed); else its wakeup is in place.
    fn poll_reaped(&mut self, cx: &mut Context<'_>) -> bool {
        let child = &mut self.child;
        let Some((pidfd, id)) = &mut self.pidfd else {
            return !matches!(child.try_wait(), Ok(None));
        };
        loop {
            // Looks if the pidfd seems readable; a child still running clears what it saw (by
            // its tick), so the wait below waits for the next edge (`driver/source.rs`).
            let looked = pidfd.try_io(Direction::Read, |_| match child.try_wait() {
                Ok(None) => Err(io::ErrorKind::WouldBlock.into()),
                Ok(Some(_)) => Ok(()),
                Err(error) => Err(error),
            });
            match looked {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
                // Reaped, or beyond reaping (`ECHILD`; a source shut down, which only its drop does).
                _ => return true,
            }
            match pidfd.poll_waiter(*id, Direction::Read, cx) {
                Poll::Pending => return false,
                // Readable since (its place given up with the `Ready`): look again.
                Poll::Ready(_) => *id = pidfd.waiter_id(),
            }
        }
    }
}

impl fmt::Debug for Orphan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Orphan").field("pid", &self.child.id()).field("pidfd", &self.pidfd.is_some()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The orphans not yet reaped.
    fn pending() -> usize {
        orphans().lock().unwrap_or_else(PoisonError::into_inner).list.len()
    }

    #[test]
    #[cfg_attr(miri, ignore = "miri does not run processes")]
    fn an_orphan_leaves_the_queue_once_it_exited_and_a_pass_within_a_pass_is_skipped() {
        // The only test of the library that spawns children: the queue is this test's alone.
        let mut command = crate::process::Command::new("sleep");
        drop(command.arg("0.5").spawn().unwrap());
        assert_eq!(pending(), 1, "still running at its drop: queued");
        let start = std::time::Instant::now();
        while pending() > 0 {
            assert!(start.elapsed() < std::time::Duration::from_secs(60), "the orphan was never reaped");
            // Turns the driver, whose turn wakes the reaper.
            crate::block_on(crate::time::sleep(std::time::Duration::from_millis(5)));
        }
        let pass = Pass::enter().expect("no pass runs on this thread");
        assert!(Pass::enter().is_none(), "one pass at a time on a thread");
        reap(); // skipped: in a real pass, it would wait for the lock its own thread holds
        drop(pass);
        assert!(!IN_PASS.with(Cell::get));
    }
}
