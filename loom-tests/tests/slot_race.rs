//! crew-slot's `RunnableSlot` (`slot/src/lib.rs`, crew's LIFO slot): an owner puts tasks in
//! while a thief takes, and every task comes out exactly once, seeing what its pusher wrote.
//!
//! Each task's metadata holds a marker its pusher stores (`Relaxed`) just before the swap that
//! puts the task in; whoever takes the task loads the marker (`Relaxed`) and must see it, which
//! only the swap's Release/Acquire pair guarantees (loom lets an unordered `Relaxed` load return
//! the older value). The tasks are compared by their metadata's address: two `Runnable`s of one
//! task would share it.
//!
//! Planted bugs: `--cfg crew_bug="slot_split_take"` makes `take` a load and a store (two takers
//! can both receive one task); `--cfg crew_bug="slot_relaxed_swap"` makes the put-in swap
//! `Relaxed` (the taker may not see the task's writes).
#![cfg(loom)]

use crew_loom_tests::support::model;
use crew_slot::RunnableSlot;
use loom::sync::atomic::AtomicUsize;
use loom::sync::atomic::Ordering::Relaxed;
use loom::sync::Arc;
use loom::thread;

type Runnable = async_task::Runnable<Marker>;

/// A task's marker: 0 when spawned, 1 once its pusher is about to put it in.
struct Marker(AtomicUsize);

/// A task whose future counts its runs, and the count.
fn task(runs: &Arc<AtomicUsize>) -> Runnable {
    let runs = runs.clone();
    let (runnable, task) = async_task::Builder::new().metadata(Marker(AtomicUsize::new(0))).spawn(
        move |_| async move {
            runs.fetch_add(1, Relaxed);
        },
        |_| {},
    );
    task.detach();
    runnable
}

/// Marks `runnable` and puts it in; a displaced task goes to `out`.
fn push(slot: &RunnableSlot<Marker>, runnable: Runnable, out: &mut Vec<Runnable>) {
    runnable.metadata().0.store(1, Relaxed);
    out.extend(slot.swap(runnable));
}

/// Takes from the slot, checking that the pusher's marker is visible.
fn take(slot: &RunnableSlot<Marker>, out: &mut Vec<Runnable>) {
    if let Some(runnable) = slot.take() {
        assert_eq!(runnable.metadata().0.load(Relaxed), 1, "took a task without its pusher's writes");
        out.push(runnable);
    }
}

/// Runs every task taken, after checking that no task came out twice.
fn run_all(mut taken: Vec<Runnable>, runs: &AtomicUsize, tasks: usize) {
    let mut addresses: Vec<*const Marker> = taken.iter().map(|r| r.metadata() as *const Marker).collect();
    addresses.sort();
    let unique = addresses.windows(2).all(|pair| pair[0] != pair[1]);
    if !unique {
        // Two `Runnable`s of one task hold one reference between them: leak them all rather
        // than free a task twice while the assertion unwinds.
        taken.drain(..).for_each(std::mem::forget);
    }
    assert!(unique, "a task came out of the slot twice");
    assert_eq!(taken.len(), tasks, "a task was lost");
    for runnable in taken {
        runnable.run();
    }
    assert_eq!(runs.load(Relaxed), tasks);
}

/// The owner pushes two tasks (the second displaces the first if it is still there) and takes
/// its next one, while a thief takes: each task comes out once.
#[test]
fn owner_and_thief_receive_each_task_once() {
    model(3, || {
        let slot = Arc::new(RunnableSlot::new());
        let runs = Arc::new(AtomicUsize::new(0));
        let (first, second) = (task(&runs), task(&runs));
        let thief = thread::spawn({
            let slot = slot.clone();
            move || {
                let mut taken = Vec::new();
                take(&slot, &mut taken);
                take(&slot, &mut taken);
                taken
            }
        });
        let mut taken = Vec::new();
        push(&slot, first, &mut taken);
        push(&slot, second, &mut taken);
        take(&slot, &mut taken);
        taken.extend(thief.join().unwrap());
        take(&slot, &mut taken);
        run_all(taken, &runs, 2);
    });
}

/// A task left in the slot is dropped with it: its future is dropped, never run.
#[test]
fn a_task_left_in_the_slot_is_dropped_with_it() {
    model(2, || {
        let runs = Arc::new(AtomicUsize::new(0));
        let slot = RunnableSlot::new();
        let mut displaced = Vec::new();
        push(&slot, task(&runs), &mut displaced);
        assert!(displaced.is_empty());
        drop(slot);
        assert_eq!(Arc::strong_count(&runs), 1, "the task's future was not dropped with the slot");
        assert_eq!(runs.load(Relaxed), 0);
    });
}
