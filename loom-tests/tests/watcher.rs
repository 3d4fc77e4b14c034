//! The watcher rescues a task stranded in the LIFO slot of a worker that is stuck inside a
//! poll, on a real two-worker `crew::Pool`, and the watcher role is held only by a parked
//! worker.
//!
//! A parent task spawns one child onto its own worker (into the LIFO slot, which searchers do not
//! steal from), then blocks its worker thread until the child has run. Only the other worker can
//! run it, and only as the watcher: woken (or already searching) by the push's
//! `notify_private`, it finds no shared work, parks, sees the child in its re-scan, takes the
//! role and parks with a deadline (under loom: already passed), then moves the task out of the
//! stuck owner's slot and runs it. The child itself checks the role's invariant while it runs on
//! the former watcher: the role is free or held by a worker listed as parked.
//!
//! A second model checks the bare protocol (`crew::__loom::Sleepers`, the real `src/scheduler/sleep/`):
//! an owner's private push racing the other worker's parking, re-scan and taking of the role
//! never leaves that worker parked for good with the task unseen. The slot is a loom mutex, as
//! crew's `Slot` is under loom; `notify_private` has no fence, which is sound in a normal build
//! because the push there is a SeqCst read-modify-write (a C11 argument loom cannot check, since
//! it treats SeqCst as AcqRel: `src/scheduler/sleep/README.md`, checked with Relacy in
//! `loom-tests/relacy/`).
//!
//! A third model runs the heir's path (`src/scheduler/takeover/watch.rs`): a worker woken by a private
//! push takes the role when it parks again, seeing a task or not, and the owner's next private
//! push, racing that, either sees the role or wakes it.
//!
//! Planted bugs (`--cfg crew_bug=...`), each caught by the first model; `no_private_notify` and
//! `watcher_kept` by the second and third as well (`no_watch` is in `Core::prepare_park`, which the bare
//! model replaces):
//! - `no_private_notify`: `Sleepers::notify_private` never wakes anyone; a worker parked before
//!   the push then sleeps forever (loom deadlock).
//! - `no_watch`: the re-scan that saw the child parks without taking the role, so with no
//!   deadline (loom deadlock).
//! - `watcher_kept`: a wake leaves the role with the woken worker; the child's check fails.
#![cfg(loom)]

use std::sync::Arc as StdArc;

use crew::__loom::Sleepers;
use crew_loom_tests::support::{model, Count};
use loom::sync::atomic::{fence, Ordering::SeqCst};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;

#[test]
fn the_watcher_runs_a_lifo_task_its_blocked_owner_cannot() {
    model(2, || {
        let pool = StdArc::new(crew::Pool::builder().workers(2).build().unwrap());
        let runs = Count::new();
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        // The parent returns the child's handle, to be awaited from outside the pool.
        #[allow(clippy::async_yields_async)]
        let parent = pool.spawn({
            let (pool, runs, done) = (pool.clone(), runs.clone(), done.clone());
            async move {
                let child = pool.spawn({
                    let (pool, done) = (pool.clone(), done.clone());
                    async move {
                        // Runs on the other worker, the former watcher, which is not parked:
                        // this asserts it no longer holds the role.
                        crew::__loom::watcher(&pool);
                        runs.add();
                        *done.0.lock().unwrap() = true;
                        done.1.notify_one();
                    }
                });
                // Block this worker thread (not just the task) until the child ran elsewhere.
                let mut finished = done.0.lock().unwrap();
                while !*finished {
                    finished = done.1.wait(finished).unwrap();
                }
                child
            }
        });
        let child = crew::block_on(parent);
        crew::block_on(child);
        assert_eq!(runs.get(), 1, "the child ran exactly once");
        drop(pool);
    });
}

#[test]
fn a_private_push_racing_a_parking_worker_is_seen_or_wakes_it() {
    model(3, || {
        let sleepers = Arc::new(Sleepers::new(2));
        // Worker 1 runs a task that pushes a task into its own LIFO slot (here a flag behind a
        // mutex, as crew's slot is under loom).
        let slot = Arc::new(Mutex::new(false));
        let owner = {
            let (sleepers, slot) = (sleepers.clone(), slot.clone());
            thread::spawn(move || {
                *slot.lock().unwrap() = true;
                sleepers.notify_private();
            })
        };
        // Worker 0 found nothing and parks, as `Core::prepare_park` does.
        let mut watching = false;
        if sleepers.list_parked(0, false) {
            fence(SeqCst);
            if *slot.lock().unwrap() {
                watching = sleepers.try_become_watcher(0);
            }
        }
        wait_then_check_woken(&sleepers, watching, owner);
    });
}

#[test]
fn the_heir_takes_the_role_with_no_task_in_sight_and_a_private_push_still_reaches_it() {
    model(3, || {
        let sleepers = Arc::new(Sleepers::new(2));
        let slot = Arc::new(Mutex::new(false));
        // Worker 0 has nothing to do: listed as parked before the owner runs.
        assert!(sleepers.list_parked(0, false));
        // Worker 1, the owner, pushes a task into its LIFO slot (a private wake of worker 0),
        // takes it itself, and pushes another.
        let owner = {
            let (sleepers, slot) = (sleepers.clone(), slot.clone());
            thread::spawn(move || {
                *slot.lock().unwrap() = true;
                assert!(sleepers.notify_private(), "worker 0 is parked, nobody watches");
                *slot.lock().unwrap() = false;
                *slot.lock().unwrap() = true;
                sleepers.notify_private();
            })
        };
        sleepers.park(0);
        // Woken by the first push: the heir. It parks again; seeing a task or not, it takes the
        // role (unless the second push woke it meanwhile), as `Core::prepare_park` does.
        let (rescan, heir) = sleepers.list_parked_heir(0, true);
        assert!(rescan, "worker 0 was the only searcher");
        assert!(heir, "the first push woke it");
        fence(SeqCst);
        let seen = *slot.lock().unwrap();
        // Not the watcher only if the second push woke it (it was the heir), so its token is
        // there; a stranded task would leave it parked for good below (deadlock).
        let watching = (seen || heir) && sleepers.try_become_watcher(0);
        wait_then_check_woken(&sleepers, watching, owner);
    });
}

/// Worker 0, listed as parked, waits as `Core::next_task` does (with its deadline if
/// `watching`); once `owner` is done, checks that worker 0 is up again, as a searcher, holding
/// no role.
fn wait_then_check_woken(sleepers: &Sleepers, watching: bool, owner: thread::JoinHandle<()>) {
    if watching {
        sleepers.park_until_deadline(0);
    } else {
        sleepers.park(0);
    }
    owner.join().unwrap();
    assert!(!sleepers.is_parked(0));
    assert_eq!(sleepers.watcher(), None);
    assert_eq!(sleepers.counts(), (2, 1), "both unparked, worker 0 searching");
}
