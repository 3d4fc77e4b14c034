//! The process's one I/O driver ([`Driver`]): mio's `Poll` behind a try-lock, the sources it
//! watches, and the turn that reads the kernel's events and wakes the tasks waiting on them.
//!
//! Invariants:
//! - **One per process** ([`driver`]), made at first use: a source registered on any thread is
//!   watched by whichever thread turns the driver next. No thread of its own: the threads that
//!   turn it are those that park in it (`park.rs`: a crew worker, a `block_on` thread while no
//!   worker loop runs, `off_driver.rs`), a busy worker at its tick (without blocking), and a
//!   pool's monitor when nobody has for [`MONITOR_TURN_GAP`]. A thread that parks before the
//!   driver is made is woken when it is (`off_driver.rs`).
//! - **One turner at a time**: `Poll::poll` takes `&mut`, so the poll is behind a mutex that
//!   is only ever *tried* ([`Driver::try_turn`]): a thread that cannot have it parks elsewhere
//!   (`park.rs`) rather than wait for it. A stuck worker never holds it: it is held only for a
//!   turn, inside a park or at a tick.
//! - **A turn** is one `epoll_wait` (mio's `Poll::poll`; an `EINTR` ends the turn, and a
//!   thread that parks turns again), then the events:
//!   each source's readiness is set, and its waiters woken, on the turning thread, after the
//!   poll's lock is released (a task woken on a worker goes to that worker's own queues, as any
//!   wake from it). The driver's own tokens (its waker) wake nothing.
//! - **Errors**: registering a source returns the kernel's error to the caller; an error of the
//!   wait itself (not `EINTR`) is reported once on standard error and the turn ends, so the
//!   driver never stops silently (`epoll_wait`'s other errors mean a bad epoll fd or buffer,
//!   which the driver's own, never closed, cannot have).

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Registry, Token, Waker};

use crate::driver::waiting::Waiting;
use crate::driver::scheduled_io::{Ready, ScheduledIo};
use crate::driver::timer::{make_timerfd, Timers};
use crate::driver::sources::{Sources, MAX_SOURCE_TOKEN};
use crate::sync::{AtomicBool, AtomicUsize, Mutex, Ordering};

/// The token of the driver's waker ([`Driver::unpark`]).
const WAKER_TOKEN: Token = Token(usize::MAX);

/// The token of the timers' timerfd (`timer/mod.rs`).
const TIMER_TOKEN: Token = Token(usize::MAX - 1);

/// Events read per `epoll_wait`: the rest wait for the next turn (the kernel keeps them).
const EVENTS: usize = 1024;

/// How long the driver may go unturned before a pool's monitor, at its next look (every 5 ms
/// by default while the pool is busy), turns it. Go's `sysmon` waits 10 ms; with 10 here, a
/// server whose workers were all blocked read its sockets' events up to 15 ms late, and the
/// takeover, which moves queued tasks, saw none queued: `/mix` on the services bench (1
/// request in 50 blocks its thread 30 ms) served 4,980 requests/s instead of 6,440.
pub(crate) const MONITOR_TURN_GAP: Duration = Duration::from_millis(1);

/// The process's driver (see the module docs).
pub(crate) struct Driver {
    poll: Mutex<PollState>,
    registry: Registry,
    waker: Waker,
    sources: Sources,
    /// When the driver was made: the origin of `last_turn`.
    epoch: Instant,
    /// The end of the last turn, in microseconds since `epoch`.
    last_turn: AtomicUsize,
    /// Set once a wait error was reported (reported once per process).
    wait_error_reported: AtomicBool,
    /// Threads parked on their own parkers while another holds the driver (`park.rs`).
    waiting: Waiting,
    /// The timers, fired in each turn (`timer/`).
    timers: Timers,
}

/// What a turn found: sources to set ready and timers fired, whose waiters the turning thread
/// wakes once it released the poll's lock.
#[derive(Default)]
pub(crate) struct Woken {
    io: Vec<(Arc<ScheduledIo>, Ready)>,
    timers: Vec<std::task::Waker>,
}

