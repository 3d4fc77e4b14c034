//! Threads that wait on their own parkers until they may wait in the driver: any thread before
//! the driver is made, and a plain thread while a pool's worker loops turn it. Both wait off
//! the driver, listed here, until what kept them off changes.
//!
//! Invariants:
//! - **Who turns it.** While at least one worker loop runs inside the driver (`run` with
//!   `Role::Worker`, any pool's), a plain thread's park (`block_on` outside a pool, a thread
//!   finishing its local tasks) never waits in the driver: an idle worker parks in it, a busy
//!   one turns it at its tick, and a pool's monitor when nobody has for `MONITOR_TURN_GAP`, as
//!   tokio's `block_on` leaves I/O to its runtime's workers. A plain thread in the driver
//!   while the workers are busy would take every event itself, one `epoll_wait` and one
//!   context switch per event, and pass each wake on to the workers through the injector
//!   (measured on the services bench: a blocking `epoll_wait` every 3.5 requests by the
//!   `main` thread, 7x tokio's context switches per request). With no worker loop (no pool,
//!   or only seeded pools), plain threads wait in the driver as before: a process's I/O never
//!   depends on a pool.
//! - **Nobody is stranded off the driver.** A thread lists itself (under [`OFF_DRIVER`]'s
//!   lock), then looks again at what kept it off (the driver not made; worker loops running);
//!   the thread that changes it (the maker of the driver; the last worker loop to end) changes
//!   it first, then takes the lock and wakes every listed thread, which looks again. Either the
//!   thread's look comes after the change, or the changer's lock comes after the listing (a
//!   mutex orders the two critical sections, and the change happens before the changer's).
//!   Without the first, workers parked before a plain thread made the driver would sleep
//!   through its I/O, with the plain thread waiting on its parker.
//! - **A holder that should leave learns it.** The first worker loop to start wakes the
//!   driver's holder (`Driver::unpark`), so that a plain thread parked in it before the pool
//!   started looks again, leaves the driver and hands it on (`park.rs`).
//! - A limit, documented: a pool without a monitor (takeover off) whose workers all run tasks
//!   that never yield serves a plain thread's I/O at its workers' ticks only.

use crate::sync::{lock, AtomicUsize, Mutex, Ordering, Unparker};

/// Worker loops running inside the driver, in every pool of the process.
static WORKER_LOOPS: AtomicUsize = AtomicUsize::new(0);

/// The threads waiting off the driver: each one's parker id and unparker.
static OFF_DRIVER: Mutex<Vec<(usize, Unparker)>> = Mutex::new(Vec::new());

/// A worker loop starts inside the driver: from now on, plain threads leave the driver to it.
/// True if it is the only one: the caller then wakes the driver's holder, which may be a plain
/// thread that must look again and leave it (module docs).
pub(crate) fn worker_loop_started() -> bool {
    // SeqCst: the count is the changed state of the module docs' argument.
    WORKER_LOOPS.fetch_add(1, Ordering::SeqCst) == 0
}

/// A worker loop left the driver for good: the last one wakes the threads waiting off it, so
/// that plain threads take it again (module docs).
pub(crate) fn worker_loop_ended() {
    // SeqCst: as in `worker_loop_started`.
    if WORKER_LOOPS.fetch_sub(1, Ordering::SeqCst) == 1 {
        wake_all();
    }
}

/// The driver was just made: threads that parked before it existed look again and take it.
pub(crate) fn driver_made() {
    wake_all();
}

/// True while a worker loop runs inside the driver: a plain thread then leaves it to them.
pub(crate) fn workers_turn_it() -> bool {
    // SeqCst: as in `worker_loop_started`.
    WORKER_LOOPS.load(Ordering::SeqCst) > 0
}

/// Waits off the driver as the thread of parker `id`, woken by `unparker`: lists it, and if
/// `still_off()` (looked at after the listing) says it must still wait off the driver, runs
/// `wait` (a wait on its parker, which an unpark or [`wake_all`] ends); then unlists it.
pub(crate) fn wait_off_driver(id: usize, unparker: &Unparker, still_off: impl FnOnce() -> bool, wait: impl FnOnce()) {
    lock(&OFF_DRIVER).push((id, unparker.clone()));
    if still_off() {
        wait();
    }
    let mut off = lock(&OFF_DRIVER);
    if let Some(index) = off.iter().position(|(listed, _)| *listed == id) {
        off.swap_remove(index);
    }
}

/// Wakes every thread waiting off the driver, after the change that may let it in.
fn wake_all() {
    for (_, unparker) in lock(&OFF_DRIVER).iter() {
        // Its parker's own wake: not its token, which stays its task's.
        unparker.unpark();
    }
}
