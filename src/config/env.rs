//! The `CREW_` environment variables: four that configure the global pool, read once when it
//! starts ([`WORKERS_ENV`], [`TAKEOVER_ENV`], [`MAX_STUCK_THREADS_ENV`], [`TASK_DUMP_ENV`]); the
//! process-wide [`MEMBARRIER_ENV`], checked by every pool's build; and [`TEST_SEED_ENV`], read
//! by seeded tests only.
//!
//! Invariants:
//! - A global pool's variable applies only where the [`Builder`](crate::Builder) left its
//!   setting unset (the rule in full, with `CREW_TAKEOVER_MS`'s two settings, opens
//!   `config/mod.rs`); one that applies is always validated, one that does not is never read.
//! - A value is ASCII decimal digits only (or `off` where the variable says so): no sign, no
//!   `0x`, no surrounding whitespace. A bad value is a [`BuildError`] that quotes it, names the
//!   variable and says what is accepted; there is no silent fallback.

use std::env::VarError;
use std::time::Duration;

use super::error::BuildError;
use super::{MAX_STUCK_THREADS, MAX_TAKEOVER_AFTER, MAX_WORKERS, MIN_TAKEOVER_AFTER};

/// The environment variable that sizes the global pool: a whole number in `1..=1024`, written in
/// decimal digits only (leading zeros are fine; a sign, a `0x` prefix or surrounding whitespace
/// is an error that quotes the value).
///
/// # Examples
///
/// ```
/// // Read once, when the global pool starts; `CREW_WORKERS=4 cargo run` gives it 4 workers.
/// assert_eq!(crew::config::WORKERS_ENV, "CREW_WORKERS");
/// ```
pub const WORKERS_ENV: &str = "CREW_WORKERS";

/// The environment variable that sets the global pool's takeover threshold
/// ([`Builder::takeover_after`](crate::Builder::takeover_after)) in whole milliseconds, in
/// `1..=3600000`, or `off` to turn takeover off ([`Builder::takeover`](crate::Builder::takeover)).
/// With `Builder::takeover(true)` it still sets the threshold (and `off` says nothing); with
/// `Builder::takeover(false)` or `Builder::takeover_after` it is not read.
///
/// # Examples
///
/// ```
/// // `CREW_TAKEOVER_MS=50 cargo run`: a worker stuck in one poll for 50 ms is taken over.
/// assert_eq!(crew::config::TAKEOVER_ENV, "CREW_TAKEOVER_MS");
/// ```
pub const TAKEOVER_ENV: &str = "CREW_TAKEOVER_MS";

/// The environment variable that caps the global pool's stuck threads
/// ([`Builder::max_stuck_threads`](crate::Builder::max_stuck_threads)): a whole number in
/// `0..=1024`.
///
/// # Examples
///
/// ```
/// // `CREW_MAX_STUCK_THREADS=16 cargo run`: at most 16 threads stuck in a poll after a takeover.
/// assert_eq!(crew::config::MAX_STUCK_THREADS_ENV, "CREW_MAX_STUCK_THREADS");
/// ```
pub const MAX_STUCK_THREADS_ENV: &str = "CREW_MAX_STUCK_THREADS";

/// The environment variable that turns the global pool's task dump on
/// ([`Builder::task_dump`](crate::Builder::task_dump)): `on` or `off`.
///
/// # Examples
///
/// ```
/// // `CREW_TASK_DUMP=on cargo run`: `crew::dump()` lists the global pool's live tasks.
/// assert_eq!(crew::config::TASK_DUMP_ENV, "CREW_TASK_DUMP");
/// ```
pub const TASK_DUMP_ENV: &str = "CREW_TASK_DUMP";

/// The variable that reruns a seeded test (`#[crew::test(seed = ..)]` or `(seeds = ..)`) under
/// one seed alone: a whole number in `0..=u64::MAX`, decimal digits only. Read by seeded tests
/// only, each time one starts; a bad value fails the test, naming it (`docs/testing.md`).
///
/// # Examples
///
/// ```
/// // `CREW_TEST_SEED=17 cargo test finds_the_race`: that test runs under seed 17 alone.
/// assert_eq!(crew::config::TEST_SEED_ENV, "CREW_TEST_SEED");
/// ```
pub const TEST_SEED_ENV: &str = "CREW_TEST_SEED";

