//! A paused pool's clock ([`Builder::start_paused`](crate::Builder::start_paused)): virtual
//! time that moves only when told (`crew::time::advance`) or when the pool has nothing else to
//! do, and the count of the pool's work in flight that says when that is.
//!
//! Invariants:
//! - **Work in flight** ([`PausedClock::begin_work`], [`PausedClock::end_work`]): one unit per
//!   task of the pool scheduled and not yet done with that run (counted by its schedule, given
//!   back after its run: `scheduler/cores/task_run.rs`'s `run_task`), per poll of the pool's
//!   `block_on` and per wake of it not yet polled, per blocking job of the pool's own not yet
//!   finished, and per firing under way. A unit is taken before what it stands for can be seen
//!   by another thread, and given back after everything it did (a task's wakes of others, their
//!   schedules included) is done, so the count never reaches zero while anything of the pool can
//!   still run without an outside event (a real socket, a thread of the user's own). A task's
//!   unit may be handed on rather than given back and taken again ([`CountPolls::with_unit`]: a
//!   task that blocks in `block_on`), so that no instant of zero falls between the two.
//! - **The clock moves only at zero** ([`settle`](PausedClock::settle), run by whichever thread
//!   gave back the last unit), under `state`'s lock, re-checking the count there: to the next
//!   deadline (auto-advance), but never past the smallest target of an `advance` that waits;
//!   then to that target, which completes that `advance`. `now` never goes back.
//! - **Timers fire in deadline order, and in the order they were made at one instant**: the map
//!   is keyed by (deadline, the timer's number, taken when it was made). A firing takes the
//!   timers due at the new instant out of the map under the lock, holds one unit of work while
//!   it wakes them outside the lock (no second firing can begin before the tasks it woke are
//!   counted), and wakes them in key order.
//! - A timer in the map has a deadline after `now` (a timer due at its poll is not inserted); a
//!   timer dropped or reset takes its entry out at once, so the clock never jumps to an instant
//!   nobody waits for.
//! - No user code runs under the lock: wakers are cloned in and woken outside it (a waker's
//!   `clone` and `drop` are the only user code the lock may see: crew's own wakers, async-task's
//!   and `block_on`'s, take no lock of the clock's).

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use crate::sync::{lock, planted_bug, AtomicU8, AtomicUsize, Mutex, Ordering};

/// How a clock is shared: a `std` `Arc` under loom too, since a task's identity holds it
/// (`identity/info.rs`, whose out-of-line part is a `std` `Arc`); what it carries, the lock
/// and the count, is `sync`'s.
pub(crate) type ClockRef = std::sync::Arc<PausedClock>;

/// A paused pool's virtual clock and its count of work in flight (see the module docs).
pub(crate) struct PausedClock {
    /// Units of work in flight.
    busy: AtomicUsize,
    state: Mutex<State>,
}

struct State {
    now: Instant,
    /// Waiting timers by (deadline, number).
    timers: BTreeMap<(Instant, u64), Waker>,
    /// The next timer's number.
    made: u64,
    /// `advance` calls waiting: their targets and wakers.
    advances: Vec<(Instant, Waker)>,
}

impl fmt::Debug for PausedClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("PausedClock")
            .field("now", &state.now)
            .field("timers", &state.timers.len())
            .field("busy", &self.busy())
            .finish()
    }
}

impl PausedClock {
    /// A clock that reads `start` until it is moved.
    pub(crate) fn new(start: Instant) -> PausedClock {
        PausedClock {
            busy: AtomicUsize::new(0),
            state: Mutex::new(State { now: start, timers: BTreeMap::new(), made: 0, advances: Vec::new() }),
        }
    }

    /// The virtual now.
    pub(crate) fn now(&self) -> Instant {
        lock(&self.state).now
    }

    /// A new timer's number: its place among timers due at the same instant.
    pub(crate) fn timer_made(&self) -> u64 {
        let mut state = lock(&self.state);
        state.made += 1;
        state.made
    }

