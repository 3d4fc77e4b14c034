//! `crew::time::Interval` as tokio's users know it, on a paused pool's clock: each
//! `MissedTickBehavior` after a stall (`Burst` yields every missed tick at once, `Delay` moves the
//! schedule to a period after the late tick, `Skip` jumps to the next tick of the schedule), the
//! 5 ms tolerance under which a tick is on time, the `reset*` methods, and the interval as a
//! `Stream` of ticks.
//!
//! Every instant is virtual: a stall is a `sleep` on the paused clock, and "at once" means the
//! clock did not move. No real-time measurement, so nothing here depends on the machine's speed.

use std::time::{Duration, Instant};

use crew::time::{interval, interval_at, now, sleep, Interval, MissedTickBehavior};
use futures::StreamExt;

const PERIOD: Duration = Duration::from_secs(10);

fn paused_pool() -> crew::Pool {
    crew::Pool::builder().workers(1).start_paused(true).build().unwrap()
}

fn secs(secs: u64) -> Duration {
    Duration::from_secs(secs)
}

/// Awaits `n` ticks of `every`; for each, the instant it was due at and the instant it was
/// yielded at, both as offsets from `start`.
async fn ticks(every: &mut Interval, start: Instant, n: usize) -> Vec<(Duration, Duration)> {
    let mut ticks = Vec::with_capacity(n);
    for _ in 0..n {
        let due = every.tick().await;
        ticks.push((due - start, now() - start));
    }
    ticks
}

/// An interval of [`PERIOD`] with `behavior`, ticked once at the start and then left alone until
/// `stall` has passed; the next `n` ticks, as [`ticks`] gives them.
fn after_a_stall(behavior: MissedTickBehavior, stall: Duration, n: usize) -> Vec<(Duration, Duration)> {
    paused_pool().block_on(async {
        let start = now();
        let mut every = interval_at(start, PERIOD);
        every.set_missed_tick_behavior(behavior);
        assert_eq!(every.tick().await, start);
        sleep(stall).await;
        ticks(&mut every, start, n).await
    })
}

#[test]
fn the_default_behaviour_is_burst() {
    assert_eq!(MissedTickBehavior::default(), MissedTickBehavior::Burst);
    paused_pool().block_on(async {
        let mut every = interval(PERIOD);
        assert_eq!(every.missed_tick_behavior(), MissedTickBehavior::Burst);
        every.set_missed_tick_behavior(MissedTickBehavior::Skip);
        assert_eq!(every.missed_tick_behavior(), MissedTickBehavior::Skip);
    });
}

#[test]
fn burst_yields_every_missed_tick_at_once_and_keeps_the_schedule() {
    // Ticks due at 10, 20 and 30 s, missed until 35 s: all three at 35 s, then on schedule.
    let ticks = after_a_stall(MissedTickBehavior::Burst, secs(35), 5);
    assert_eq!(
        ticks,
        [(secs(10), secs(35)), (secs(20), secs(35)), (secs(30), secs(35)), (secs(40), secs(40)), (secs(50), secs(50))]
    );
}

#[test]
fn delay_schedules_the_tick_after_a_late_one_a_period_after_it_was_yielded() {
    // The tick due at 10 s, yielded at 35 s; the next a period later, at 45 s, and so on.
    let ticks = after_a_stall(MissedTickBehavior::Delay, secs(35), 3);
    assert_eq!(ticks, [(secs(10), secs(35)), (secs(45), secs(45)), (secs(55), secs(55))]);
}

#[test]
fn skip_drops_the_missed_ticks_and_keeps_to_the_schedule() {
    // The tick due at 10 s, yielded at 35 s; those at 20 and 30 s skipped; on from 40 s.
    let ticks = after_a_stall(MissedTickBehavior::Skip, secs(35), 3);
    assert_eq!(ticks, [(secs(10), secs(35)), (secs(40), secs(40)), (secs(50), secs(50))]);
    // Back exactly on a tick of the schedule (40 s): as tokio, that tick is skipped too, and the
    // next is a full period after now.
    let ticks = after_a_stall(MissedTickBehavior::Skip, secs(40), 2);
    assert_eq!(ticks, [(secs(10), secs(40)), (secs(50), secs(50))]);
}

