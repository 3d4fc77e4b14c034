//! Dropping a pool whose pending tasks' futures wake each other from their destructors.
//!
//! A future dropped at shutdown may hold a channel end whose drop wakes another task of the same
//! pool, and channels (async-channel, through event-listener) call that waker while holding their
//! list lock. If scheduling the woken task into the closed pool dropped it right there, inside
//! `wake()`, its future's destructor (removing its own listener) would take the same lock: the
//! thread deadlocks on itself. These tests would hang without crew dropping such tasks outside
//! every `wake()`; `with_timeout` turns a hang into a failure.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::probe::{parked_forever, Hammering, WakerCell};
use common::{wait_until, with_timeout, DropCounts};

/// The reproduction: a task holding a channel's sender and a task waiting on its
/// receiver, both pending when the pool drops.
#[test]
fn a_dropped_sender_waking_its_receiver_task_at_shutdown_does_not_deadlock() {
    let rounds = if cfg!(miri) { 2 } else { 20 };
    with_timeout(move || {
        for round in 0..rounds {
            let pool = crew::Pool::builder().workers(1 + round % 2).build().unwrap();
            let drops = DropCounts::new(2);
            let (tx, rx) = async_channel::bounded::<()>(1);
            let (sender_probe, receiver_probe) = (drops.probe(0), drops.probe(1));
            let polled = Arc::new(AtomicUsize::new(0));
            let (p0, p1) = (polled.clone(), polled.clone());
            pool.spawn(async move {
                let (_tx, _probe) = (tx, sender_probe);
                p0.fetch_add(1, Ordering::SeqCst);
                std::future::pending::<()>().await
            })
            .detach();
            pool.spawn(async move {
                let _probe = receiver_probe;
                let recv = rx.recv();
                p1.fetch_add(1, Ordering::SeqCst);
                let _ = recv.await;
            })
            .detach();
            wait_until("both tasks to be polled", || polled.load(Ordering::SeqCst) == 2);
            drop(pool);
            drops.assert_each_once(&format!("round {round}"));
        }
    });
}

/// tokio's `many_multishot_futures`, on crew: chains of forwarder tasks linked by channels, the
/// pool dropped while they all wait. Dropping one link's future drops a sender, which wakes the
/// next link from inside the channel's lock.
#[test]
fn chains_of_channel_forwarders_are_dropped_exactly_once_when_the_pool_drops() {
    const CHAINS: usize = if cfg!(miri) { 4 } else { 100 };
    const LINKS: usize = if cfg!(miri) { 4 } else { 20 };
    let rounds = if cfg!(miri) { 1 } else { 6 };
    with_timeout(move || {
        for round in 0..rounds {
            let pool = crew::Pool::builder().workers(1 + round % 3).build().unwrap();
            let drops = DropCounts::new(CHAINS * LINKS);
            let started = Arc::new(AtomicUsize::new(0));
            let mut heads = Vec::new();
            for chain in 0..CHAINS {
                let (head, mut rx) = async_channel::bounded::<u32>(1);
                heads.push(head);
                for link in 0..LINKS {
                    let (tx, next_rx) = async_channel::bounded::<u32>(1);
                    let (probe, started) = (drops.probe(chain * LINKS + link), started.clone());
                    pool.spawn(async move {
                        let _probe = probe;
                        started.fetch_add(1, Ordering::SeqCst);
                        while let Ok(value) = rx.recv().await {
                            if tx.send(value + 1).await.is_err() {
                                break;
                            }
                        }
                    })
                    .detach();
                    rx = next_rx;
                }
                // The chain's last receiver is dropped here: its last link's sends fail.
                drop(rx);
            }
            wait_until("every link to start", || started.load(Ordering::SeqCst) == CHAINS * LINKS);
            // Keep the heads open, so that every link waits in `recv` when the pool drops.
            drop(pool);
            drops.assert_each_once(&format!("round {round}: forwarder links"));
            drop(heads);
        }
    });
}

/// The late path: tasks woken from foreign threads right through a pool's drop, each holding a
/// channel sender whose receiver is another task of the pool. A wake that lands after the drop's
/// last look at the queue hands its task to a reaper thread; nothing is lost or dropped twice.
#[test]
fn tasks_woken_by_foreign_threads_across_the_drop_are_each_dropped_once_outside_the_wake() {
    const PAIRS: usize = if cfg!(miri) { 8 } else { 200 };
    const HAMMERS: usize = 4;
    let rounds = if cfg!(miri) { 1 } else { 10 };
    with_timeout(move || {
        for round in 0..rounds {
            let pool = crew::Pool::builder().workers(1 + round % 4).build().unwrap();
            let drops = DropCounts::new(2 * PAIRS);
            let cells: Arc<Vec<_>> = Arc::new((0..PAIRS).map(|_| WakerCell::new()).collect());
            for (pair, cell) in cells.iter().enumerate() {
                let (tx, rx) = async_channel::bounded::<()>(1);
                let (probe, cell) = (drops.probe(2 * pair), cell.clone());
                pool.spawn(async move {
                    let (_tx, _probe) = (tx, probe);
                    parked_forever(cell).await;
                })
                .detach();
                let probe = drops.probe(2 * pair + 1);
                pool.spawn(async move {
                    let _probe = probe;
                    let _ = rx.recv().await;
                })
                .detach();
            }
            wait_until("every sender task to be polled", || cells.iter().all(|c| c.polls() >= 1));
            let hammering = Hammering::start(&cells, HAMMERS);
            hammering.wait_for(4 * PAIRS, "the hammering to start");
            drop(pool);
            hammering.wait_for(4 * PAIRS, "the hammering to go on after the drop");
            hammering.stop();
            drops.wait_each_once(&format!("round {round}: pairs woken across the drop"));
        }
    });
}
