//! `CREW_TAKEOVER_MS` applies where the Builder left a setting unset, including the threshold
//! after `Builder::takeover(true)` (what `#[crew::main(takeover = true)]` calls): a bad value
//! is then an error, a good one sets the threshold. The rule opens `src/config/mod.rs`; its
//! combinations are unit-tested there. These cases run through the process's environment.
//!
//! The global pool starts once per process, so each case runs in a child process: the parent
//! test re-runs this test binary on one of the `child_*` tests (ignored in normal runs), with
//! `CREW_TAKEOVER_MS` set as the case needs and a marker variable telling the child to act.

mod common;

use std::process::Output;
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use common::child;

/// Set in a child's environment: the `child_*` tests do nothing without it.
const CHILD_MARKER: &str = "CREW_ENV_TAKEOVER_TEST_CHILD";

fn is_child() -> bool {
    child::is_child(CHILD_MARKER)
}

/// Runs the ignored test `test` of this binary in a child process with `CREW_TAKEOVER_MS=value`.
fn run_child(test: &str, value: &str) -> (Output, String) {
    let output = child::run_child(CHILD_MARKER, test, |command| {
        command.env("CREW_TAKEOVER_MS", value).env_remove("CREW_WORKERS");
    });
    let context = format!(
        "CREW_TAKEOVER_MS={value:?}\n--- stdout:\n{}\n--- stderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, context)
}

#[test]
#[ignore = "entry point of a child process started by a bad_takeover_ms_is_an_error_after_takeover_true"]
fn child_takeover_true_build_global() {
    if !is_child() {
        return;
    }
    println!(); // end libtest's "test ... " line
    match crew::Builder::new().workers(1).takeover(true).build_global() {
        Ok(()) => println!("build_global: ok"),
        Err(err) => println!("build_global error: {err}"),
    }
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn a_bad_takeover_ms_is_an_error_after_takeover_true() {
    for (value, shown) in [("abc", "\"abc\""), ("0", "\"0\""), ("10ms", "\"10ms\"")] {
        let (output, context) = run_child("child_takeover_true_build_global", value);
        assert!(output.status.success(), "{context}");
        let expected = format!(
            "build_global error: CREW_TAKEOVER_MS={shown} is invalid: expected a whole number of milliseconds in \
             1..=3600000 (decimal digits only), or `off`"
        );
        assert!(String::from_utf8_lossy(&output.stdout).lines().any(|line| line == expected), "{context}");
    }
    // `off` says nothing once the Builder turned takeover on: not an error.
    let (output, context) = run_child("child_takeover_true_build_global", "off");
    assert!(String::from_utf8_lossy(&output.stdout).lines().any(|line| line == "build_global: ok"), "{context}");
}

#[test]
#[ignore = "entry point of a child process started by takeover_ms_sets_the_threshold_after_takeover_true"]
fn child_takeover_threshold() {
    if !is_child() {
        return;
    }
    println!(); // end libtest's "test ... " line
    let (taken_tx, taken_rx) = mpsc::channel();
    let taken_tx = Mutex::new(taken_tx);
    crew::Builder::new()
        .workers(1)
        .takeover(true)
        .on_slow_poll(move |report| {
            if report.kind() == crew::SlowPollKind::TakenOver {
                let _ = taken_tx.lock().unwrap().send(report.elapsed());
            }
        })
        .build_global()
        .unwrap();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let stuck = crew::spawn(async move { release_rx.recv().unwrap() });
    // Behind the stuck poll: the takeover is due once the poll has run for the threshold.
    crew::block_on(crew::spawn(async {}));
    let elapsed = taken_rx.recv().unwrap();
    release_tx.send(()).unwrap();
    crew::block_on(stuck);
    println!("taken over after at least {}ms", elapsed.as_millis());
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn takeover_ms_sets_the_threshold_after_takeover_true() {
    let (output, context) = run_child("child_takeover_threshold", "300");
    assert!(output.status.success(), "{context}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find_map(|line| line.strip_prefix("taken over after at least ")).expect(&context);
    let ms: u64 = line.trim_end_matches("ms").parse().expect(&context);
    // A takeover is never earlier than its threshold (the default would be 10 ms).
    assert!(Duration::from_millis(ms) >= Duration::from_millis(300), "{context}");
}
