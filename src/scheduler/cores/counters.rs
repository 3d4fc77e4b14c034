//! What a pool counts about itself: one block of counters per core, written only by the thread
//! that owns the core, and one block for what happens outside the workers. `snapshot.rs` reads
//! them into a [`crate::Metrics`].
//!
//! Invariants:
//! - A core's [`CoreCounters`] are written only by the thread that owns the core (or, for
//!   `takeovers`, by the monitor), so counting is a load and a store on a line no other thread
//!   writes (see `sync/counter.rs`). They travel with the core slot, not the thread: a core
//!   handed to another thread keeps counting in the same block.
//! - Polls are not counted here: a core's progress word already holds the number of polls it
//!   began (`progress.rs`).
//! - [`OutsideCounters`] are written by threads that run no core of the pool (spawns and wakes
//!   from outside, tasks that end away from a worker), through one shared counter each: those
//!   paths already write the injector's shared lines.
//! - Busy time is measured at parks and wakes only, never per poll: a busy period opens when
//!   the core leaves a park (or starts) and closes when it parks, in nanoseconds since the pool
//!   started (`sync/counter.rs`'s `BusyTime`: a reader never double-counts a period that closes
//!   while it reads, and never sees the total go backwards).

use std::time::Instant;

use crate::sync::{BusyTime, SharedCounter, SingleWriterCounter};

/// One core's counters (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct CoreCounters {
    /// Tasks spawned by tasks running on this core.
    pub(crate) spawned: SingleWriterCounter,
    /// Tasks whose future ended (returned, panicked) in a poll on this core.
    pub(crate) ended: SingleWriterCounter,
    /// Tasks taken from other cores' deques and deferred lists.
    pub(crate) stolen: SingleWriterCounter,
    /// Searches of the other cores and the injector (each a sweep over all of them).
    pub(crate) steal_attempts: SingleWriterCounter,
    /// Tasks run from the LIFO slot.
    pub(crate) lifo_runs: SingleWriterCounter,
    /// Tasks moved out of a stuck core's LIFO slot by this core as the watcher.
    pub(crate) rescues: SingleWriterCounter,
    /// Times the monitor took this core over. Written by the monitor only.
    pub(crate) takeovers: SingleWriterCounter,
    /// Batches taken from the injector.
    pub(crate) injector_batches: SingleWriterCounter,
    /// Times this core parked.
    pub(crate) parks: SingleWriterCounter,
    /// Times it was woken from a park.
    pub(crate) unparks: SingleWriterCounter,
    /// Wakes of a parked worker that this core sent.
    pub(crate) notifies: SingleWriterCounter,
    /// Wakes this core skipped because a worker was already searching.
    pub(crate) notifies_skipped: SingleWriterCounter,
    /// Local tasks spawned on this core's thread while it ran the core.
    pub(crate) local_spawned: SingleWriterCounter,
    /// Local tasks run by this core (polls of its thread's local tasks).
    pub(crate) local_runs: SingleWriterCounter,
    /// Time spent out of park.
    pub(crate) busy: BusyTime,
}

/// What happens away from the pool's cores (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct OutsideCounters {
    /// Tasks spawned from threads that run no core of the pool.
    pub(crate) spawned: SharedCounter,
    /// Tasks whose future ended away from a core (a cancelled handle, a pool's shutdown, a poll
    /// on a thread that handed its core off).
    pub(crate) ended: SharedCounter,
    /// Wakes of a parked worker sent from outside the cores.
    pub(crate) notifies: SharedCounter,
    /// Wakes skipped, from outside the cores, because a worker was already searching.
    pub(crate) notifies_skipped: SharedCounter,
}

/// The pool's clock for busy time: nanoseconds since it started.
#[derive(Debug)]
pub(crate) struct Clock(Instant);

impl Clock {
    pub(crate) fn start() -> Clock {
        Clock(Instant::now())
    }

    /// Nanoseconds since the pool started.
    pub(crate) fn now(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}
