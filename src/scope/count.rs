//! [`ScopeCount`]: the scope's count of running tasks, and the wait for it to reach zero; and
//! [`TaskEnd`], one task's end, delivered once the task's `Runnable` is gone.
//!
//! Invariants (what `crew::scope`'s soundness rests on):
//! - A task is counted by its spawn, before anything of it can run ([`start`](ScopeCount::start)),
//!   and uncounted by [`end`](ScopeCount::end) once its future and its output are gone and no
//!   `Runnable` of it exists: the decrement comes after everything the task did with borrowed
//!   data, after every frame that held a reference to it returned, and after async-task's last
//!   run or drop of the task's `Runnable` returned (what `spawn_unchecked` asks: "borrowed
//!   variables must outlive its `Runnable`").
//! - That last step is [`TaskEnd`]'s: the task's future notes its end when it is dropped
//!   ([`TaskEnd::note`], inside async-task's run or drop of the `Runnable`), and crew's
//!   `Runnable` (`scheduler/cores/task.rs`) tells the end after that run or drop returned
//!   ([`DeferredEnd::runnable_gone`]), which delivers it. A task never built into an allocation
//!   (its spawn failed) has no `Runnable`: its future ends the count itself
//!   ([`TaskEnd::end_now`]). A `Runnable` site that did not tell would leave the count above
//!   zero (the scope hangs); none can end it early.
//! - The count lives in an `Arc` that each task's end holds (not on the scope's stack): the
//!   notify after the decrement touches memory the end still owns, however soon the scope
//!   returns (rust#98498: std's scope once notified through a reference to a frame already gone).
//! - [`wait`](ScopeCount::wait) returns only once it read zero, with `SeqCst` (acquiring every
//!   task's decrement, so every task's accesses happen before the return), and checks again
//!   after registering its listener: the notify of the decrement to zero is never lost.
//! - Zero is not final by itself: user code that runs inside the scope's own wait (the drop of
//!   an output whose handle was leaked) may spawn again. `scope/mod.rs` waits until the count is
//!   zero *and* no end is left to dispose of.

use std::sync::Arc;

use crate::identity::DeferredEnd;
use crate::sync::{planted_bug, AtomicBool, AtomicUsize, Event, Listener, Ordering};

/// Tasks of one scope not yet ended, and whether one of them panicked with nobody to see it.
#[derive(Debug)]
pub(crate) struct ScopeCount {
    running: AtomicUsize,
    ended: Event,
    unobserved_panic: AtomicBool,
}

impl ScopeCount {
    pub(crate) fn new() -> ScopeCount {
        ScopeCount { running: AtomicUsize::new(0), ended: Event::new(), unobserved_panic: AtomicBool::new(false) }
    }

    /// A task is spawned: counted before it can run.
    pub(crate) fn start(&self) {
        // Relaxed: the caller holds the scope, so the count is above zero or the wait has not
        // begun; the spawn's own synchronisation orders it before the task's end.
        self.running.fetch_add(1, Ordering::Relaxed);
    }

    /// Uncounts a task whose future and output are gone and which has no `Runnable` left; the
    /// last task's end wakes the wait. Called through the task's own `Arc`, so that the notify
    /// touches memory it still holds, and by a frame that holds no reference to the scope's
    /// caller's data: once the count can read zero, that data may be gone (miri's protectors
    /// flag a frame that still holds one, such as a closure argument capturing it).
    fn end(&self) {
        let ordering = if planted_bug!("scope_relaxed_end") { Ordering::Relaxed } else { Ordering::SeqCst };
        // SeqCst (release at least): everything the task did happens before a wait that reads
        // the count it leaves.
        if self.running.fetch_sub(1, ordering) == 1 {
            self.ended.notify(usize::MAX);
        }
    }

    /// Blocks the calling thread until no task is left. The caller hands its worker's queues
    /// away first when it is a worker (`scope/mod.rs`).
    pub(crate) fn wait(&self) {
        loop {
            if self.is_zero() {
                return;
            }
            let listener = self.ended.listen();
            // A decrement to zero before `listen` notified nobody: look again.
            if self.is_zero() {
                return;
            }
            listener.wait();
        }
    }

    fn is_zero(&self) -> bool {
        let ordering = if planted_bug!("scope_relaxed_end") { Ordering::Relaxed } else { Ordering::SeqCst };
        // SeqCst (acquire at least): pairs with each end's decrement.
        self.running.load(ordering) == 0
    }

    /// A task panicked and its handle was dropped (or never awaited): the scope panics once
    /// every task has ended.
    pub(crate) fn note_unobserved_panic(&self) {
        // Relaxed: read by the scope's thread after `wait`, whose SeqCst load of the count
        // acquires every task's end, and every note comes before its task's end.
        self.unobserved_panic.store(true, Ordering::Relaxed);
    }

    pub(crate) fn unobserved_panic(&self) -> bool {
        // Relaxed: see `note_unobserved_panic`.
        self.unobserved_panic.load(Ordering::Relaxed)
    }
}

/// One scoped task's end: noted by its future's drop, delivered to the count once the task's
/// `Runnable` is gone (see the module docs).
#[derive(Debug)]
pub(crate) struct TaskEnd {
    count: Arc<ScopeCount>,
    /// The task's future was dropped during the run or drop under way: its end waits for that
    /// run or drop to return.
    noted: AtomicBool,
}

impl TaskEnd {
    /// The end of a task just counted in `count`.
    pub(crate) fn new(count: Arc<ScopeCount>) -> TaskEnd {
        TaskEnd { count, noted: AtomicBool::new(false) }
    }

    /// The task's future is gone; its `Runnable`'s run or drop, under way, delivers the end once
    /// it returned.
    pub(crate) fn note(&self) {
        self.noted.store(true, Ordering::SeqCst);
    }

    /// The task's future is gone, and it never had a `Runnable` (its spawn failed before the
    /// allocation): the end, now.
    pub(crate) fn end_now(&self) {
        self.count.end();
    }

    /// The task's count, for what its future notes there (an unobserved panic).
    pub(crate) fn count(&self) -> &ScopeCount {
        &self.count
    }
}

impl DeferredEnd for TaskEnd {
    fn runnable_gone(&self) {
        // SeqCst: the note is made by the future's drop inside the run or drop that calls this;
        // the swap makes the end delivered once, whichever `Runnable` op saw the note.
        if self.noted.swap(false, Ordering::SeqCst) {
            self.count.end();
        }
    }
}
