//! A pool dropped while another thread wakes its tasks (tokio's
//! `rt_common::shutdown_concurrent_spawn`, on crew): once `drop(pool)` has returned and the
//! waking thread is joined, every task's future is gone. A wake that races the drop may push
//! its task after shutdown's last drain, for a reaper thread to drop; the drop waits for that.
//!
//! The test widens that window on purpose (`crew::__private::delay_remote_pushes_during_shutdown`,
//! process-wide, hence a binary of its own): a wake whose push finds the pool shutting down
//! sleeps before it lands, so that without the wait a future outlives the drop in every round,
//! not one in thirty.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{with_timeout, DropCounter};
use futures::channel::oneshot;

/// Tasks per round (fewer under miri, which is slow).
const TASKS: usize = if cfg!(miri) { 20 } else { 10_000 };

/// Rounds per worker count.
const ROUNDS: usize = if cfg!(miri) { 1 } else { 10 };

/// How long a push that finds its pool shutting down waits before it lands.
const PUSH_DELAY: Duration = Duration::from_millis(20);

#[test]
fn every_future_is_gone_once_the_drop_returned_and_the_waking_thread_joined() {
    crew::__private::delay_remote_pushes_during_shutdown(PUSH_DELAY);
    with_timeout(|| {
        for workers in [1, 4] {
            for round in 0..ROUNDS {
                let pool = crew::Pool::builder().workers(workers).build().unwrap();
                let dropped = Arc::new(AtomicUsize::new(0));
                let senders: Vec<_> = (0..TASKS)
                    .map(|_| {
                        let (tx, rx) = oneshot::channel::<()>();
                        let probe = DropCounter(dropped.clone());
                        pool.spawn(async move {
                            let _probe = probe;
                            let _ = rx.await;
                        })
                        .detach();
                        tx
                    })
                    .collect();
                let spawner = pool.spawner();
                // Half its sends race the start of the drop; the other half come once the
                // shutdown has begun, each push then delayed past the drop's drains.
                let waking = std::thread::spawn(move || {
                    let mut senders = senders.into_iter();
                    for tx in senders.by_ref().take(TASKS / 2) {
                        let _ = tx.send(());
                    }
                    while !spawner.is_shut_down() {
                        std::thread::yield_now();
                    }
                    for tx in senders {
                        let _ = tx.send(());
                    }
                });
                drop(pool);
                waking.join().unwrap();
                assert_eq!(
                    dropped.load(Ordering::SeqCst),
                    TASKS,
                    "{workers} workers, round {round}: futures still alive after the pool's drop returned"
                );
            }
        }
    });
}
