//! A registered source's readiness and the tasks waiting on it ([`ScheduledIo`]).
//!
//! Invariants:
//! - **The readiness word** holds the directions the driver saw ready ([`Ready`]'s bits) and a
//!   *tick* that every event moves on. An event ORs its bits in and moves the tick; a task that
//!   tried the syscall and got `WouldBlock` clears the bits it acted on only if the tick is the
//!   one its readiness came with ([`ScheduledIo::clear_readiness`]): an edge that arrived after
//!   it looked (a new tick) is never cleared, so the next look sees it and tries again. The
//!   closed bits are never cleared: a closed direction stays closed.
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

/// Readiness seen by a task, with the tick it came with: what [`ScheduledIo::clear_readiness`]
/// takes back after a `WouldBlock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadyEvent {
    pub(crate) ready: Ready,
    tick: usize,
}

/// The tick's place in the word: above the readiness bits, wrapping.
const TICK_SHIFT: u32 = 16;

fn tick_of(word: usize) -> usize {
    word >> TICK_SHIFT
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
        f.debug_struct("ScheduledIo").field("ready", &ready_of(word)).field("tick", &tick_of(word)).finish()
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
        (!ready.is_empty()).then_some(ReadyEvent { ready, tick: tick_of(word) })
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

    /// Clears what `event` said is ready, unless an event came since (its tick moved on): after
    /// the syscall returned `WouldBlock`. The closed bits and shutdown stay.
    pub(crate) fn clear_readiness(&self, event: ReadyEvent) {
        let clear = event.ready.without(Ready::READ_CLOSED.union(Ready::WRITE_CLOSED).union(Ready::SHUTDOWN));
        // AcqRel: ordered against `set_readiness`'s update of the same word; a failed update
        // (a new tick) leaves the word alone.
        let _ = self.readiness.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
            (tick_of(word) == event.tick || planted_bug!("clear_ignores_tick")).then_some(word & !clear.0)
        });
    }

    /// Adds `ready` (moving the tick on) and wakes every waiter it concerns. Called by the
    /// driver for an event, and with [`Ready::SHUTDOWN`] at deregistration and driver shutdown.
    pub(crate) fn set_readiness(&self, ready: Ready) {
        // AcqRel: the release pairs with the waiters' acquire loads; the tick makes each event
        // a new value (see the module docs).
        let _ = self.readiness.fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
            let tick = tick_of(word).wrapping_add(1) & (usize::MAX >> TICK_SHIFT);
            Some((tick << TICK_SHIFT) | (word & Ready::MASK) | ready.0)
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
