//! A paused pool's clock (`src/clock.rs`) moves only when its count of work in flight is zero,
//! fires each due timer exactly once, and never moves while a unit of work is held, whichever
//! thread gives back the last unit. The models use crew's real `PausedClock` (through
//! `crew::__loom`); a "task" is a waker that, as a task's schedule does, takes a unit of work
//! when woken.
//!
//! A fourth model is a paused pool's task that blocks its thread in `block_on`
//! (`src/block_on.rs`): its run's unit is handed to the future's first poll, so the clock reads
//! the same there as in the run, while another run ends on another thread.
//!
//! Planted bugs: `--cfg crew_bug="clock_moves_while_busy"` makes every end of a unit settle the
//! clock, and the settle skip its check of the count; `--cfg crew_bug="block_on_gives_back_first"`
//! makes the hand-over give the unit back and take the first poll's anew.
#![cfg(loom)]

use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::{Duration, Instant};

use crew::__loom::PausedClock;
use crew_loom_tests::support::{model, Count};
use loom::thread;

/// A task's waker: each wake takes a unit of work (its schedule) and is counted.
struct Task {
    clock: Arc<PausedClock>,
    woken: Count,
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.clock.begin_work();
        self.woken.add();
    }
}

/// A clock at `start` with one timer due at `start + 1 s`, filed by a task's waker; the unit of
/// the run that filed it still held. Returns the clock and the task's wake count.
fn clock_with_a_timer(start: Instant) -> (Arc<PausedClock>, Count) {
    let clock = Arc::new(PausedClock::new(start));
    let woken = Count::new();
    let waker = Waker::from(Arc::new(Task { clock: clock.clone(), woken: woken.clone() }));
    clock.begin_work();
    let number = clock.timer_made();
    let mut filed = None;
    assert!(!clock.poll_timer(start + Duration::from_secs(1), number, &mut filed, &mut Context::from_waker(&waker)));
    (clock, woken)
}

/// Takes a unit for another thread's run (as a schedule takes it, before the run starts), runs
/// `run` on that thread (which must end the unit), ends this thread's own unit meanwhile, and
/// joins.
fn race_another_run(clock: &Arc<PausedClock>, run: impl FnOnce(&PausedClock) + Send + 'static) {
    clock.begin_work();
    let other = {
        let clock = clock.clone();
        thread::spawn(move || run(&clock))
    };
    clock.end_work();
    other.join().unwrap();
}

#[test]
fn the_last_of_two_units_to_end_fires_the_timer_once() {
    model(3, || {
        let start = Instant::now();
        let (clock, woken) = clock_with_a_timer(start);
        race_another_run(&clock, PausedClock::end_work);
        assert_eq!(woken.get(), 1, "the timer fired once");
        assert_eq!(clock.now(), start + Duration::from_secs(1));
        assert_eq!(clock.busy(), 1, "the woken task's schedule holds its unit");
    });
}

#[test]
fn the_clock_never_moves_while_a_unit_is_held() {
    model(3, || {
        let start = Instant::now();
        let (clock, woken) = clock_with_a_timer(start);
        // The other run, inside it, wakes a task (a third unit) before it ends.
        race_another_run(&clock, move |clock| {
            clock.begin_work();
            clock.end_work();
            // Only the woken task's unit is certain to be held here (the filing run may have
            // ended): the clock must not move.
            let seen = clock.now();
            thread::yield_now();
            assert_eq!(clock.now(), seen, "the clock moved while a unit was held");
            assert_eq!(seen, start, "the clock moved before every unit ended");
            clock.end_work();
        });
        assert_eq!(woken.get(), 1);
        assert_eq!(clock.now(), start + Duration::from_secs(1));
    });
}

#[test]
fn an_advance_holds_the_clock_and_a_cancelled_timer_moves_nothing() {
    model(3, || {
        let start = Instant::now();
        let clock = Arc::new(PausedClock::new(start));
        let woken = Count::new();
        let waker = Waker::from(Arc::new(Task { clock: clock.clone(), woken: woken.clone() }));
        let mut cx = Context::from_waker(&waker);
        clock.begin_work();
        let (near, far) = (clock.timer_made(), clock.timer_made());
        let (mut near_filed, mut far_filed) = (None, None);
        assert!(!clock.poll_timer(start + Duration::from_secs(5), near, &mut near_filed, &mut cx));
        assert!(!clock.poll_timer(start + Duration::from_secs(9), far, &mut far_filed, &mut cx));
        assert!(clock.poll_advance(start + Duration::from_secs(2), &mut cx).is_pending());
        // Another thread cancels the near timer while this one ends the run.
        let canceller = {
            let clock = clock.clone();
            thread::spawn(move || {
                clock.begin_work();
                clock.cancel_timer(near, &mut near_filed);
                clock.end_work();
            })
        };
        clock.end_work();
        canceller.join().unwrap();
        // The advance's target came first: the clock stopped there and woke the advance.
        assert_eq!(clock.now(), start + Duration::from_secs(2));
        assert_eq!(woken.get(), 1);
        assert!(clock.poll_advance(start + Duration::from_secs(2), &mut cx).is_ready());
        // The woken run ends: the clock goes on, past the cancelled timer, to the far one.
        clock.end_work();
        assert_eq!(clock.now(), start + Duration::from_secs(9));
        assert_eq!(woken.get(), 2);
    });
}

#[test]
fn a_run_that_blocks_in_block_on_hands_its_unit_to_the_first_poll() {
    model(3, || {
        let start = Instant::now();
        // This thread's run holds its unit, the timer filed.
        let (clock, woken) = clock_with_a_timer(start);
        // Another run (its unit taken by its schedule) ends on another thread meanwhile.
        clock.begin_work();
        let other = {
            let clock = clock.clone();
            thread::spawn(move || clock.end_work())
        };
        // This run enters `block_on`: the future's first poll reads the clock.
        let seen = clock.block_on_first_poll(|| clock.now());
        other.join().unwrap();
        assert_eq!(seen, start, "the clock moved between the run and its block_on's first poll");
        // Both units have ended: the timer fired once, its task's schedule holding a unit.
        assert_eq!(woken.get(), 1);
        assert_eq!(clock.now(), start + Duration::from_secs(1));
        assert_eq!(clock.busy(), 1);
    });
}
