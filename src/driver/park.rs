//! How a crew thread waits: in the driver when it is free, else on its own parker
//! ([`DrivingParker`]), and the driver's hand-on to a waiting thread (`waiting.rs`).
//!
//! Invariants:
//! - **One token per parker**, as crossbeam's `Parker`: [`DrivingUnparker::unpark`] sets it,
//!   [`DrivingParker::park`] consumes it, and an unpark before a park is never lost. The
//!   parker's one state word says where its thread is: `EMPTY` (running, no token), `NOTIFIED`
//!   (the token), `IN_DRIVER` (waiting in the driver) or `ON_PARKER` (waiting on its own
//!   parker). The thread enters a wait only by a compare-exchange from `EMPTY`, and an unpark
//!   swaps `NOTIFIED` in and wakes whatever wait the old value names (the driver's waker for
//!   `IN_DRIVER`, the thread's parker for `ON_PARKER`): both are read-modify-writes of one word,
//!   so one comes first, and either the thread sees the token and does not wait, or the unpark
//!   sees the wait and ends it.
//! - **The driver is turned by whoever parks first**: a thread that finds the driver free
//!   waits in it, so its wait also watches every socket of the process; the others wait on
//!   their parkers, listed in the driver's `Waiting` (`waiting.rs`). A plain thread
//!   ([`Role::Thread`]) leaves the driver to the pools' worker loops while any run, and hands it
//!   on if it held it (`off_driver.rs`).
//! - **Handing on.** A thread that leaves the driver for good (its `block_on` returned, its
//!   worker loop ended) or to run code that is not a pool's task (a `block_on` on a plain
//!   thread, [`Role::Thread`]) wakes one listed thread, which takes the driver at its next
//!   look. The release of the poll's lock and the listing are each followed by a `SeqCst`
//!   fence, and each side looks at the other's after it: a thread that lists itself after the
//!   holder looked at the list finds the lock free when it tries again. A worker leaving to run
//!   tasks does not hand on (tokio's rule): it parks again soon, and its tick turns the driver
//!   meanwhile; a pool's monitor turns it when nobody has for `MONITOR_TURN_GAP`. A turn that
//!   is not a park (a tick's, the monitor's) hands on as it releases the lock (`poller.rs`),
//!   and a listed thread that leaves its park without having driven passes a hand-on on, so
//!   that one that woke it as its own token came is not lost.
//! - **Under loom**, a parker's word is published to other threads by a lock its maker takes
//!   after making it and each unpark takes first: in a real run the unparker reaches another
//!   thread only through some synchronizing hand-off (async-task's state, for a task's
//!   waker), which loom cannot see.

use std::cell::Cell;
use std::sync::Arc;

use crate::driver::poller::{driver, driver_if_made, Driver};
use crate::sync::{planted_bug, AtomicUsize, Ordering, Parker, Unparker};

/// What a thread runs between its waits: whether it hands the driver on as it leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A pool's worker: it runs tasks and parks again soon; it hands the driver on only when
    /// its loop ends.
    Worker,
    /// Any other thread (`block_on` on a plain thread, a thread finishing its local tasks): it
    /// hands the driver on each time it leaves it.
    Thread,
}

/// A thread's parker that waits in the driver when it is free (see the module docs).
#[derive(Debug)]
pub(crate) struct DrivingParker {
    parker: Parker,
    unparker: DrivingUnparker,
}

/// Wakes a [`DrivingParker`], wherever it waits. Cloneable; `Send` and `Sync`.
#[derive(Debug, Clone)]
pub(crate) struct DrivingUnparker {
    state: Arc<ParkState>,
    unparker: Unparker,
}

#[derive(Debug, Default)]
struct ParkState {
    /// `EMPTY`, `NOTIFIED`, `IN_DRIVER` or `ON_PARKER` (module docs).
    word: AtomicUsize,
    /// Under loom, the word's publication (module docs).
    #[cfg(loom)]
    published: crate::sync::Mutex<()>,
}

/// Running, no token.
const EMPTY: usize = 0;
/// The token is there.
const NOTIFIED: usize = 1;
/// Waiting in the driver.
const IN_DRIVER: usize = 2;
/// Waiting on its own parker.
const ON_PARKER: usize = 3;