    /// Polls the timer `number`, due at `deadline`: true if due (its entry, if any, taken out);
    /// else its entry holds `cx`'s waker, and `registered` the deadline it is filed under.
    pub(crate) fn poll_timer(
        &self,
        deadline: Instant,
        number: u64,
        registered: &mut Option<Instant>,
        cx: &mut Context<'_>,
    ) -> bool {
        let mut state = lock(&self.state);
        // A waker taken out here is dropped after the lock (a waker's drop may drop a task).
        let mut stale = None;
        if let Some(filed) = registered.take() {
            if filed != deadline || state.now >= deadline {
                stale = state.timers.remove(&(filed, number));
            } else {
                *registered = Some(filed);
            }
        }
        let due = state.now >= deadline;
        if !due {
            match state.timers.get_mut(&(deadline, number)) {
                Some(waker) if waker.will_wake(cx.waker()) => {}
                Some(waker) => stale = Some(std::mem::replace(waker, cx.waker().clone())),
                None => {
                    state.timers.insert((deadline, number), cx.waker().clone());
                }
            }
            *registered = Some(deadline);
        }
        drop(state);
        drop(stale);
        due
    }

    /// Takes the timer `number`'s entry out, filed under `registered` (a drop, a reset).
    pub(crate) fn cancel_timer(&self, number: u64, registered: &mut Option<Instant>) {
        if let Some(filed) = registered.take() {
            let waker = lock(&self.state).timers.remove(&(filed, number));
            // Dropped outside the lock.
            drop(waker);
        }
    }

    /// Polls an `advance` to `target`: ready once the clock reads `target` or later; else it
    /// waits (listed with `cx`'s waker), and the clock moves no further than `target` meanwhile.
    pub(crate) fn poll_advance(&self, target: Instant, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = lock(&self.state);
        if state.now >= target {
            return Poll::Ready(());
        }
        match state.advances.iter_mut().find(|(at, waker)| *at == target && waker.will_wake(cx.waker())) {
            Some(_) => {}
            None => state.advances.push((target, cx.waker().clone())),
        }
        Poll::Pending
    }

    /// Units of work in flight now.
    pub(crate) fn busy(&self) -> usize {
        self.busy.load(Ordering::SeqCst)
    }

    /// One unit of work begins (see the module docs).
    #[inline]
    pub(crate) fn begin_work(&self) {
        // SeqCst: `settle` reads the count under the lock, against a begin on another thread.
        self.busy.fetch_add(1, Ordering::SeqCst);
    }

    /// One unit of work ends; the last one lets the clock move.
    #[inline]
    pub(crate) fn end_work(&self) {
        if self.busy.fetch_sub(1, Ordering::SeqCst) == 1 || planted_bug!("clock_moves_while_busy") {
            self.settle();
        }
    }

    /// The pool is idle: moves the clock (see the module docs) and wakes what is due, until
    /// what it woke is at work or nothing is due.
    fn settle(&self) {
        loop {
            let due = {
                let mut state = lock(&self.state);
                if self.busy.load(Ordering::SeqCst) != 0 && !planted_bug!("clock_moves_while_busy") {
                    return;
                }
                let bound = state.advances.iter().map(|(target, _)| *target).min();
                let next = state.timers.keys().next().map(|(deadline, _)| *deadline);
                let to = match (next, bound) {
                    (Some(next), Some(bound)) => next.min(bound),
                    (Some(next), None) => next,
                    (None, Some(bound)) => bound,
                    (None, None) => return,
                };
                state.now = state.now.max(to);
                let now = state.now;
                let mut due = Vec::new();
                while let Some(entry) = state.timers.first_entry() {
                    if entry.key().0 > now {
                        break;
                    }
                    due.push(entry.remove());
                }
                let mut index = 0;
                while index < state.advances.len() {
                    if state.advances[index].0 <= now {
                        due.push(state.advances.remove(index).1);
                    } else {
                        index += 1;
                    }
                }
                self.begin_work();
                due
            };
            for waker in due {
                waker.wake();
            }
            if self.busy.fetch_sub(1, Ordering::SeqCst) != 1 {
                return;
            }
        }
    }
}

