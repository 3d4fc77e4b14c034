//! `RunnableSlot` under real threads (and under miri, smaller): an owner puts tasks in while a
//! thief takes, and every task runs exactly once, whether a take or a displacing swap handed it
//! out; a task left in the slot is dropped (not run) with it.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use async_task::Runnable;
use crew_slot::RunnableSlot;

/// A task that adds its number to `ran` once it runs, and counts its future's drop.
fn task(n: usize, ran: &Arc<Vec<AtomicUsize>>, dropped: &Arc<AtomicUsize>) -> Runnable {
    struct CountsDrop(Arc<AtomicUsize>);
    impl Drop for CountsDrop {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let (ran, guard) = (ran.clone(), CountsDrop(dropped.clone()));
    let (runnable, task) = async_task::spawn(
        async move {
            let _guard = guard;
            ran[n].fetch_add(1, Ordering::Relaxed);
        },
        |_| {},
    );
    task.detach();
    runnable
}

#[test]
fn racing_swaps_and_takes_run_every_task_once() {
    let tasks: usize = if cfg!(miri) { 100 } else { 100_000 };
    let ran: Arc<Vec<AtomicUsize>> = Arc::new((0..tasks).map(|_| AtomicUsize::new(0)).collect());
    let dropped = Arc::new(AtomicUsize::new(0));
    let slot = Arc::new(RunnableSlot::new());
    let done = Arc::new(AtomicBool::new(false));
    let thief = thread::spawn({
        let (slot, done) = (slot.clone(), done.clone());
        move || {
            // SeqCst: a test's flag, no ordering argument needed.
            while !done.load(Ordering::SeqCst) {
                if let Some(runnable) = slot.take() {
                    runnable.run();
                }
            }
        }
    });
    for n in 0..tasks {
        if let Some(displaced) = slot.swap(task(n, &ran, &dropped)) {
            displaced.run();
        }
    }
    done.store(true, Ordering::SeqCst);
    thief.join().unwrap();
    if let Some(last) = slot.take() {
        last.run();
    }
    for (n, count) in ran.iter().enumerate() {
        assert_eq!(count.load(Ordering::Relaxed), 1, "task {n} ran {} times", count.load(Ordering::Relaxed));
    }
    assert_eq!(dropped.load(Ordering::Relaxed), tasks, "every future dropped once");
}

#[test]
fn a_task_left_in_the_slot_is_dropped_with_it() {
    let ran: Arc<Vec<AtomicUsize>> = Arc::new(vec![AtomicUsize::new(0)]);
    let dropped = Arc::new(AtomicUsize::new(0));
    let slot = RunnableSlot::new();
    assert!(slot.swap(task(0, &ran, &dropped)).is_none());
    assert!(slot.is_occupied());
    drop(slot);
    assert_eq!(dropped.load(Ordering::Relaxed), 1);
    assert_eq!(ran[0].load(Ordering::Relaxed), 0);
}

#[test]
fn the_slot_is_send_and_sync_with_send_and_sync_metadata() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RunnableSlot<()>>();
    assert_send_sync::<RunnableSlot<String>>();
}
