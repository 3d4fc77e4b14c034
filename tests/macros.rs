//! `#[crew::test]` (the default `macros` feature): each test runs on a pool of its own, named
//! after it, configured by the attribute's options, and checked for leftover tasks.
#![cfg(feature = "macros")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

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

#[crew::test(workers = 3, thread_name = "three", takeover = false)]
async fn options_configure_the_tests_pool() {
    // Three tasks that each block their thread until all three run: only three workers (and no
    // takeover threads) make it through.
    let barrier = Arc::new(Barrier::new(3));
    let tasks: Vec<_> = (0..3)
        .map(|_| {
            let barrier = barrier.clone();
            crew::spawn(async move {
                barrier.wait();
                thread_name()
            })
        })
        .collect();
    let mut names = Vec::new();
    for task in tasks {
        names.push(task.await);
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 3, "three distinct workers: {names:?}");
    assert!(names.iter().all(|name| name.starts_with("three-")), "{names:?}");
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

#[test]
fn the_leftover_check_drops_the_pool_and_the_leftovers_before_it_reports() {
    for fail in [false, true] {
        let dropped = Arc::new(AtomicBool::new(false));
        let pool = crew::__private::test_pool(crew::Builder::new().workers(1));
        let guard = SetOnDrop(dropped.clone());
        pool.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        })
        .detach();
        let checked =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::__private::finish_test(pool, fail)));
        assert_eq!(checked.is_err(), fail, "fails only with `fail`");
        assert!(dropped.load(Ordering::SeqCst), "the leftover was dropped with the pool");
    }
}
