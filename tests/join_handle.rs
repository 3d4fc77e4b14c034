//! `JoinHandle`: dropping cancels, `detach` runs to completion, `cancel().await`,
//! `is_finished`, cancellation by pool shutdown per policy, and awaiting from any executor.

mod common;

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Waker};

use common::{block_one_worker, payload_message, wait_until, with_timeout, Counted, Counts, DropCounter, HANG_TIMEOUT};

/// A future that stays pending forever, keeping its latest waker where the test can wake it.
struct PendingForever {
    waker: Arc<Mutex<Option<Waker>>>,
}

impl Future for PendingForever {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

fn pending_forever() -> (PendingForever, Arc<Mutex<Option<Waker>>>) {
    let waker = Arc::new(Mutex::new(None));
    (PendingForever { waker: waker.clone() }, waker)
}

/// Runs one task on `pool` to completion: on a 1-worker pool, every task queued before it has
/// then been taken off the queue.
fn flush(pool: &crew::Pool) {
    crew::block_on(pool.spawn(async {}));
}

#[test]
fn dropping_the_handle_of_a_pending_task_drops_its_future_once_and_it_is_never_polled_again() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let counts = Counts::new();
        let (future, waker) = pending_forever();
        let handle = pool.spawn(Counted::new(&counts, future));
        wait_until("the task is polled once", || counts.polls() == 1);
        drop(handle);
        wait_until("the cancelled task's future is dropped", || counts.drops() == 1);
        // A wake after cancellation must not poll (or drop) it again.
        if let Some(waker) = waker.lock().unwrap().take() {
            waker.wake();
        }
        flush(&pool);
        drop(pool);
        assert_eq!((counts.polls(), counts.drops()), (1, 1));
    });
}

#[test]
fn dropping_the_handle_of_a_task_that_never_ran_drops_its_future_without_polling_it() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let gate = block_one_worker(&pool);
        let counts = Counts::new();
        let handle = pool.spawn(Counted::new(&counts, async { 7 }));
        drop(handle);
        drop(gate);
        wait_until("the cancelled task's future is dropped", || counts.drops() == 1);
        flush(&pool);
        drop(pool);
        assert_eq!((counts.polls(), counts.drops()), (0, 1));
    });
}

#[test]
fn a_detached_task_runs_to_completion() {
    with_timeout(|| {
        let counts = Counts::new();
        let (tx, rx) = mpsc::channel();
        crew::spawn(Counted::new(&counts, async move {
            for _ in 0..3 {
                crew::yield_now().await;
            }
            tx.send("done").unwrap();
        }))
        .detach();
        assert_eq!(rx.recv_timeout(HANG_TIMEOUT).unwrap(), "done");
        wait_until("the detached task's future is dropped", || counts.drops() == 1);
        assert_eq!(counts.polls(), 4, "one poll per yield plus the last");
    });
}

#[test]
fn a_detached_task_on_a_private_pool_runs_to_completion() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let (tx, rx) = mpsc::channel();
        pool.spawn(async move {
            crew::yield_now().await;
            tx.send(5).unwrap();
        })
        .detach();
        assert_eq!(rx.recv_timeout(HANG_TIMEOUT).unwrap(), 5);
    });
}

#[test]
fn cancel_of_an_unfinished_task_returns_none_after_dropping_its_future() {
    with_timeout(|| {
        let counts = Counts::new();
        let (future, _waker) = pending_forever();
        let handle = crew::spawn(Counted::new(&counts, future));
        wait_until("the task is polled once", || counts.polls() == 1);
        assert_eq!(crew::block_on(handle.cancel()), None);
        assert_eq!(counts.drops(), 1, "cancel().await returns once the future is dropped");
        assert_eq!(counts.polls(), 1);
    });
}

#[test]
fn cancel_of_a_task_that_never_ran_returns_none() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let gate = block_one_worker(&pool);
        let counts = Counts::new();
        let handle = pool.spawn(Counted::new(&counts, async { 7 }));
        // The first poll of `cancel()` cancels the task; only then may the worker go on.
        let mut cancel = Box::pin(handle.cancel());
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        assert!(cancel.as_mut().poll(&mut cx).is_pending(), "the only worker is still blocked");
        drop(gate);
        assert_eq!(crew::block_on(cancel), None);
        assert_eq!((counts.polls(), counts.drops()), (0, 1));
    });
}

