//! The process's blocking pool's settings: [`Builder::max_blocking_threads`] and
//! [`Builder::thread_keep_alive`], tokio's names.
//!
//! Invariants:
//! - One blocking pool serves the process, so its settings are the global pool's: taken by
//!   `build_global` (each left unset falls back to its `CREW_` variable, then to its default), and
//!   refused by a private pool's `build` with an error that says why.
//! - A bad value, given or read, is an error naming it and the range accepted; the first
//!   `spawn_blocking` before the global pool started reads the variables too, and panics on a
//!   bad one as `spawn` does on a bad `CREW_WORKERS`.

use std::time::Duration;

use super::env::{self, Env, BLOCKING_THREADS_EXPECTED, KEEP_ALIVE_EXPECTED};
use super::{BuildError, Builder, DEFAULT_MAX_BLOCKING_THREADS, DEFAULT_THREAD_KEEP_ALIVE};
use super::{MAX_MAX_BLOCKING_THREADS, MAX_THREAD_KEEP_ALIVE};

const PRIVATE_EXPECTED: &str =
    "one blocking pool serves the process: set it on the builder given to Builder::build_global, or with its CREW_ variable";

impl Builder {
    /// Caps the threads of the process's blocking pool ([`spawn_blocking`](crate::spawn_blocking))
    /// at `threads`, in `1..=`[`MAX_MAX_BLOCKING_THREADS`]; past that, jobs queue. Unset:
    /// `CREW_MAX_BLOCKING_THREADS`, else [`DEFAULT_MAX_BLOCKING_THREADS`] (512). One blocking
    /// pool serves every pool of the process, so only the builder given to
    /// [`build_global`](Builder::build_global) takes it; a private pool's `build` refuses it.
    ///
    /// # Examples
    ///
    /// ```
    /// // One blocking pool per process: a private pool's builder refuses the setting.
    /// let err = crew::Pool::builder().max_blocking_threads(8).build().unwrap_err();
    /// assert!(err.to_string().contains("build_global"), "{err}");
    /// ```
    pub fn max_blocking_threads(mut self, threads: usize) -> Builder {
        self.max_blocking_threads = Some(threads);
        self
    }

    /// Sets how long an idle blocking thread waits for a job before it exits, in
    /// `0s..=`[`MAX_THREAD_KEEP_ALIVE`]. Unset: `CREW_THREAD_KEEP_ALIVE_MS`, else
    /// [`DEFAULT_THREAD_KEEP_ALIVE`] (10 s). As
    /// [`max_blocking_threads`](Builder::max_blocking_threads), for `build_global` only.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let err = crew::Pool::builder().thread_keep_alive(Duration::from_secs(1)).build().unwrap_err();
    /// assert!(err.to_string().contains("Builder::thread_keep_alive(1s)"), "{err}");
    /// ```
    pub fn thread_keep_alive(mut self, keep_alive: Duration) -> Builder {
        self.thread_keep_alive = Some(keep_alive);
        self
    }

    /// For a private pool: the blocking pool's settings it cannot take, as the error naming
    /// them.
    pub(crate) fn refuse_for_private(&self) -> Result<(), BuildError> {
        let call = match (self.max_blocking_threads, self.thread_keep_alive) {
            (Some(threads), _) => format!("Builder::max_blocking_threads({threads})"),
            (None, Some(keep_alive)) => format!("Builder::thread_keep_alive({keep_alive:?})"),
            (None, None) => return Ok(()),
        };
        Err(BuildError::setting(format!("{call} with Builder::build (a private pool)"), PRIVATE_EXPECTED))
    }

    /// The blocking pool's limits this builder gives the global pool, `env` holding the `CREW_`
    /// variables (see [`blocking_limits`]).
    pub(crate) fn blocking_limits(&self, env: &Env) -> Result<(usize, Duration), BuildError> {
        blocking_limits(self.max_blocking_threads, self.thread_keep_alive, env)
    }
}

/// The blocking pool's limits: `threads` and `keep_alive` if given, else their `CREW_`
/// variables in `env`, else the defaults; checked.
pub(crate) fn blocking_limits(
    threads: Option<usize>,
    keep_alive: Option<Duration>,
    env: &Env,
) -> Result<(usize, Duration), BuildError> {
    let threads = match threads {
        Some(n) if (1..=MAX_MAX_BLOCKING_THREADS).contains(&n) => n,
        Some(n) => {
            return Err(BuildError::setting(format!("Builder::max_blocking_threads({n})"), BLOCKING_THREADS_EXPECTED))
        }
        None => env::max_blocking_threads(env)?.unwrap_or(DEFAULT_MAX_BLOCKING_THREADS),
    };
    let keep_alive = match keep_alive {
        Some(d) if d <= MAX_THREAD_KEEP_ALIVE => d,
        Some(d) => return Err(BuildError::setting(format!("Builder::thread_keep_alive({d:?})"), KEEP_ALIVE_EXPECTED)),
        None => env::thread_keep_alive(env)?.unwrap_or(DEFAULT_THREAD_KEEP_ALIVE),
    };
    Ok((threads, keep_alive))
}
