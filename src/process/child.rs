//! [`Child`]: a spawned child process, its pipes, and its exit awaited on crew's driver.
//!
//! Invariants:
//! - A `Child` is *running* (std's handle and its [`ExitWatch`]) until a wait or `try_wait`
//!   reaped it, then *exited* with its status: [`Child::id`] is `Some` exactly while running,
//!   and a wait after the exit gives the same status again.
//! - A `Child` dropped while running is handed to the orphan queue (`orphans.rs`), after a
//!   `SIGKILL` if it was spawned with `kill_on_drop(true)`: never left a zombie, and no thread
//!   or task waits for it.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::process::{ExitStatus, Output};
use std::task::Poll;

use futures_lite::io::AsyncReadExt;

use super::orphans;
use super::pipe::{ChildStderr, ChildStdin, ChildStdout};
use super::watch::ExitWatch;

/// A child process spawned by [`Command::spawn`](super::Command::spawn), as tokio's: its
/// piped streams are the public fields, and its exit is awaited with [`wait`](Child::wait) on
/// crew's driver (a pidfd on Linux, else `SIGCHLD`), with no thread per child.
///
/// Dropping a `Child` does not kill it (unless it was spawned with
/// [`kill_on_drop(true)`](super::Command::kill_on_drop)), and it is reaped in the background
/// once it exits: no zombie is left behind.
///
/// # Examples
///
/// ```
/// crew::block_on(async {
///     let mut child = crew::process::Command::new("true").spawn().unwrap();
///     assert!(child.id().is_some());
///     assert!(child.wait().await.unwrap().success());
///     assert_eq!(child.id(), None);
/// });
/// ```
pub struct Child {
    /// The writing end of the child's stdin, if it was [`Stdio::piped`](std::process::Stdio::piped).
    pub stdin: Option<ChildStdin>,
    /// The reading end of the child's stdout, if it was piped.
    pub stdout: Option<ChildStdout>,
    /// The reading end of the child's stderr, if it was piped.
    pub stderr: Option<ChildStderr>,
    state: State,
    kill_on_drop: bool,
}

/// Where a child stands (see the module docs).
enum State {
    Running { child: std::process::Child, watch: ExitWatch },
    Exited(ExitStatus),
    /// Only while a drop hands it on.
    Gone,
}

impl Child {
    /// A spawned child: `child`'s pipes are taken and registered, `watch` is its exit's.
    ///
    /// # Errors
    ///
    /// A pipe that cannot be registered; the child is then killed and handed to the reaper.
    pub(crate) fn new(mut child: std::process::Child, watch: ExitWatch, kill_on_drop: bool) -> io::Result<Child> {
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        // Made whole first, so that an error below drops it as a `kill_on_drop` child.
        let mut made = Child { stdin: None, stdout: None, stderr: None, state: State::Running { child, watch }, kill_on_drop: true };
        made.stdin = stdin.map(ChildStdin::from_std).transpose()?;
        made.stdout = stdout.map(ChildStdout::from_std).transpose()?;
        made.stderr = stderr.map(ChildStderr::from_std).transpose()?;
        made.kill_on_drop = kill_on_drop;
        Ok(made)
    }

    /// The child's process id while it runs (or has exited but not been waited for); `None`
    /// once a wait returned its status.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let mut child = crew::process::Command::new("true").spawn().unwrap();
    ///     let pid: u32 = child.id().unwrap();
    ///     assert!(pid > 0);
    ///     child.wait().await.unwrap();
    ///     assert_eq!(child.id(), None);
    /// });
    /// ```
    pub fn id(&self) -> Option<u32> {
        match &self.state {
            State::Running { child, .. } => Some(child.id()),
            State::Exited(_) | State::Gone => None,
        }
    }

