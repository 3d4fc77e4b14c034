//! Pool configuration: the [`Builder`], the `CREW_WORKERS` variable, and [`BuildError`].
//!
//! Invariants:
//! - Every value is validated before a thread starts: a pool either starts with exactly the
//!   configuration asked for, or `build` returns a [`BuildError`] that names the bad value, where
//!   it came from, and what is accepted. There is no silent fallback to a default.
//! - `CREW_WORKERS` applies to the global pool only, and only when [`Builder::workers`] was not
//!   called; it is read once, when the global pool starts.
//! - The global pool is configured at most once per process: [`Builder::build_global`] fails once
//!   it has started, whether it was started by an earlier `build_global` or by a first `spawn`.

use std::fmt;
use std::io;

use crate::pool::Pool;
use crate::scheduler::PoolKind;

/// The largest accepted worker count, for a pool or for `CREW_WORKERS`.
///
/// # Examples
///
/// ```
/// assert!(crew::Pool::builder().workers(crew::MAX_WORKERS + 1).build().is_err());
/// ```
pub const MAX_WORKERS: usize = 1024;

/// The smallest accepted worker stack size, in bytes.
///
/// # Examples
///
/// ```
/// assert!(crew::Pool::builder().workers(1).stack_size(crew::MIN_STACK_SIZE - 1).build().is_err());
/// assert!(crew::Pool::builder().workers(1).stack_size(crew::MIN_STACK_SIZE).build().is_ok());
/// ```
pub const MIN_STACK_SIZE: usize = 64 * 1024;

/// The largest accepted worker stack size, in bytes.
///
/// # Examples
///
/// ```
/// assert!(crew::Pool::builder().workers(1).stack_size(crew::MAX_STACK_SIZE + 1).build().is_err());
/// ```
pub const MAX_STACK_SIZE: usize = 1 << 30;

/// The environment variable that sizes the global pool: a whole number in `1..=1024`, written in
/// decimal digits only (leading zeros are fine; a sign, a `0x` prefix or surrounding whitespace
/// is an error that quotes the value).
///
/// # Examples
///
/// ```
/// // Read once, when the global pool starts; `CREW_WORKERS=4 cargo run` gives it 4 workers.
/// assert_eq!(crew::WORKERS_ENV, "CREW_WORKERS");
/// ```
pub const WORKERS_ENV: &str = "CREW_WORKERS";

const DEFAULT_THREAD_NAME: &str = "crew-worker";

/// Configures a [`Pool`], or the global pool behind [`spawn`](crate::spawn).
///
/// # Examples
///
/// ```
/// let pool = crew::Pool::builder()
///     .workers(2)
///     .thread_name("my-pool")
///     .stack_size(1 << 20)
///     .build()
///     .expect("a valid configuration");
/// assert_eq!(pool.workers(), 2);
/// assert_eq!(crew::block_on(pool.spawn(async { 6 * 7 })), 42);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Builder {
    workers: Option<usize>,
    thread_name: Option<String>,
    stack_size: Option<usize>,
    drive_reactor: Option<bool>,
}

/// The checked configuration a pool starts with.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) workers: usize,
    pub(crate) thread_name: String,
    pub(crate) stack_size: Option<usize>,
    /// Whether worker loops run inside async-io's `block_on` (always false under loom).
    pub(crate) drive_reactor: bool,
}

impl Builder {
    /// A builder with every setting at its default: `num_cpus::get()` workers (or
    /// `CREW_WORKERS` for the global pool), threads named `crew-worker-N`, the platform's stack size.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Builder::new().workers(1).build().unwrap();
    /// assert_eq!(pool.workers(), 1);
    /// ```
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Sets the number of worker threads, in `1..=`[`MAX_WORKERS`]. Checked by `build`.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = crew::Pool::builder().workers(0).build().unwrap_err();
    /// assert!(err.to_string().contains("1..=1024"));
    /// ```
    pub fn workers(mut self, workers: usize) -> Builder {
        self.workers = Some(workers);
        self
    }

    /// Sets the worker thread name prefix; worker `i` is named `"{prefix}-{i}"`.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).thread_name("io").build().unwrap();
    /// let name = crew::block_on(pool.spawn(async {
    ///     std::thread::current().name().map(str::to_owned)
    /// }));
    /// assert_eq!(name.as_deref(), Some("io-0"));
    /// ```
    pub fn thread_name(mut self, prefix: impl Into<String>) -> Builder {
        self.thread_name = Some(prefix.into());
        self
    }