impl Woken {
    /// Sets the sources' readiness and wakes the waiters.
    pub(crate) fn wake(self) {
        for (io, ready) in self.io {
            io.set_readiness(ready);
        }
        for waker in self.timers {
            waker.wake();
        }
    }
}

/// What the turning thread holds.
struct PollState {
    poll: Poll,
    events: Events,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver").field("sources", &self.sources.len()).finish_non_exhaustive()
    }
}

/// The driver, once made.
static DRIVER: once_cell::sync::OnceCell<Driver> = once_cell::sync::OnceCell::new();

/// The process's driver, made at the first call.
///
/// # Panics
///
/// If the kernel refuses an epoll instance or an eventfd (out of file descriptors at the very
/// first I/O of the process): the message names the error.
pub(crate) fn driver() -> &'static Driver {
    if let Some(driver) = DRIVER.get() {
        return driver;
    }
    let mut made = false;
    let driver = DRIVER.get_or_init(|| match Driver::new() {
        Ok(driver) => {
            made = true;
            driver
        }
        Err(error) => panic!("crew: cannot start the I/O driver (epoll and an eventfd): {error}"),
    });
    if made {
        // Threads that parked before it existed take it now (`off_driver.rs`).
        crate::driver::off_driver::driver_made();
    }
    driver
}

/// The driver if it was made already: for threads that turn it only if something uses it.
pub(crate) fn driver_if_made() -> Option<&'static Driver> {
    DRIVER.get()
}

impl Driver {
    fn new() -> io::Result<Driver> {
        let poll = Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = Waker::new(&registry, WAKER_TOKEN)?;
        let epoch = Instant::now();
        let timerfd = make_timerfd();
        if let Some(timerfd) = &timerfd {
            use std::os::fd::AsRawFd;
            registry.register(&mut mio::unix::SourceFd(&timerfd.as_raw_fd()), TIMER_TOKEN, Interest::READABLE)?;
        }
        Ok(Driver {
            poll: Mutex::new(PollState { poll, events: Events::with_capacity(EVENTS) }),
            registry,
            waker,
            sources: Sources::default(),
            epoch,
            last_turn: AtomicUsize::new(0),
            wait_error_reported: AtomicBool::new(false),
            waiting: Waiting::default(),
            timers: Timers::new(epoch, timerfd),
        })
    }

    /// Registers `fd` for readiness in both directions (edge-triggered: once, for its life):
    /// its token and readiness. The kernel's error if it refuses (`EMFILE`, `ENOMEM`, an fd
    /// already registered, a closed fd).
    pub(crate) fn register(&self, fd: std::os::fd::RawFd) -> io::Result<(usize, Arc<ScheduledIo>)> {
        let (token, io) = self.sources.add()?;
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(error) = self.registry.register(&mut mio::unix::SourceFd(&fd), Token(token), interest) {
            self.sources.remove(token);
            return Err(error);
        }
        Ok((token, io))
    }

    /// Deregisters `fd`, registered as `token`, before it is closed: no event reaches it after
    /// this, and its waiters are woken with [`Ready::SHUTDOWN`].
    pub(crate) fn deregister(&self, fd: std::os::fd::RawFd, token: usize, io: &ScheduledIo) {
        // An error here means the fd is not registered (closed behind the owner's back): the
        // kernel dropped it from the set already.
        let _ = self.registry.deregister(&mut mio::unix::SourceFd(&fd));
        self.sources.remove(token);
        io.set_readiness(Ready::SHUTDOWN);
    }

    /// Whether any socket or fd is registered (a hint: `sources.rs`).
    pub(crate) fn has_sources(&self) -> bool {
        self.sources.any()
    }

    /// Turns the driver if no other thread holds it: waits for events up to `timeout` (`None`:
    /// until one comes or [`unpark`](Driver::unpark)), then wakes their waiters. False if
    /// another thread holds it (nothing done).
    pub(crate) fn try_turn(&self, timeout: Option<Duration>) -> bool {
        let Ok(mut state) = self.poll.try_lock() else {
            return false;
        };
        let woken = self.turn_locked(&mut state, timeout);
        drop(state);
        // A thread that found the lock held meanwhile may have listed itself and parked: it
        // takes the driver now (`waiting.rs`), else nobody would wait in it.
        self.waiting.hand_on();
        woken.wake();
        true
    }

