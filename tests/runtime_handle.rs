//! The runtime handle and a task's identity, as a tokio user reaches for them:
//! `Spawner::current()` (`crew::spawn` inside a `spawn_blocking` job: tests/spawn.rs),
//! `crew::task::id()` and `try_id()`, `JoinHandle::abort()`, and the id and name a `JoinError`
//! carries.

mod common;

use common::with_timeout;

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

#[test]
fn spawner_current_is_the_pool_of_the_task_its_block_on_or_its_blocking_job() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).thread_name("handle-pool").build().unwrap();
        let from_task = crew::block_on(pool.spawn(async { crew::Spawner::current() }));
        let from_block_on = pool.block_on(async { crew::Spawner::current() });
        let from_job = crew::block_on(pool.spawn(async { crew::spawn_blocking(crew::Spawner::current).await }));
        for spawner in [from_task, from_block_on, from_job] {
            // Used from a thread of no pool, later: it still names the pool it found.
            let ran_on =
                std::thread::spawn(move || crew::block_on(spawner.spawn(async { thread_name() }))).join().unwrap();
            assert!(ran_on.starts_with("handle-pool-"), "{ran_on}");
        }

        let outside = crew::Spawner::current();
        assert!(crew::block_on(outside.spawn(async { thread_name() })).starts_with("crew-worker-"));
        let on_global = crew::block_on(crew::spawn(async { crew::Spawner::current() }));
        assert!(crew::block_on(on_global.spawn(async { thread_name() })).starts_with("crew-worker-"));

        // The pool gone, what the captured spawner spawns is cancelled.
        let spawner = pool.block_on(async { crew::Spawner::current() });
        drop(pool);
        assert!(spawner.is_shut_down());
        assert!(crew::block_on(spawner.spawn_with(crew::Catch, async {})).unwrap_err().is_cancelled());
    });
}

#[test]
fn task_id_is_the_running_tasks_in_every_kind_of_task() {
    with_timeout(|| {
        assert_eq!(crew::task::try_id(), None);
        let handle = crew::spawn(async { (crew::task::id(), crew::task::try_id()) });
        let id = handle.id();
        assert_eq!(crew::block_on(handle), (id, Some(id)));

        let job = crew::spawn_blocking(crew::task::id);
        let id = job.id();
        assert_eq!(crew::block_on(job), id);

        crew::block_on(async {
            assert_eq!(crew::task::try_id(), None, "a block_on's own future is no task");
            let local = crew::spawn_local(async {
                let mine = crew::task::id();
                crew::yield_now().await;
                assert_eq!(crew::task::id(), mine, "the same after a yield");
                mine
            });
            let id = local.id();
            assert_eq!(local.await, id);
            assert_eq!(crew::task::try_id(), None, "put back after the local task's polls");
        });

        // A nested poll (a local task run by a `block_on` inside a task) sees its own id, then
        // the outer task's again.
        let outer = crew::spawn(async {
            let outer = crew::task::id();
            let inner = crew::block_on(async { crew::spawn_local(async { crew::task::id() }).await });
            (outer, inner, crew::task::id())
        });
        let outer_id = outer.id();
        let (outer, inner, after) = crew::block_on(outer);
        assert_eq!((outer, after), (outer_id, outer_id));
        assert_ne!(inner, outer_id);
    });
}

#[test]
fn task_id_outside_a_task_panics_naming_the_rule() {
    let payload = std::panic::catch_unwind(crew::task::id).unwrap_err();
    let message = common::payload_message(payload.as_ref()).unwrap();
    assert!(message.contains("outside a task") && message.contains("try_id"), "{message}");
}

#[test]
fn the_id_is_known_while_an_unfinished_future_is_dropped() {
    with_timeout(|| {
        struct SeeId(std::sync::mpsc::Sender<Option<crew::task::TaskId>>);
        impl Drop for SeeId {
            fn drop(&mut self) {
                let _ = self.0.send(crew::task::try_id());
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let handle = crew::spawn(async move {
            let _see = SeeId(tx);
            started_tx.send(()).unwrap();
            std::future::pending::<()>().await
        });
        let id = handle.id();
        started_rx.recv().unwrap();
        drop(handle);
        assert_eq!(rx.recv().unwrap(), Some(id));
    });
}

#[test]
fn join_handle_abort_keeps_the_handle_to_await() {
    with_timeout(|| {
        let handle = crew::spawn_with(crew::Catch, std::future::pending::<()>());
        handle.abort();
        let id = handle.id();
        let err = crew::block_on(handle).unwrap_err();
        assert!(err.is_aborted() && err.is_cancelled());
        assert_eq!(err.id(), id);
        assert_eq!(err.to_string(), format!("task {id} was aborted before it finished"));

        // Under Propagate, awaiting an aborted task panics with ABORTED_MESSAGE.
        let handle = crew::spawn(std::future::pending::<()>());
        handle.abort();
        let payload = common::await_panic(handle);
        assert_eq!(common::payload_message(payload.as_ref()), Some(crew::ABORTED_MESSAGE));

        // A task that finished first gives its output.
        let handle = crew::spawn(async { 5 });
        while !handle.is_finished() {
            std::thread::yield_now();
        }
        handle.abort();
        assert_eq!(crew::block_on(handle), 5);
    });
}

#[test]
fn a_join_error_names_its_task() {
    with_timeout(|| {
        let named = crew::task::Builder::new().name("fetch").policy(crew::Catch).spawn(async { panic!("boom") });
        let id = named.id();
        let err = crew::block_on(named).unwrap_err();
        assert_eq!((err.id(), err.name()), (id, Some("fetch")));
        assert_eq!(err.to_string(), format!("task {id} \"fetch\" panicked: boom"));
        let debug = format!("{err:?}");
        assert!(debug.contains("fetch") && debug.contains(&id.to_string()), "{debug}");

        // A set's aborted member, given as an error by a Catch set, keeps its name too.
        let set = crew::task::JoinSet::<(), crew::Catch>::with_policy();
        let abort = crew::task::Builder::new().name("slow").spawn_in(&set, std::future::pending());
        abort.abort();
        let (joined_id, result) = crew::block_on(set.join_next_with_id()).unwrap();
        let err = result.unwrap_err();
        assert!(err.is_aborted());
        assert_eq!((joined_id, err.id(), err.name()), (abort.id(), abort.id(), Some("slow")));
    });
}
