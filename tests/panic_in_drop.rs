//! Futures whose `Drop` panics. Dropped after completing (or after panicking in `poll`), the
//! drop's panic is a panic of the task, reported to the awaiter as its policy says. Dropped
//! without completing (handle dropped, `cancel()`, pool shutdown), the panic must not take
//! down the process or the pool: those scenarios run in a child process (the `#[ignore]`d
//! `child_*` tests), because an abort would kill every test in this binary.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::task::{Context, Poll};

use common::{assert_all_workers_run, await_panic, payload_message, wait_until, with_timeout};

/// Keeps the expected panics (messages starting with "expected:") out of the output; others
/// go to the default hook.
fn quiet_expected_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !payload_message(info.payload()).is_some_and(|m| m.starts_with("expected:")) {
                default(info);
            }
        }));
    });
}

/// A future that is ready at once (or panics, if `panic_in_poll`), and whose `Drop` panics.
struct PanicsOnDrop {
    panic_in_poll: bool,
}

impl Future for PanicsOnDrop {
    type Output = u8;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<u8> {
        if self.panic_in_poll {
            panic!("expected: panic in poll");
        }
        Poll::Ready(1)
    }
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("expected: panic in drop");
    }
}

#[test]
fn a_panic_in_the_drop_of_a_completed_future_is_a_panic_of_the_task_under_every_policy() {
    quiet_expected_panics();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("drop-panics").build().unwrap();
        let make = || PanicsOnDrop { panic_in_poll: false };
        let err = crew::block_on(pool.spawn_with(crew::Catch, make())).unwrap_err();
        assert_eq!(err.panic_message(), Some("expected: panic in drop"));
        let payload = await_panic(pool.spawn(make()));
        assert_eq!(payload_message(payload.as_ref()), Some("expected: panic in drop"));
        let payload = await_panic(pool.spawn_with(crew::Ignore, make()));
        assert_eq!(payload_message(payload.as_ref()), Some(crew::Ignore::PANIC_MESSAGE));
        assert_all_workers_run(&pool, "drop-panics", 2);
    });
}

#[test]
fn a_future_that_panics_in_poll_and_then_in_drop_reports_the_poll_panic() {
    quiet_expected_panics();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("double-panic").build().unwrap();
        let err = crew::block_on(pool.spawn_with(crew::Catch, PanicsOnDrop { panic_in_poll: true })).unwrap_err();
        assert_eq!(err.panic_message(), Some("expected: panic in poll"));
        assert_all_workers_run(&pool, "double-panic", 2);
    });
}

// Dropped without completing: async-task drops the future under its `abort_on_panic` guard,
// so unless crew catches the panic first, the whole process aborts. Each scenario runs in a
// child process; the parent test checks that the child passed.

/// Pending forever; its `Drop` counts itself, then panics.
struct PendingPanicsOnDrop {
    polls: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

impl Future for PendingPanicsOnDrop {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        Poll::Pending
    }
}

impl Drop for PendingPanicsOnDrop {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        panic!("expected: panic in the drop of a cancelled future");
    }
}

fn pending_panics_on_drop() -> (PendingPanicsOnDrop, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (polls, drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    (PendingPanicsOnDrop { polls: polls.clone(), drops: drops.clone() }, polls, drops)
}

/// Runs the ignored test `name` of this binary in a child process and asserts it passed.
fn run_child(name: &str) {
    if cfg!(miri) {
        return; // miri cannot start processes
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--ignored", "--exact", name, "--test-threads=1"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child test {name} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

#[test]
fn dropping_the_handle_of_a_pending_future_whose_drop_panics_keeps_the_process_and_pool_alive() {
    run_child("child_drop_handle_of_pending_future_whose_drop_panics");
}

#[test]
#[ignore = "run in a child process by the test above"]
fn child_drop_handle_of_pending_future_whose_drop_panics() {
    quiet_expected_panics();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("child-drop").build().unwrap();
        let (future, polls, drops) = pending_panics_on_drop();
        let handle = pool.spawn(future);
        wait_until("the task is polled", || polls.load(Ordering::SeqCst) == 1);
        drop(handle);
        wait_until("the cancelled future is dropped", || drops.load(Ordering::SeqCst) == 1);
        assert_all_workers_run(&pool, "child-drop", 2);
    });
}

#[test]
fn cancel_of_a_pending_future_whose_drop_panics_returns_none_and_keeps_the_process_alive() {
    run_child("child_cancel_of_pending_future_whose_drop_panics");
}

#[test]
#[ignore = "run in a child process by the test above"]
fn child_cancel_of_pending_future_whose_drop_panics() {
    quiet_expected_panics();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("child-cancel").build().unwrap();
        let (future, polls, drops) = pending_panics_on_drop();
        let handle = pool.spawn_with(crew::Catch, future);
        wait_until("the task is polled", || polls.load(Ordering::SeqCst) == 1);
        assert!(crew::block_on(handle.cancel()).is_none());
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_all_workers_run(&pool, "child-cancel", 2);
    });
}

#[test]
fn dropping_a_pool_holding_futures_whose_drop_panics_finishes_and_cancels_them() {
    run_child("child_pool_drop_with_futures_whose_drop_panics");
}

#[test]
#[ignore = "run in a child process by the test above"]
fn child_pool_drop_with_futures_whose_drop_panics() {
    quiet_expected_panics();
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let (pending, polls, pending_drops) = pending_panics_on_drop();
        let pending = pool.spawn_with(crew::Catch, pending);
        wait_until("the pending task is polled", || polls.load(Ordering::SeqCst) == 1);
        let gate = common::block_one_worker(&pool);
        let (queued, _, queued_drops) = pending_panics_on_drop();
        let queued = pool.spawn_with(crew::Catch, queued);
        drop(gate);
        drop(pool);
        assert_eq!((pending_drops.load(Ordering::SeqCst), queued_drops.load(Ordering::SeqCst)), (1, 1));
        assert!(crew::block_on(pending).unwrap_err().is_cancelled());
        assert!(crew::block_on(queued).unwrap_err().is_cancelled());
    });
}
