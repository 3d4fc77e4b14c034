//! Statistics counters: numbers that crew only reports ([`crate::metrics`]), never decides on.
//!
//! Invariants:
//! - A [`Counter`] has one writer at a time (a core's owner, or the monitor for its own
//!   counts), handed over with the core, so an increment is a load and a store: no
//!   read-modify-write, no lock prefix, and no cache line shared with other writers.
//! - A [`SharedCounter`] may be written by any thread: it is for paths that are already slow or
//!   already shared (a spawn or wake from outside the pool goes through the injector's lines).
//! - Both are plain `std` atomics even under loom: no protocol reads them, so loom gains nothing
//!   from exploring their interleavings and its models would only grow. Readers may see any
//!   counter a little behind the others; each counter alone never goes backwards.

use std::sync::atomic::{AtomicU64, Ordering};

/// A counter with one writer at a time (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`. Only the counter's current writer calls this.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        // Relaxed: a statistic that orders nothing; its one writer never races itself, and
        // ownership moves between threads with synchronisation of its own (the core's hand-off).
        self.0.store(self.0.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    /// Adds one.
    #[inline]
    pub(crate) fn incr(&self) {
        self.add(1);
    }

    /// Sets the value (for a counter used as a gauge). Only the current writer calls this.
    pub(crate) fn set(&self, value: u64) {
        // Relaxed: as `add`.
        self.0.store(value, Ordering::Relaxed);
    }

    /// The current value.
    pub(crate) fn get(&self) -> u64 {
        // Relaxed: a statistic; a snapshot may be a little behind.
        self.0.load(Ordering::Relaxed)
    }
}

/// A counter any thread may add to (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct SharedCounter(AtomicU64);

impl SharedCounter {
    /// Adds one.
    #[inline]
    pub(crate) fn incr(&self) {
        // Relaxed: a statistic that orders nothing; the read-modify-write loses no increment.
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// The current value.
    pub(crate) fn get(&self) -> u64 {
        // Relaxed: a statistic; a snapshot may be a little behind.
        self.0.load(Ordering::Relaxed)
    }
}

/// A statistic any thread may store, or replace if it still holds what the caller saw: for
/// diagnostic state (a task's state in the task dump), never for a decision.
#[derive(Debug, Default)]
pub(crate) struct Gauge(AtomicU64);

impl Gauge {
    pub(crate) fn new(value: u64) -> Gauge {
        Gauge(AtomicU64::new(value))
    }

    /// Sets the value.
    #[inline]
    pub(crate) fn set(&self, value: u64) {
        // Relaxed: a statistic that orders nothing.
        self.0.store(value, Ordering::Relaxed);
    }

    /// Sets the value to `new` if it is still `current`.
    #[inline]
    pub(crate) fn replace(&self, current: u64, new: u64) {
        // Relaxed: as `set`; the compare-exchange only keeps a newer value from being overwritten.
        let _ = self.0.compare_exchange(current, new, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// The current value.
    pub(crate) fn get(&self) -> u64 {
        // Relaxed: a statistic; a reader may be a little behind.
        self.0.load(Ordering::Relaxed)
    }
}
