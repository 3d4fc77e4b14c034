//! Re-running this test binary as a child process: for a case that one process can run only
//! once (the global pool starts once), that changes something process-wide (how `SIGCHLD` is
//! handled, the fd limit, what a signal does), or that could end or abort the process (a
//! signal's default action, a panic where async-task aborts). A parent test runs one test of
//! this binary, by its exact name, in a child process whose environment holds a marker
//! variable. The test run there may tell the two roles apart with [`is_child`]: an `#[ignore]`d
//! `child_*` entry point that must not run in the parent returns at once without the marker
//! (else `--include-ignored` would run it there), and a test that is its own parent does the
//! child's part under it.

use std::process::{Command, Output};

use super::with_timeout;

/// True in a process started by [`child_command`] (or its kin) with `marker`.
pub fn is_child(marker: &str) -> bool {
    std::env::var_os(marker).is_some()
}

/// A command that runs this test binary on its test named `test` alone (matched exactly, run
/// whether `#[ignore]`d or not), its output not captured, on one test thread; with `marker`
/// set to `1` and `RUST_BACKTRACE` removed (a child's panic prints its message, never a
/// backtrace, whatever the parent's environment says). The rest of the environment is the
/// parent's.
pub fn child_command(marker: &str, test: &str) -> Command {
    child_command_under(&[], marker, test)
}

/// [`child_command`], the binary run by `wrapper` if it is not empty: `wrapper[0]` is run with
/// the rest of `wrapper`, then the binary's path and its arguments (as `sh -c '... exec "$0"
/// "$@"'` or `env --ignore-signal=CHLD` take them).
pub fn child_command_under(wrapper: &[&str], marker: &str, test: &str) -> Command {
    let binary = std::env::current_exe().expect("the test binary's path");
    let mut command = match wrapper.split_first() {
        Some((program, args)) => {
            let mut command = Command::new(program);
            command.args(args).arg(binary);
            command
        }
        None => Command::new(binary),
    };
    command
        .args(["--exact", test, "--nocapture", "--include-ignored", "--test-threads=1"])
        .env(marker, "1")
        .env_remove("RUST_BACKTRACE");
    command
}

/// Runs `command` to its end and returns its output, failing instead of hanging (under
/// [`with_timeout`]).
pub fn output_within_timeout(mut command: Command) -> Output {
    with_timeout(move || command.output().expect("run the test binary as a child"))
}

/// Runs [`child_command`]`(marker, test)`, after `configure` (its own environment, say) changed
/// it, under [`with_timeout`]; its output.
pub fn run_child(marker: &str, test: &str, configure: impl FnOnce(&mut Command)) -> Output {
    let mut command = child_command(marker, test);
    configure(&mut command);
    output_within_timeout(command)
}
