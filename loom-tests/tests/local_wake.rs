//! A local (`!Send`) task woken from another thread while its worker parks (see
//! `src/scheduler/cores/local.rs` and `src/scheduler/sleep/README.md`, "Local tasks"), on a real
//! one-worker `crew::Pool`.
//!
//! A task on the worker spawns a local task that waits for a signal, and returns its handle;
//! once the worker has run the local task (which registers its waker) it runs out of work and
//! parks, while a foreign thread fires the signal: its wake pushes onto the worker thread's
//! local queue, which no searcher looks at, and wakes exactly that worker if it sees it parked.
//! The property: the local task runs to its end (the main thread's `block_on` on its handle
//! returns), on its own thread, exactly once, and its future is dropped exactly once.
//!
//! Planted bug: `--cfg crew_bug="local_no_recheck"` skips the parking worker's look at its
//! local queue after it listed itself as parked: a push whose wake read the state before the
//! listing is then stranded while the worker sleeps (loom: deadlock).
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Waker};

use crew_loom_tests::support::{model, Count};
use loom::sync::{Arc, Mutex};

/// Fired, and the waker of whoever waits.
type Signal = Arc<Mutex<(bool, Option<Waker>)>>;

/// Waits until the signal fires; `!Send` for its `Rc`, as a local task's future may be.
struct Wait {
    signal: Signal,
    polls: Count,
    drops: Count,
    _local: Rc<()>,
}

impl Future for Wait {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.polls.add();
        let mut signal = self.signal.lock().unwrap();
        if signal.0 {
            return Poll::Ready(());
        }
        signal.1 = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        self.drops.add();
    }
}

#[test]
fn a_local_task_woken_from_another_thread_while_its_worker_parks_runs() {
    model(2, || {
        let pool = StdArc::new(crew::Pool::builder().workers(1).build().unwrap());
        let signal: Signal = Arc::new(Mutex::new((false, None)));
        let (polls, drops) = (Count::new(), Count::new());
        let local = crew::block_on(pool.spawn({
            let (signal, polls, drops) = (signal.clone(), polls.clone(), drops.clone());
            async move { (crew::spawn_local(Wait { signal, polls, drops, _local: Rc::new(()) }),) }
        }))
        .0;
        let waker = loom::thread::spawn(move || {
            let waker = {
                let mut signal = signal.lock().unwrap();
                signal.0 = true;
                signal.1.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        });
        crew::block_on(local);
        waker.join().unwrap();
        assert_eq!(drops.get(), 1, "the local future is dropped exactly once");
        assert!((1..=2).contains(&polls.get()), "polled once, or twice if it waited");
        drop(pool);
    });
}
