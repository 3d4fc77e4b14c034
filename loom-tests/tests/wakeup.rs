//! No lost wakeup, model-checked on crew's real idle-worker protocol (`src/scheduler/sleep/`) and on a
//! whole pool.
//!
//! A worker that found nothing parks while another thread makes work visible and notifies.
//! The property: once both are done, the work is not left with every worker parked and
//! un-notified — the parking worker either saw the work in its re-scan (made when no searcher is
//! left; it then notified, possibly itself) or the pusher's `notify_one` took it off the
//! sleeping list.
//!
//! Planted bug: `--cfg crew_bug="skip_rescan"` makes `Sleepers::list_parked` never tell a parking
//! worker to re-scan; every model here then fails.
#![cfg(loom)]

use crew::__loom::Sleepers;
use crew_loom_tests::support::{model, Count};
use loom::sync::atomic::{fence, AtomicBool, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;

/// The worker side of `Core::prepare_park` (`src/scheduler/cores/park.rs`): park, and re-scan if `list_parked` says no
/// searcher is left.
fn park(sleepers: &Sleepers, queued: &AtomicBool, index: usize, searching: bool) {
    if sleepers.list_parked(index, searching) {
        fence(SeqCst);
        if queued.load(SeqCst) {
            sleepers.notify_one();
        }
    }
}

#[test]
fn work_pushed_while_the_last_worker_parks_is_never_stranded() {
    model(3, || {
        let sleepers = Arc::new(Sleepers::new(1));
        let queued = Arc::new(AtomicBool::new(false));
        assert!(sleepers.try_start_searching());
        let worker = {
            let (sleepers, queued) = (sleepers.clone(), queued.clone());
            thread::spawn(move || park(&sleepers, &queued, 0, true))
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
    model(3, || {
        let sleepers = Arc::new(Sleepers::new(2));
        let queued = Arc::new(AtomicBool::new(false));
        assert!(sleepers.try_start_searching());
        // Worker 1 is running (not searching) and parks without searching; worker 0 searched.
        let parkers: Vec<_> = [(0, true), (1, false)]
            .into_iter()
            .map(|(index, searching)| {
                let (sleepers, queued) = (sleepers.clone(), queued.clone());
                thread::spawn(move || park(&sleepers, &queued, index, searching))
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

/// End to end: a real one-worker `crew::Pool`. Its worker starts, finds nothing and parks
/// while the main thread spawns a task; `block_on` waits for it. A lost wakeup leaves both
/// threads blocked, which loom reports as a deadlock.
#[test]
fn a_task_spawned_while_the_only_worker_falls_asleep_runs() {
    model(3, || {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let ran = Count::new();
        let handle = pool.spawn({
            let ran = ran.clone();
            async move { ran.add() }
        });
        crew::block_on(handle);
        drop(pool);
        assert_eq!(ran.get(), 1);
    });
}
