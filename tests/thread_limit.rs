//! A worker whose core must go to a fresh thread when none can start (a thread limit: `clone`
//! failing with EAGAIN), simulated by crew's hidden test switch that makes the next thread
//! starts fail. The switch is process-wide, so this is a binary of its own, and its tests take
//! turns (`SERIAL`).
//!
//! - `crew::scope` on the only worker of a pool fails at once with the error, before its
//!   closure runs, with or without takeover (it used to hang: its tasks queued behind the
//!   blocked worker).
//! - `block_in_place` whose hand-off failed runs its closure on the worker all the same, and
//!   the monitor takes the stuck core over once a thread can start (its poll used to be marked
//!   ended, so the monitor never saw it).
//!
//! Every wait is for an event; `with_timeout` only turns a hang into a failure.

mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use common::{payload_message, with_timeout};

/// The switch is the process's: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn scope_on_the_only_worker_fails_before_its_closure_runs(takeover: bool) {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    with_timeout(move || {
        let pool = crew::Pool::builder().workers(1).takeover(takeover).build().unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let closure_ran = ran.clone();
        let failed = pool.block_on(pool.spawn(async move {
            crew::__private::fail_next_thread_starts(1);
            let caught = panic::catch_unwind(AssertUnwindSafe(|| {
                crew::scope(|s| {
                    closure_ran.store(true, Ordering::SeqCst);
                    s.spawn(async {});
                })
            }));
            crew::__private::fail_next_thread_starts(0);
            let payload = caught.expect_err("no replacement thread could start");
            payload_message(&*payload).map(str::to_owned)
        }));
        let message = failed.expect("a message");
        assert!(message.starts_with("crew::scope: blocking on a worker thread needs a replacement"), "{message}");
        assert!(message.contains("refused for a test"), "the OS error is named: {message}");
        assert!(!ran.load(Ordering::SeqCst), "the closure never ran: no task exists");
        // The worker goes on.
        assert_eq!(pool.block_on(pool.spawn(async { 7 })), 7);
    });
}

#[test]
fn scope_on_the_only_worker_fails_at_once_without_takeover() {
    scope_on_the_only_worker_fails_before_its_closure_runs(false);
}

#[test]
fn scope_on_the_only_worker_fails_at_once_with_takeover() {
    scope_on_the_only_worker_fails_before_its_closure_runs(true);
}

#[test]
#[cfg_attr(miri, ignore = "a monitor thread and its waits: too slow interpreted")]
fn block_in_place_whose_hand_off_failed_is_taken_over_later() {
    let _serial = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).takeover(true).build().unwrap();
        let answer = pool.block_on(pool.spawn(async {
            let (tx, rx) = mpsc::channel();
            // Queued behind this task on its worker: it runs only once the core moves on.
            let behind = crew::spawn(async move { tx.send(5).unwrap() });
            // Only the hand-off's start fails; the takeover's, later, works.
            crew::__private::fail_next_thread_starts(1);
            let got = crew::block_in_place(|| rx.recv().unwrap());
            behind.await;
            got
        }));
        assert_eq!(answer, 5, "the monitor took the stuck core over and ran the task behind it");
        let metrics = pool.metrics();
        assert!(metrics.total.takeovers >= 1, "{metrics:?}");
    });
}
