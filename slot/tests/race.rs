//! `RunnableSlot` under real threads (and under miri, smaller): an owner puts tasks in and takes
//! them while one or two thieves take, and every task runs exactly once, whether the owner's
//! take, a thief's or a displacing push handed it out; a task left in the slot is dropped (not
//! run) with it.
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

/// The owner pushes `tasks` tasks, taking after every `take_every`-th push (running what it
/// gets), while `thieves` threads take: every task runs exactly once, and every future is
/// dropped once.
fn owner_races_thieves(tasks: usize, take_every: usize, thieves: usize) {
    let ran: Arc<Vec<AtomicUsize>> = Arc::new((0..tasks).map(|_| AtomicUsize::new(0)).collect());
    let dropped = Arc::new(AtomicUsize::new(0));
    let slot = Arc::new(RunnableSlot::new());
    let mut owner = slot.claim().expect("a new slot's owner");
    let done = Arc::new(AtomicBool::new(false));
    let thieves: Vec<_> = (0..thieves)
        .map(|_| {
            let (slot, done) = (slot.clone(), done.clone());
            thread::spawn(move || {
                let mut stolen = 0;
                // SeqCst: a test's flag, no ordering argument needed.
                while !done.load(Ordering::SeqCst) {
                    if let Some(runnable) = slot.take() {
                        runnable.run();
                        stolen += 1;
                    }
                }
                stolen
            })
        })
        .collect();
    for n in 0..tasks {
        if let Some(displaced) = owner.push(task(n, &ran, &dropped)) {
            displaced.run();
        }
        if n % take_every == 0 {
            if let Some(runnable) = owner.take() {
                runnable.run();
            }
        }
    }
    done.store(true, Ordering::SeqCst);
    let stolen: usize = thieves.into_iter().map(|thief| thief.join().unwrap()).sum();
    if let Some(last) = owner.take() {
        last.run();
    }
    for (n, count) in ran.iter().enumerate() {
        assert_eq!(count.load(Ordering::Relaxed), 1, "task {n} ran {} times", count.load(Ordering::Relaxed));
    }
    assert_eq!(dropped.load(Ordering::Relaxed), tasks, "every future dropped once");
    assert!(stolen <= tasks);
}

#[test]
fn owner_takes_racing_a_thief_run_every_task_once() {
    owner_races_thieves(if cfg!(miri) { 100 } else { 100_000 }, 1, 1);
}

#[test]
fn owner_takes_racing_two_thieves_run_every_task_once() {
    owner_races_thieves(if cfg!(miri) { 100 } else { 100_000 }, 1, 2);
}

#[test]
fn displacing_pushes_racing_a_thief_run_every_task_once() {
    owner_races_thieves(if cfg!(miri) { 100 } else { 100_000 }, 3, 1);
}

#[test]
fn a_slot_has_one_owner() {
    let slot: Arc<RunnableSlot> = Arc::new(RunnableSlot::new());
    let owner = slot.claim().expect("the first claim");
    assert!(slot.claim().is_none(), "a second owner");
    drop(owner);
    assert!(slot.claim().is_none(), "an owner after the first was dropped");
}

#[test]
fn a_task_left_in_the_slot_is_dropped_with_it() {
    let ran: Arc<Vec<AtomicUsize>> = Arc::new(vec![AtomicUsize::new(0)]);
    let dropped = Arc::new(AtomicUsize::new(0));
    let slot = Arc::new(RunnableSlot::new());
    let mut owner = slot.claim().unwrap();
    assert!(owner.push(task(0, &ran, &dropped)).is_none());
    assert!(slot.is_occupied());
    drop(owner);
    assert_eq!(dropped.load(Ordering::Relaxed), 0, "dropped while the slot lives");
    drop(slot);
    assert_eq!(dropped.load(Ordering::Relaxed), 1);
    assert_eq!(ran[0].load(Ordering::Relaxed), 0);
}

#[test]
fn the_slot_is_send_and_sync_with_send_and_sync_metadata() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RunnableSlot<()>>();
    assert_send_sync::<RunnableSlot<String>>();
    assert_send_sync::<crew_slot::SlotOwner<()>>();
}
