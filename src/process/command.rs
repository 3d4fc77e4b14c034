//! [`Command`]: std's process builder, with `kill_on_drop`, spawning a [`Child`] on crew's
//! driver (tokio's `Command`, method for method).
//!
//! Invariants:
//! - A spawned child has its exit watch before [`Command::spawn`] returns it: in `SIGCHLD` mode
//!   the listener is made before the fork (`watch.rs`). A child whose watch or pipes cannot be
//!   set up is killed and reaped before the error is returned: no child is left behind
//!   unwatched.
//! - Errors keep std's kind (a missing program is `NotFound`) and name the program.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::future::Future;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ExitStatus, Output, Stdio};

use super::child::Child;
use super::watch::Prepared;

/// A process builder: std's [`Command`](std::process::Command), whose [`spawn`](Command::spawn)
/// gives a [`Child`] on crew's driver, plus [`kill_on_drop`](Command::kill_on_drop). The shape
/// of tokio's `Command`: moving from tokio is a change of path.
///
/// # Examples
///
/// ```
/// let output = crew::block_on(crew::process::Command::new("echo").arg("hello").output()).unwrap();
/// assert_eq!(output.stdout, b"hello\n");
/// ```
#[derive(Debug)]
pub struct Command {
    std: std::process::Command,
    kill_on_drop: bool,
}

impl Command {
    /// A command that runs `program`, found on the `PATH` if it is not a path (std's
    /// [`Command::new`](std::process::Command::new)).
    ///
    /// # Examples
    ///
    /// ```
    /// let command = crew::process::Command::new("ls");
    /// assert_eq!(command.as_std().get_program(), "ls");
    /// ```
    pub fn new(program: impl AsRef<OsStr>) -> Command {
        Command::from(std::process::Command::new(program))
    }

    /// Adds an argument.
    ///
    /// # Examples
    ///
    /// ```
    /// let output = crew::block_on(crew::process::Command::new("echo").arg("-n").arg("hi").output()).unwrap();
    /// assert_eq!(output.stdout, b"hi");
    /// ```
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Adds arguments.
    ///
    /// # Examples
    ///
    /// ```
    /// let output = crew::block_on(crew::process::Command::new("echo").args(["a", "b"]).output()).unwrap();
    /// assert_eq!(output.stdout, b"a b\n");
    /// ```
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Sets an environment variable of the child.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut command = crew::process::Command::new("sh");
    /// command.args(["-c", "echo $GREETING"]).env("GREETING", "hi");
    /// assert_eq!(crew::block_on(command.output()).unwrap().stdout, b"hi\n");
    /// ```
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Command {
        self.std.env(key, value);
        self
    }

    /// Sets environment variables of the child.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut command = crew::process::Command::new("sh");
    /// command.args(["-c", "echo $A$B"]).envs([("A", "1"), ("B", "2")]);
    /// assert_eq!(crew::block_on(command.output()).unwrap().stdout, b"12\n");
    /// ```
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Removes an environment variable from the child's environment.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut command = crew::process::Command::new("sh");
    /// command.args(["-c", "echo \"[$GONE]\""]).env("GONE", "x").env_remove("GONE");
    /// assert_eq!(crew::block_on(command.output()).unwrap().stdout, b"[]\n");
    /// ```
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Clears the child's environment: it inherits no variable.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut command = crew::process::Command::new("/usr/bin/env");
    /// command.env_clear().env("ONLY", "1");
    /// assert_eq!(crew::block_on(command.output()).unwrap().stdout, b"ONLY=1\n");
    /// ```
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// Sets the child's working directory.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut command = crew::process::Command::new("pwd");
    /// command.current_dir("/");
    /// assert_eq!(crew::block_on(command.output()).unwrap().stdout, b"/\n");
    /// ```
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// Sets the child's stdin ([`Stdio::piped`] gives [`Child::stdin`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::process::Stdio;
    ///
    /// let mut command = crew::process::Command::new("cat");
    /// command.stdin(Stdio::null());
    /// assert_eq!(crew::block_on(command.output()).unwrap().stdout, b"");
    /// ```
    pub fn stdin(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stdin(cfg);
        self
    }