#[test]
fn a_tick_at_most_five_milliseconds_late_is_on_time_whatever_the_behaviour() {
    let millis = Duration::from_millis;
    for behavior in [MissedTickBehavior::Burst, MissedTickBehavior::Delay, MissedTickBehavior::Skip] {
        // 5 ms late: the next tick on schedule.
        let ticks = after_a_stall(behavior, PERIOD + millis(5), 2);
        assert_eq!(ticks, [(secs(10), millis(10_005)), (secs(20), secs(20))], "{behavior:?}");
    }
    // 6 ms late: late. `Delay` moves the schedule by 6 ms; `Burst` and `Skip` (no tick was missed
    // whole) keep it.
    let late = PERIOD + millis(6);
    let ticks = after_a_stall(MissedTickBehavior::Delay, late, 2);
    assert_eq!(ticks, [(secs(10), millis(10_006)), (millis(20_006), millis(20_006))]);
    for behavior in [MissedTickBehavior::Burst, MissedTickBehavior::Skip] {
        let ticks = after_a_stall(behavior, late, 2);
        assert_eq!(ticks, [(secs(10), millis(10_006)), (secs(20), secs(20))], "{behavior:?}");
    }
}

#[test]
fn a_behaviour_set_mid_schedule_applies_from_the_next_late_tick() {
    paused_pool().block_on(async {
        let start = now();
        let mut every = interval_at(start, PERIOD);
        every.tick().await;
        sleep(secs(35)).await;
        // Bursting: the tick due at 10 s at once; then switch to `Delay` for the one at 20 s.
        assert_eq!(ticks(&mut every, start, 1).await, [(secs(10), secs(35))]);
        every.set_missed_tick_behavior(MissedTickBehavior::Delay);
        assert_eq!(ticks(&mut every, start, 2).await, [(secs(20), secs(35)), (secs(45), secs(45))]);
    });
}

#[test]
fn reset_makes_the_next_tick_due_one_period_from_now() {
    paused_pool().block_on(async {
        let start = now();
        let mut every = interval_at(start, PERIOD);
        every.tick().await;
        sleep(secs(4)).await;
        every.reset();
        assert_eq!(every.tick_due(), Some(start + secs(14)));
        assert_eq!(ticks(&mut every, start, 2).await, [(secs(14), secs(14)), (secs(24), secs(24))]);
    });
}

#[test]
fn reset_immediately_makes_the_next_tick_due_now() {
    paused_pool().block_on(async {
        let start = now();
        let mut every = interval_at(start, PERIOD);
        every.tick().await;
        sleep(secs(4)).await;
        every.reset_immediately();
        assert_eq!(ticks(&mut every, start, 2).await, [(secs(4), secs(4)), (secs(14), secs(14))]);
    });
}

#[test]
fn reset_after_and_reset_at_move_the_next_tick_and_the_schedule_follows() {
    paused_pool().block_on(async {
        let start = now();
        let mut every = interval_at(start, PERIOD);
        every.tick().await;
        every.reset_after(secs(3));
        assert_eq!(ticks(&mut every, start, 2).await, [(secs(3), secs(3)), (secs(13), secs(13))]);
        every.reset_at(start + secs(100));
        assert_eq!(ticks(&mut every, start, 2).await, [(secs(100), secs(100)), (secs(110), secs(110))]);
        // A deadline in the past: due at once, yielded with that deadline.
        every.reset_at(start + secs(50));
        assert_eq!(ticks(&mut every, start, 1).await, [(secs(50), secs(110))]);
    });
}

#[test]
fn a_reset_forgets_the_missed_ticks() {
    paused_pool().block_on(async {
        let start = now();
        let mut every = interval_at(start, PERIOD);
        every.tick().await;
        sleep(secs(35)).await;
        // Bursting would yield 10, 20 and 30 s at once; the reset drops them.
        every.reset();
        assert_eq!(ticks(&mut every, start, 1).await, [(secs(45), secs(45))]);
    });
}

#[test]
fn a_reset_revives_an_interval_whose_schedule_ran_past_the_end_of_instant() {
    paused_pool().block_on(async {
        let mut every = interval(Duration::MAX);
        every.tick().await;
        assert_eq!(every.tick_due(), None);
        every.reset_after(secs(1));
        let start = now();
        assert_eq!(ticks(&mut every, start, 1).await, [(secs(1), secs(1))]);
        assert_eq!(every.tick_due(), None);
    });
}

#[test]
fn an_interval_is_a_stream_of_the_instants_its_ticks_were_due_at() {
    paused_pool().block_on(async {
        let start = now();
        let due: Vec<Instant> = interval_at(start, PERIOD).take(4).collect().await;
        assert_eq!(due, [start, start + secs(10), start + secs(20), start + secs(30)]);
        assert_eq!(now() - start, secs(30), "each tick waited for its deadline");
    });
}

#[test]
fn the_stream_follows_the_missed_tick_behaviour() {
    paused_pool().block_on(async {
        let start = now();
        let mut every = interval_at(start, PERIOD);
        every.set_missed_tick_behavior(MissedTickBehavior::Skip);
        assert_eq!(every.next().await, Some(start));
        sleep(secs(35)).await;
        assert_eq!(every.next().await, Some(start + secs(10)));
        assert_eq!(every.next().await, Some(start + secs(40)));
        assert_eq!(now() - start, secs(40));
    });
}
