//! Loom-visible stand-ins for crossbeam-deque's `Worker`, `Stealer` and `Injector`.
//!
//! Invariants:
//! - Same method names and semantics as the subset of crossbeam-deque crew uses: the owner
//!   pushes to the back and pops from the front (FIFO), thieves steal from the front, batch
//!   steals move up to half of the victim's tasks and return one of them.
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

/// Moves up to half (rounded up) of `from` into `dest`, returning the first one moved.
fn take_half<T>(from: &mut VecDeque<T>, dest: &Worker<T>) -> Steal<T> {
    let Some(first) = from.pop_front() else {
        return Steal::Empty;
    };
    let extra = from.len() / 2;
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
}

impl<T> Stealer<T> {
    pub(crate) fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        take_half(&mut self.queue.lock().unwrap(), dest)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
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

    pub(crate) fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        take_half(&mut self.queue.lock().unwrap(), dest)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }
}
