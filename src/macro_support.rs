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

use crate::config::Builder;
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

/// Makes the next `starts` worker thread starts fail (a hand-off's, a takeover's) as they
/// would at a thread limit, for crew's own tests of that failure (`tests/thread_limit.rs`).
/// Not a public interface.
pub fn fail_next_thread_starts(starts: usize) {
    crate::scheduler::fail_next_thread_starts(starts);
}
