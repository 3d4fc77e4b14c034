//! A registered source's readiness and the tasks waiting on it ([`ScheduledIo`]).
//!
//! Invariants:
//! - **The readiness word** holds the directions the driver saw ready ([`Ready`]'s bits) and a
//!   *tick* per direction. An event ORs its bits in and moves the tick of each direction whose
//!   bits it carries ([`Direction::mask`]); a task that tried the syscall and got `WouldBlock`
//!   clears the bits it acted on only if its direction's tick is the one its readiness came with
//!   ([`ScheduledIo::clear_readiness`]): an edge in that direction that arrived after it looked
//!   (a new tick) is never cleared, so the next look sees it and tries again. An edge in the
//!   other direction sets none of the bits the clear takes away, so it leaves the clear alone
//!   (one tick for both, as tokio's, would keep a drained read's stale readiness whenever the
//!   socket turned writable meanwhile, and cost the next read a failed syscall). The closed bits
//!   are never cleared: a closed direction stays closed.
//! - **No lost wakeup.** A task that finds no readiness stores its waker under the waiters'
//!   lock, then looks at the word again under that lock ([`ScheduledIo::poll_ready`]); an event
//!   updates the word first, then takes the wakers under the same lock
//!   ([`ScheduledIo::set_readiness`]). So either the task's second look sees the event, or the
//!   event finds the waker.
//! - **Waiters**: one waker per direction for the `poll_*` path (as tokio's, the last poll's
//!   waker wins: a stream polled for reads from two tasks at once wakes the last), and a list
//!   for the `readable()`/`writable()` futures, which may be many at once (`&TcpStream` is
//!   shared). Wakers are taken under the lock and woken after it.
//! - **Shutdown**: a source whose driver is gone, or which was deregistered, reads as ready in
//!   every direction with [`Ready::SHUTDOWN`] set, so no task waits on it forever; its callers
//!   turn that into an error.

use std::fmt;
use std::task::{Context, Poll, Waker};

use crate::sync::{lock, planted_bug, AtomicUsize, Mutex, Ordering};

/// Readiness bits of a source (a set of them).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Ready(usize);

impl Ready {
    /// Nothing is ready.
    pub(crate) const EMPTY: Ready = Ready(0);
    /// A read would not block.
    pub(crate) const READABLE: Ready = Ready(1);
    /// A write would not block.
    pub(crate) const WRITABLE: Ready = Ready(1 << 1);
    /// The peer closed its write side (reads give end of stream).
    pub(crate) const READ_CLOSED: Ready = Ready(1 << 2);
    /// The write side is closed (writes fail).
    pub(crate) const WRITE_CLOSED: Ready = Ready(1 << 3);
    /// The source has an error pending (the syscall will return it).
    pub(crate) const ERROR: Ready = Ready(1 << 4);
    /// The driver is gone or the source was deregistered: nothing will ever be ready again.
    pub(crate) const SHUTDOWN: Ready = Ready(1 << 5);

    const MASK: usize = (1 << 6) - 1;

    /// Every bit of `self` and of `other`.
    pub(crate) const fn union(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }

    /// The bits of `self` that are in `other`.
    pub(crate) const fn intersection(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }

    /// True if no bit is set.
    pub(crate) const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True if every bit of `other` is set.
    pub(crate) const fn contains(self, other: Ready) -> bool {
        self.0 & other.0 == other.0
    }

    /// The bits of `self` without those of `other`.
    pub(crate) const fn without(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (Ready::READABLE, "READABLE"),
            (Ready::WRITABLE, "WRITABLE"),
            (Ready::READ_CLOSED, "READ_CLOSED"),
            (Ready::WRITE_CLOSED, "WRITE_CLOSED"),
            (Ready::ERROR, "ERROR"),
            (Ready::SHUTDOWN, "SHUTDOWN"),
        ];
        let mut set = f.debug_set();
        for (bit, name) in names {
            if self.contains(bit) {
                set.entry(&format_args!("{name}"));
            }
        }
        set.finish()
    }
}

/// A direction a task waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    /// The bits that end a wait in this direction: the direction's own readiness, its closing,
    /// an error, shutdown.
    pub(crate) const fn mask(self) -> Ready {
        match self {
            Direction::Read => Ready(Ready::READABLE.0 | Ready::READ_CLOSED.0 | Ready::ERROR.0 | Ready::SHUTDOWN.0),
            Direction::Write => Ready(Ready::WRITABLE.0 | Ready::WRITE_CLOSED.0 | Ready::ERROR.0 | Ready::SHUTDOWN.0),
        }
    }
}

/// Readiness seen by a task in one direction, with that direction's tick: what
/// [`ScheduledIo::clear_readiness`] takes back after a `WouldBlock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadyEvent {
    pub(crate) ready: Ready,
    direction: Direction,
    tick: usize,
}

