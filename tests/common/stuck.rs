//! Workers blocked inside a poll: the scenario the takeover tests (`tests/takeover.rs`,
//! `tests/takeover_global.rs`) run on a private pool and on the global pool.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// Every worker of `pool` runs a task that blocks its thread on a `std` channel, released only
/// once `queued` tasks spawned behind them have all finished: without takeover the pool
/// deadlocks; with it, everything finishes, each task once.
pub fn blocked_workers_release_after_the_queue(
    workers: usize,
    spawn: impl Fn(crew::task::Builder, BoxedTask) -> crew::JoinHandle<()>,
) {
    const QUEUED: usize = 100;
    let (started_tx, started_rx) = mpsc::channel();
    let releases: Vec<(Sender<()>, Receiver<()>)> = (0..workers).map(|_| mpsc::channel()).collect();
    let (release_txs, release_rxs): (Vec<_>, Vec<_>) = releases.into_iter().unzip();
    let blockers: Vec<_> = release_rxs
        .into_iter()
        .map(|release| {
            let started = started_tx.clone();
            spawn(
                crew::task::Builder::new().name("blocker"),
                Box::pin(async move {
                    started.send(()).unwrap();
                    release.recv().unwrap();
                }),
            )
        })
        .collect();
    // Every worker (or a worker that took over from a blocked one) runs a blocker.
    for _ in 0..workers {
        started_rx.recv().unwrap();
    }
    let ran = Arc::new(AtomicUsize::new(0));
    let release_txs = Arc::new(Mutex::new(Some(release_txs)));
    let queued: Vec<_> = (0..QUEUED)
        .map(|_| {
            let (ran, release_txs) = (ran.clone(), release_txs.clone());
            spawn(
                crew::task::Builder::new().name("queued"),
                Box::pin(async move {
                    if ran.fetch_add(1, Ordering::SeqCst) + 1 == QUEUED {
                        for release in release_txs.lock().unwrap().take().expect("released once") {
                            release.send(()).unwrap();
                        }
                    }
                }),
            )
        })
        .collect();
    for handle in queued.into_iter().chain(blockers) {
        crew::block_on(handle);
    }
    assert_eq!(ran.load(Ordering::SeqCst), QUEUED, "each queued task ran once");
}

pub type BoxedTask = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;