/// A future whose polls, and the wakes that lead to them, count as work of `clock`'s pool: a
/// paused pool's `block_on`.
pub(crate) struct CountPolls<F> {
    future: F,
    clock: ClockRef,
    wake: std::sync::Arc<WakeState>,
}

impl<F> CountPolls<F> {
    /// `future`, whose polls count as work of `clock`'s pool.
    pub(crate) fn new(future: F, clock: ClockRef) -> CountPolls<F> {
        let wake = std::sync::Arc::new(WakeState { clock: clock.clone(), state: AtomicU8::new(IDLE) });
        CountPolls { future, clock, wake }
    }

    /// As [`new`](CountPolls::new), its first poll the unit of work the caller holds, handed
    /// over (a paused pool's task that blocks its thread in `block_on`): neither given back
    /// nor taken again, so the clock cannot move between the caller's work and that poll. The
    /// unit ends with the first poll, or with the future if it is dropped unpolled.
    pub(crate) fn with_unit(future: F, clock: ClockRef) -> CountPolls<F> {
        if planted_bug!("block_on_gives_back_first") {
            // The bug the hand-over rules out: the unit given back, and the first poll's taken
            // anew, with the clock free to move in between.
            clock.end_work();
            return CountPolls::new(future, clock);
        }
        let wake = std::sync::Arc::new(WakeState { clock: clock.clone(), state: AtomicU8::new(WOKEN) });
        CountPolls { future, clock, wake }
    }
}

/// Not woken since the last poll.
const IDLE: u8 = 0;
/// Woken (or made with a unit handed over), its unit of work taken: the next poll is that
/// unit's.
const WOKEN: u8 = 1;
/// The future is gone: wakes count nothing.
const DONE: u8 = 2;

struct WakeState {
    clock: ClockRef,
    state: AtomicU8,
}

/// The waker a counted future is polled with: takes a unit of work for the poll it leads to,
/// then wakes `inner`.
struct CountingWaker {
    wake: std::sync::Arc<WakeState>,
    inner: Waker,
}

impl Wake for CountingWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        // The unit first, so that it is held as soon as the state says woken.
        self.wake.clock.begin_work();
        // SeqCst: the poll's and the drop's swaps read this against the unit just taken.
        if self.wake.state.compare_exchange(IDLE, WOKEN, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            self.wake.clock.end_work();
        }
        self.inner.wake_by_ref();
    }
}

impl<F: Future + Unpin> Future for CountPolls<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        // A wake took this poll's unit already; else it is taken now.
        if this.wake.state.compare_exchange(WOKEN, IDLE, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            this.clock.begin_work();
        }
        let waker =
            Waker::from(std::sync::Arc::new(CountingWaker { wake: this.wake.clone(), inner: cx.waker().clone() }));
        let polled = Pin::new(&mut this.future).poll(&mut Context::from_waker(&waker));
        this.clock.end_work();
        polled
    }
}

