//! `crew::dump` on the global pool, turned on by `CREW_TASK_DUMP=on`, and a bad value of that
//! variable as an error naming it. The global pool starts once per process, so each case runs
//! in a child process: the parent re-runs this test binary on the ignored `child_dump` test with
//! the variable set.

mod common;

use std::process::Output;

use common::{child, wait_until};

/// Set in a child's environment: `child_dump` does nothing without it.
const CHILD_MARKER: &str = "CREW_DUMP_GLOBAL_TEST_CHILD";

/// Runs the ignored test `child_dump` of this binary in a child process with
/// `CREW_TASK_DUMP=value`.
fn run_child(value: &str) -> Output {
    child::run_child(CHILD_MARKER, "child_dump", |command| {
        command.env(crew::config::TASK_DUMP_ENV, value);
    })
}

#[test]
#[ignore = "entry point of a child process started by the tests below"]
fn child_dump() {
    if !child::is_child(CHILD_MARKER) {
        return;
    }
    println!();
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    let builder = crew::task::Builder::new().name("global-waiter");
    let (handle, line) = (builder.spawn(rx), line!());
    let id = handle.id();
    // A poll is counted as it begins: wait for the first one to end, not to begin.
    wait_until("the waiter's first poll to end", || {
        crew::dump()
            .tasks()
            .iter()
            .any(|task| task.polls() == 1 && !matches!(task.state(), crew::TaskState::Running { .. }))
    });
    let dump = crew::dump();
    assert!(dump.is_enabled());
    let task = dump.tasks().iter().find(|task| task.id() == id).expect("the waiting task is listed");
    assert_eq!(task.name(), Some("global-waiter"));
    assert_eq!((task.location().file(), task.location().line()), (file!(), line));
    assert!(matches!(task.state(), crew::TaskState::Waiting { .. }), "{dump}");
    drop(tx);
    let _ = crew::block_on(handle);
    assert!(crew::dump().tasks().iter().all(|task| task.id() != id), "a finished task is not listed");
    assert_eq!(crew::metrics().live_tasks, 0);
    println!("child: dump ok");
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn crew_task_dump_on_lists_the_global_pools_tasks() {
    let output = run_child("on");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success() && stdout.contains("child: dump ok"),
        "--- stdout:\n{stdout}\n--- stderr:\n{stderr}"
    );
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn a_bad_crew_task_dump_is_an_error_naming_it() {
    let output = run_child("yes");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    let expected = "crew: the global pool cannot start: CREW_TASK_DUMP=\"yes\" is invalid: expected `on` or `off`";
    assert!(stderr.lines().any(|line| line == expected), "expected {expected:?} in:\n{stderr}");
}