/// The one process-wide `CREW_` variable: `off` keeps the whole process from making any
/// `membarrier` system call (for sandboxes whose seccomp filter kills a process at an unknown
/// system call), so that the LIFO slot's owner and the end of each poll pay a `SeqCst` fence
/// instead of a compiler fence; `on` (the default) uses `membarrier` where the kernel offers it.
/// Read once, before the first such call, by crew-slot; every pool's build checks its value.
///
/// # Examples
///
/// ```
/// // `CREW_MEMBARRIER=off ./server`: no membarrier call, in any pool of the process.
/// assert_eq!(crew::config::MEMBARRIER_ENV, "CREW_MEMBARRIER");
/// ```
pub const MEMBARRIER_ENV: &str = crew_slot::asymmetric::MEMBARRIER_ENV;

/// `CREW_MEMBARRIER`'s value is one crew-slot reads as it says (see [`MEMBARRIER_ENV`]).
pub(crate) fn membarrier() -> Result<(), BuildError> {
    match crew_slot::asymmetric::env_setting() {
        Ok(_) => Ok(()),
        Err(value) => Err(BuildError::env(MEMBARRIER_ENV, value, "`on` or `off`")),
    }
}

/// One variable as read: unset, or its value (`Err` if not Unicode).
pub(crate) type Var = Option<Result<String, VarError>>;

/// The variables a pool's configuration may take from the environment.
#[derive(Debug, Default)]
pub(crate) struct Env {
    pub(crate) workers: Var,
    pub(crate) takeover: Var,
    pub(crate) max_stuck_threads: Var,
    pub(crate) task_dump: Var,
    pub(crate) max_blocking_threads: Var,
    pub(crate) thread_keep_alive: Var,
}

impl Env {
    /// No variable set: a private pool's configuration.
    pub(crate) fn none() -> Env {
        Env::default()
    }

    /// The process's variables, for the global pool.
    pub(crate) fn from_process() -> Env {
        let read = |name| match std::env::var(name) {
            Err(VarError::NotPresent) => None,
            value => Some(value),
        };
        Env {
            workers: read(WORKERS_ENV),
            takeover: read(TAKEOVER_ENV),
            max_stuck_threads: read(MAX_STUCK_THREADS_ENV),
            task_dump: read(TASK_DUMP_ENV),
            max_blocking_threads: read(MAX_BLOCKING_THREADS_ENV),
            thread_keep_alive: read(THREAD_KEEP_ALIVE_ENV),
        }
    }
}

/// A variable's text, or the error that quotes a value that is not Unicode.
fn text<'a>(name: &'static str, var: &'a Var, expected: &'static str) -> Result<Option<&'a str>, BuildError> {
    match var {
        None => Ok(None),
        Some(Ok(value)) => Ok(Some(value)),
        Some(Err(VarError::NotUnicode(raw))) => {
            Err(BuildError::env(name, raw.to_string_lossy().into_owned(), expected))
        }
        Some(Err(VarError::NotPresent)) => Ok(None),
    }
}

/// A whole number in `range`, in ASCII decimal digits only.
fn number(
    name: &'static str,
    value: &str,
    range: std::ops::RangeInclusive<u64>,
    expected: &'static str,
) -> Result<u64, BuildError> {
    let bad = || BuildError::env(name, value.to_owned(), expected);
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    value.parse::<u64>().ok().filter(|n| range.contains(n)).ok_or_else(bad)
}

const WORKERS_EXPECTED: &str =
    "a whole number of worker threads in 1..=1024, in decimal digits only (no sign, prefix or spaces)";
const TAKEOVER_EXPECTED: &str = "a whole number of milliseconds in 1..=3600000 (decimal digits only), or `off`";
const STUCK_EXPECTED: &str =
    "a whole number of threads in 0..=1024, in decimal digits only (no sign, prefix or spaces)";

const TASK_DUMP_EXPECTED: &str = "`on` or `off`";

/// Whether the global pool will keep task records if it starts with no `Builder::task_dump`:
/// `CREW_TASK_DUMP` is `on` (a bad value is reported when the pool starts, not here).
pub(crate) fn task_dump_from_env() -> bool {
    matches!(task_dump(&Env::from_process()), Ok(Some(true)))
}

/// `CREW_TASK_DUMP`, if set.
pub(crate) fn task_dump(env: &Env) -> Result<Option<bool>, BuildError> {
    let Some(value) = text(TASK_DUMP_ENV, &env.task_dump, TASK_DUMP_EXPECTED)? else { return Ok(None) };
    match value {
        "on" => Ok(Some(true)),
        "off" => Ok(Some(false)),
        _ => Err(BuildError::env(TASK_DUMP_ENV, value.to_owned(), TASK_DUMP_EXPECTED)),
    }
}

