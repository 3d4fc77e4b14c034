//! Internals exposed to `loom-tests/` only (as `crew::__loom`): built under `--cfg loom`, never
//! in normal builds.
//!
//! Invariants: each function here calls crew's real code; the checks it adds (the watcher flag
//! matches the role, the watcher is listed as parked) only read.

/// crew's real idle-worker protocol (`src/scheduler/sleep/`), for model checking.
#[derive(Debug)]
pub struct Sleepers(crate::scheduler::sleep::Sleepers);

#[allow(missing_docs)]
impl Sleepers {
    pub fn new(workers: usize) -> Sleepers {
        Sleepers(crate::scheduler::sleep::Sleepers::new(workers, workers, false))
    }
    pub fn notify_one(&self) -> bool {
        self.0.notify_one()
    }
    pub fn try_start_searching(&self) -> bool {
        self.0.try_start_searching()
    }
    pub fn stop_searching(&self) -> bool {
        self.0.stop_searching()
    }
    /// Whether the worker must re-scan (`Listing::rescan`).
    pub fn list_parked(&self, index: usize, was_searching: bool) -> bool {
        self.0.list_parked(index, was_searching).rescan
    }
    /// `(rescan, heir)`, as `Listing` says.
    pub fn list_parked_heir(&self, index: usize, was_searching: bool) -> (bool, bool) {
        let listing = self.0.list_parked(index, was_searching);
        (listing.rescan, listing.heir)
    }
    pub fn is_parked(&self, index: usize) -> bool {
        self.0.is_parked(index)
    }
    pub fn wake_self(&self, index: usize) -> bool {
        self.0.wake_self(index)
    }
    /// Blocks worker `index` until it has its token (returns at once if it has it).
    pub fn park(&self, index: usize) {
        self.0.park(index)
    }
    pub fn notify_private(&self) -> bool {
        self.0.notify_private()
    }
    pub fn try_become_watcher(&self, index: usize) -> bool {
        self.0.try_become_watcher(index)
    }
    /// The watcher's timed park; under loom its deadline has always passed.
    pub fn park_until_deadline(&self, index: usize) {
        self.0.park_until(index, &crate::sync::Deadline::after(std::time::Duration::ZERO))
    }
    /// The watcher's index, asserting that the flag in the state matches it and that it is
    /// listed as parked.
    pub fn watcher(&self) -> Option<usize> {
        self.0.watcher()
    }
    /// `(unparked, searching)`.
    pub fn counts(&self) -> (usize, usize) {
        let state = self.0.state();
        (state.unparked(), state.searching())
    }
}

/// `pool`'s watcher (see `src/scheduler/takeover/watch.rs`), asserting that the flag in its state matches it
/// and that it is listed as parked.
pub fn watcher(pool: &crate::Pool) -> Option<usize> {
    pool.shared().sleepers.watcher()
}

/// `pool`'s idle-worker counters `(unparked, searching)`, read once every core a thread runs
/// (workers, and spare cores running after a takeover) is listed as parked; `None` while some
/// is not.
pub fn idle_counts(pool: &crate::Pool) -> Option<(usize, usize)> {
    let shared = pool.shared();
    let sleepers = &shared.sleepers;
    let active = |index: &usize| shared.slot_states[*index].active.load(crate::sync::Ordering::SeqCst);
    if !(0..shared.slots()).filter(active).all(|index| sleepers.is_parked(index)) {
        return None;
    }
    // Also asserts the watcher invariant (flag matches the role, the watcher is parked).
    sleepers.watcher();
    let state = sleepers.state();
    Some((state.unparked(), state.searching()))
}

/// How many cores a thread still runs though the monitor took them over (the stuck threads
/// whose poll has not returned, or that have not given their core up yet), as
/// `Metrics::stuck_threads` counts them, without the rest of the snapshot's loads.
pub fn stuck_threads(pool: &crate::Pool) -> usize {
    let shared = pool.shared();
    (0..shared.slots())
        .filter(|index| shared.is_active(*index) && shared.remotes[*index].progress.load().taken())
        .count()
}

/// The monitor's takeover of worker 0 of `pool` (see `src/scheduler/takeover/monitor.rs`), if it is inside
/// a poll now: true if a spare core now runs on a new thread in its place. Under loom the monitor
/// thread never runs (no clock); models call this instead, racing the poll's end.
pub fn take_over(pool: &crate::Pool) -> bool {
    let shared = pool.shared_arc();
    let seen = shared.remotes[0].progress.load();
    seen.in_poll()
        && crate::scheduler::takeover::monitor::take_over(shared, 0, seen, None)
            == crate::scheduler::takeover::monitor::Takeover::Done
}

/// crew's real paused clock (`src/clock.rs`): its count of work in flight and its timers, for
/// model checking.
#[derive(Debug)]
pub struct PausedClock(crate::clock::ClockRef);

