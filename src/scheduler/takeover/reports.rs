//! A pool's queue of slow-poll reports ([`Reports`]), which the monitor and the workers fill and
//! the reporter thread (`reporter.rs`) empties into the hook.
//!
//! Invariants:
//! - Bounded: at most [`QUEUE_CAPACITY`] reports wait. A report made while the queue is full is
//!   dropped (after the lock is released) and counted: queuing never blocks beyond the queue's
//!   lock, which no user code holds.

use std::collections::VecDeque;

use crate::report::SlowPoll;
use crate::sync::{lock, Event, Mutex, SharedCounter};

/// The most reports that wait for the hook at once.
pub(in crate::scheduler) const QUEUE_CAPACITY: usize = 1024;

/// A pool's queue of reports for its hook.
#[derive(Debug)]
pub(in crate::scheduler) struct Reports {
    queue: Mutex<VecDeque<SlowPoll>>,
    /// Notified after each report is queued, and at shutdown.
    pub(in crate::scheduler) queued: Event,
    /// Reports dropped because the queue was full.
    pub(in crate::scheduler) dropped: SharedCounter,
}

impl Reports {
    pub(in crate::scheduler) fn new() -> Reports {
        Reports { queue: Mutex::new(VecDeque::new()), queued: Event::new(), dropped: SharedCounter::default() }
    }

    /// Queues `report` for the hook, or drops and counts it if the queue is full. Never blocks
    /// beyond the queue's lock, which no user code holds.
    pub(in crate::scheduler) fn queue(&self, report: SlowPoll) {
        let refused = {
            let mut queue = lock(&self.queue);
            if queue.len() < QUEUE_CAPACITY {
                queue.push_back(report);
                None
            } else {
                Some(report)
            }
        };
        match refused {
            // Dropped after unlocking: a report holds a task's identity, whose last reference
            // frees memory.
            Some(report) => {
                self.dropped.incr();
                drop(report);
            }
            None => {
                self.queued.notify(1);
            }
        }
    }

    /// Wakes the reporter to see the shutdown.
    pub(in crate::scheduler) fn wake_for_shutdown(&self) {
        self.queued.notify(usize::MAX);
    }

    /// Whether no report waits, under the queue's lock: the reporter's look before a wait.
    pub(in crate::scheduler) fn is_empty(&self) -> bool {
        lock(&self.queue).is_empty()
    }

    /// The oldest report waiting, if any: the reporter's.
    pub(in crate::scheduler) fn pop(&self) -> Option<SlowPoll> {
        lock(&self.queue).pop_front()
    }
}
