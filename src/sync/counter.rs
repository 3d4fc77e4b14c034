//! Statistics counters: numbers that crew only reports ([`crate::metrics()`](fn@crate::metrics)), never decides on.
//!
//! Invariants:
//! - A [`SingleWriterCounter`] has one writer at a time (a core's owner, or the monitor for its own
//!   counts), handed over with the core, so an increment is a load and a store: no
//!   read-modify-write, no lock prefix, and no cache line shared with other writers.
//! - A [`SharedCounter`] may be written by any thread: it is for paths that are already slow or
//!   already shared (a spawn or wake from outside the pool goes through the injector's lines).
//! - A [`BusyTime`] is a small seqlock with one writer, for a value made of two words.
//! - All are plain `std` atomics even under loom: no protocol reads them, so loom gains nothing
//!   from exploring their interleavings and its models would only grow. Readers may see any
//!   counter a little behind the others; each counter alone never goes backwards.

use std::sync::atomic::{fence, AtomicU64, Ordering};

/// A counter with one writer at a time (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct SingleWriterCounter(AtomicU64);

impl SingleWriterCounter {
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

    /// Subtracts one (for a counter used as a gauge). Only the current writer calls this, and
    /// only while the value is above zero.
    #[inline]
    pub(crate) fn decr(&self) {
        // Relaxed: as `add`. Not wrapping: going below zero is a bug (checked in debug builds).
        self.0.store(self.0.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
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

/// A busy-time clock: one writer (a core's owner) opens and closes busy periods; any thread
/// reads the total so far, the open period included, without ever blocking the writer.
///
/// The writer publishes each change under a sequence number (odd while it writes), so a reader
/// retries instead of combining a closed period's total with its start (which would count the
/// period twice). A reader's own clock may run past the writer's end of a period that it read
/// as open; `reported` (the most any reader returned) keeps what readers see from going
/// backwards: at most one reader's clock ahead of the truth, which later periods catch up.
#[derive(Debug, Default)]
pub(crate) struct BusyTime {
    seq: AtomicU64,
    /// When the open period began, plus one; 0 while none is open.
    since: AtomicU64,
    /// The closed periods' total.
    total: AtomicU64,
    /// The most any reader returned.
    reported: AtomicU64,
}

impl BusyTime {
    /// Runs `write` as the one writer, published under the sequence number.
    fn publish(&self, write: impl FnOnce(u64, u64) -> (u64, u64)) {
        // Relaxed: only this writer stores `seq`, `since` and `total`.
        let seq = self.seq.load(Ordering::Relaxed);
        let (since, total) = (self.since.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed));
        let (new_since, new_total) = write(since, total);
        // Relaxed store, then a Release fence: a reader that sees a data store below also sees
        // the odd sequence number (the seqlock's writer side).
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        // Relaxed: ordered by the fence above and the Release store below.
        self.since.store(new_since, Ordering::Relaxed);
        self.total.store(new_total, Ordering::Relaxed);
        // Release: a reader that reads this even number after its data reads saw complete data.
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }

    /// A busy period opens at `now` (nanoseconds on the pool's clock); no-op if one is open.
    pub(crate) fn begin(&self, now: u64) {
        // Relaxed: the writer reads its own store.
        if self.since.load(Ordering::Relaxed) == 0 {
            self.publish(|_, total| (now + 1, total));
        }
    }

    /// The open period, if any, closes at `now`.
    pub(crate) fn end(&self, now: u64) {
        // Relaxed: the writer reads its own store.
        if self.since.load(Ordering::Relaxed) != 0 {
            self.publish(|since, total| (0, total + now.saturating_sub(since - 1)));
        }
    }

    /// Busy nanoseconds up to `now`, the open period included; never less than a value any
    /// reader got before.
    pub(crate) fn read(&self, now: u64) -> u64 {
        let value = loop {
            // Acquire: pairs with the writer's final Release store.
            let seq = self.seq.load(Ordering::Acquire);
            if seq % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            // Relaxed, then the Acquire fence: the seqlock's reader side.
            let (since, total) = (self.since.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed));
            fence(Ordering::Acquire);
            // Relaxed: ordered after the data reads by the fence.
            if self.seq.load(Ordering::Relaxed) == seq {
                break total + if since == 0 { 0 } else { now.saturating_sub(since - 1) };
            }
        };
        // Relaxed: a statistic; the read-modify-write alone keeps readers' values monotonic.
        value.max(self.reported.fetch_max(value, Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_time_counts_open_and_closed_periods_and_never_goes_backwards() {
        let busy = BusyTime::default();
        assert_eq!(busy.read(5), 0);
        busy.begin(10);
        busy.begin(12); // already open: no-op
        assert_eq!(busy.read(15), 5);
        busy.end(20);
        busy.end(30); // already closed: no-op
        assert_eq!(busy.read(25), 10);
        // A reader whose clock ran past the end it had not seen yet returned 16 at 26 before
        // the end at 20 was published: later reads do not drop below it.
        let late = BusyTime::default();
        late.begin(10);
        assert_eq!(late.read(26), 16);
        late.end(20);
        assert_eq!(late.read(27), 16);
        late.begin(30);
        assert_eq!(late.read(40), 20);
    }
}