#[allow(missing_docs)]
impl PausedClock {
    pub fn new(start: std::time::Instant) -> PausedClock {
        PausedClock(crate::clock::ClockRef::new(crate::clock::PausedClock::new(start)))
    }
    pub fn now(&self) -> std::time::Instant {
        self.0.now()
    }
    pub fn timer_made(&self) -> u64 {
        self.0.timer_made()
    }
    /// True if due; else `cx`'s waker is filed under `deadline` (`filed` says where).
    pub fn poll_timer(
        &self,
        deadline: std::time::Instant,
        number: u64,
        filed: &mut Option<std::time::Instant>,
        cx: &mut std::task::Context<'_>,
    ) -> bool {
        self.0.poll_timer(deadline, number, filed, cx)
    }
    pub fn cancel_timer(&self, number: u64, filed: &mut Option<std::time::Instant>) {
        self.0.cancel_timer(number, filed)
    }
    pub fn poll_advance(&self, target: std::time::Instant, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        self.0.poll_advance(target, cx)
    }
    pub fn begin_work(&self) {
        self.0.begin_work()
    }
    pub fn end_work(&self) {
        self.0.end_work()
    }
    /// Units of work in flight.
    pub fn busy(&self) -> usize {
        self.0.busy()
    }
    /// A paused pool's task entering `block_on` (`src/block_on.rs`): the unit of work the caller
    /// holds goes to the first poll of the counted future (`CountPolls::with_unit`), which runs
    /// `poll`; returns what `poll` returned, that unit ended.
    pub fn block_on_first_poll<T>(&self, poll: impl FnOnce() -> T + Unpin) -> T {
        struct Noop;
        impl std::task::Wake for Noop {
            fn wake(self: std::sync::Arc<Self>) {}
        }
        let mut poll = Some(poll);
        let future = std::future::poll_fn(move |_| std::task::Poll::Ready((poll.take().expect("polled once"))()));
        let mut counted = crate::clock::CountPolls::with_unit(future, self.0.clone());
        let waker = std::task::Waker::from(std::sync::Arc::new(Noop));
        match std::future::Future::poll(std::pin::Pin::new(&mut counted), &mut std::task::Context::from_waker(&waker)) {
            std::task::Poll::Ready(value) => value,
            std::task::Poll::Pending => unreachable!("the future is ready at its first poll"),
        }
    }
}

/// Makes this execution's I/O driver (`src/driver/loom_poller.rs`, a fake poller): from then on,
/// a [`DrivingParker`] waits in it when it is free.
pub fn make_driver() {
    crate::driver::make_driver();
}

/// How many turns of the fake driver waited and were woken, this execution.
pub fn driver_turns() -> usize {
    *crate::sync::lock(&crate::driver::make_driver().turns)
}

/// crew's real parker of a thread that waits in the driver when it is free
/// (`src/driver/park.rs`), for model checking.
#[derive(Debug, Default)]
pub struct DrivingParker(crate::driver::DrivingParker);

/// Its unparker.
#[derive(Debug, Clone)]
pub struct DrivingUnparker(crate::driver::DrivingUnparker);

#[allow(missing_docs)]
impl DrivingParker {
    pub fn new() -> DrivingParker {
        DrivingParker(crate::driver::DrivingParker::new())
    }
    /// Parks as a plain thread (hands the driver on as it leaves it).
    pub fn park(&self) {
        self.0.park();
    }
    /// Parks as a pool's worker (keeps the driver to itself as it leaves it).
    pub fn park_as_worker(&self) {
        self.0.park_as(crate::driver::Role::Worker);
    }
    pub fn unparker(&self) -> DrivingUnparker {
        DrivingUnparker(self.0.unparker().clone())
    }
}

#[allow(missing_docs)]
impl DrivingUnparker {
    pub fn unpark(&self) {
        self.0.unpark();
    }
}

/// A source's readiness and waiters (`src/driver/scheduled_io.rs`), for model checking: a task
/// reads; the driver's events may be in either direction.
#[derive(Debug, Default)]
pub struct Readiness(crate::driver::ScheduledIo);

/// What a look at a [`Readiness`] saw, to clear after a `WouldBlock`.
#[derive(Debug, Clone, Copy)]
pub struct Seen(crate::driver::ReadyEvent);

#[allow(missing_docs)]
impl Readiness {
    pub fn new() -> Readiness {
        Readiness::default()
    }
    /// The driver's event: readable.
    pub fn set_readable(&self) {
        self.0.set_readiness(crate::driver::Ready::READABLE);
    }
    /// The driver's event: writable (the socket's send buffer has room again).
    pub fn set_writable(&self) {
        self.0.set_readiness(crate::driver::Ready::WRITABLE);
    }
    /// True if the write direction is ready.
    pub fn is_writable(&self) -> bool {
        self.0.ready_now(crate::driver::Direction::Write).is_some()
    }
    /// A task's look: what it saw, if readable.
    pub fn look(&self) -> Option<Seen> {
        self.0.ready_now(crate::driver::Direction::Read).map(Seen)
    }
    /// The task's read said `WouldBlock`: clears what it saw.
    pub fn clear(&self, seen: Seen) {
        self.0.clear_readiness(seen.0);
    }
    /// The task's wait: ready, or its waker stored.
    pub fn poll_readable(&self, cx: &mut std::task::Context<'_>) -> bool {
        self.0.poll_ready(crate::driver::Direction::Read, cx).is_ready()
    }
}
