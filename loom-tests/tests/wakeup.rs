//! No lost wakeup, model-checked on crew's real idle-worker protocol (`src/sleep.rs`).
//!
//! A worker that found nothing parks while another thread makes work visible and notifies.
//! The property: once both are done, the work is not left with every worker parked and
//! un-notified — the parking worker either saw the work in its last-searcher re-scan (and
//! notified, possibly itself) or the pusher's `notify_one` took it off the sleeping list.
#![cfg(loom)]

use crew::__loom::Sleepers;
use loom::sync::atomic::{fence, AtomicBool, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

/// The worker side of `Core::park`: stop searching, park, and re-scan if last searcher.
fn park_as_last_searcher(sleepers: &Sleepers, queued: &AtomicBool, index: usize) {
    let last = sleepers.to_parked(index, true);
    if last {
        fence(SeqCst);
        if queued.load(SeqCst) {
            sleepers.notify_one();
        }
    }
}

#[test]
fn work_pushed_while_the_last_worker_parks_is_never_stranded() {
    model(|| {
        let sleepers = Arc::new(Sleepers::new(1));
        let queued = Arc::new(AtomicBool::new(false));
        assert!(sleepers.try_start_searching());
        let worker = {
            let (sleepers, queued) = (sleepers.clone(), queued.clone());
            thread::spawn(move || park_as_last_searcher(&sleepers, &queued, 0))
        };
        // The pusher: make the work visible, then notify (as `push_remote` does).
        queued.store(true, SeqCst);
        sleepers.notify_one();
        worker.join().unwrap();
        assert!(!sleepers.is_parked(0), "work is queued but the only worker sleeps un-notified");
        assert_eq!(sleepers.counts(), (1, 1), "the woken worker is counted unparked and searching");
    });
}

#[test]
fn two_workers_one_push_some_worker_stays_responsible() {
    model(|| {
        let sleepers = Arc::new(Sleepers::new(2));
        let queued = Arc::new(AtomicBool::new(false));
        assert!(sleepers.try_start_searching());
        // Worker 1 is running (not searching) and parks without searching; worker 0 searched.
        let parkers: Vec<_> = [(0, true), (1, false)]
            .into_iter()
            .map(|(index, searching)| {
                let (sleepers, queued) = (sleepers.clone(), queued.clone());
                thread::spawn(move || {
                    if searching {
                        park_as_last_searcher(&sleepers, &queued, index);
                    } else {
                        sleepers.to_parked(index, false);
                    }
                })
            })
            .collect();
        queued.store(true, SeqCst);
        sleepers.notify_one();
        for parker in parkers {
            parker.join().unwrap();
        }
        assert!(!(sleepers.is_parked(0) && sleepers.is_parked(1)), "work is queued but both workers sleep un-notified");
        let (unparked, searching) = sleepers.counts();
        assert_eq!((unparked, searching), (1, 1), "exactly one worker was woken, as a searcher");
    });
}