#[test]
fn cancel_of_a_finished_task_returns_its_output() {
    with_timeout(|| {
        let handle = crew::spawn(async { 5 });
        wait_until("the task finishes", || handle.is_finished());
        assert_eq!(crew::block_on(handle.cancel()), Some(5));

        let handle = crew::spawn_with(crew::Catch, async { "ok" });
        wait_until("the task finishes", || handle.is_finished());
        assert_eq!(crew::block_on(handle.cancel()).map(Result::unwrap), Some("ok"));
    });
}

#[test]
fn is_finished_turns_true_only_once_the_task_completes() {
    with_timeout(|| {
        let (tx, rx) = futures::channel::oneshot::channel::<u32>();
        let handle = crew::spawn(async move { rx.await.unwrap() + 1 });
        assert!(!handle.is_finished());
        tx.send(41).unwrap();
        wait_until("the task finishes", || handle.is_finished());
        assert_eq!(crew::block_on(handle), 42);
    });
}

#[test]
fn is_finished_is_true_after_a_panic_and_after_pool_shutdown() {
    with_timeout(|| {
        let handle = crew::spawn_with(crew::Catch, async { panic!("expected: is_finished after a panic") });
        wait_until("the panicking task finishes", || handle.is_finished());
        assert!(crew::block_on(handle).unwrap_err().is_panic());

        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let handle = pool.spawn_with(crew::Catch, std::future::pending::<()>());
        assert!(!handle.is_finished());
        drop(pool);
        assert!(handle.is_finished(), "dropping the pool finishes (cancels) its pending tasks");
    });
}

#[test]
fn pool_shutdown_cancels_pending_tasks_as_each_policy_says() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let dropped = Arc::new(AtomicUsize::new(0));
        let pending = |dropped: &Arc<AtomicUsize>| {
            let guard = DropCounter(dropped.clone());
            async move {
                let _guard = guard;
                std::future::pending::<u8>().await
            }
        };
        let propagate = pool.spawn(pending(&dropped));
        let catch = pool.spawn_with(crew::Catch, pending(&dropped));
        let ignore = pool.spawn_with(crew::Ignore, pending(&dropped));
        drop(pool);
        assert_eq!(dropped.load(Ordering::SeqCst), 3, "shutdown drops each pending future once");

        assert!(crew::block_on(catch).unwrap_err().is_cancelled());
        for payload in [
            panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(propagate))).unwrap_err(),
            panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(ignore))).unwrap_err(),
        ] {
            assert_eq!(payload_message(payload.as_ref()), Some(crew::CANCELLED_MESSAGE));
        }
    });
}

#[test]
fn a_finished_tasks_handle_still_yields_its_output_after_its_pool_is_dropped() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let handle = pool.spawn(async { 9 });
        wait_until("the task finishes", || handle.is_finished());
        drop(pool);
        assert_eq!(crew::block_on(handle), 9);
    });
}

#[test]
fn a_handle_can_be_awaited_from_a_task_on_another_crew_pool() {
    with_timeout(|| {
        let producer = crew::Pool::builder().workers(1).thread_name("producer").build().unwrap();
        let consumer = crew::Pool::builder().workers(1).thread_name("consumer").build().unwrap();
        let (tx, rx) = futures::channel::oneshot::channel::<u32>();
        let handle = producer.spawn(async move { rx.await.unwrap() * 2 });
        let awaiting = consumer.spawn(async move { handle.await + 1 });
        tx.send(20).unwrap();
        assert_eq!(crew::block_on(awaiting), 41);
    });
}

#[test]
fn a_handle_can_be_awaited_from_crew_block_on() {
    with_timeout(|| {
        let (tx, rx) = futures::channel::oneshot::channel::<u32>();
        let handle = crew::spawn(async move { rx.await.unwrap() });
        let sender = std::thread::spawn(move || tx.send(3).unwrap());
        assert_eq!(crew::block_on(handle), 3);
        sender.join().unwrap();
    });
}