    /// Sets the child's stdout ([`Stdio::piped`] gives [`Child::stdout`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::process::Stdio;
    ///
    /// let child = crew::process::Command::new("true").stdout(Stdio::piped()).spawn().unwrap();
    /// assert!(child.stdout.is_some());
    /// # crew::block_on(child.wait_with_output()).unwrap();
    /// ```
    pub fn stdout(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stdout(cfg);
        self
    }

    /// Sets the child's stderr ([`Stdio::piped`] gives [`Child::stderr`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::process::Stdio;
    ///
    /// let child = crew::process::Command::new("true").stderr(Stdio::null()).spawn().unwrap();
    /// assert!(child.stderr.is_none());
    /// # crew::block_on(child.wait_with_output()).unwrap();
    /// ```
    pub fn stderr(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stderr(cfg);
        self
    }

    /// Kills the child (`SIGKILL`) when its [`Child`] is dropped before a wait reaped it (off
    /// by default, as in tokio and std: a dropped child runs on). Either way it is reaped in the
    /// background.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut command = crew::process::Command::new("sleep");
    /// command.arg("100").kill_on_drop(true);
    /// assert!(command.get_kill_on_drop());
    /// drop(command.spawn().unwrap()); // killed, then reaped
    /// ```
    pub fn kill_on_drop(&mut self, kill_on_drop: bool) -> &mut Command {
        self.kill_on_drop = kill_on_drop;
        self
    }

    /// Whether [`kill_on_drop`](Command::kill_on_drop) is set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!crew::process::Command::new("true").get_kill_on_drop());
    /// ```
    pub fn get_kill_on_drop(&self) -> bool {
        self.kill_on_drop
    }

    /// Sets the child's user id (`setuid`; std's `CommandExt::uid`).
    ///
    /// # Examples
    ///
    /// ```
    /// let uid = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).unwrap_or(0);
    /// let status = crew::block_on(crew::process::Command::new("true").uid(uid).status()).unwrap();
    /// assert!(status.success());
    /// ```
    pub fn uid(&mut self, id: u32) -> &mut Command {
        self.std.uid(id);
        self
    }

    /// Sets the child's group id (`setgid`; std's `CommandExt::gid`).
    ///
    /// # Examples
    ///
    /// ```
    /// let gid = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::gid(&m)).unwrap_or(0);
    /// let status = crew::block_on(crew::process::Command::new("true").gid(gid).status()).unwrap();
    /// assert!(status.success());
    /// ```
    pub fn gid(&mut self, id: u32) -> &mut Command {
        self.std.gid(id);
        self
    }

    /// Puts the child in process group `pgroup` (`0`: a new group of its own; std's
    /// `CommandExt::process_group`).
    ///
    /// # Examples
    ///
    /// ```
    /// let status = crew::block_on(crew::process::Command::new("true").process_group(0).status()).unwrap();
    /// assert!(status.success());
    /// ```
    pub fn process_group(&mut self, pgroup: i32) -> &mut Command {
        self.std.process_group(pgroup);
        self
    }

    /// std's command inside, for what this type does not wrap.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut command = crew::process::Command::new("echo");
    /// command.arg("x");
    /// assert_eq!(command.as_std().get_args().count(), 1);
    /// ```
    pub fn as_std(&self) -> &std::process::Command {
        &self.std
    }

    /// std's command inside, mutably (`arg0`, and the rest of std's `CommandExt`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::os::unix::process::CommandExt;
    ///
    /// let mut command = crew::process::Command::new("sh");
    /// command.as_std_mut().arg0("renamed").args(["-c", "echo $0"]);
    /// assert_eq!(crew::block_on(command.output()).unwrap().stdout, b"renamed\n");
    /// ```
    pub fn as_std_mut(&mut self) -> &mut std::process::Command {
        &mut self.std
    }

