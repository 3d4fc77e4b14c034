//! What the expansions of `#[crew::main]` and `#[crew::test]` call (`crew::__private`): not a
//! public interface, and hidden from the docs.
//!
//! Invariants:
//! - `finish_test` reports as leftovers the tasks still alive once the pool has settled: two
//!   dumps a few milliseconds apart list the same tasks, each waiting for a wake, with the same
//!   poll counts (one dump alone could catch a task whose wake is on its way). A task still
//!   running or queued when the body returns (one that sent the body its last message and is
//!   about to end, say) is given time to end or to wait first; only a task that does neither
//!   for `SETTLE_LIMIT` (a loop that never yields) is reported while running.
//! - The check never hangs: the pool is shut down with a deadline, so a task stuck forever in
//!   one poll is reported (and its thread left behind) rather than waited for.
//! - A test that already failed (its body returned an `Err`) fails with its own error, not a
//!   leftover report; its pool is shut down all the same.
//! - The test's pool is shut down before `finish_test` panics, so the leftovers' destructors
//!   have run when the test fails. What those destructors spawn with `crew::spawn` runs on the
//!   global pool: a pool's shutdown drops its tasks with no pool current.

use std::time::{Duration, Instant};

use crate::config::{Builder, TEST_SEED_ENV};
use crate::dump::{TaskDump, TaskState};
use crate::identity::TaskId;
use crate::pool::Pool;

/// How long the leftover check waits for tasks still running or queued to end or to wait, and
/// for the pool's threads to stop: only turns a task that never does into a report, instead of
/// a hang.
pub const SETTLE_LIMIT: Duration = Duration::from_secs(10);

/// How long apart the leftover check's two dumps are.
const SETTLE_GAP: Duration = Duration::from_millis(5);

/// `#[crew::main(..)]`: starts the global pool with `builder`.
///
/// # Panics
///
/// If the global pool cannot start, or started already (something spawned before `main`).
#[track_caller]
pub fn configure_global(builder: Builder) {
    if let Err(error) = builder.build_global() {
        panic!("#[crew::main]: the global pool cannot start: {error}");
    }
}

/// `#[crew::test]`: the test's own pool, with the task dump on (the leftover check reads it).
///
/// # Panics
///
/// If the pool cannot start (the message names the setting and the value).
#[track_caller]
pub fn test_pool(builder: Builder) -> Pool {
    match builder.task_dump(true).build() {
        Ok(pool) => pool,
        Err(error) => panic!("#[crew::test]: the test's pool cannot start: {error}"),
    }
}

/// What a test body returned, as the leftover check reads it: a failure is reported as
/// itself, never hidden behind a leftover report.
pub trait TestOutput {
    /// Whether the test failed by what it returned.
    fn failed(&self) -> bool;
}

impl TestOutput for () {
    fn failed(&self) -> bool {
        false
    }
}

impl<T, E> TestOutput for Result<T, E> {
    fn failed(&self) -> bool {
        self.is_err()
    }
}

impl TestOutput for std::process::ExitCode {
    fn failed(&self) -> bool {
        // An `ExitCode` cannot be compared or read: let the test harness judge it.
        false
    }
}

/// `#[crew::test]`, after the body returned `output`: waits for the pool to settle (unless
/// leftovers are allowed, or the test already failed), shuts it down, and if tasks were left
/// and `fail` holds, fails the test with a table of them.
///
/// # Panics
///
/// With `fail`, if tasks were left (the message lists them and says how to allow them).
#[track_caller]
pub fn finish_test<T: TestOutput>(pool: Pool, fail: bool, output: &T) {
    finish_test_within(pool, fail, output, SETTLE_LIMIT);
}

/// [`finish_test`] with `limit` in place of [`SETTLE_LIMIT`] (for crew's own tests).
///
/// # Panics
///
/// As [`finish_test`].
#[track_caller]
pub fn finish_test_within<T: TestOutput>(pool: Pool, fail: bool, output: &T, limit: Duration) {
    if !fail || output.failed() {
        pool.shutdown_timeout(limit);
        return;
    }
    let dump = settle(&pool, limit);
    let stopped = pool.shutdown_timeout(limit);
    let left = dump.tasks().len();
    if left > 0 {
        let tasks = if left == 1 { "1 task was".to_owned() } else { format!("{left} tasks were") };
        let stuck = if stopped { "" } else { " (one still stuck in a poll: its thread was left running)" };
        panic!(
            "#[crew::test]: {tasks} still alive when the test's body returned (spawned, \
             and neither awaited nor finished); they were dropped with the test's pool{stuck}. Await them, or allow \
             this with #[crew::test(leftovers = \"drop\")].\n{dump}"
        );
    }
}

