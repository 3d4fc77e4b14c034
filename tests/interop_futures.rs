//! The `futures` feature: libraries written against `futures::task::Spawn`/`SpawnExt` run their
//! tasks on crew, on the pool they were handed (run with `cargo test --features futures`).
#![cfg(feature = "futures")]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::channel::oneshot;
use futures::task::{Spawn, SpawnExt};

use common::with_timeout;

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

/// What a library generic over `Spawn` does: fan out `n` jobs, gather their results.
fn library_fan_out<S: Spawn>(spawner: &S, n: usize) -> Vec<oneshot::Receiver<(usize, String)>> {
    (0..n)
        .map(|i| {
            let (tx, rx) = oneshot::channel();
            SpawnExt::spawn(spawner, async move {
                let _ = tx.send((i * i, thread_name()));
            })
            .expect("the spawner accepts work");
            rx
        })
        .collect()
}

#[test]
fn a_library_generic_over_spawn_runs_its_tasks_on_the_pool_it_was_handed() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("lib").build().unwrap();
        for results in [library_fan_out(&pool, 100), library_fan_out(&pool.spawner(), 100)] {
            let mut sum = 0;
            for rx in results {
                let (square, ran_on) = crew::block_on(rx).expect("every job ran");
                assert!(ran_on.starts_with("lib-"), "ran on {ran_on}");
                sum += square;
            }
            assert_eq!(sum, (0..100).map(|i| i * i).sum::<usize>());
        }
    });
}

#[test]
fn the_global_spawner_runs_on_the_global_pool_even_from_a_private_pool() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).thread_name("private").build().unwrap();
        let ran_on = crew::block_on(pool.spawn(async {
            let handle = crew::Spawner::global().spawn_with_handle(async { thread_name() }).unwrap();
            handle.await
        }));
        assert!(ran_on.starts_with("crew-worker-"), "ran on {ran_on}");
    });
}

#[test]
fn spawn_with_handle_carries_the_output_and_the_panic_back() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        assert_eq!(crew::block_on(pool.spawn_with_handle(async { 5 }).unwrap()), 5);
        let handle = pool.spawn_with_handle(async { panic!("library task failed") }).unwrap();
        let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(handle))).unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"library task failed"));
        // The worker survived: the pool still runs tasks.
        assert_eq!(crew::block_on(pool.spawn(async { 6 })), 6);
    });
}

#[test]
fn a_panic_in_a_detached_spawn_obj_task_is_swallowed_and_the_worker_lives() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let (started, running) = std::sync::mpsc::channel::<()>();
        let (ran, panicked) = oneshot::channel::<()>();
        pool.spawn_obj(
            Box::new(async move {
                let _ran = ran; // dropped by the unwinding: the receiver sees `Canceled`
                started.send(()).unwrap();
                panic!("nobody awaits this")
            })
            .into(),
        )
        .unwrap();
        running.recv().expect("the task ran");
        assert!(crew::block_on(panicked).is_err(), "the task unwound");
        // The one worker survived it.
        assert_eq!(crew::block_on(pool.spawn(async { 1 })), 1);
    });
}

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_spawner_that_outlives_its_pool_reports_shutdown_and_loses_nothing() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let spawner = pool.spawner();
        let dropped = Arc::new(AtomicUsize::new(0));
        // Pending when the pool goes: dropped by its shutdown.
        let counted = Counted(dropped.clone());
        // `SpawnExt::spawn`, not the inherent `Spawner::spawn`.
        SpawnExt::spawn(&spawner, async move {
            let _counted = counted;
            std::future::pending::<()>().await;
        })
        .unwrap();
        assert!(spawner.status().is_ok());
        drop(pool);
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "the pending task was dropped with its pool");
        assert!(spawner.status().unwrap_err().is_shutdown());
        // Refused: the future is dropped at once, never run.
        let counted = Counted(dropped.clone());
        let refused = SpawnExt::spawn(&spawner, async move {
            let _counted = counted;
            unreachable!("a shut-down pool runs nothing");
        });
        assert!(refused.unwrap_err().is_shutdown());
        assert_eq!(dropped.load(Ordering::SeqCst), 2, "the refused future was dropped");
    });
}
