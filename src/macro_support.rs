//! What the expansions of `#[crew::main]` and `#[crew::test]` call (`crew::__private`): not a
//! public interface, and hidden from the docs.
//!
//! Invariants:
//! - `finish_test` reports as leftovers the tasks still alive once the pool has settled: every
//!   live task waiting for a wake. A task still running or queued when the body returns (one
//!   that sent the body its last message and is about to end, say) is given time to end or to
//!   wait first; only a task that neither ends nor waits for `SETTLE_LIMIT` (a loop that
//!   never yields) is reported while running.
//! - The test's pool is dropped before `finish_test` panics, so the leftovers' destructors
//!   have run when the test fails, and nothing of the test outlives it.

use std::time::{Duration, Instant};

use crate::config::Builder;
use crate::dump::TaskState;
use crate::pool::Pool;

/// How long the leftover check waits for tasks still running or queued to end or to wait: only
/// turns a task that never does into a report, instead of a hang.
pub const SETTLE_LIMIT: Duration = Duration::from_secs(10);

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

/// `#[crew::test]`, after the body returned: waits for the pool to settle, drops it, and if
/// tasks were left and `fail` holds, fails the test with a table of them.
///
/// # Panics
///
/// With `fail`, if tasks were left (the message lists them and says how to allow them).
#[track_caller]
pub fn finish_test(pool: Pool, fail: bool) {
    let started = Instant::now();
    let dump = loop {
        let dump = pool.dump();
        let settled = dump.tasks().iter().all(|task| matches!(task.state(), TaskState::Waiting { .. }));
        if settled || started.elapsed() >= SETTLE_LIMIT {
            break dump;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    drop(pool);
    let left = dump.tasks().len();
    if fail && left > 0 {
        let tasks = if left == 1 { "1 task was".to_owned() } else { format!("{left} tasks were") };
        panic!(
            "#[crew::test]: {tasks} still alive when the test's body returned (spawned, \
             and neither awaited nor finished); they were dropped with the test's pool. Await them, or allow \
             this with #[crew::test(leftovers = \"drop\")].\n{dump}"
        );
    }
}