    /// Waits for the child to exit and reaps it, closing its stdin first (so a child that reads
    /// its stdin to the end is not waited for forever). Cancel-safe: dropping the future leaves
    /// the child as it was.
    ///
    /// # Errors
    ///
    /// The kernel's: `ECHILD` if the child was reaped behind crew's back (a `SIGCHLD` set to
    /// `SIG_IGN`, a `waitpid(-1)` elsewhere in the process).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let mut child = crew::process::Command::new("sh").args(["-c", "exit 7"]).spawn().unwrap();
    ///     assert_eq!(child.wait().await.unwrap().code(), Some(7));
    /// });
    /// ```
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        poll_fn(|cx| {
            let polled = match &mut self.state {
                State::Running { child, watch } => watch.poll_exit(child, cx),
                State::Exited(status) => return Poll::Ready(Ok(*status)),
                State::Gone => unreachable!("a Child is gone only inside its drop"),
            };
            if let Poll::Ready(Ok(status)) = polled {
                self.state = State::Exited(status);
            }
            polled
        })
        .await
    }

    /// The child's status if it exited (reaping it), `None` if it still runs; never waits.
    ///
    /// # Errors
    ///
    /// The kernel's (see [`wait`](Child::wait)).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let mut child = crew::process::Command::new("sleep").arg("10").spawn().unwrap();
    ///     assert_eq!(child.try_wait().unwrap(), None);
    ///     child.kill().await.unwrap();
    ///     assert!(child.try_wait().unwrap().is_some());
    /// });
    /// ```
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match &mut self.state {
            State::Running { child, .. } => {
                let status = child.try_wait()?;
                if let Some(status) = status {
                    self.state = State::Exited(status);
                }
                Ok(status)
            }
            State::Exited(status) => Ok(Some(*status)),
            State::Gone => unreachable!("a Child is gone only inside its drop"),
        }
    }

    /// Sends the child `SIGKILL`, without waiting for it to exit.
    ///
    /// # Errors
    ///
    /// `InvalidInput` naming the child if a wait already reaped it (its pid may be another
    /// process's by now); the kernel's error from `kill`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::os::unix::process::ExitStatusExt;
    ///
    /// crew::block_on(async {
    ///     let mut child = crew::process::Command::new("sleep").arg("10").spawn().unwrap();
    ///     child.start_kill().unwrap();
    ///     assert_eq!(child.wait().await.unwrap().signal(), Some(9));
    ///     assert!(child.start_kill().is_err());
    /// });
    /// ```
    pub fn start_kill(&mut self) -> io::Result<()> {
        match &mut self.state {
            State::Running { child, .. } => child.kill(),
            State::Exited(status) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("crew::process: the child has exited already ({status}) and was reaped: nothing to kill"),
            )),
            State::Gone => unreachable!("a Child is gone only inside its drop"),
        }
    }

    /// Sends the child `SIGKILL` and waits for it to exit ([`start_kill`](Child::start_kill),
    /// then [`wait`](Child::wait)).
    ///
    /// # Errors
    ///
    /// As [`start_kill`](Child::start_kill) and [`wait`](Child::wait).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let mut child = crew::process::Command::new("sleep").arg("10").spawn().unwrap();
    ///     child.kill().await.unwrap();
    ///     assert_eq!(child.id(), None);
    /// });
    /// ```
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await.map(drop)
    }

    /// Waits for the child to exit while reading its stdout and stderr to their ends (those that
    /// were piped; the others are empty), closing its stdin first.
    ///
    /// # Errors
    ///
    /// A read's error, or the wait's.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::process::Stdio;
    ///
    /// crew::block_on(async {
    ///     let child = crew::process::Command::new("echo").arg("hi").stdout(Stdio::piped()).spawn().unwrap();
    ///     let output = child.wait_with_output().await.unwrap();
    ///     assert_eq!(output.stdout, b"hi\n");
    ///     assert!(output.status.success());
    /// });
    /// ```
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        drop(self.stdin.take());
        let (stdout, stderr) = (self.stdout.take(), self.stderr.take());
        let reads = futures_lite::future::try_zip(read_to_end(stdout), read_to_end(stderr));
        let ((stdout, stderr), status) = futures_lite::future::try_zip(reads, self.wait()).await?;
        Ok(Output { status, stdout, stderr })
    }
}

/// All of a pipe, if there is one.
async fn read_to_end(pipe: Option<impl futures_lite::AsyncRead + Unpin>) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if let Some(mut pipe) = pipe {
        pipe.read_to_end(&mut bytes).await?;
    }
    Ok(bytes)
}

impl Drop for Child {
    fn drop(&mut self) {
        let State::Running { mut child, watch } = std::mem::replace(&mut self.state, State::Gone) else {
            return;
        };
        if self.kill_on_drop {
            // An error says it exited already: reaped below all the same.
            let _ = child.kill();
        }
        if matches!(child.try_wait(), Ok(None)) {
            orphans::adopt(child, watch);
        }
    }
}

impl fmt::Debug for Child {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match &self.state {
            State::Exited(status) => Some(*status),
            State::Running { .. } | State::Gone => None,
        };
        f.debug_struct("Child")
            .field("id", &self.id())
            .field("status", &status)
            .field("stdin", &self.stdin)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .field("kill_on_drop", &self.kill_on_drop)
            .finish()
    }
}