/// The read tick's place in the word: above the readiness bits. The write tick is above it.
/// Each takes half of what is left (28 bits on a 64-bit target, 12 on a 32-bit one) and wraps.
const TICK_SHIFT: u32 = 8;
const TICK_BITS: u32 = (usize::BITS - TICK_SHIFT) / 2;
const TICK_MASK: usize = (1 << TICK_BITS) - 1;

/// Where `direction`'s tick sits in the word.
const fn tick_shift(direction: Direction) -> u32 {
    match direction {
        Direction::Read => TICK_SHIFT,
        Direction::Write => TICK_SHIFT + TICK_BITS,
    }
}

fn tick_of(word: usize, direction: Direction) -> usize {
    (word >> tick_shift(direction)) & TICK_MASK
}

/// `word` with `direction`'s tick moved on by one.
fn tick_moved(word: usize, direction: Direction) -> usize {
    let shift = tick_shift(direction);
    let tick = (tick_of(word, direction) + 1) & TICK_MASK;
    (word & !(TICK_MASK << shift)) | (tick << shift)
}

fn ready_of(word: usize) -> Ready {
    Ready(word & Ready::MASK)
}

/// A source's readiness and waiters (see the module docs).
pub(crate) struct ScheduledIo {
    readiness: AtomicUsize,
    waiters: Mutex<Waiters>,
}

/// The tasks waiting on a source.
#[derive(Default)]
struct Waiters {
    /// The `poll_*` path's reader and writer.
    reader: Option<Waker>,
    writer: Option<Waker>,
    /// `readable()` and `writable()` futures, by id.
    list: Vec<(u64, Direction, Waker)>,
    /// The next future's id.
    next: u64,
}

impl fmt::Debug for ScheduledIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = self.readiness.load(Ordering::Relaxed);
        f.debug_struct("ScheduledIo")
            .field("ready", &ready_of(word))
            .field("read_tick", &tick_of(word, Direction::Read))
            .field("write_tick", &tick_of(word, Direction::Write))
            .finish()
    }
}

impl Default for ScheduledIo {
    fn default() -> ScheduledIo {
        ScheduledIo { readiness: AtomicUsize::new(0), waiters: Mutex::new(Waiters::default()) }
    }
}

impl ScheduledIo {
    /// What is ready in `direction` now, if anything (no waker stored).
    pub(crate) fn ready_now(&self, direction: Direction) -> Option<ReadyEvent> {
        // Acquire: pairs with `set_readiness`'s release; the syscall that follows sees the
        // event's cause.
        let word = self.readiness.load(Ordering::Acquire);
        let ready = ready_of(word).intersection(direction.mask());
        (!ready.is_empty()).then_some(ReadyEvent { ready, direction, tick: tick_of(word, direction) })
    }

    /// Ready with what is ready in `direction`; else `Pending` with `cx`'s waker stored as that
    /// direction's `poll_*` waker (see the module docs).
    pub(crate) fn poll_ready(&self, direction: Direction, cx: &mut Context<'_>) -> Poll<ReadyEvent> {
        if let Some(event) = self.ready_now(direction) {
            return Poll::Ready(event);
        }
        let mut waiters = lock(&self.waiters);
        let slot = match direction {
            Direction::Read => &mut waiters.reader,
            Direction::Write => &mut waiters.writer,
        };
        let stale = match slot {
            Some(waker) if waker.will_wake(cx.waker()) => None,
            _ => slot.replace(cx.waker().clone()),
        };
        // The second look, under the lock (see the module docs).
        let event = self.ready_now(direction);
        drop(waiters);
        drop(stale);
        match event {
            Some(event) => Poll::Ready(event),
            None => Poll::Pending,
        }
    }

    /// A new waiter's id for [`poll_waiter`](ScheduledIo::poll_waiter).
    pub(crate) fn waiter_id(&self) -> u64 {
        let mut waiters = lock(&self.waiters);
        waiters.next += 1;
        waiters.next
    }

    /// As [`poll_ready`](ScheduledIo::poll_ready), for the waiter `id` of the list (a
    /// `readable()` or `writable()` future): its entry holds `cx`'s waker while it waits.
    pub(crate) fn poll_waiter(&self, id: u64, direction: Direction, cx: &mut Context<'_>) -> Poll<ReadyEvent> {
        if let Some(event) = self.ready_now(direction) {
            self.forget_waiter(id);
            return Poll::Ready(event);
        }
        let mut waiters = lock(&self.waiters);
        let stale = match waiters.list.iter_mut().find(|(entry, ..)| *entry == id) {
            Some((_, _, waker)) if waker.will_wake(cx.waker()) => None,
            Some((_, _, waker)) => Some(std::mem::replace(waker, cx.waker().clone())),
            None => {
                waiters.list.push((id, direction, cx.waker().clone()));
                None
            }
        };
        let event = self.ready_now(direction);
        if event.is_some() {
            waiters.list.retain(|(entry, ..)| *entry != id);
        }
        drop(waiters);
        drop(stale);
        match event {
            Some(event) => Poll::Ready(event),
            None => Poll::Pending,
        }
    }