#[test]
fn a_handle_can_be_awaited_from_futures_executor_block_on() {
    with_timeout(|| {
        let (tx, rx) = futures::channel::oneshot::channel::<u32>();
        let handle = crew::spawn(async move { rx.await.unwrap() });
        let sender = std::thread::spawn(move || tx.send(4).unwrap());
        assert_eq!(futures::executor::block_on(handle), 4);
        sender.join().unwrap();

        let pool = crew::Pool::builder().workers(1).build().unwrap();
        let err = futures::executor::block_on(pool.spawn_with(crew::Catch, async { panic!("expected: via futures") }));
        assert_eq!(err.unwrap_err().panic_message(), Some("expected: via futures"));
    });
}

#[test]
fn a_handle_is_send_sync_and_unpin_for_every_policy() {
    fn assert_traits<T: Send + Sync + Unpin>(_: &T) {}
    let (a, b, c) =
        (crew::spawn(async {}), crew::spawn_with(crew::Catch, async {}), crew::spawn_with(crew::Ignore, async {}));
    assert_traits(&a);
    assert_traits(&b);
    assert_traits(&c);
    with_timeout(move || {
        crew::block_on(a);
        crew::block_on(b).unwrap();
        crew::block_on(c);
    });
}

/// Polls `handle` once more after it returned and returns the message it panicked with.
fn second_poll_panic<T: std::fmt::Debug, P: crew::Policy>(handle: &mut crew::JoinHandle<T, P>) -> String
where
    P::Output<T>: std::fmt::Debug,
{
    let payload = panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(&mut *handle)))
        .expect_err("a second poll must panic, not yield");
    payload_message(payload.as_ref()).expect("a string message").to_owned()
}

const POLLED_AGAIN: &str = "crew: a JoinHandle was polled again after it returned its task's output";

#[test]
fn polling_a_handle_again_after_it_returned_panics_saying_so_under_every_policy() {
    with_timeout(|| {
        let mut handle = crew::spawn(async { 1 });
        assert_eq!(crew::block_on(&mut handle), 1);
        assert!(second_poll_panic(&mut handle).starts_with(POLLED_AGAIN));

        // Catch: the second poll is not an `Err` claiming the task was cancelled.
        let mut handle = crew::spawn_with(crew::Catch, async { 2 });
        assert_eq!(crew::block_on(&mut handle).unwrap(), 2);
        assert!(second_poll_panic(&mut handle).starts_with(POLLED_AGAIN));

        let mut handle = crew::spawn_with(crew::Ignore, async { 3 });
        assert_eq!(crew::block_on(&mut handle), 3);
        assert!(second_poll_panic(&mut handle).starts_with(POLLED_AGAIN));

        // Propagate, after its first poll resumed the task's panic.
        let mut handle = crew::spawn(async { panic!("expected: the task's own panic") });
        let first = panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(&mut handle))).unwrap_err();
        assert_eq!(payload_message(first.as_ref()), Some("expected: the task's own panic"));
        assert!(second_poll_panic(&mut handle).starts_with(POLLED_AGAIN));
    });
}

#[test]
fn cancelling_a_handle_after_it_returned_panics_saying_so() {
    with_timeout(|| {
        let mut handle = crew::spawn_with(crew::Catch, async { 4 });
        assert_eq!(crew::block_on(&mut handle).unwrap(), 4);
        let payload = panic::catch_unwind(AssertUnwindSafe(|| crew::block_on(handle.cancel()))).unwrap_err();
        assert!(payload_message(payload.as_ref()).unwrap().starts_with(POLLED_AGAIN));
    });
}

#[test]
fn a_handle_is_five_words_and_keeps_its_id_after_it_returned() {
    // A lock word (taken only by `abort_handle`), the task (async-task's pointer, or the aborter
    // shared with abort handles), the id, whose top bit says "returned", and the task's name for
    // a `JoinError` (a pointer, null unless the task is named).
    assert_eq!(std::mem::size_of::<crew::JoinHandle<u64>>(), 5 * std::mem::size_of::<usize>());
    let mut handle = crew::spawn(async { 7 });
    let id = handle.id();
    assert_eq!(crew::block_on(&mut handle), 7);
    assert_eq!(handle.id(), id, "the id survives the handle's return");
}
