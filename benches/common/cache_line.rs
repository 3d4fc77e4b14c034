//! The machine's cross-core hand-off: how long one cache line takes to go from one core to
//! another and back, measured by two threads spinning on it. Every message, wake and steal
//! between two workers pays it at least once, and on this project's VM it moves between two
//! states (`BENCHMARKS.md`, "The machine's two states"), so the harness prints it around each
//! group and the modes probe around each round.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// `iters` round trips of one cache line between this thread and a partner thread, both
/// spinning on it (no pause, no park): this thread writes an odd turn, the partner answers with
/// the next even one. What the machine charges for moving a line from one core to another and
/// back, which every message, wake and steal between two workers pays at least once. Thread
/// start and join are outside the time, and so are the round trips of the first `warm_up`.
///
/// The warm-up is for a machine that was idle: on this project's 2-vCPU VM, round trips right
/// after an idle spell take 200 to 1,200 ns, and settle after some 200 ms of spinning.
pub fn cache_line_round_trips(warm_up: Duration, iters: u64) -> Duration {
    const STOP: u64 = u64::MAX;
    let turn = Arc::new(AtomicU64::new(0));
    let partner = {
        let turn = turn.clone();
        thread::spawn(move || loop {
            let seen = turn.load(Acquire);
            if seen == STOP {
                break;
            }
            if seen % 2 == 1 {
                turn.store(seen + 1, Release);
            }
        })
    };
    let mut turns = 0;
    let mut round_trip = || {
        turns += 2;
        turn.store(turns - 1, Release);
        while turn.load(Acquire) != turns {}
    };
    let warm = Instant::now();
    while warm.elapsed() < warm_up {
        round_trip();
    }
    let start = Instant::now();
    for _ in 0..iters {
        round_trip();
    }
    let elapsed = start.elapsed();
    turn.store(STOP, Release);
    partner.join().expect("the cache-line partner thread panicked");
    elapsed
}

/// One cache-line round trip in nanoseconds, after 200 ms of warm-up: the median of five runs
/// of 20,000.
pub fn cache_line_round_trip_ns() -> u64 {
    const ROUND_TRIPS: u64 = 20_000;
    let warm_up = Duration::from_millis(200);
    let mut runs: Vec<u64> = (0..5)
        .map(|run| {
            let warm_up = if run == 0 { warm_up } else { Duration::ZERO };
            cache_line_round_trips(warm_up, ROUND_TRIPS).as_nanos() as u64 / ROUND_TRIPS
        })
        .collect();
    runs.sort_unstable();
    runs[2]
}