impl ParkState {
    /// Takes the token if it is there.
    fn take_token(&self) -> bool {
        // SeqCst: every change of the word is a read-modify-write of it (module docs).
        self.word.compare_exchange(NOTIFIED, EMPTY, Ordering::SeqCst, Ordering::SeqCst).is_ok()
    }

    /// Enters the wait `waiting` (`IN_DRIVER` or `ON_PARKER`) unless the token is there.
    fn enter(&self, waiting: usize) -> bool {
        self.word.compare_exchange(EMPTY, waiting, Ordering::SeqCst, Ordering::SeqCst).is_ok()
    }

    /// Leaves the wait `waiting`, unless an unpark ended it (the token is then there).
    fn leave(&self, waiting: usize) {
        let _ = self.word.compare_exchange(waiting, EMPTY, Ordering::SeqCst, Ordering::SeqCst);
    }
}

impl Default for DrivingParker {
    fn default() -> DrivingParker {
        DrivingParker::new()
    }
}

impl DrivingParker {
    /// A parker with no token.
    pub(crate) fn new() -> DrivingParker {
        let parker = Parker::new();
        let unparker = DrivingUnparker { state: Arc::default(), unparker: parker.unparker().clone() };
        #[cfg(loom)]
        drop(crate::sync::lock(&unparker.state.published));
        DrivingParker { parker, unparker }
    }

    /// Its unparker.
    pub(crate) fn unparker(&self) -> &DrivingUnparker {
        &self.unparker
    }

    /// [`park_as`](DrivingParker::park_as) a plain thread.
    pub(crate) fn park(&self) {
        self.park_as(Role::Thread);
    }

    /// Blocks until the token is there, then consumes it; meanwhile turns the driver if it is
    /// free, as `role` (see the module docs).
    pub(crate) fn park_as(&self, role: Role) {
        let state = &self.unparker.state;
        // The driver is made by the first source or timer; until then there is nothing to turn.
        let mut driver = driver_if_made();
        let (mut drove, mut listed) = (false, false);
        while !state.take_token() {
            // Made meanwhile (by another thread's first source or timer): wait in it from now.
            driver = driver.or_else(driver_if_made);
            match driver {
                // Worker loops run: they turn the driver, and this plain thread waits on its
                // parker (`off_driver.rs`). A driver it held, or a hand-on it may have taken,
                // goes on to a listed thread first.
                Some(driver) if leaves_driver_to_workers(role) => {
                    if std::mem::take(&mut drove) | std::mem::take(&mut listed) {
                        driver.waiting().hand_on();
                    }
                    self.wait_off_driver(workers_turn_it);
                }
                Some(driver) if self.wait_in_driver(driver) => drove = true,
                Some(driver) => {
                    listed = true;
                    driver.waiting().list(self.unparker.id(), &self.unparker.unparker);
                    // Taken meanwhile? The holder may have looked at the list before we were on
                    // it (module docs): try again before sleeping.
                    if self.wait_in_driver(driver) {
                        drove = true;
                    } else {
                        self.wait_on_parker();
                    }
                    driver.waiting().unlist(self.unparker.id());
                }
                None => self.wait_off_driver(|| driver_if_made().is_none()),
            }
        }
        // A plain thread leaving the driver hands it on; so does any thread that was listed and
        // leaves without driving: a hand-on that woke it as its own token came is passed on,
        // not swallowed, so the other listed threads are not left asleep with the driver free.
        if (drove && role == Role::Thread) || (listed && !drove) {
            driver.expect("drove or listed").waiting().hand_on();
        }
    }

    /// Waits in the driver if it is free (true), until an unpark: the unpark that finds the
    /// word `IN_DRIVER` wakes the driver's waker (module docs).
    fn wait_in_driver(&self, driver: &Driver) -> bool {
        let state = &self.unparker.state;
        let entered = Cell::new(false);
        let woken = driver.try_turn_unless(|| {
            entered.set(planted_bug!("park_skips_token_look") || state.enter(IN_DRIVER));
            !entered.get()
        });
        if entered.get() {
            state.leave(IN_DRIVER);
        }
        // Woken once this thread no longer says it waits in the driver: a wake of its own (a
        // task its turn woke, on a parked worker's own core) then costs no write to the
        // driver's waker.
        match woken {
            Some(woken) => {
                woken.wake();
                true
            }
            None => false,
        }
    }

