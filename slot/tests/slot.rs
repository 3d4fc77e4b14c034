//! The slot's invariants, counted: every task put in comes out exactly once (run once here, by
//! whoever took it or got it back), whichever threads race, and one left in the slot is dropped
//! with it. `slot/planted-bugs.sh` checks that these tests fail on each planted bug.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use async_task::Runnable;
use crew_slot::Slot;

/// Counts its polls and its drop.
struct Counted {
    polls: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

impl Future for Counted {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        Poll::Ready(())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// `n` detached tasks, each counting into its own pair of counters.
fn tasks(n: usize) -> (Vec<Runnable>, Vec<(Arc<AtomicUsize>, Arc<AtomicUsize>)>) {
    (0..n)
        .map(|_| {
            let (polls, drops) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let (runnable, task) = async_task::spawn(Counted { polls: polls.clone(), drops: drops.clone() }, |_| {});
            task.detach();
            (runnable, (polls, drops))
        })
        .unzip()
}

#[test]
fn a_swap_gives_back_the_task_it_displaced_and_a_take_empties_the_slot() {
    let (runnables, counts) = tasks(2);
    let slot = Slot::new();
    let mut runnables = runnables.into_iter();
    assert!(slot.take().is_none() && !slot.is_occupied());
    assert!(slot.swap(runnables.next().unwrap()).is_none());
    assert!(slot.is_occupied());
    let displaced = slot.swap(runnables.next().unwrap()).expect("the first task comes back");
    displaced.run();
    assert_eq!(counts[0].0.load(Ordering::SeqCst), 1, "the first task was the one displaced");
    slot.take().expect("the second task is there").run();
    assert!(slot.take().is_none() && !slot.is_occupied(), "a take empties the slot");
    for (polls, drops) in &counts {
        assert_eq!((polls.load(Ordering::SeqCst), drops.load(Ordering::SeqCst)), (1, 1));
    }
}

#[test]
fn a_task_left_in_the_slot_is_dropped_with_it_once() {
    let (runnables, counts) = tasks(1);
    let slot = Slot::new();
    assert!(slot.swap(runnables.into_iter().next().unwrap()).is_none());
    drop(slot);
    assert_eq!(counts[0].0.load(Ordering::SeqCst), 0, "never run");
    assert_eq!(counts[0].1.load(Ordering::SeqCst), 1, "its future dropped once");
}

/// One thread swaps tasks in while another takes them: each task is run exactly once, by the
/// taker or as given back by a swap, and none is lost or run twice.
#[test]
fn racing_swaps_and_takes_run_every_task_exactly_once() {
    let n = if cfg!(miri) { 100 } else { 20_000 };
    let (runnables, counts) = tasks(n);
    let slot = Arc::new(Slot::new());
    let done = Arc::new(AtomicUsize::new(0));
    let taker = std::thread::spawn({
        let (slot, done) = (slot.clone(), done.clone());
        move || {
            let mut taken = 0;
            while done.load(Ordering::SeqCst) == 0 {
                if let Some(runnable) = slot.take() {
                    runnable.run();
                    taken += 1;
                }
            }
            taken
        }
    });
    let mut given_back = 0;
    for runnable in runnables {
        if let Some(displaced) = slot.swap(runnable) {
            displaced.run();
            given_back += 1;
        }
    }
    done.store(1, Ordering::SeqCst);
    let taken = taker.join().unwrap();
    let left = slot.take().map(Runnable::run).map_or(0, |_| 1);
    assert_eq!(taken + given_back + left, n);
    for (i, (polls, drops)) in counts.iter().enumerate() {
        assert_eq!((polls.load(Ordering::SeqCst), drops.load(Ordering::SeqCst)), (1, 1), "task {i}");
    }
}

#[test]
fn a_slot_is_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Slot>();
}