/// `CREW_WORKERS`, if set.
pub(crate) fn workers(env: &Env) -> Result<Option<usize>, BuildError> {
    let Some(value) = text(WORKERS_ENV, &env.workers, WORKERS_EXPECTED)? else { return Ok(None) };
    Ok(Some(number(WORKERS_ENV, value, 1..=MAX_WORKERS as u64, WORKERS_EXPECTED)? as usize))
}

/// `CREW_TAKEOVER_MS`, if set: `Some(None)` for `off`.
pub(crate) fn takeover(env: &Env) -> Result<Option<Option<Duration>>, BuildError> {
    let Some(value) = text(TAKEOVER_ENV, &env.takeover, TAKEOVER_EXPECTED)? else { return Ok(None) };
    if value == "off" {
        return Ok(Some(None));
    }
    let range = MIN_TAKEOVER_AFTER.as_millis() as u64..=MAX_TAKEOVER_AFTER.as_millis() as u64;
    Ok(Some(Some(Duration::from_millis(number(TAKEOVER_ENV, value, range, TAKEOVER_EXPECTED)?))))
}

/// The environment variable that caps the process's blocking threads
/// ([`Builder::max_blocking_threads`](crate::Builder::max_blocking_threads)): a whole number in
/// `1..=65536`. Read when the global pool starts, or at the first `spawn_blocking` if that
/// comes first.
///
/// # Examples
///
/// ```
/// // `CREW_MAX_BLOCKING_THREADS=64 cargo run`: at most 64 threads run blocking jobs.
/// assert_eq!(crew::config::MAX_BLOCKING_THREADS_ENV, "CREW_MAX_BLOCKING_THREADS");
/// ```
pub const MAX_BLOCKING_THREADS_ENV: &str = "CREW_MAX_BLOCKING_THREADS";

/// The environment variable that sets how long an idle blocking thread waits for a job before
/// it exits ([`Builder::thread_keep_alive`](crate::Builder::thread_keep_alive)), in whole
/// milliseconds in `0..=3600000`. Read as [`MAX_BLOCKING_THREADS_ENV`] is.
///
/// # Examples
///
/// ```
/// // `CREW_THREAD_KEEP_ALIVE_MS=500 cargo run`: idle blocking threads exit after half a second.
/// assert_eq!(crew::config::THREAD_KEEP_ALIVE_ENV, "CREW_THREAD_KEEP_ALIVE_MS");
/// ```
pub const THREAD_KEEP_ALIVE_ENV: &str = "CREW_THREAD_KEEP_ALIVE_MS";

pub(crate) const BLOCKING_THREADS_EXPECTED: &str = "expected a number of threads in 1..=65536";
pub(crate) const KEEP_ALIVE_EXPECTED: &str = "expected a duration in 0s..=3600s";
const KEEP_ALIVE_MS_EXPECTED: &str = "expected whole milliseconds in 0..=3600000";

/// `CREW_MAX_BLOCKING_THREADS`, if set.
pub(crate) fn max_blocking_threads(env: &Env) -> Result<Option<usize>, BuildError> {
    let Some(value) = text(MAX_BLOCKING_THREADS_ENV, &env.max_blocking_threads, BLOCKING_THREADS_EXPECTED)? else {
        return Ok(None);
    };
    let range = 1..=super::MAX_MAX_BLOCKING_THREADS as u64;
    Ok(Some(number(MAX_BLOCKING_THREADS_ENV, value, range, BLOCKING_THREADS_EXPECTED)? as usize))
}

/// `CREW_THREAD_KEEP_ALIVE_MS`, if set.
pub(crate) fn thread_keep_alive(env: &Env) -> Result<Option<Duration>, BuildError> {
    let Some(value) = text(THREAD_KEEP_ALIVE_ENV, &env.thread_keep_alive, KEEP_ALIVE_MS_EXPECTED)? else {
        return Ok(None);
    };
    let range = 0..=super::MAX_THREAD_KEEP_ALIVE.as_millis() as u64;
    Ok(Some(Duration::from_millis(number(THREAD_KEEP_ALIVE_ENV, value, range, KEEP_ALIVE_MS_EXPECTED)?)))
}

