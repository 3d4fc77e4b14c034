//! Abort handles keep their task whatever became of its join handle (detached, dropped, moved)
//! or of its set (`detach_all`, `shutdown`, drop); `is_finished` is tokio's rule (the task
//! completed or its future was dropped), for join handles, abort handles and set members; and
//! a set's waiters all wake when the set is shut down or detached. Each test counts the
//! futures' drops.
//!
//! Every wait is for an event; `with_timeout` and `wait_until` only turn a hang into a failure.

mod common;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Poll, Waker};

use common::{wait_until, with_timeout, Counted, Counts, DropCounter};
use crew::task::JoinSet;

/// Wakers kept alive, so that async-task does not free a pending detached task (nothing could
/// wake it): what a timer or a socket does for a real task. One per test binary; never woken.
static KEPT: Mutex<Vec<Waker>> = Mutex::new(Vec::new());

/// Pending forever, its waker kept (as a timer of an hour keeps its; no timer, so that miri
/// runs these tests too).
fn an_hour() -> impl Future<Output = ()> + Send {
    std::future::poll_fn(|cx| {
        KEPT.lock().unwrap().push(cx.waker().clone());
        Poll::Pending
    })
}

fn pool() -> crew::Pool {
    crew::Pool::builder().workers(2).takeover(false).build().unwrap()
}

#[test]
fn an_abort_handle_aborts_a_detached_task() {
    with_timeout(|| {
        let pool = pool();
        let counts = Counts::new();
        let handle = pool.spawn(Counted::new(&counts, an_hour()));
        let abort = handle.abort_handle();
        handle.detach();
        wait_until("the first poll", || counts.polls() == 1);
        assert!(!abort.is_finished(), "a pending detached task is not finished");
        abort.abort();
        wait_until("the aborted future's drop", || abort.is_finished());
        assert_eq!(counts.drops(), 1);
    });
}

#[test]
fn an_abort_handle_sees_a_dropped_join_handles_cancel_through() {
    with_timeout(|| {
        let pool = pool();
        let counts = Counts::new();
        let handle = pool.spawn(Counted::new(&counts, an_hour()));
        let abort = handle.abort_handle();
        // Moved to another thread, and dropped there: dropping cancels.
        std::thread::spawn(move || drop(handle)).join().unwrap();
        wait_until("the cancelled future's drop", || abort.is_finished());
        assert_eq!(counts.drops(), 1);
        abort.abort(); // nothing left to do
    });
}

#[test]
fn a_detached_tasks_output_is_dropped_when_it_finishes_though_abort_handles_live() {
    with_timeout(|| {
        let pool = pool();
        let dropped = Arc::new(AtomicUsize::new(0));
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let output = DropCounter(dropped.clone());
        let handle = pool.spawn(async move {
            crew::spawn_blocking(move || go_rx.recv().unwrap()).await;
            output
        });
        let abort = handle.abort_handle();
        handle.detach();
        go_tx.send(()).unwrap();
        wait_until("the output's drop", || dropped.load(Ordering::SeqCst) == 1);
        assert!(abort.is_finished());
        abort.abort(); // too late: nothing happens
        drop(abort);
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "dropped once");
    });
}

#[test]
fn an_aborted_task_is_not_finished_while_its_poll_still_runs() {
    with_timeout(|| {
        let pool = pool();
        let counts = Counts::new();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let handle = pool.spawn_with(
            crew::Catch,
            Counted::new(&counts, async move {
                started_tx.send(()).unwrap();
                release_rx.recv().unwrap(); // blocks inside its first poll
                std::future::pending::<()>().await
            }),
        );
        let abort = handle.abort_handle();
        started_rx.recv().unwrap();
        abort.abort();
        assert!(!abort.is_finished(), "its poll runs, its future holds what it holds");
        assert!(!handle.is_finished(), "the join handle reads it the same way");
        release_tx.send(()).unwrap();
        wait_until("the future's drop", || abort.is_finished());
        assert!(handle.is_finished());
        assert_eq!(counts.drops(), 1);
        assert!(crew::block_on(handle).unwrap_err().is_aborted());
    });
}

#[test]
fn a_join_handle_without_abort_handles_finishes_once_its_task_did() {
    with_timeout(|| {
        let pool = pool();
        let handle = pool.spawn(async { 3 });
        wait_until("the task's end", || handle.is_finished());
        assert_eq!(crew::block_on(handle), 3, "is_finished kept the output for the poll");
        // Dropped by its pool's shutdown: finished once the pool dropped it.
        let counts = Counts::new();
        let handle = pool.spawn(Counted::new(&counts, an_hour()));
        wait_until("the first poll", || counts.polls() == 1);
        assert!(!handle.is_finished());
        drop(pool);
        assert!(handle.is_finished());
        assert_eq!(counts.drops(), 1);
    });
}

