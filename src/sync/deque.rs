//! Loom-visible stand-ins for crossbeam-deque's `Worker`, `Stealer` and `Injector`.
//!
//! Invariants:
//! - Same method names and semantics as the subset of crossbeam-deque crew uses: the owner
//!   pushes to the back and pops from the front (FIFO), thieves steal from the front, batch
//!   steals move up to half of the victim's tasks (rounded up), at most [`MAX_BATCH`] from a
//!   deque and at most the caller's limit from the injector, as crossbeam-deque 0.8 does, and
//!   return one of them.
//! - Every operation takes one loom mutex, so loom explores every interleaving of pushes, pops
//!   and steals; crossbeam's own lock-free algorithm is not modelled (its atomics are plain std).
//! - `Steal::Retry` is never returned: a mutex-guarded queue never loses a race mid-operation.

use loom::sync::{Arc, Mutex};
use std::collections::VecDeque;

/// Outcome of a steal, as in crossbeam-deque.
#[derive(Debug)]
pub(crate) enum Steal<T> {
    Empty,
    Success(T),
    #[allow(dead_code)]
    Retry,
}

#[derive(Debug)]
pub(crate) struct Worker<T> {
    queue: Arc<Mutex<VecDeque<T>>>,
}

#[derive(Debug)]
pub(crate) struct Stealer<T> {
    queue: Arc<Mutex<VecDeque<T>>>,
}

#[derive(Debug)]
pub(crate) struct Injector<T> {
    queue: Mutex<VecDeque<T>>,
}

/// crossbeam-deque's cap on one batch steal from a deque (its `MAX_BATCH`).
pub(crate) const MAX_BATCH: usize = 32;

/// Moves up to half (rounded up, at most `limit`) of `from` into `dest`, returning the first one
/// moved.
fn take_half<T>(from: &mut VecDeque<T>, dest: &Worker<T>, limit: usize) -> Steal<T> {
    let Some(first) = from.pop_front() else {
        return Steal::Empty;
    };
    let extra = (from.len() / 2).min(limit.saturating_sub(1));
    if extra > 0 {
        let mut dest = dest.queue.lock().unwrap();
        dest.extend(from.drain(..extra));
    }
    Steal::Success(first)
}

impl<T> Worker<T> {
    pub(crate) fn new_fifo() -> Self {
        Worker { queue: Arc::new(Mutex::new(VecDeque::new())) }
    }

    pub(crate) fn stealer(&self) -> Stealer<T> {
        Stealer { queue: self.queue.clone() }
    }

    pub(crate) fn push(&self, task: T) {
        self.queue.lock().unwrap().push_back(task);
    }

    pub(crate) fn pop(&self) -> Option<T> {
        self.queue.lock().unwrap().pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.lock().unwrap().len()
    }
}

impl<T> Stealer<T> {
    pub(crate) fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        take_half(&mut self.queue.lock().unwrap(), dest, MAX_BATCH)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.lock().unwrap().len()
    }
}

impl<T> Injector<T> {
    pub(crate) fn new() -> Self {
        Injector { queue: Mutex::new(VecDeque::new()) }
    }

    pub(crate) fn push(&self, task: T) {
        self.queue.lock().unwrap().push_back(task);
    }

    pub(crate) fn steal(&self) -> Steal<T> {
        match self.queue.lock().unwrap().pop_front() {
            Some(task) => Steal::Success(task),
            None => Steal::Empty,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.lock().unwrap().len()
    }

    pub(crate) fn steal_batch_with_limit_and_pop(&self, dest: &Worker<T>, limit: usize) -> Steal<T> {
        take_half(&mut self.queue.lock().unwrap(), dest, limit)
    }

    pub(crate) fn steal_batch_with_limit(&self, dest: &Worker<T>, limit: usize) -> Steal<()> {
        let mut from = self.queue.lock().unwrap();
        let count = from.len().div_ceil(2).min(limit);
        if count == 0 {
            return Steal::Empty;
        }
        dest.queue.lock().unwrap().extend(from.drain(..count));
        Steal::Success(())
    }
}