    /// Sets each worker's stack size in bytes, in [`MIN_STACK_SIZE`]`..=`[`MAX_STACK_SIZE`].
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(1).stack_size(4 << 20).build().unwrap();
    /// crew::block_on(pool.spawn(async { let big = [0u8; 1 << 20]; big.len() }));
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Builder {
        self.stack_size = Some(bytes);
        self
    }

    /// Sets whether idle workers drive async-io's reactor (sockets and timers) while they park.
    /// On by default (off under miri, which cannot run the reactor).
    ///
    /// With it on, a worker that runs out of work waits inside `async_io::block_on`, and
    /// whichever parked worker holds the reactor waits in epoll: an I/O event or a timer wakes its
    /// task right there, on a worker thread. With it off, workers park on a plain event-listener
    /// and async-io's own fallback thread (`async-io`) drives the reactor, one thread hop away.
    /// `BENCHMARKS.md` measures both under an HTTP load.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let pool = crew::Pool::builder().workers(1).drive_reactor(false).build().unwrap();
    /// // Timers still fire: async-io's fallback thread drives the reactor instead.
    /// crew::block_on(pool.spawn(crew::time::sleep(Duration::from_millis(1))));
    /// ```
    pub fn drive_reactor(mut self, drive: bool) -> Builder {
        self.drive_reactor = Some(drive);
        self
    }

    /// Starts a private pool with this configuration.
    ///
    /// # Errors
    ///
    /// A [`BuildError`] naming the bad setting and its accepted range, or the OS error if a worker
    /// thread could not be started.
    ///
    /// # Examples
    ///
    /// ```
    /// let pool = crew::Pool::builder().workers(3).build()?;
    /// assert_eq!(pool.workers(), 3);
    /// # Ok::<(), crew::BuildError>(())
    /// ```
    pub fn build(self) -> Result<Pool, BuildError> {
        let config = self.check(None)?;
        Pool::start(config, PoolKind::Private)
    }

    /// Configures and starts the global pool used by [`spawn`](crate::spawn).
    ///
    /// Without [`workers`](Builder::workers), the size comes from `CREW_WORKERS`, else
    /// `num_cpus::get()`.
    ///
    /// # Errors
    ///
    /// [`BuildError::is_global_already_started`] if the global pool already runs (started by an
    /// earlier call or by a first `spawn`); otherwise as [`build`](Builder::build).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::Builder::new().workers(2).build_global().expect("first configuration");
    /// assert!(crew::Builder::new().build_global().unwrap_err().is_global_already_started());
    /// assert_eq!(crew::block_on(crew::spawn(async { 1 })), 1);
    /// ```
    pub fn build_global(self) -> Result<(), BuildError> {
        crate::global::init(self)
    }

    /// Validates the settings; `env` is the `CREW_WORKERS` value to use when `workers` is unset.
    pub(crate) fn check(self, env: Option<Result<String, std::env::VarError>>) -> Result<Config, BuildError> {
        let workers = match (self.workers, env) {
            (Some(n), _) => check_workers(n).map_err(|()| BuildError::workers(Source::Builder, n.to_string()))?,
            (None, Some(Ok(value))) => parse_workers(&value)?,
            (None, Some(Err(std::env::VarError::NotUnicode(raw)))) => {
                return Err(BuildError::workers(Source::Env, raw.to_string_lossy().into_owned()))
            }
            (None, _) => num_cpus::get().clamp(1, MAX_WORKERS),
        };
        if let Some(bytes) = self.stack_size {
            if !(MIN_STACK_SIZE..=MAX_STACK_SIZE).contains(&bytes) {
                return Err(BuildError { kind: Kind::StackSize(bytes) });
            }
        }
        let thread_name = self.thread_name.unwrap_or_else(|| DEFAULT_THREAD_NAME.to_owned());
        if thread_name.contains('\0') {
            return Err(BuildError { kind: Kind::ThreadName(thread_name) });
        }
        Ok(Config {
            workers,
            thread_name,
            stack_size: self.stack_size,
            // miri cannot run async-io's reactor (it has no `timerfd_create`), so under miri
            // workers park plainly unless told otherwise; loom builds have no reactor at all.
            drive_reactor: !cfg!(loom) && self.drive_reactor.unwrap_or(!cfg!(miri)),
        })
    }
}

