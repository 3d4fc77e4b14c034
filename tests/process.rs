//! The `process` feature: `crew::process` spawning real children (`cat`, `sh`, `sleep`, `true`).
//! Run with `cargo test --features process --test process`.
//!
//! The pidfd-or-`SIGCHLD` choice is process-wide, so the `SIGCHLD` fallback runs in a child
//! process of this test binary (`child_*` tests, ignored in normal runs, do nothing without the
//! marker variable), as does the descriptor-exhaustion test, which lowers the process's fd limit.
//! Timeouts only turn hangs into failures; nothing depends on how fast a child runs.
// Linux only: the tests read `/proc` (the module itself builds on every Unix).
#![cfg(all(feature = "process", target_os = "linux"))]

mod common;

use std::future::Future;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::process::{Child, Command};

/// How long a test may take before it is declared hung (a failure, never a pass condition).
const HANG: Duration = Duration::from_secs(60);

/// Set in a re-executed child's environment: the `child_*` tests do nothing without it.
const CHILD_MARKER: &str = "CREW_PROCESS_TEST_CHILD";

/// `future`, failing instead of hanging.
async fn bounded<T>(future: impl Future<Output = T>) -> T {
    crew::time::timeout(HANG, future).await.expect("the test hung")
}

/// The state letter of `/proc/<pid>/stat` (`Z` for a zombie), `None` once the process is gone.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) S ...`: the state follows the last `)` (a command name may hold one).
    stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next())
}

/// Waits (sleeping on crew's timers, so the driver turns) until `pid`'s `/proc` entry is gone:
/// the child was reaped, not left a zombie.
async fn reaped(pid: u32) {
    let start = std::time::Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() {
        let state = proc_state(pid);
        assert!(start.elapsed() < HANG, "child {pid} not reaped after {HANG:?} (state {state:?})");
        crew::time::sleep(Duration::from_millis(5)).await;
    }
}

// The bodies, run both where pidfds serve (the tests below) and with `SIGCHLD` (the child
// process of `the_sigchld_fallback_waits_kills_and_reaps`).

async fn output_collects_stdout_stderr_and_the_exit_code() {
    let mut command = Command::new("sh");
    command.args(["-c", "echo out; echo err >&2; exit 3"]);
    let output = bounded(command.output()).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "out\n");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "err\n");
    assert_eq!(output.status.code(), Some(3));
    let status = bounded(Command::new("sh").args(["-c", "exit 5"]).status()).await.unwrap();
    assert_eq!(status.code(), Some(5));
}

async fn kill_then_wait_says_signal_9_and_the_id_is_gone() {
    let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
    assert!(child.id().is_some());
    child.start_kill().unwrap();
    let status = bounded(child.wait()).await.unwrap();
    assert_eq!(status.signal(), Some(9), "{status}");
    assert_eq!(status.code(), None);
    assert_eq!(child.id(), None);
    // A second wait gives the same status; a kill after the reap is refused.
    assert_eq!(bounded(child.wait()).await.unwrap().signal(), Some(9));
    assert_eq!(child.start_kill().unwrap_err().kind(), io::ErrorKind::InvalidInput);

    let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
    bounded(child.kill()).await.unwrap();
    assert_eq!(child.try_wait().unwrap().and_then(|status| status.signal()), Some(9));
}

async fn a_dropped_child_is_reaped_once_it_exits() {
    // Still running at the drop: reaped later, by the orphans' waker.
    let child = Command::new("sleep").arg("0.2").spawn().unwrap();
    let pid = child.id().unwrap();
    drop(child);
    bounded(reaped(pid)).await;
}

async fn a_child_killed_on_drop_is_reaped() {
    let child = Command::new("sleep").arg("1000").kill_on_drop(true).spawn().unwrap();
    let pid = child.id().unwrap();
    assert_eq!(proc_state(pid).map(|state| state != 'Z'), Some(true), "running before the drop");
    drop(child);
    bounded(reaped(pid)).await;
}