    /// Takes the waiter `id`'s entry out (the future is done or dropped).
    pub(crate) fn forget_waiter(&self, id: u64) {
        let removed = {
            let mut waiters = lock(&self.waiters);
            let index = waiters.list.iter().position(|(entry, ..)| *entry == id);
            index.map(|index| waiters.list.swap_remove(index))
        };
        // Dropped outside the lock: a waker's drop may drop a task.
        drop(removed);
    }

    /// Clears what `event` said is ready, unless an event came since in its direction (that
    /// direction's tick moved on): after the syscall returned `WouldBlock`. The closed bits and
    /// shutdown stay.
    pub(crate) fn clear_readiness(&self, event: ReadyEvent) {
        let clear = event.ready.without(Ready::READ_CLOSED.union(Ready::WRITE_CLOSED).union(Ready::SHUTDOWN));
        // AcqRel: ordered against `set_readiness`'s update of the same word; a failed update
        // (a new tick) leaves the word alone.
        let _ = self.readiness.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
            (tick_of(word, event.direction) == event.tick || planted_bug!("clear_ignores_tick"))
                .then_some(word & !clear.0)
        });
    }

    /// Adds `ready`, moving on the tick of each direction it concerns, and wakes every waiter
    /// it concerns. Called by the driver for an event, and with [`Ready::SHUTDOWN`] at
    /// deregistration and driver shutdown.
    pub(crate) fn set_readiness(&self, ready: Ready) {
        let concerns = |direction: Direction| !ready.intersection(direction.mask()).is_empty();
        // The planted bug moves the write tick alone, whatever the event: a read edge that came
        // between a task's look and its clear is cleared with the readiness it looked at.
        let read = concerns(Direction::Read) && !planted_bug!("read_edge_moves_write_tick");
        let write = concerns(Direction::Write) || planted_bug!("read_edge_moves_write_tick");
        // AcqRel: the release pairs with the waiters' acquire loads; the ticks make each event
        // a new value in the directions it concerns (see the module docs).
        let _ = self.readiness.fetch_update(Ordering::AcqRel, Ordering::Acquire, |mut word| {
            if read {
                word = tick_moved(word, Direction::Read);
            }
            if write {
                word = tick_moved(word, Direction::Write);
            }
            Some(word | ready.0)
        });
        self.wake(ready);
    }

    /// Wakes the waiters that `ready` ends: taken under the lock, woken after it.
    fn wake(&self, ready: Ready) {
        let mut woken: Vec<Waker> = Vec::new();
        {
            let mut waiters = lock(&self.waiters);
            let concerns = |direction: Direction| !ready.intersection(direction.mask()).is_empty();
            if concerns(Direction::Read) {
                woken.extend(waiters.reader.take());
            }
            if concerns(Direction::Write) {
                woken.extend(waiters.writer.take());
            }
            if !waiters.list.is_empty() {
                let mut index = 0;
                while index < waiters.list.len() {
                    if concerns(waiters.list[index].1) {
                        woken.push(waiters.list.swap_remove(index).2);
                    } else {
                        index += 1;
                    }
                }
            }
        }
        for waker in woken {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize as Count;
    use std::sync::Arc;
    use std::task::Wake;

    use super::*;

    #[derive(Default)]
    struct Woken(Count);

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Woken>, Waker) {
        let woken = Arc::new(Woken::default());
        (woken.clone(), Waker::from(woken))
    }

    #[test]
    fn a_waiting_reader_is_woken_by_a_read_event_and_not_by_a_write_event() {
        let io = ScheduledIo::default();
        let (woken, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        assert!(io.poll_ready(Direction::Read, &mut cx).is_pending());
        io.set_readiness(Ready::WRITABLE);
        assert_eq!(woken.0.load(Ordering::SeqCst), 0);
        io.set_readiness(Ready::READABLE);
        assert_eq!(woken.0.load(Ordering::SeqCst), 1);
        let event = match io.poll_ready(Direction::Read, &mut cx) {
            Poll::Ready(event) => event,
            Poll::Pending => panic!("readable"),
        };
        assert_eq!(event.ready, Ready::READABLE);
    }

    #[test]
    fn a_clear_keeps_an_edge_that_came_after_the_look() {
        let io = ScheduledIo::default();
        io.set_readiness(Ready::READABLE);
        let seen = io.ready_now(Direction::Read).expect("readable");
        // An edge arrives while the task's read fails with `WouldBlock`.
        io.set_readiness(Ready::READABLE);
        io.clear_readiness(seen);
        assert!(io.ready_now(Direction::Read).is_some(), "the later edge survives the clear");
        let again = io.ready_now(Direction::Read).unwrap();
        io.clear_readiness(again);
        assert!(io.ready_now(Direction::Read).is_none());
    }

    #[test]
    fn a_write_edge_during_a_failed_read_leaves_the_clear_alone() {
        let io = ScheduledIo::default();
        io.set_readiness(Ready::READABLE.union(Ready::WRITABLE));
        let seen = io.ready_now(Direction::Read).expect("readable");
        // The socket turns writable (again) while the task's read fails with `WouldBlock`.
        io.set_readiness(Ready::WRITABLE);
        io.clear_readiness(seen);
        assert!(io.ready_now(Direction::Read).is_none(), "a write edge kept a drained read's readiness");
        assert_eq!(io.ready_now(Direction::Write).unwrap().ready, Ready::WRITABLE, "the write edge stays");
        // And the other way round: a read edge leaves a failed write's clear alone.
        let seen = io.ready_now(Direction::Write).unwrap();
        io.set_readiness(Ready::READABLE);
        io.clear_readiness(seen);
        assert!(io.ready_now(Direction::Write).is_none());
        assert!(io.ready_now(Direction::Read).is_some());
    }

    #[test]
    fn an_error_moves_both_ticks() {
        let io = ScheduledIo::default();
        io.set_readiness(Ready::READABLE.union(Ready::WRITABLE));
        let read = io.ready_now(Direction::Read).unwrap();
        let write = io.ready_now(Direction::Write).unwrap();
        io.set_readiness(Ready::READABLE.union(Ready::WRITABLE).union(Ready::ERROR));
        io.clear_readiness(read);
        io.clear_readiness(write);
        assert!(io.ready_now(Direction::Read).unwrap().ready.contains(Ready::READABLE.union(Ready::ERROR)));
        assert!(io.ready_now(Direction::Write).unwrap().ready.contains(Ready::WRITABLE.union(Ready::ERROR)));
    }

    #[test]
    fn each_tick_wraps_within_its_own_bits() {
        // Both ticks at their last value: one more step wraps each to 0 without touching the
        // other's bits or the readiness bits.
        let last = Ready::READABLE.0
            | (TICK_MASK << tick_shift(Direction::Read))
            | (TICK_MASK << tick_shift(Direction::Write));
        assert_eq!(tick_of(last, Direction::Read), TICK_MASK);
        let word = tick_moved(last, Direction::Read);
        assert_eq!(tick_of(word, Direction::Read), 0, "wrapped round");
        assert_eq!(tick_of(word, Direction::Write), TICK_MASK, "the write tick did not move");
        assert_eq!(ready_of(word), Ready::READABLE);
        let word = tick_moved(word, Direction::Write);
        assert_eq!((tick_of(word, Direction::Read), tick_of(word, Direction::Write)), (0, 0));
        assert_eq!(ready_of(word), Ready::READABLE);
        // The write tick's top bit is the word's: nothing is lost above it.
        assert_eq!(tick_shift(Direction::Write) + TICK_BITS, usize::BITS);
    }

    #[test]
    fn closed_and_shutdown_bits_are_never_cleared() {
        let io = ScheduledIo::default();
        io.set_readiness(Ready::READABLE.union(Ready::READ_CLOSED));
        let seen = io.ready_now(Direction::Read).unwrap();
        io.clear_readiness(seen);
        assert_eq!(io.ready_now(Direction::Read).unwrap().ready, Ready::READ_CLOSED);
        io.set_readiness(Ready::SHUTDOWN);
        let seen = io.ready_now(Direction::Write).unwrap();
        io.clear_readiness(seen);
        assert!(io.ready_now(Direction::Write).unwrap().ready.contains(Ready::SHUTDOWN));
    }

    #[test]
    fn every_listed_waiter_of_a_direction_is_woken_and_a_forgotten_one_is_not() {
        let io = ScheduledIo::default();
        let wakers: Vec<_> = (0..3).map(|_| waker()).collect();
        let ids: Vec<u64> = (0..3).map(|_| io.waiter_id()).collect();
        for ((_, waker), id) in wakers.iter().zip(&ids) {
            assert!(io.poll_waiter(*id, Direction::Write, &mut Context::from_waker(waker)).is_pending());
        }
        io.forget_waiter(ids[1]);
        io.set_readiness(Ready::WRITABLE);
        let counts: Vec<usize> = wakers.iter().map(|(woken, _)| woken.0.load(Ordering::SeqCst)).collect();
        assert_eq!(counts, [1, 0, 1]);
    }
}