fn check_workers(n: usize) -> Result<usize, ()> {
    if (1..=MAX_WORKERS).contains(&n) {
        Ok(n)
    } else {
        Err(())
    }
}

/// Parses a `CREW_WORKERS` value: a count in `1..=MAX_WORKERS` written in ASCII decimal digits
/// only. No sign, no `0x`, and no surrounding whitespace: `" 4 "` is as wrong as `"+3"`, and the
/// error shows the value quoted, spaces included.
pub(crate) fn parse_workers(value: &str) -> Result<usize, BuildError> {
    let bad = || BuildError::workers(Source::Env, value.to_owned());
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    value.parse::<usize>().ok().and_then(|n| check_workers(n).ok()).ok_or_else(bad)
}

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
    Workers { source: Source, value: String },
    StackSize(usize),
    ThreadName(String),
    GlobalAlreadyStarted,
    Spawn(io::Error),
}

#[derive(Debug, Clone, Copy)]
enum Source {
    Env,
    Builder,
}

impl BuildError {
    fn workers(source: Source, value: String) -> BuildError {
        BuildError { kind: Kind::Workers { source, value } }
    }

    pub(crate) fn global_already_started() -> BuildError {
        BuildError { kind: Kind::GlobalAlreadyStarted }
    }

    pub(crate) fn spawn(err: io::Error) -> BuildError {
        BuildError { kind: Kind::Spawn(err) }
    }

    /// True if this error says the global pool was already running when
    /// [`Builder::build_global`] was called.
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
            Kind::Workers { source: Source::Env, value } => write!(
                f,
                "{WORKERS_ENV}={value:?} is invalid: expected a whole number of worker threads in 1..={MAX_WORKERS}, in decimal digits only (no sign, prefix or spaces)"
            ),
            Kind::Workers { source: Source::Builder, value } => write!(
                f,
                "Builder::workers({value}) is invalid: expected a number of worker threads in 1..={MAX_WORKERS}"
            ),
            Kind::StackSize(bytes) => write!(
                f,
                "Builder::stack_size({bytes}) is invalid: expected a size in bytes in {MIN_STACK_SIZE}..={MAX_STACK_SIZE}"
            ),
            Kind::ThreadName(name) => {
                write!(f, "Builder::thread_name({name:?}) is invalid: a thread name cannot contain a NUL byte")
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values_in_range_parse() {
        assert_eq!(parse_workers("1").unwrap(), 1);
        assert_eq!(parse_workers("0016").unwrap(), 16);
        assert_eq!(parse_workers("1024").unwrap(), MAX_WORKERS);
    }

    #[test]
    fn bad_env_values_name_the_variable_value_and_range() {
        for bad in
            ["abc", "0", "-1", "1025", "99999999999999999999999", "", "4 workers", "+3", "2.5", " 4 ", "4\n", "\t4"]
        {
            let msg = parse_workers(bad).unwrap_err().to_string();
            assert!(msg.starts_with(&format!("CREW_WORKERS={bad:?} is invalid")), "{msg}");
            assert!(msg.contains("1..=1024"), "{msg}");
        }
    }

    #[test]
    fn builder_rejects_bad_settings_by_name() {
        let msg = Builder::new().workers(0).check(None).unwrap_err().to_string();
        assert_eq!(msg, "Builder::workers(0) is invalid: expected a number of worker threads in 1..=1024");
        let msg = Builder::new().workers(1).stack_size(10).check(None).unwrap_err().to_string();
        assert!(msg.starts_with("Builder::stack_size(10) is invalid"), "{msg}");
        let msg = Builder::new().workers(1).thread_name("a\0b").check(None).unwrap_err().to_string();
        assert!(msg.contains("NUL"), "{msg}");
    }

    #[test]
    fn explicit_workers_win_over_the_environment() {
        let config = Builder::new().workers(3).check(Some(Ok("abc".into()))).unwrap();
        assert_eq!(config.workers, 3);
        let config = Builder::new().check(Some(Ok("5".into()))).unwrap();
        assert_eq!(config.workers, 5);
        let err = Builder::new().check(Some(Ok("0".into()))).unwrap_err();
        assert!(err.to_string().starts_with("CREW_WORKERS=\"0\""));
    }
}