async fn many_concurrent_children_are_all_awaited(count: usize) {
    let waits: Vec<_> = (0..count)
        .map(|_| {
            let mut child = Command::new("true").spawn().unwrap();
            crew::spawn(async move { child.wait().await })
        })
        .collect();
    for wait in waits {
        assert!(bounded(wait).await.unwrap().success());
    }
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn a_4_mib_pipeline_through_cat_comes_back_whole() {
    let input: Vec<u8> = (0..4 << 20).map(|i: u32| (i % 251) as u8).collect();
    let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    // Far more than a pipe holds (64 KiB): written while the output is read, or both block.
    let write = async {
        stdin.write_all(&input).await.unwrap();
        drop(stdin);
    };
    let read = async {
        let mut output = Vec::new();
        stdout.read_to_end(&mut output).await.unwrap();
        output
    };
    let ((), output) = bounded(futures_lite::future::zip(write, read)).await;
    assert_eq!(output.len(), input.len());
    assert!(output == input, "cat's output differs from its input");
    assert!(bounded(child.wait()).await.unwrap().success());
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn output_and_status_give_the_streams_and_the_exit_code() {
    output_collects_stdout_stderr_and_the_exit_code().await;
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn kill_then_wait_gives_signal_9() {
    kill_then_wait_says_signal_9_and_the_id_is_gone().await;
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn a_dropped_unwaited_child_is_reaped_not_left_a_zombie() {
    a_dropped_child_is_reaped_once_it_exits().await;
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn kill_on_drop_kills_and_reaps_the_child() {
    a_child_killed_on_drop_is_reaped().await;
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn two_hundred_concurrent_children_are_all_awaited() {
    many_concurrent_children_are_all_awaited(200).await;
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn a_missing_program_is_not_found_and_named() {
    let error = Command::new("crew-no-such-program-here").spawn().unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::NotFound, "{error}");
    assert!(error.to_string().contains("crew-no-such-program-here"), "{error}");
    // The OS's error is the source, its number kept.
    let source = error.get_ref().and_then(|inner| inner.source()).and_then(|source| source.downcast_ref::<io::Error>());
    assert_eq!(source.and_then(io::Error::raw_os_error), Some(rustix::io::Errno::NOENT.raw_os_error()), "{error:?}");
    let error = bounded(Command::new("/no/such/dir/prog").output()).await.unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::NotFound, "{error}");
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn a_pipe_reads_to_its_end_after_the_child_exited() {
    let mut child = Command::new("sh").args(["-c", "echo early"]).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    assert!(bounded(child.wait()).await.unwrap().success());
    let mut text = String::new();
    bounded(stdout.read_to_string(&mut text)).await.unwrap();
    assert_eq!(text, "early\n");
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn a_grandchild_holding_the_pipe_keeps_a_read_to_the_end_waiting() {
    // `sh` exits at once; the subshell it leaves in the background holds its stdout, and
    // writes to it later.
    let mut child =
        Command::new("sh").args(["-c", "(sleep 0.3; echo late) & echo early"]).stdout(Stdio::piped()).spawn().unwrap();
    assert!(bounded(child.wait()).await.unwrap().success());
    let mut text = String::new();
    bounded(child.stdout.take().unwrap().read_to_string(&mut text)).await.unwrap();
    assert_eq!(text, "early\nlate\n", "the read ends only when the grandchild closed the pipe");
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn wait_closes_stdin_so_a_reader_of_it_ends() {
    let mut child: Child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    assert!(child.stdin.is_some());
    assert!(bounded(child.wait()).await.unwrap().success());
    assert!(child.stdin.is_none());
}

#[crew::test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
async fn one_childs_stdout_is_anothers_stdin() {
    let mut first = Command::new("echo").arg("piped along").stdout(Stdio::piped()).spawn().unwrap();
    let stdout: Stdio = first.stdout.take().unwrap().try_into().unwrap();
    let second = Command::new("cat").stdin(stdout).stdout(Stdio::piped()).spawn().unwrap();
    let output = bounded(second.wait_with_output()).await.unwrap();
    assert_eq!(output.stdout, b"piped along\n");
    assert!(bounded(first.wait()).await.unwrap().success());
}

#[test]
fn the_handles_and_futures_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<Command>();
    send_sync::<Child>();
    send_sync::<crew::process::ChildStdin>();
    send_sync::<crew::process::ChildStdout>();
    send_sync::<crew::process::ChildStderr>();
    let mut child = None::<Child>;
    if let Some(child) = &mut child {
        send(&child.wait());
        send(&child.kill());
    }
    if let Some(child) = child {
        send(&child.wait_with_output());
    }
}

#[test]
#[cfg_attr(miri, ignore = "miri does not run processes")]
fn where_pidfds_work_a_child_is_watched_by_one_and_no_sigchld_handler_is_installed() {
    if !pidfds_work() {
        println!("pidfd_open is refused here: nothing to check");
        return;
    }
    let child = Command::new("sleep").arg("1000").kill_on_drop(true).spawn().unwrap();
    assert!(open_pidfds() >= 1, "a running child holds a pidfd");
    assert!(!sigchld_caught(), "pidfd mode installs no SIGCHLD handler");
    drop(child);
}

// The `SIGCHLD` fallback and the fd limit, in child processes.

fn is_child() -> bool {
    common::child::is_child(CHILD_MARKER)
}

/// Runs the ignored test `test` of this binary in a child process with `env` set; returns its
/// output, printed if it failed.
fn run_child(test: &str, env: &[(&str, &str)]) -> String {
    run_child_under(test, env, &[])
}

/// [`run_child`], the binary run by `wrapper` (a command line that ends with the binary's path
/// and its arguments) if it is not empty.
fn run_child_under(test: &str, env: &[(&str, &str)], wrapper: &[&str]) -> String {
    let mut command = common::child::child_command_under(wrapper, CHILD_MARKER, test);
    command.envs(env.iter().copied());
    let output = common::child::output_within_timeout(command);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{test} failed:\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
    stdout
}

/// True if `/proc/self/status` says this process catches `SIGCHLD` (bit 17 of `SigCgt`).
fn sigchld_caught() -> bool {
    sigchld_in("SigCgt:")
}

/// True if `SIGCHLD` (17 on Linux) is in the mask of `/proc/self/status` named `field`.
fn sigchld_in(field: &str) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mask = status.lines().find_map(|line| line.strip_prefix(field)).unwrap().trim();
    u64::from_str_radix(mask, 16).unwrap() & (1 << (17 - 1)) != 0
}

/// The pidfds this process holds open.
fn open_pidfds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().contains("pidfd"))
        .count()
}

/// True if this kernel gives pidfds to this process.
fn pidfds_work() -> bool {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let works =
        rustix::process::pidfd_open(rustix::process::Pid::from_child(&child), rustix::process::PidfdFlags::empty())
            .is_ok();
    child.wait().unwrap();
    works
}

#[test]
#[ignore = "entry point of a child process started by the_sigchld_fallback_waits_kills_and_reaps"]
fn child_sigchld_fallback() {
    if !is_child() {
        return;
    }
    println!();
    assert_eq!(std::env::var(crew::process::NO_PIDFD_ENV).as_deref(), Ok("1"));
    crew::block_on(crew::spawn(async {
        output_collects_stdout_stderr_and_the_exit_code().await;
        kill_then_wait_says_signal_9_and_the_id_is_gone().await;
        a_dropped_child_is_reaped_once_it_exits().await;
        a_child_killed_on_drop_is_reaped().await;
        many_concurrent_children_are_all_awaited(200).await;
        // Several orphans at once, and one that exits by itself while another waits.
        let pids: Vec<u32> = (0..5)
            .map(|i| {
                let child = Command::new("sleep").arg(format!("0.{i}")).spawn().unwrap();
                child.id().unwrap()
            })
            .collect();
        for pid in pids {
            bounded(reaped(pid)).await;
        }
    }));
    assert!(sigchld_caught(), "SIGCHLD mode catches SIGCHLD");
    assert_eq!(open_pidfds(), 0, "SIGCHLD mode opens no pidfd");
    println!("sigchld fallback: ok");
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn the_sigchld_fallback_waits_kills_and_reaps() {
    let stdout = run_child("child_sigchld_fallback", &[(crew::process::NO_PIDFD_ENV, "1")]);
    assert!(stdout.lines().any(|line| line == "sigchld fallback: ok"), "{stdout}");
}

#[test]
#[ignore = "entry point of a child process started by an_ignored_sigchld_fails_a_pidfd_wait_and_sigchld_mode_overrides_it"]
fn child_sigchld_ignored() {
    if !is_child() {
        return;
    }
    println!();
    assert!(sigchld_in("SigIgn:"), "`env --ignore-signal=CHLD` left SIGCHLD ignored");
    let sigchld_mode = std::env::var_os(crew::process::NO_PIDFD_ENV).is_some();
    let waited = crew::block_on(async {
        let mut child = Command::new("true").spawn().unwrap();
        bounded(child.wait()).await
    });
    if sigchld_mode {
        // crew's handler replaced the ignore before the spawn: the child is crew's to reap.
        assert!(waited.unwrap().success());
    } else {
        // The kernel reaped the child itself: the wait says so, it does not hang.
        assert_eq!(waited.unwrap_err().raw_os_error(), Some(rustix::io::Errno::CHILD.raw_os_error()));
        let dropped = Command::new("sleep").arg("0.1").spawn().unwrap();
        let pid = dropped.id().unwrap();
        drop(dropped);
        crew::block_on(bounded(reaped(pid)));
    }
    println!("sigchld ignored: ok");
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn an_ignored_sigchld_fails_a_pidfd_wait_and_sigchld_mode_overrides_it() {
    if !pidfds_work() {
        return;
    }
    // coreutils' `env --ignore-signal` sets SIGCHLD to SIG_IGN, which `exec` hands on to the
    // test binary (dash's `trap '' CHLD` does not).
    let wrapper = &["env", "--ignore-signal=CHLD"];
    if !std::process::Command::new("env").args(["--ignore-signal=CHLD", "true"]).status().is_ok_and(|s| s.success()) {
        println!("this `env` has no --ignore-signal: nothing to check");
        return;
    }
    let stdout = run_child_under("child_sigchld_ignored", &[], wrapper);
    assert!(stdout.lines().any(|line| line == "sigchld ignored: ok"), "{stdout}");
    let stdout = run_child_under("child_sigchld_ignored", &[(crew::process::NO_PIDFD_ENV, "1")], wrapper);
    assert!(stdout.lines().any(|line| line == "sigchld ignored: ok"), "{stdout}");
}

#[test]
#[ignore = "entry point of a child process started by a_bad_no_pidfd_value_fails_spawn_naming_it"]
fn child_bad_no_pidfd_value() {
    if !is_child() {
        return;
    }
    println!();
    let error = Command::new("true").spawn().unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    println!("spawn error: {error}");
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn a_bad_no_pidfd_value_fails_spawn_naming_it() {
    let stdout = run_child("child_bad_no_pidfd_value", &[(crew::process::NO_PIDFD_ENV, "yes")]);
    let expected = "spawn error: crew::process: CREW_PROCESS_NO_PIDFD=\"yes\" is not `0` or `1`";
    assert!(stdout.lines().any(|line| line == expected), "{stdout}");
}

/// Spawns children until a spawn fails, drops them, waits until they were reaped, then spawns
/// again.
async fn exhaust_fds_then_recover(stdout: fn() -> Stdio) {
    let mut children = Vec::new();
    let error = loop {
        assert!(children.len() < 1000, "64 fds never ran out");
        match Command::new("sleep").arg("1000").stdout(stdout()).kill_on_drop(true).spawn() {
            Ok(child) => children.push(child),
            Err(error) => break error,
        }
    };
    println!("spawn {} failed: {error}", children.len() + 1);
    assert!(!children.is_empty(), "spawned nothing before running out: {error}");
    let pids: Vec<u32> = children.iter().map(|child| child.id().unwrap()).collect();
    drop(children);
    // Killed and reaped in the background: their fds close, and spawning works again.
    for pid in pids {
        bounded(reaped(pid)).await;
    }
    let output = bounded(Command::new("echo").arg("again").output()).await.unwrap();
    assert_eq!(output.stdout, b"again\n");
}

#[test]
#[ignore = "entry point of a child process started by running_out_of_fds_fails_spawn_and_it_recovers"]
fn child_fd_exhaustion() {
    if !is_child() {
        return;
    }
    println!();
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let maximum = getrlimit(Resource::Nofile).maximum;
    setrlimit(Resource::Nofile, Rlimit { current: Some(64), maximum }).unwrap();
    // With a pipe per child, std's spawn runs out first; with inherited streams (std may then
    // spawn without opening any fd), the child's pidfd may be the fd that cannot be had (in
    // `SIGCHLD` mode, such a child holds no fd at all: nothing runs out).
    crew::block_on(exhaust_fds_then_recover(Stdio::piped));
    if std::env::var_os(crew::process::NO_PIDFD_ENV).is_none() {
        crew::block_on(exhaust_fds_then_recover(Stdio::inherit));
    }
    println!("fd exhaustion: ok");
}

#[test]
#[cfg_attr(miri, ignore = "runs this test binary as a child process, which miri cannot start")]
fn running_out_of_fds_fails_spawn_and_it_recovers() {
    let stdout = run_child("child_fd_exhaustion", &[]);
    assert!(stdout.lines().any(|line| line == "fd exhaustion: ok"), "{stdout}");
    let stdout = run_child("child_fd_exhaustion", &[(crew::process::NO_PIDFD_ENV, "1")]);
    assert!(stdout.lines().any(|line| line == "fd exhaustion: ok"), "{stdout}");
}
