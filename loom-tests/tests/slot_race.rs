//! crew-slot's `RunnableSlot` (`slot/src/lib.rs`, crew's LIFO slot): its owner puts tasks in and
//! takes them (a load and a store, unless it sees a thief at work) while thieves take (a swap,
//! after the heavy side of the barrier pair, unless the owner is inside its own take), and every
//! task comes out exactly once, seeing what its pusher wrote. Under loom both sides of the
//! barrier pair are `SeqCst` fences (`slot/src/asymmetric.rs`).
//!
//! Each task's metadata holds a marker its pusher stores (`Relaxed`) just before the swap that
//! puts the task in; whoever takes the task loads the marker (`Relaxed`) and must see it, which
//! only the swap's Release/Acquire pair guarantees (loom lets an unordered `Relaxed` load return
//! the older value). The tasks are compared by their metadata's address: two `Runnable`s of one
//! task would share it.
//!
//! Planted bugs: `--cfg crew_bug="slot_split_take"` makes a thief's take a load and a store (two
//! takers can both receive one task, or a push between them is lost);
//! `--cfg crew_bug="slot_relaxed_swap"` makes the put-in swap `Relaxed` (the taker may not see
//! the task's writes); `slot_owner_ignores_thieves` makes the owner take by a load and a store
//! even while a thief is at work, `slot_owner_no_barrier` drops the owner's side of the barrier
//! pair (the owner and a thief may both miss the other's store), `slot_thief_ignores_busy` lets
//! a thief swap while the owner is inside its take: each lets the owner and a thief receive one
//! task.
#![cfg(loom)]

use crew_loom_tests::support::model;
use crew_slot::{RunnableSlot, SlotOwner};
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
fn push(owner: &mut SlotOwner<Marker>, runnable: Runnable, out: &mut Vec<Runnable>) {
    runnable.metadata().0.store(1, Relaxed);
    out.extend(owner.push(runnable));
}

/// Keeps `taken`, checking that the pusher's marker is visible.
fn keep(taken: Option<Runnable>, out: &mut Vec<Runnable>) {
    if let Some(runnable) = taken {
        assert_eq!(runnable.metadata().0.load(Relaxed), 1, "took a task without its pusher's writes");
        out.push(runnable);
    }
}

/// A thief's take, checked as `keep` does.
fn steal(slot: &RunnableSlot<Marker>, out: &mut Vec<Runnable>) {
    keep(slot.take(), out);
}

/// A new slot (in `std`'s `Arc`, as crew-slot's owner holds it) and its owner.
fn slot_and_owner() -> (std::sync::Arc<RunnableSlot<Marker>>, SlotOwner<Marker>) {
    let slot = std::sync::Arc::new(RunnableSlot::new());
    let owner = slot.claim().expect("a new slot's owner");
    (slot, owner)
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
/// its next one, while a thief takes twice: each task comes out once.
#[test]
fn owner_and_thief_receive_each_task_once() {
    model(3, || {
        let (slot, mut owner) = slot_and_owner();
        let runs = Arc::new(AtomicUsize::new(0));
        let (first, second) = (task(&runs), task(&runs));
        let thief = thread::spawn({
            let slot = slot.clone();
            move || {
                let mut taken = Vec::new();
                steal(&slot, &mut taken);
                steal(&slot, &mut taken);
                taken
            }
        });
        let mut taken = Vec::new();
        push(&mut owner, first, &mut taken);
        push(&mut owner, second, &mut taken);
        keep(owner.take(), &mut taken);
        taken.extend(thief.join().unwrap());
        keep(owner.take(), &mut taken);
        run_all(taken, &runs, 2);
    });
}

/// The owner pushes one task and takes it while two thieves take once each: it comes out once.
#[test]
fn owner_and_two_thieves_receive_the_task_once() {
    model(2, || {
        let (slot, mut owner) = slot_and_owner();
        let runs = Arc::new(AtomicUsize::new(0));
        let mut taken = Vec::new();
        push(&mut owner, task(&runs), &mut taken);
        let thieves: Vec<_> = (0..2)
            .map(|_| {
                let slot = slot.clone();
                thread::spawn(move || {
                    let mut taken = Vec::new();
                    steal(&slot, &mut taken);
                    taken
                })
            })
            .collect();
        keep(owner.take(), &mut taken);
        for thief in thieves {
            taken.extend(thief.join().unwrap());
        }
        run_all(taken, &runs, 1);
    });
}

/// A task left in the slot is dropped with it: its future is dropped, never run.
#[test]
fn a_task_left_in_the_slot_is_dropped_with_it() {
    model(2, || {
        let runs = Arc::new(AtomicUsize::new(0));
        let (slot, mut owner) = slot_and_owner();
        let mut displaced = Vec::new();
        push(&mut owner, task(&runs), &mut displaced);
        assert!(displaced.is_empty());
        drop((slot, owner));
        assert_eq!(Arc::strong_count(&runs), 1, "the task's future was not dropped with the slot");
        assert_eq!(runs.load(Relaxed), 0);
    });
}
