//! Futures whose `Drop` panics. Dropped after completing (or after panicking in `poll`), the
//! drop's panic is a panic of the task, reported to the awaiter as its policy says. Dropped
//! without completing (handle dropped, `cancel()`, pool shutdown), the panic must not take
//! down the process or the pool; nor may a panic in the `Drop` of an output or a panic payload
//! that nobody takes (a detached task's, a task cancelled while it ran), which async-task drops
//! itself. Those scenarios run in a child process (the `#[ignore]`d `child_*` tests), because
//! an abort would kill every test in this binary.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::task::{Context, Poll};

use common::{assert_all_workers_run, await_panic, child, payload_message, wait_until, with_timeout};

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

/// Runs `body` on a fresh 2-worker pool whose threads are named `prefix` (expected panics kept
/// quiet, a hang turned into a failure), then asserts that both workers are still alive and run
/// tasks at once.
fn on_two_workers(prefix: &'static str, body: impl FnOnce(&crew::Pool) + Send + 'static) {
    quiet_expected_panics();
    with_timeout(move || {
        let pool = crew::Pool::builder().workers(2).thread_name(prefix).build().unwrap();
        body(&pool);
        assert_all_workers_run(&pool, prefix, 2);
    });
}

#[test]
fn a_panic_in_the_drop_of_a_completed_future_is_a_panic_of_the_task_under_every_policy() {
    on_two_workers("drop-panics", |pool| {
        let make = || PanicsOnDrop { panic_in_poll: false };
        let err = crew::block_on(pool.spawn_with(crew::Catch, make())).unwrap_err();
        assert_eq!(err.panic_message(), Some("expected: panic in drop"));
        let payload = await_panic(pool.spawn(make()));
        assert_eq!(payload_message(payload.as_ref()), Some("expected: panic in drop"));
        let payload = await_panic(pool.spawn_with(crew::Ignore, make()));
        assert_eq!(payload_message(payload.as_ref()), Some(crew::IGNORED_PANIC_MESSAGE));
    });
}

#[test]
fn a_future_that_panics_in_poll_and_then_in_drop_reports_the_poll_panic() {
    on_two_workers("double-panic", |pool| {
        let err = crew::block_on(pool.spawn_with(crew::Catch, PanicsOnDrop { panic_in_poll: true })).unwrap_err();
        assert_eq!(err.panic_message(), Some("expected: panic in poll"));
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

/// Set in a child's environment. Nothing reads it: the `child_*` tests are `#[ignore]`d, so
/// they run only where asked to (in the child, or in this process under `--include-ignored`).
const CHILD_MARKER: &str = "CREW_PANIC_IN_DROP_TEST_CHILD";

/// Runs the ignored test `name` of this binary in a child process and asserts it passed.
fn run_child(name: &str) {
    if cfg!(miri) {
        return; // miri cannot start processes
    }
    let out = child::output_within_timeout(child::child_command(CHILD_MARKER, name));
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
    on_two_workers("child-drop", |pool| {
        let (future, polls, drops) = pending_panics_on_drop();
        let handle = pool.spawn(future);
        wait_until("the task is polled", || polls.load(Ordering::SeqCst) == 1);
        drop(handle);
        wait_until("the cancelled future is dropped", || drops.load(Ordering::SeqCst) == 1);
    });
}

#[test]
fn cancel_of_a_pending_future_whose_drop_panics_returns_none_and_keeps_the_process_alive() {
    run_child("child_cancel_of_pending_future_whose_drop_panics");
}

#[test]
#[ignore = "run in a child process by the test above"]
fn child_cancel_of_pending_future_whose_drop_panics() {
    on_two_workers("child-cancel", |pool| {
        let (future, polls, drops) = pending_panics_on_drop();
        let handle = pool.spawn_with(crew::Catch, future);
        wait_until("the task is polled", || polls.load(Ordering::SeqCst) == 1);
        assert!(crew::block_on(handle.cancel()).is_none());
        assert_eq!(drops.load(Ordering::SeqCst), 1);
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

// Outputs and payloads nobody takes: async-task drops them itself, under the same abort guard,
// so crew must catch a panic in their `Drop` too. Each scenario runs in a child process.

/// A task's output, or a panic payload, whose `Drop` counts itself, then panics.
struct PanicsWhenDropped(Arc<AtomicUsize>);

impl Drop for PanicsWhenDropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("expected: panic in the drop of a task's output or payload");
    }
}

#[test]
fn a_detached_task_whose_output_drop_panics_keeps_the_process_and_pool_alive() {
    run_child("child_detached_output_whose_drop_panics");
}

#[test]
#[ignore = "run in a child process by the test above"]
fn child_detached_output_whose_drop_panics() {
    on_two_workers("child-output", |pool| {
        let drops = Arc::new(AtomicUsize::new(0));
        let output = PanicsWhenDropped(drops.clone());
        pool.spawn(async move { output }).detach();
        wait_until("the detached task's output is dropped", || drops.load(Ordering::SeqCst) == 1);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn a_task_cancelled_while_it_runs_whose_output_drop_panics_keeps_the_process_and_pool_alive() {
    run_child("child_cancelled_while_running_output_whose_drop_panics");
}

#[test]
#[ignore = "run in a child process by the test above"]
fn child_cancelled_while_running_output_whose_drop_panics() {
    on_two_workers("child-running", |pool| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (started_tx, started) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let output = PanicsWhenDropped(drops.clone());
        let handle = pool.spawn(async move {
            started_tx.send(()).unwrap();
            // Blocks inside the poll until the handle was dropped.
            let _ = released.recv();
            output
        });
        started.recv().unwrap();
        drop(handle); // cancels the running task: async-task drops its output when the poll ends
        drop(release);
        wait_until("the cancelled task's output is dropped", || drops.load(Ordering::SeqCst) == 1);
    });
}

#[test]
fn detached_tasks_whose_panic_payload_drop_panics_keep_the_process_and_pool_alive() {
    run_child("child_detached_payload_whose_drop_panics");
}

#[test]
#[ignore = "run in a child process by the test above"]
fn child_detached_payload_whose_drop_panics() {
    on_two_workers("child-payload", |pool| {
        let drops = Arc::new(AtomicUsize::new(0));
        let payload = PanicsWhenDropped(drops.clone());
        pool.spawn(async move { std::panic::panic_any(payload) }).detach();
        let payload = PanicsWhenDropped(drops.clone());
        pool.spawn_with(crew::Catch, async move { std::panic::panic_any(payload) }).detach();
        wait_until("both payloads are dropped", || drops.load(Ordering::SeqCst) == 2);
    });
}