impl<F> Drop for CountPolls<F> {
    fn drop(&mut self) {
        if self.wake.state.swap(DONE, Ordering::SeqCst) == WOKEN {
            self.clock.end_work();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize as StdCount;
    use std::time::Duration;

    struct Count(StdCount);

    impl Wake for Count {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counting() -> (std::sync::Arc<Count>, Waker) {
        let count = std::sync::Arc::new(Count(StdCount::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn the_clock_jumps_to_the_next_deadline_only_when_idle() {
        let start = Instant::now();
        let clock = PausedClock::new(start);
        let (woken, waker) = counting();
        let mut cx = Context::from_waker(&waker);
        let number = clock.timer_made();
        let mut filed = None;
        clock.begin_work();
        assert!(!clock.poll_timer(start + Duration::from_secs(60), number, &mut filed, &mut cx));
        assert_eq!(clock.now(), start, "busy: the clock stays");
        clock.end_work();
        assert_eq!(clock.now(), start + Duration::from_secs(60));
        assert_eq!(woken.0.load(Ordering::SeqCst), 1);
        assert!(clock.poll_timer(start + Duration::from_secs(60), number, &mut filed, &mut cx));
    }

    #[test]
    fn timers_of_one_instant_fire_in_the_order_they_were_made() {
        let start = Instant::now();
        let clock = PausedClock::new(start);
        let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        struct Log(u64, std::sync::Arc<std::sync::Mutex<Vec<u64>>>);
        impl Wake for Log {
            fn wake(self: std::sync::Arc<Self>) {
                self.1.lock().unwrap().push(self.0);
            }
        }
        let at = start + Duration::from_secs(1);
        let numbers: Vec<u64> = (0..3).map(|_| clock.timer_made()).collect();
        clock.begin_work();
        // Registered in the reverse order of their making, one earlier timer last.
        for &number in numbers.iter().rev() {
            let waker = Waker::from(std::sync::Arc::new(Log(number, order.clone())));
            assert!(!clock.poll_timer(at, number, &mut None, &mut Context::from_waker(&waker)));
        }
        let early = clock.timer_made();
        let waker = Waker::from(std::sync::Arc::new(Log(early, order.clone())));
        assert!(!clock.poll_timer(
            start + Duration::from_millis(1),
            early,
            &mut None,
            &mut Context::from_waker(&waker)
        ));
        clock.end_work();
        assert_eq!(*order.lock().unwrap(), vec![early, numbers[0], numbers[1], numbers[2]]);
    }

    /// A waker that schedules work, as a task's does: each wake begins a unit.
    struct Schedules(ClockRef, StdCount);

    impl Wake for Schedules {
        fn wake(self: std::sync::Arc<Self>) {
            self.1.fetch_add(1, Ordering::SeqCst);
            self.0.begin_work();
        }
    }

    #[test]
    fn an_advance_holds_the_clock_at_its_target() {
        let start = Instant::now();
        let clock = std::sync::Arc::new(PausedClock::new(start));
        let task = std::sync::Arc::new(Schedules(clock.clone(), StdCount::new(0)));
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        let number = clock.timer_made();
        clock.begin_work();
        assert!(!clock.poll_timer(start + Duration::from_secs(10), number, &mut None, &mut cx));
        assert!(clock.poll_advance(start + Duration::from_secs(3), &mut cx).is_pending());
        clock.end_work();
        assert_eq!(clock.now(), start + Duration::from_secs(3), "not past the advance's target");
        assert_eq!(task.1.load(Ordering::SeqCst), 1, "the advance was woken, not the timer");
        assert!(clock.poll_advance(start + Duration::from_secs(3), &mut cx).is_ready());
        // The woken task's run ends: the clock goes on to the timer.
        clock.end_work();
        assert_eq!(clock.now(), start + Duration::from_secs(10));
        assert_eq!(task.1.load(Ordering::SeqCst), 2);
        clock.end_work();
    }

    #[test]
    fn a_cancelled_timer_moves_nothing() {
        let start = Instant::now();
        let clock = PausedClock::new(start);
        let (_, waker) = counting();
        let number = clock.timer_made();
        let mut filed = None;
        clock.begin_work();
        assert!(!clock.poll_timer(
            start + Duration::from_secs(5),
            number,
            &mut filed,
            &mut Context::from_waker(&waker)
        ));
        clock.cancel_timer(number, &mut filed);
        clock.end_work();
        assert_eq!(clock.now(), start);
    }
}
