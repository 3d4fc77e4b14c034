//! `CREW_WORKERS` sizes the global pool, and a bad value is an error naming the variable, the
//! value and the accepted range: the first `spawn` panics with it, `build_global` returns it.
//!
//! The global pool starts once per process, so each case runs in a child process: the parent
//! test re-runs this test binary on one of the `child_*` tests (ignored in normal runs), with
//! `CREW_WORKERS` set as the case needs and a marker variable telling the child to act.

mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::process::Output;

use common::probe::threads_named;
use common::{child, wait_until};

/// Set in a child's environment: the `child_*` tests do nothing without it.
const CHILD_MARKER: &str = "CREW_ENV_WORKERS_TEST_CHILD";

fn is_child() -> bool {
    child::is_child(CHILD_MARKER)
}

/// Runs the ignored test `test` of this binary in a child process with `CREW_WORKERS=workers`.
fn run_child(test: &str, workers: OsString) -> Output {
    child::run_child(CHILD_MARKER, test, |command| {
        command.env("CREW_WORKERS", workers);
    })
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The message of a bad `CREW_WORKERS` value, as `BuildError`'s Display writes it.
fn invalid_message(shown: &str) -> String {
    format!(
        "CREW_WORKERS={shown:?} is invalid: expected a whole number of worker threads in 1..=1024, in decimal digits only (no sign, prefix or spaces)"
    )
}

/// Bad values, each with how the message shows it.
fn bad_values() -> Vec<(OsString, String)> {
    let mut values: Vec<(OsString, String)> =
        ["abc", "0", "-1", "99999999999999999999", "1025", "", "+3", "2.5", "4 workers", "0x10", " 4 ", "2\n"]
            .into_iter()
            .map(|v| (OsString::from(v), v.to_owned()))
            .collect();
    // Not UTF-8: shown with the replacement character.
    values.push((OsString::from_vec(b"3\xff".to_vec()), "3\u{fffd}".to_owned()));
    values
}

#[test]
#[ignore = "entry point of a child process started by bad_crew_workers_make_the_first_spawn_panic"]
fn child_first_spawn() {
    if !is_child() {
        return;
    }
    println!();
    println!("child: spawning with CREW_WORKERS={:?}", std::env::var_os("CREW_WORKERS"));
    let handle = crew::spawn(async { 1 });
    println!("child: spawn returned");
    assert_eq!(crew::block_on(handle), 1);
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn bad_crew_workers_make_the_first_spawn_panic() {
    for (value, shown) in bad_values() {
        let output = run_child("child_first_spawn", value.clone());
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        let context = format!("CREW_WORKERS={value:?}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
        assert!(stdout.contains("child: spawning with"), "the child test did not run: {context}");
        assert!(!stdout.contains("child: spawn returned"), "spawn must panic: {context}");
        assert!(!output.status.success(), "the child must fail: {context}");
        let expected = format!("crew: the global pool cannot start: {}", invalid_message(&shown));
        assert!(stderr.contains("panicked at"), "{context}");
        assert!(stderr.lines().any(|line| line == expected), "expected the line {expected:?}: {context}");
    }
}

#[test]
#[ignore = "entry point of a child process started by bad_crew_workers_make_build_global_fail"]
fn child_build_global() {
    if !is_child() {
        return;
    }
    println!(); // end libtest's "test ... " line
    let err = crew::Builder::new().build_global().expect_err("a bad CREW_WORKERS must fail build_global");
    assert!(!err.is_global_already_started());
    println!("build_global error: {err}");
    // Nothing started: the first spawn still fails the same way.
    let payload = std::panic::catch_unwind(|| crew::spawn(async {}).detach()).expect_err("spawn must panic");
    let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
    println!("spawn panic: {message}");
    // Explicit workers win over the variable, and the global pool still starts once.
    crew::Builder::new().workers(2).build_global().expect("explicit workers ignore CREW_WORKERS");
    assert_eq!(crew::block_on(crew::spawn(async { 5 })), 5);
    assert!(crew::Builder::new().build_global().unwrap_err().is_global_already_started());
    println!("explicit workers: ok");
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn bad_crew_workers_make_build_global_fail() {
    for (value, shown) in bad_values().into_iter().take(6) {
        let output = run_child("child_build_global", value.clone());
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        let context = format!("CREW_WORKERS={value:?}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
        assert!(output.status.success(), "{context}");
        let message = invalid_message(&shown);
        assert!(stdout.lines().any(|l| l == format!("build_global error: {message}")), "{context}");
        let panic = format!("spawn panic: crew: the global pool cannot start: {message}");
        assert!(stdout.lines().any(|l| l == panic), "{context}");
        assert!(stdout.lines().any(|l| l == "explicit workers: ok"), "{context}");
    }
}

#[test]
#[ignore = "entry point of a child process started by crew_workers_sizes_the_global_pool"]
fn child_global_pool_size() {
    if !is_child() {
        return;
    }
    println!(); // end libtest's "test ... " line
    let workers: usize = std::env::var("CREW_WORKERS").unwrap().trim().parse().unwrap();
    // `workers` tasks that meet at a barrier run on `workers` distinct threads at once.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(workers));
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let barrier = barrier.clone();
            crew::spawn(async move {
                barrier.wait();
                std::thread::current().name().unwrap().to_owned()
            })
        })
        .collect();
    let mut names: Vec<String> = handles.into_iter().map(crew::block_on).collect();
    names.sort();
    let mut expected: Vec<String> = (0..workers).map(|i| format!("crew-worker-{i}")).collect();
    expected.sort();
    assert_eq!(names, expected);
    // And no more: the process has exactly that many worker threads. Waited for, not read once:
    // a thread that a worker spawns (a blocking-pool thread, say) carries its creator's name
    // until it sets its own, which under
    // ThreadSanitizer took long enough to be listed as a second `crew-worker-1`. A real extra
    // worker never goes away and still fails the test, after the hang timeout.
    wait_until("exactly the global workers to be listed", || threads_named("crew-worker-") == expected);
    println!("global workers: {}", names.len());
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn crew_workers_sizes_the_global_pool() {
    for (value, workers) in [("3", 3), ("1", 1), ("0005", 5)] {
        let output = run_child("child_global_pool_size", OsStr::new(value).to_owned());
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        let context = format!("CREW_WORKERS={value:?}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
        assert!(output.status.success(), "{context}");
        assert!(stdout.lines().any(|l| l == format!("global workers: {workers}")), "{context}");
    }
}
