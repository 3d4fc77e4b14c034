//! `Builder::unhandled_panic(UnhandledPanic::ShutdownPool)`: a panic that no awaiter will see
//! (a detached task's, an `Ignore` task's, a dropped set's member's) shuts the pool down and
//! makes `Pool::block_on` panic naming the task; an awaited panic does not; the global pool
//! refuses the setting.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

use common::{payload_message, with_timeout};
use crew::UnhandledPanic;

fn shutting_pool() -> crew::Pool {
    crew::Pool::builder().workers(2).unhandled_panic(UnhandledPanic::ShutdownPool).build().unwrap()
}

/// Runs `body` in `pool.block_on` and returns the message it panicked with.
fn block_on_panic(pool: &crew::Pool, body: impl std::future::Future<Output = ()>) -> String {
    let payload = catch_unwind(AssertUnwindSafe(|| pool.block_on(body))).unwrap_err();
    payload_message(payload.as_ref()).expect("a message").to_owned()
}

#[test]
fn a_detached_tasks_panic_shuts_the_pool_down_and_block_on_names_the_task() {
    with_timeout(|| {
        let pool = shutting_pool();
        // A pending task of the pool's, dropped by the shutdown.
        let (dropped_tx, dropped_rx) = mpsc::channel::<()>();
        let pending = pool.spawn_with(crew::Catch, async move {
            let _tx = dropped_tx;
            std::future::pending::<()>().await
        });
        let message = block_on_panic(&pool, async {
            crew::task::Builder::new().name("doomed").spawn(async { panic!("expected: unseen") }).detach();
            // Waits on nothing the shutdown wakes: the note ends it.
            std::future::pending::<()>().await
        });
        assert!(message.starts_with("crew: Pool::block_on: task "), "{message}");
        assert!(message.contains("\"doomed\" panicked") && message.ends_with("expected: unseen"), "{message}");
        assert!(dropped_rx.recv_timeout(Duration::from_secs(30)).is_err(), "the pending task was dropped");
        assert!(crew::block_on(pending).unwrap_err().is_cancelled());
        // Every later block_on panics at once, with the same note; spawns are cancelled.
        assert_eq!(block_on_panic(&pool, async {}), message);
        assert!(crew::block_on(pool.spawn_with(crew::Catch, async {})).unwrap_err().is_cancelled());
        drop(pool);
    });
}

#[test]
fn an_ignore_tasks_panic_and_a_dropped_sets_members_shut_the_pool_down() {
    with_timeout(|| {
        let pool = shutting_pool();
        let message = block_on_panic(&pool, async {
            // Held, never awaited: an `Ignore` task's panic is noted where it is caught.
            let _held = crew::spawn_with(crew::Ignore, async { panic!("expected: ignored") });
            std::future::pending::<()>().await
        });
        assert!(message.ends_with("expected: ignored"), "{message}");
        drop(pool);

        let pool = shutting_pool();
        let message = block_on_panic(&pool, async {
            let set = crew::task::JoinSet::new();
            let member = set.spawn(async { panic!("expected: a member's") });
            // Until the member ended; then the set goes, with its ended member's payload.
            while !member.is_finished() {
                crew::yield_now().await;
            }
            drop(set);
            std::future::pending::<()>().await
        });
        assert!(message.ends_with("expected: a member's"), "{message}");
    });
}

#[test]
fn awaited_panics_leave_the_pool_running() {
    with_timeout(|| {
        let pool = shutting_pool();
        pool.block_on(async {
            let caught = crew::spawn_with(crew::Catch, async { panic!("expected: caught") }).await;
            assert_eq!(caught.unwrap_err().panic_message(), Some("expected: caught"));
            let handle = crew::spawn(async { panic!("expected: propagated") });
            let payload = crew::spawn_with(crew::Catch, handle).await.unwrap_err().into_panic();
            assert_eq!(payload_message(payload.as_ref()), Some("expected: propagated"));
        });
        assert_eq!(pool.block_on(async { crew::spawn(async { 5 }).await }), 5);
    });
}

#[test]
fn the_global_pool_refuses_shutdown_pool() {
    let err = crew::Builder::new().unhandled_panic(UnhandledPanic::ShutdownPool).build_global().unwrap_err();
    assert!(err.to_string().contains("the global pool never shuts down"), "{err}");
}