/// Dumps `pool` until two dumps `SETTLE_GAP` apart agree that every live task waits for a wake
/// (the same tasks, the same poll counts), or no task is left, or `limit` passed. Returns the
/// last dump.
fn settle(pool: &Pool, limit: Duration) -> TaskDump {
    let started = Instant::now();
    let waiting = |dump: &TaskDump| -> Option<Vec<(TaskId, u64)>> {
        let tasks = dump.tasks();
        tasks.iter().all(|task| matches!(task.state(), TaskState::Waiting { .. })).then(|| {
            let mut seen: Vec<_> = tasks.iter().map(|task| (task.id(), task.polls())).collect();
            seen.sort_unstable();
            seen
        })
    };
    let mut previous = None;
    loop {
        let dump = pool.dump();
        let now = waiting(&dump);
        let settled = dump.tasks().is_empty() || (now.is_some() && now == previous);
        if settled || started.elapsed() >= limit {
            return dump;
        }
        previous = now;
        std::thread::sleep(if previous.is_some() { SETTLE_GAP } else { Duration::from_millis(1) });
    }
}

/// `#[crew::test(seed = ..)]` and `#[crew::test(seeds = ..)]`: the seeds to run the body under.
#[derive(Debug, Clone, Copy)]
pub enum Seeds {
    /// This one seed.
    One(u64),
    /// Seeds `0..n`.
    Count(u64),
}

/// The seeds a seeded test runs under: `CREW_TEST_SEED`'s alone if it is set, else `seeds`.
///
/// # Panics
///
/// If `CREW_TEST_SEED` is set to anything but a whole number in `0..=u64::MAX`, decimal digits
/// only (the message names the value).
pub fn test_seeds(seeds: Seeds) -> Vec<u64> {
    match std::env::var_os(TEST_SEED_ENV) {
        Some(value) => match value.to_str().filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())) {
            Some(digits) if digits.parse::<u64>().is_ok() => vec![digits.parse().expect("checked")],
            _ => panic!(
                "{TEST_SEED_ENV}={value:?} is invalid: expected a seed, a whole number in 0..={} (decimal digits only)",
                u64::MAX
            ),
        },
        None => match seeds {
            Seeds::One(seed) => vec![seed],
            Seeds::Count(count) => (0..count).collect(),
        },
    }
}

/// `#[crew::test(seed = ..)]`, `#[crew::test(seeds = ..)]`: runs `body` as a task of a seeded
/// pool built from `builder` (one pool per seed, the body on its worker), for each of the seeds
/// (`test_seeds`), in order; stops at the first that fails, naming it. Each pool is checked for
/// leftovers as [`finish_test`] does, with `fail`. Returns the last seed's output.
///
/// # Panics
///
/// Under the first seed whose body panics, or whose pool has leftovers with `fail`: the message
/// names the seed and how to rerun it alone, then the failure's own message.
#[track_caller]
pub fn seeded_test<T, F>(builder: impl Fn() -> Builder, seeds: Seeds, fail: bool, body: impl Fn() -> F) -> T
where
    T: TestOutput + Send + 'static,
    F: std::future::Future<Output = T> + Send + 'static,
{
    let mut last = None;
    for seed in test_seeds(seeds) {
        let failed = |what: &str| {
            format!("#[crew::test]: failed under seed {seed} (rerun it alone with {TEST_SEED_ENV}={seed}): {what}")
        };
        let pool = test_pool(builder().seed(seed));
        let result = crate::block_on(pool.spawn_with(crate::Catch, body()));
        let output = match result {
            Ok(output) => output,
            Err(error) => {
                pool.shutdown_timeout(SETTLE_LIMIT);
                match error.panic_message() {
                    Some(message) => panic!("{}", failed(message)),
                    None => {
                        eprintln!("{}", failed("the body panicked (its payload follows)"));
                        std::panic::resume_unwind(error.into_panic());
                    }
                }
            }
        };
        if output.failed() {
            eprintln!("{}", failed("the body returned an error"));
            pool.shutdown_timeout(SETTLE_LIMIT);
            return output;
        }
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            finish_test_within(pool, fail, &output, SETTLE_LIMIT)
        }));
        if let Err(payload) = checked {
            let message = crate::policy::payload_message(&*payload).unwrap_or("the leftover check panicked");
            panic!("{}", failed(message));
        }
        last = Some(output);
    }
    last.expect("a seeded test runs under at least one seed")
}

/// Makes the next `starts` worker thread starts fail (a hand-off's, a takeover's) as they
/// would at a thread limit, for crew's own tests of that failure (`tests/thread_limit.rs`).
/// Not a public interface.
pub fn fail_next_thread_starts(starts: usize) {
    crate::scheduler::fail_next_thread_starts(starts);
}

/// Makes every push of a task woken outside a pool's workers sleep `delay` before it lands, if
/// the pool is shutting down: for crew's own test of a wake that races a pool's drop
/// (`tests/shutdown_concurrent_wake.rs`), whose window this widens. Not a public interface.
pub fn delay_remote_pushes_during_shutdown(delay: Duration) {
    crate::scheduler::delay_remote_pushes_during_shutdown(delay);
}