/// `CREW_MAX_STUCK_THREADS`, if set.
pub(crate) fn max_stuck_threads(env: &Env) -> Result<Option<usize>, BuildError> {
    let Some(value) = text(MAX_STUCK_THREADS_ENV, &env.max_stuck_threads, STUCK_EXPECTED)? else { return Ok(None) };
    Ok(Some(number(MAX_STUCK_THREADS_ENV, value, 0..=MAX_STUCK_THREADS as u64, STUCK_EXPECTED)? as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(value: &str) -> Var {
        Some(Ok(value.to_owned()))
    }

    #[test]
    fn values_in_range_parse() {
        let env = Env {
            workers: set("0016"),
            takeover: set("250"),
            max_stuck_threads: set("0"),
            task_dump: set("on"),
            ..Env::none()
        };
        assert_eq!(task_dump(&env).unwrap(), Some(true));
        assert_eq!(task_dump(&Env { task_dump: set("off"), ..Env::none() }).unwrap(), Some(false));
        assert_eq!(workers(&env).unwrap(), Some(16));
        assert_eq!(takeover(&env).unwrap(), Some(Some(Duration::from_millis(250))));
        assert_eq!(max_stuck_threads(&env).unwrap(), Some(0));
        let env = Env { takeover: set("off"), ..Env::none() };
        assert_eq!(takeover(&env).unwrap(), Some(None));
        assert_eq!(workers(&Env::none()).unwrap(), None);
    }

    #[test]
    fn the_blocking_pools_variables_parse_and_bad_ones_name_the_range() {
        let env = Env { max_blocking_threads: set("64"), thread_keep_alive: set("0"), ..Env::none() };
        assert_eq!(max_blocking_threads(&env).unwrap(), Some(64));
        assert_eq!(thread_keep_alive(&env).unwrap(), Some(Duration::ZERO));
        assert_eq!(max_blocking_threads(&Env::none()).unwrap(), None);
        for bad in ["0", "65537", "-1", "many"] {
            let msg =
                max_blocking_threads(&Env { max_blocking_threads: set(bad), ..Env::none() }).unwrap_err().to_string();
            assert!(msg.starts_with(&format!("CREW_MAX_BLOCKING_THREADS={bad:?} is invalid")), "{msg}");
            assert!(msg.contains("1..=65536"), "{msg}");
        }
        for bad in ["3600001", "1s", "-5"] {
            let msg = thread_keep_alive(&Env { thread_keep_alive: set(bad), ..Env::none() }).unwrap_err().to_string();
            assert!(msg.starts_with(&format!("CREW_THREAD_KEEP_ALIVE_MS={bad:?} is invalid")), "{msg}");
            assert!(msg.contains("0..=3600000"), "{msg}");
        }
    }

    #[test]
    fn bad_values_name_the_variable_value_and_what_is_accepted() {
        for bad in
            ["abc", "0", "-1", "1025", "99999999999999999999999", "", "4 workers", "+3", "2.5", " 4 ", "4\n", "\t4"]
        {
            let msg = workers(&Env { workers: set(bad), ..Env::none() }).unwrap_err().to_string();
            assert!(msg.starts_with(&format!("CREW_WORKERS={bad:?} is invalid")), "{msg}");
            assert!(msg.contains("1..=1024"), "{msg}");
        }
        for bad in ["0", "OFF", "3600001", " 5", "1e3", "10ms"] {
            let msg = takeover(&Env { takeover: set(bad), ..Env::none() }).unwrap_err().to_string();
            assert!(msg.starts_with(&format!("CREW_TAKEOVER_MS={bad:?} is invalid")), "{msg}");
            assert!(msg.contains("1..=3600000") && msg.contains("`off`"), "{msg}");
        }
        for bad in ["1", "ON", "yes", " on"] {
            let msg = task_dump(&Env { task_dump: set(bad), ..Env::none() }).unwrap_err().to_string();
            assert!(msg.starts_with(&format!("CREW_TASK_DUMP={bad:?} is invalid")), "{msg}");
            assert!(msg.contains("`on` or `off`"), "{msg}");
        }
        for bad in ["1025", "-1", "x"] {
            let msg = max_stuck_threads(&Env { max_stuck_threads: set(bad), ..Env::none() }).unwrap_err().to_string();
            assert!(msg.starts_with(&format!("CREW_MAX_STUCK_THREADS={bad:?} is invalid")), "{msg}");
            assert!(msg.contains("0..=1024"), "{msg}");
        }
    }
}
