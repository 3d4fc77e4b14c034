//! A parked worker that runs the reactor wakes itself: a task woken by a socket or timer on that
//! worker's own thread goes onto its own queue, and the worker takes itself off the sleeping list
//! with `Sleepers::wake_self` (`src/scheduler/sleep/README.md`, the `Reactor` section) instead of waking another
//! worker. That races any other thread's `notify_one`, which may pick the same worker.
//!
//! The property: whichever of the two takes the worker off the list hands it its token, exactly
//! one of them does, the worker's park returns, and the counters still match the list (one
//! worker unparked and searching, the other parked).
//!
//! Planted bug: `--cfg crew_bug="wake_self_no_token"` makes `wake_self` take the worker off the
//! list without handing it its token; its park then never returns (loom: deadlock).
#![cfg(loom)]

use crew::__loom::Sleepers;
use loom::sync::Arc;
use loom::thread;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    builder.check(f);
}

#[test]
fn wake_self_racing_notify_one_hands_exactly_one_token() {
    model(|| {
        let sleepers = Arc::new(Sleepers::new(2));
        // Both workers park, worker 0 last, so that `notify_one` picks worker 0 too.
        sleepers.list_parked(1, false);
        sleepers.list_parked(0, false);
        let other = {
            let sleepers = sleepers.clone();
            thread::spawn(move || sleepers.notify_one())
        };
        // Worker 0's thread, inside the reactor, has pushed a woken task onto its own queue.
        let woke_self = sleepers.wake_self(0);
        let notified = other.join().unwrap();
        assert!(
            woke_self != notified,
            "exactly one of wake_self and notify_one took worker 0 ({woke_self}, {notified})"
        );
        // Worker 0 has its token: its park returns.
        sleepers.park(0);
        assert!(!sleepers.is_parked(0) && sleepers.is_parked(1));
        assert_eq!(sleepers.counts(), (1, 1), "one worker unparked, counted as searching");
    });
}
