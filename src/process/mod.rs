//! Child processes on crew's driver (the `process` feature, Unix): [`Command`] spawns a
//! [`Child`] whose piped streams ([`ChildStdin`], [`ChildStdout`], [`ChildStderr`]) are
//! futures-io's `AsyncWrite` and `AsyncRead`, and whose exit [`Child::wait`] awaits, with no
//! thread per child or per pipe. The shape of `tokio::process`.
//!
//! Invariants:
//! - **Exits are watched without threads**: on Linux 5.3+ a child's pidfd is registered with
//!   crew's driver and reads as ready when the child exits; elsewhere (an older kernel, a
//!   seccomp filter that refuses `pidfd_open`, other Unixes, or [`NO_PIDFD_ENV`]`=1`) a
//!   `SIGCHLD` through [`crate::signal`] wakes every wait, which `try_wait`s its own child
//!   (`watch.rs`).
//! - **Only crew's children are reaped**: every reap is `waitpid` of one pid crew spawned, never
//!   `waitpid(-1)`, in either mode; a child spawned by other code is never reaped behind its
//!   back.
//! - **No zombies**: a [`Child`] dropped before a wait reaped it (killed first with
//!   [`Command::kill_on_drop`]) goes to a process-wide orphan queue, reaped by a waker that the
//!   driver wakes on the thread that turns it, with no task or thread of its own
//!   (`orphans.rs`): orphans are reaped whenever a crew thread turns the driver (a worker that
//!   parks, a `block_on`).
//! - **Pipes read to their end**: a read gives end of stream once every write end is closed,
//!   the child's own and those of any process it handed them to; a grandchild in the background
//!   that holds the child's stdout keeps a read to the end waiting (`pipe.rs`).
//!
//! Limits: a `SIGCHLD` set to `SIG_IGN` lets the kernel reap children itself. With pidfds a
//! wait then fails with `ECHILD`; in `SIGCHLD` mode crew's handler replaces an ignore set before
//! the first spawn, but one set after it stops the deliveries, and a wait may never end
//! (`watch.rs`). A paused clock does not wait for a child: its exit is an outside event, as a
//! socket's data is (`docs/testing.md`).
//!
//! # Examples
//!
//! ```
//! use std::process::Stdio;
//!
//! use crew::io::{AsyncReadExt, AsyncWriteExt};
//! use crew::process::Command;
//!
//! crew::block_on(async {
//!     let mut child = Command::new("tr").arg("a-z").arg("A-Z").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
//!     let mut stdin = child.stdin.take().unwrap();
//!     stdin.write_all(b"shout").await?;
//!     drop(stdin); // the end of `tr`'s input
//!     let mut upper = String::new();
//!     child.stdout.take().unwrap().read_to_string(&mut upper).await?;
//!     assert_eq!(upper, "SHOUT");
//!     assert!(child.wait().await?.success());
//!     std::io::Result::Ok(())
//! })
//! .unwrap();
//! ```

mod child;
mod command;
mod orphans;
mod pipe;
mod watch;

pub use child::Child;
pub use command::Command;
pub use pipe::{ChildStderr, ChildStdin, ChildStdout};
pub use std::process::{ExitStatus, Output, Stdio};
pub use watch::NO_PIDFD_ENV;