    /// Waits on the thread's own parker, listed off the driver, while `still_off` (worker loops
    /// turn the driver; the driver is not made), until an unpark or the change that lets it in
    /// (`off_driver.rs`).
    #[cfg(not(loom))]
    fn wait_off_driver(&self, still_off: impl FnOnce() -> bool) {
        crate::driver::off_driver::wait_off_driver(self.unparker.id(), &self.unparker.unparker, still_off, || {
            self.wait_on_parker()
        });
    }

    /// Under loom no worker loop runs and each model makes its driver before its threads park
    /// (`off_driver.rs` is left out): the plain wait.
    #[cfg(loom)]
    fn wait_off_driver(&self, _: impl FnOnce() -> bool) {
        self.wait_on_parker();
    }

    /// Waits on the thread's own parker until an unpark, unless the token is there.
    fn wait_on_parker(&self) {
        let state = &self.unparker.state;
        if state.enter(ON_PARKER) {
            self.parker.park();
            state.leave(ON_PARKER);
        }
    }
}

/// True if a thread parking as `role` leaves the driver to the pools' worker loops: a plain
/// thread while any run (`off_driver.rs`).
fn leaves_driver_to_workers(role: Role) -> bool {
    role == Role::Thread && workers_turn_it()
}

/// True while a pool's worker loop runs inside the driver (`off_driver.rs`).
#[cfg(not(loom))]
fn workers_turn_it() -> bool {
    crate::driver::off_driver::workers_turn_it()
}

/// Under loom no worker loop runs: every thread may wait in the driver.
#[cfg(loom)]
fn workers_turn_it() -> bool {
    false
}

impl DrivingUnparker {
    /// Sets the token and wakes the parked thread, in the driver or on its parker.
    pub(crate) fn unpark(&self) {
        #[cfg(loom)]
        drop(crate::sync::lock(&self.state.published));
        // SeqCst: see `ParkState`.
        match self.state.word.swap(NOTIFIED, Ordering::SeqCst) {
            IN_DRIVER => driver().unpark(),
            ON_PARKER => self.unparker.unpark(),
            _ => {}
        }
    }

    /// Which parker this is, for the list of threads waiting for the driver.
    fn id(&self) -> usize {
        Arc::as_ptr(&self.state) as usize
    }
}

/// Runs `future` on this thread as a worker loop does (`async_io::block_on`'s shape): polled
/// when woken, the driver turned without blocking when it woke itself during its poll (a busy
/// loop lets I/O in), parked in the driver or on the parker otherwise. Hands the driver on when
/// it returns.
#[cfg_attr(loom, allow(dead_code))] // loom builds have no worker loop run as a future
pub(crate) fn run<F: std::future::Future>(future: F, role: Role) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};

    struct Wakes(DrivingUnparker);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }

    /// Counts a worker loop for its life, however it ends (`off_driver.rs`; not under loom,
    /// where no worker loop runs).
    #[cfg(not(loom))]
    struct WorkerLoop;

    #[cfg(not(loom))]
    impl Drop for WorkerLoop {
        fn drop(&mut self) {
            crate::driver::off_driver::worker_loop_ended();
        }
    }

    #[cfg(not(loom))]
    let worker_loop = (role == Role::Worker).then(|| {
        if crate::driver::off_driver::worker_loop_started() {
            if let Some(driver) = driver_if_made() {
                // A plain thread parked in the driver looks again and leaves it.
                driver.unpark();
            }
        }
        WorkerLoop
    });
    let parker = DrivingParker::new();
    let waker = Waker::from(Arc::new(Wakes(parker.unparker().clone())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    let output = loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            break output;
        }
        if parker.unparker.state.take_token() {
            // Woken during its poll: a turn that does not block, if the driver is free.
            if let Some(driver) = driver_if_made() {
                driver.try_turn(Some(std::time::Duration::ZERO));
            }
            continue;
        }
        parker.park_as(role);
    };
    #[cfg(not(loom))]
    drop(worker_loop);
    if let Some(driver) = driver_if_made() {
        driver.waiting().hand_on();
    }
    output
}
