//! crew's own I/O driver: one per process, below the scheduler, on mio (epoll on Linux, kqueue
//! on the BSDs and macOS), turned by crew's own threads as they park, with no thread of its own.
//!
//! Invariants (each file states its own in full):
//! - **Sources** (`sources.rs`, `source.rs`): an fd is registered once, edge-triggered, for
//!   both directions, and deregistered before it is closed; its token carries a generation, so
//!   an event read for a source that is gone never reaches the one that reused its slot.
//! - **Readiness** (`scheduled_io.rs`): a word of ready directions and a tick per source; a
//!   `WouldBlock` clears only the readiness whose tick it saw, so an edge that raced it stays;
//!   a task that waits stores its waker and looks again under the waiters' lock, so no event
//!   is lost between its look and its wait.
//! - **Turning** (`poller.rs`): one thread at a time, behind a try-lock, never waited for; the
//!   wakes of a turn run on the turning thread after the lock is released.
//! - **Parking** (`park.rs`): a crew thread that waits does so in the driver if it is free,
//!   else on its own parker; an unpark reaches it in either place, and the driver is handed on
//!   to a waiting thread when its holder leaves it for good.

mod park;
#[cfg_attr(loom, allow(dead_code))] // the waiters' list and its ids serve sources, left out under loom
mod scheduled_io;
mod waiting;

pub(crate) use park::{DrivingParker, DrivingUnparker, Role};
pub(crate) use scheduled_io::{Direction, ReadyEvent};

// Under loom, a fake poller with the real one's park-facing API (`loom_poller.rs`): `park.rs`
// and `scheduled_io.rs` are model-checked; mio's registrations, the sources and the timers are
// left out.
#[cfg(loom)]
#[path = "loom_poller.rs"]
mod poller;
#[cfg(loom)]
pub(crate) use {
    poller::make_driver,
    scheduled_io::{Ready, ScheduledIo},
};

outside_loom! {
    mod poller;
    mod source;
    mod sources;
    mod timer;
    mod off_driver;

    pub(crate) use park::run;
    pub(crate) use source::IoSource;
    #[cfg(feature = "signal")]
    pub(crate) use source::WaiterId;
    pub(crate) use timer::Timer;

    /// The process's timers (the driver's, made at the first call).
    pub(crate) fn timers() -> &'static timer::Timers {
        poller::driver().timers()
    }

    /// A timer became the earliest: where no timerfd re-arms the driver's wait, its holder must
    /// wake to shorten its wait.
    pub(crate) fn wake_for_timer() {
        if !timers().has_timerfd() {
            poller::driver().unpark();
        }
    }
}

/// For a pool's monitor, at each of its looks while the pool is busy: turns the driver without
/// blocking if it was made and nobody has turned it for [`MONITOR_TURN_GAP`](poller::MONITOR_TURN_GAP)
/// (Go's `sysmon`), so that I/O and timers are served while every worker runs tasks and none
/// reaches its tick. Sooner than that, if nobody holds the driver while a thread waits for it
/// on its parker, hands it on to that thread: a worker that left the driver to run a task
/// does not hand it on (`park.rs`), and if that task blocks its thread, a worker parked
/// meanwhile would otherwise sleep through the I/O until the gap is over.
pub(crate) fn turn_if_forgotten() {
    if let Some(driver) = poller::driver_if_made() {
        if driver.since_last_turn() >= poller::MONITOR_TURN_GAP {
            driver.try_turn(Some(std::time::Duration::ZERO));
        } else {
            driver.hand_on_if_free();
        }
    }
}

/// Whether the process's driver has a socket or fd registered (a hint): a pool's default spin
/// before parking is skipped then (`scheduler/cores/search.rs`).
pub(crate) fn has_io_sources() -> bool {
    poller::driver_if_made().is_some_and(|driver| driver.has_sources())
}

/// For a seeded pool's worker whose ready list ran dry, before it parks: turns the driver
/// without blocking, if it was made and no other thread holds it, so that the I/O and timers
/// its tasks wait on are served by the pool itself (their wakes are outside events, unordered:
/// `docs/testing.md`). A pool's ordinary workers park in the driver instead (`park.rs`). Not
/// under loom, whose seeded pools never turn the driver.
#[cfg(not(loom))]
pub(crate) fn turn_if_made() {
    if let Some(driver) = poller::driver_if_made() {
        driver.try_turn(Some(std::time::Duration::ZERO));
    }
}
