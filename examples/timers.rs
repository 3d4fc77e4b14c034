//! crew's timers: `sleep`, `timeout` (a future that finishes in time, and one that does not),
//! `interval`, and 10,000 concurrent sleeps that cost no thread each.
//!
//! ```sh
//! cargo run --release --example timers
//! ```

use std::time::{Duration, Instant};

use crew::time::{interval, sleep, timeout};

fn main() {
    let start = Instant::now();
    crew::block_on(crew::spawn(async move {
        // sleep: waits at least the duration; the reactor fires it, no thread is blocked.
        sleep(Duration::from_millis(50)).await;
        println!("[{:>7.1?}] slept 50 ms", start.elapsed());

        // timeout, success: the future finishes first, its output comes back in `Ok`.
        let quick = timeout(Duration::from_secs(1), async {
            sleep(Duration::from_millis(10)).await;
            "done"
        });
        let quick = quick.await;
        println!("[{:>7.1?}] timeout(1 s, a 10 ms job) = {quick:?}", start.elapsed());

        // timeout, expiry: the future is dropped, the error says how long we waited.
        let slow = timeout(Duration::from_millis(20), sleep(Duration::from_secs(3600))).await;
        match slow {
            Ok(()) => unreachable!("an hour-long sleep finished within 20 ms"),
            Err(elapsed) => println!("[{:>7.1?}] timeout(20 ms, a 1 h job): {elapsed}", start.elapsed()),
        }

        // interval: ticks on a fixed schedule (a late tick fires at once, the next ones keep
        // to the original schedule).
        let mut every = interval(Duration::from_millis(25));
        let first = every.tick().await;
        for n in 1..=4 {
            let due = every.tick().await;
            println!("[{:>7.1?}] tick {n}, due at +{:?} after the first", start.elapsed(), due - first);
        }

        // Many concurrent sleeps: 10,000 tasks, each sleeping 100..=199 ms. They overlap, so the
        // whole batch takes about the longest one, not the sum.
        let batch = Instant::now();
        let sleepers: Vec<_> = (0..10_000u64)
            .map(|i| {
                crew::spawn(async move {
                    sleep(Duration::from_millis(100 + i % 100)).await;
                    i
                })
            })
            .collect();
        let mut sum = 0;
        for sleeper in sleepers {
            sum += sleeper.await;
        }
        assert_eq!(sum, (0..10_000).sum::<u64>());
        println!(
            "[{:>7.1?}] 10,000 concurrent sleeps of 100..=199 ms took {:.1?} in all",
            start.elapsed(),
            batch.elapsed()
        );
    }));
}
