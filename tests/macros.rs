//! `#[crew::test]` (the default `macros` feature): each test runs on a pool of its own, named
//! after it, configured by the attribute's options, and checked for leftover tasks.
#![cfg(feature = "macros")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::channel::oneshot;

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

#[crew::test]
async fn spawns_land_on_the_tests_own_pool_named_after_the_test() {
    let child = crew::spawn(async { (thread_name(), crew::spawn(async { thread_name() }).await) }).await;
    for ran_on in [child.0, child.1] {
        assert!(ran_on.starts_with("spawns_land_on_the_tests_own_pool_named_after_the_test-"), "ran on {ran_on}");
    }
}

/// The threads of this process whose name starts with `prefix` (Linux's `/proc/self/task`).
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|task| std::fs::read_to_string(task.path().join("comm")).is_ok_and(|name| name.starts_with(prefix)))
        .count()
}

#[crew::test(workers = 3, thread_name = "three", takeover = false)]
#[cfg_attr(miri, ignore = "reads /proc/self/task: miri isolates it, and its threads are not the kernel's")]
async fn options_configure_the_tests_pool() {
    let ran_on = crew::spawn(async { thread_name() }).await;
    assert!(ran_on.starts_with("three-"), "ran on {ran_on}");
    // Exactly the three workers; with takeover off no monitor or spare thread starts either.
    // A thread names itself once it runs, so wait (boundedly) for the third to show, then give
    // a fourth, which would be wrong, a moment to show too.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while threads_named("three") < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(threads_named("three"), 3);
}

#[crew::test]
async fn a_test_may_return_a_result() -> Result<(), String> {
    let value = crew::spawn(async { Ok::<u32, String>(4) }).await?;
    assert_eq!(value, 4);
    Ok(())
}

#[crew::test]
#[should_panic(expected = "#[crew::test]: 1 task was still alive when the test's body returned")]
async fn a_task_left_waiting_fails_the_test_and_is_named() {
    crew::task::Builder::new().name("left-behind").spawn(std::future::pending::<()>()).detach();
}

#[crew::test]
#[should_panic(expected = "left-behind-with-name")]
async fn the_leftover_report_names_the_task() {
    crew::task::Builder::new().name("left-behind-with-name").spawn(std::future::pending::<()>()).detach();
}

#[crew::test]
#[should_panic(expected = "#[crew::test]: 1 task was still alive when the test's body returned")]
async fn a_local_task_left_waiting_on_the_tests_thread_fails_the_test() {
    crew::spawn_local(std::future::pending::<()>()).detach();
    // Its first poll, between two of the body's.
    crew::yield_now().await;
}

#[crew::test]
#[should_panic(expected = "#[crew::test]: 1 task was still alive when the test's body returned")]
async fn a_local_task_left_waiting_on_a_worker_fails_the_test() {
    crew::spawn(async { crew::spawn_local(std::future::pending::<()>()).detach() }).await;
}

#[crew::test(leftovers = "drop")]
async fn leftovers_drop_allows_tasks_left_waiting() {
    crew::spawn(std::future::pending::<()>()).detach();
}

#[crew::test]
async fn a_task_ending_just_after_the_body_returns_is_not_a_leftover() {
    let (tx, rx) = oneshot::channel();
    crew::spawn(async move {
        tx.send(()).unwrap();
        // Still running (and queued between yields) after the body has its message. Fewer
        // under miri, where 1,000 yields outlast the check's 10 s limit (about 18 polls a second).
        for _ in 0..if cfg!(miri) { 20 } else { 1000 } {
            crew::yield_now().await;
        }
    })
    .detach();
    rx.await.unwrap();
}

#[crew::test]
#[should_panic(expected = "the body's own panic")]
async fn a_panic_in_the_body_fails_the_test_with_its_message() {
    panic!("the body's own panic");
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Spawns onto `pool` a task that waits forever; the flag is set when its future is dropped.
fn leave_a_task_waiting(pool: &crew::Pool) -> Arc<AtomicBool> {
    let dropped = Arc::new(AtomicBool::new(false));
    let guard = SetOnDrop(dropped.clone());
    pool.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    })
    .detach();
    dropped
}

#[test]
fn the_leftover_check_drops_the_pool_and_the_leftovers_before_it_reports() {
    for fail in [false, true] {
        let pool = crew::__private::test_pool(crew::Builder::new().workers(1));
        let dropped = leave_a_task_waiting(&pool);
        let checked =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::__private::finish_test(pool, fail, &())));
        assert_eq!(checked.is_err(), fail, "fails only with `fail`");
        assert!(dropped.load(Ordering::SeqCst), "the leftover was dropped with the pool");
    }
}

#[test]
fn a_task_stuck_forever_in_a_poll_is_reported_not_waited_for() {
    let pool = crew::__private::test_pool(crew::Builder::new().workers(1).takeover(false));
    let (release, stuck) = std::sync::mpsc::channel::<()>();
    let (started, running) = std::sync::mpsc::channel::<()>();
    pool.spawn(async move {
        started.send(()).unwrap();
        // Blocks its worker inside this poll until the check has reported.
        let _ = stuck.recv();
    })
    .detach();
    running.recv().unwrap();
    let limit = std::time::Duration::from_millis(100);
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crew::__private::finish_test_within(pool, true, &(), limit);
    }));
    release.send(()).unwrap();
    let report = checked.expect_err("the stuck task is a leftover");
    let report = report.downcast_ref::<String>().expect("a formatted report");
    assert!(report.contains("1 task was still alive"), "{report}");
    assert!(report.contains("one still stuck in a poll"), "{report}");
    assert!(report.contains("running on worker 0"), "{report}");
}

#[test]
fn a_test_that_returned_an_error_fails_as_itself_not_with_a_leftover_report() {
    let pool = crew::__private::test_pool(crew::Builder::new().workers(1));
    let dropped = leave_a_task_waiting(&pool);
    let output: Result<(), String> = Err("the body's own error".to_owned());
    crew::__private::finish_test(pool, true, &output);
    assert!(dropped.load(Ordering::SeqCst), "the leftover was dropped with the pool all the same");
}

#[crew::test]
async fn tasks_waiting_on_each_other_until_the_body_returns_are_not_leftovers() {
    // A chain of tasks, each waiting for the one before it; the body releases the first and
    // returns at once: the chain ends after the body returned, one wake at a time.
    let (first, mut previous) = oneshot::channel::<()>();
    for _ in 0..20 {
        let (next, waits) = oneshot::channel::<()>();
        let wait_for = std::mem::replace(&mut previous, waits);
        crew::spawn(async move {
            wait_for.await.unwrap();
            let _ = next.send(()); // the last one's receiver is gone
        })
        .detach();
    }
    first.send(()).unwrap();
    drop(previous);
}

// `unhandled_panic = "shutdown_pool"`: a detached task's panic, which no awaiter sees, fails the
// test, naming the task, while the body waits on something that never comes.
#[crew::test(unhandled_panic = "shutdown_pool")]
#[should_panic(expected = "\"unseen\" panicked and no awaiter will see it")]
async fn a_detached_tasks_panic_fails_a_shutdown_pool_test() {
    crew::task::Builder::new().name("unseen").spawn(async { panic!("expected: a detached task's panic") }).detach();
    std::future::pending::<()>().await
}

#[crew::test(unhandled_panic = "ignore")]
async fn an_ignore_option_leaves_the_default() {
    crew::spawn_with(crew::Ignore, async { panic!("expected: ignored") }).detach();
    assert_eq!(crew::spawn(async { 3 }).await, 3);
}