#[test]
fn a_members_abort_handle_aborts_it_after_detach_all() {
    with_timeout(|| {
        let pool = pool();
        let counts = Counts::new();
        let set = JoinSet::new();
        let abort = set.spawn_on(&pool, Counted::new(&counts, an_hour()));
        wait_until("the first poll", || counts.polls() == 1);
        set.detach_all();
        assert!(set.is_empty());
        assert!(!abort.is_finished(), "detached, still pending");
        abort.abort();
        wait_until("the aborted member's drop", || abort.is_finished());
        assert_eq!(counts.drops(), 1);
        // And after the set itself is gone.
        let counts = Counts::new();
        let abort = set.spawn_on(&pool, Counted::new(&counts, an_hour()));
        set.detach_all();
        drop(set);
        wait_until("the first poll", || counts.polls() == 1);
        assert!(!abort.is_finished());
        abort.abort();
        wait_until("the aborted member's drop", || abort.is_finished());
        assert_eq!(counts.drops(), 1);
    });
}

#[test]
fn a_detached_members_output_is_dropped_when_it_ends() {
    with_timeout(|| {
        let pool = pool();
        let dropped = Arc::new(AtomicUsize::new(0));
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let set = JoinSet::new();
        let output = DropCounter(dropped.clone());
        let abort = set.spawn_on(&pool, async move {
            crew::spawn_blocking(move || go_rx.recv().unwrap()).await;
            output
        });
        set.detach_all();
        go_tx.send(()).unwrap();
        wait_until("the output's drop", || dropped.load(Ordering::SeqCst) == 1);
        assert!(abort.is_finished());
    });
}

#[test]
fn a_member_aborted_mid_poll_is_not_finished_until_its_future_is_dropped() {
    with_timeout(|| {
        let pool = pool();
        let counts = Counts::new();
        let set: JoinSet<(), crew::Catch> = JoinSet::with_policy();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let abort = set.spawn_on(
            &pool,
            Counted::new(&counts, async move {
                started_tx.send(()).unwrap();
                release_rx.recv().unwrap();
                std::future::pending::<()>().await
            }),
        );
        started_rx.recv().unwrap();
        abort.abort();
        assert!(!abort.is_finished());
        release_tx.send(()).unwrap();
        wait_until("the member's drop", || abort.is_finished());
        assert_eq!(counts.drops(), 1);
        assert!(crew::block_on(set.join_next()).unwrap().unwrap_err().is_aborted());
        assert!(crew::block_on(set.join_next()).is_none());
    });
}

/// `joiners` tasks wait in `join_next` on a set of pending members while `end` (a shutdown or
/// a detach, from another task) empties it: every joiner ends with `None`.
fn joiners_end_when_the_set_is_emptied<P: crew::Policy>(end: fn(Arc<JoinSet<(), P>>) -> crew::JoinHandle<()>)
where
    P::Output<()>: Send,
{
    with_timeout(move || {
        let pool = pool();
        let counts = Counts::new();
        let set = Arc::new(JoinSet::<(), P>::with_policy());
        let aborts: Vec<_> = (0..4).map(|_| set.spawn_on(&pool, Counted::new(&counts, an_hour()))).collect();
        wait_until("every member's first poll", || counts.polls() == 4);
        let (waiting_tx, waiting_rx) = mpsc::channel();
        let joiners: Vec<_> = (0..3)
            .map(|_| {
                let (set, waiting) = (set.clone(), waiting_tx.clone());
                pool.spawn(async move {
                    waiting.send(()).unwrap();
                    let mut items = 0;
                    while set.join_next().await.is_some() {
                        items += 1;
                    }
                    items
                })
            })
            .collect();
        for _ in 0..3 {
            waiting_rx.recv().unwrap();
        }
        // Joining, or about to: the members are pending for an hour.
        crew::block_on(end(set.clone()));
        let items: usize = joiners.into_iter().map(crew::block_on).sum();
        assert!(items <= 4, "at most one item per member ({items})");
        assert!(crew::block_on(set.join_next()).is_none(), "and so does a later join_next");
        drop(set);
        // Shut down: already dropped; detached: still running, and their abort handles end them.
        for abort in &aborts {
            abort.abort();
        }
        // Finished once each future's drop returned (the end hook runs right after it).
        wait_until("every member's end", || aborts.iter().all(crew::task::AbortHandle::is_finished));
        assert_eq!(counts.drops(), 4);
    });
}

#[test]
fn join_next_ends_when_another_task_shuts_the_set_down() {
    joiners_end_when_the_set_is_emptied::<crew::Propagate>(|set| crew::spawn(async move { set.shutdown().await }));
    joiners_end_when_the_set_is_emptied::<crew::Catch>(|set| crew::spawn(async move { set.shutdown().await }));
    joiners_end_when_the_set_is_emptied::<crew::Ignore>(|set| crew::spawn(async move { set.shutdown().await }));
}

#[test]
fn join_next_ends_when_another_task_detaches_the_set() {
    // The members run on, detached (the set's drop leaves them): their abort handles end them.
    joiners_end_when_the_set_is_emptied::<crew::Propagate>(|set| crew::spawn(async move { set.detach_all() }));
    joiners_end_when_the_set_is_emptied::<crew::Catch>(|set| crew::spawn(async move { set.detach_all() }));
}
