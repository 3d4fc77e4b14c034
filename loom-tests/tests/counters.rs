//! The idle-worker counters never drift, on a real two-worker `crew::Pool`: after two tasks
//! spawned from outside have run (waking, searching, stealing and parking as they go), once
//! every worker is listed as parked the packed counters say exactly that — no worker unparked,
//! none searching. (Under the `sleeping` lock, `unparked == workers - sleeping.len()` and
//! `searching <= unparked`, see `src/scheduler/sleep/README.md`.)
//!
//! Planted bug: `--cfg crew_bug="searching_drift"` makes `Sleepers::list_parked` forget to
//! count a parking searcher out of `searching`.
#![cfg(loom)]

use crew_loom_tests::support::{model, Count};
use loom::thread;

#[test]
fn counters_say_all_parked_once_every_worker_is_parked() {
    model(2, || {
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        let ran = Count::new();
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let ran = ran.clone();
                pool.spawn(async move { ran.add() })
            })
            .collect();
        for handle in handles {
            crew::block_on(handle);
        }
        assert_eq!(ran.get(), 2);
        let counts = loop {
            if let Some(counts) = crew::__loom::idle_counts(&pool) {
                break counts;
            }
            thread::yield_now();
        };
        assert_eq!(counts, (0, 0), "(unparked, searching) with every worker parked");
        drop(pool);
    });
}