    /// Spawns the child, its exit watched on crew's driver and its piped streams registered
    /// with it. Needs no crew thread to run: a `block_on` or a crew task turns the driver
    /// while it waits.
    ///
    /// # Errors
    ///
    /// std's spawn error, its kind kept and the program named (the OS's own error is its
    /// [`source`](std::error::Error::source), with its `raw_os_error`): `NotFound` for a missing
    /// program, `PermissionDenied` for one that cannot be run, the kernel's `EMFILE` when the
    /// process is out of fds. Also the error of a bad
    /// [`CREW_PROCESS_NO_PIDFD`](super::NO_PIDFD_ENV), or of a child whose exit or pipes cannot
    /// be put on the driver (`EMFILE` for its pidfd). Such a child is killed: one whose exit
    /// cannot be watched is reaped before `spawn` returns (blocking for as long as a
    /// `SIGKILL`ed process takes to go), one whose pipes failed is reaped in the background.
    ///
    /// # Examples
    ///
    /// ```
    /// let error = crew::process::Command::new("/no/such/program").spawn().unwrap_err();
    /// assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
    /// assert!(error.to_string().contains("/no/such/program"), "{error}");
    /// let os_error = error.get_ref().and_then(|inner| inner.source()).and_then(|source| source.downcast_ref::<std::io::Error>());
    /// assert_eq!(os_error.and_then(|os_error| os_error.raw_os_error()), Some(2)); // ENOENT
    /// ```
    pub fn spawn(&mut self) -> io::Result<Child> {
        let prepared = Prepared::new()?;
        let mut child = self.std.spawn().map_err(|error| self.error("cannot be spawned", error))?;
        let watch = match prepared.watch(&child) {
            Ok(watch) => watch,
            Err(error) => {
                // Unwatched, it could never be waited for: killed and reaped now.
                let _ = child.kill();
                let _ = child.wait();
                return Err(self.error("was spawned, but its exit cannot be watched (so it was killed)", error));
            }
        };
        // A pipe that cannot be registered drops the made `Child`, which kills and reaps it.
        Child::new(child, watch, self.kill_on_drop).map_err(|error| self.error("was spawned, but its pipes cannot be registered (so it was killed)", error))
    }

    /// `error`, its kind kept, saying what failed for which program (see [`SpawnError`]).
    fn error(&self, what: &'static str, error: io::Error) -> io::Error {
        io::Error::new(error.kind(), SpawnError { program: self.std.get_program().to_owned(), what, error })
    }

    /// Spawns the child with its stdout and stderr piped (they stay piped for later spawns of
    /// this command, as in tokio), and collects them and its status: [`Child::wait_with_output`].
    /// The child is spawned when this is called, not when the future is first polled.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Command::spawn) and [`Child::wait_with_output`].
    ///
    /// # Examples
    ///
    /// ```
    /// let mut command = crew::process::Command::new("sh");
    /// command.args(["-c", "echo out; echo err >&2; exit 3"]);
    /// let output = crew::block_on(command.output()).unwrap();
    /// assert_eq!((output.stdout.as_slice(), output.stderr.as_slice()), (&b"out\n"[..], &b"err\n"[..]));
    /// assert_eq!(output.status.code(), Some(3));
    /// ```
    pub fn output(&mut self) -> impl Future<Output = io::Result<Output>> + Send + 'static {
        self.std.stdout(Stdio::piped());
        self.std.stderr(Stdio::piped());
        let child = self.spawn();
        async move { child?.wait_with_output().await }
    }

    /// Spawns the child and waits for its exit ([`Child::wait`]); its streams are inherited
    /// unless set otherwise. The child is spawned when this is called.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Command::spawn) and [`Child::wait`].
    ///
    /// # Examples
    ///
    /// ```
    /// let status = crew::block_on(crew::process::Command::new("false").status()).unwrap();
    /// assert_eq!(status.code(), Some(1));
    /// ```
    pub fn status(&mut self) -> impl Future<Output = io::Result<ExitStatus>> + Send + 'static {
        let child = self.spawn();
        async move { child?.wait().await }
    }
}

/// What a failed spawn says: the program and what failed, over the OS's error (its source).
#[derive(Debug)]
struct SpawnError {
    program: OsString,
    what: &'static str,
    error: io::Error,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "crew::process: {:?} {}: {}", self.program, self.what, self.error)
    }
}

impl std::error::Error for SpawnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<std::process::Command> for Command {
    /// std's command, to spawn on crew (`kill_on_drop` off).
    fn from(std: std::process::Command) -> Command {
        Command { std, kill_on_drop: false }
    }
}
