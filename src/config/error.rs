//! [`BuildError`]: why a pool could not start with the configuration asked for.
//!
//! Invariants: every message names the bad value, where it came from (a `Builder` call or a
//! `CREW_` variable, quoted) and what is accepted.

use std::fmt;
use std::io;

/// The error returned when a pool cannot start with the configuration asked for.
///
/// Its message names the bad value, where it came from and what is accepted.
///
/// # Examples
///
/// ```
/// let err = crew::Pool::builder().workers(5000).build().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "Builder::workers(5000) is invalid: expected a number of worker threads in 1..=1024",
/// );
/// ```
#[derive(Debug)]
pub struct BuildError {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// A `Builder` call with a bad argument, written as the call (`Builder::workers(0)`), and
    /// why (`expected ...`).
    Setting {
        call: String,
        why: &'static str,
    },
    /// A `CREW_` variable with a bad value.
    Env {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    GlobalAlreadyStarted,
    Spawn(io::Error),
}

impl BuildError {
    /// A bad `Builder` setting: `call` as the user wrote it, and why (`expected ...`).
    pub(crate) fn setting(call: String, why: &'static str) -> BuildError {
        BuildError { kind: Kind::Setting { call, why } }
    }

    /// A bad value of the variable `name`, and what is accepted.
    pub(crate) fn env(name: &'static str, value: String, expected: &'static str) -> BuildError {
        BuildError { kind: Kind::Env { name, value, expected } }
    }

    pub(crate) fn global_already_started() -> BuildError {
        BuildError { kind: Kind::GlobalAlreadyStarted }
    }

    pub(crate) fn spawn(err: io::Error) -> BuildError {
        BuildError { kind: Kind::Spawn(err) }
    }

    /// True if this error says the global pool was already running when
    /// [`Builder::build_global`](crate::Builder::build_global) was called.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(crew::spawn(async {})); // starts the global pool
    /// let err = crew::Builder::new().workers(1).build_global().unwrap_err();
    /// assert!(err.is_global_already_started());
    /// ```
    pub fn is_global_already_started(&self) -> bool {
        matches!(self.kind, Kind::GlobalAlreadyStarted)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Setting { call, why } => write!(f, "{call} is invalid: {why}"),
            Kind::Env { name, value, expected } => write!(f, "{name}={value:?} is invalid: expected {expected}"),
            Kind::GlobalAlreadyStarted => f.write_str(
                "the global crew pool is already running: Builder::build_global must be called before the first crew::spawn, and only once",
            ),
            Kind::Spawn(err) => write!(f, "could not start a crew worker thread: {err}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Kind::Spawn(err) => Some(err),
            _ => None,
        }
    }
}