    /// As [`try_turn`](Driver::try_turn) with no timeout, unless `skip` says (once the lock is
    /// held) that the caller must not block: then it releases the lock at once. `None` if the
    /// lock was held; else what the turn found, for the caller to wake once it has said it no
    /// longer waits (`park.rs`: a wake of its own then costs no write to the driver's waker).
    pub(crate) fn try_turn_unless(&self, skip: impl FnOnce() -> bool) -> Option<Woken> {
        let Ok(mut state) = self.poll.try_lock() else {
            return None;
        };
        if skip() {
            drop(state);
            // As in `try_turn`: a thread that listed itself meanwhile takes the driver.
            self.waiting.hand_on();
            return Some(Woken::default());
        }
        Some(self.turn_locked(&mut state, None))
    }

    /// Wakes a thread waiting for the driver on its parker if nobody holds the driver: the
    /// lock taken and released at once, then the hand-on that follows every release.
    pub(crate) fn hand_on_if_free(&self) {
        self.waiting.hand_on_if_free(&self.poll);
    }

    /// The threads waiting for the driver (`park.rs`).
    pub(crate) fn waiting(&self) -> &Waiting {
        &self.waiting
    }

    /// The wait and the reading of its events, under the poll's lock; the caller sets the
    /// readiness of what it returns once it released the lock.
    fn turn_locked(&self, state: &mut PollState, timeout: Option<Duration>) -> Woken {
        let PollState { poll, events } = state;
        match poll.poll(events, self.timers.wait_timeout(timeout)) {
            Ok(()) => {}
            // A signal: the turn ends, the caller's loop turns again.
            Err(error) if error.kind() == io::ErrorKind::Interrupted => events.clear(),
            Err(error) => {
                events.clear();
                if !self.wait_error_reported.swap(true, Ordering::Relaxed) {
                    eprintln!("crew: the I/O driver's wait failed (reported once): {error}");
                }
            }
        }
        self.note_turn();
        let io = if events.is_empty() {
            Vec::new()
        } else {
            self.sources.with_lookup(|lookup| {
                events
                    .iter()
                    .filter(|event| event.token().0 <= MAX_SOURCE_TOKEN)
                    .filter_map(|event| lookup(event.token().0).map(|io| (io, ready_of(event))))
                    .collect()
            })
        };
        Woken { io, timers: self.timers.process() }
    }

    /// The driver's timers.
    pub(crate) fn timers(&self) -> &Timers {
        &self.timers
    }

    /// Records that a turn ended now (the monitor's gap).
    fn note_turn(&self) {
        let micros = usize::try_from(self.epoch.elapsed().as_micros()).unwrap_or(usize::MAX);
        // Relaxed: a statistic for the monitor's look; a stale value only delays or hastens
        // one extra turn.
        self.last_turn.store(micros, Ordering::Relaxed);
    }

    /// How long ago the last turn ended.
    pub(crate) fn since_last_turn(&self) -> Duration {
        // Relaxed: see `note_turn`.
        let last = self.last_turn.load(Ordering::Relaxed) as u64;
        self.epoch.elapsed().saturating_sub(Duration::from_micros(last))
    }

    /// Wakes the thread waiting in the driver, if any (or makes the next wait return at once).
    pub(crate) fn unpark(&self) {
        if let Err(error) = self.waker.wake() {
            // An eventfd write fails only if its counter is full, when a wake is pending anyway.
            debug_assert!(false, "crew: the driver's waker failed: {error}");
        }
    }
}

/// What an event of mio says is ready.
fn ready_of(event: &mio::event::Event) -> Ready {
    let mut ready = Ready::EMPTY;
    for (set, bit) in [
        (event.is_readable(), Ready::READABLE),
        (event.is_writable(), Ready::WRITABLE),
        (event.is_read_closed(), Ready::READ_CLOSED),
        (event.is_write_closed(), Ready::WRITE_CLOSED),
        (event.is_error(), Ready::ERROR),
    ] {
        if set {
            ready = ready.union(bit);
        }
    }
    ready
}
