//! Parking in crew's I/O driver (`src/driver/park.rs`), against the driver's fake poller under
//! loom (`src/driver/loom_poller.rs`): a thread waits in the driver when it is free, another on
//! its own parker while the first holds it, and an unpark reaches each wherever it waits. Every
//! park returns once its thread was unparked (loom reports a thread left waiting as a deadlock),
//! and a plain thread leaving the driver hands it on to the one waiting for it.
//!
//! Planted bug: `--cfg crew_bug="park_skips_token_look"` makes a thread that takes the driver
//! wait in it without the compare-exchange that looks at its token and says it waits there: an
//! unpark that came just before finds the word as it left it, wakes nothing, and the thread
//! waits in the driver for good.
#![cfg(loom)]

use crew::__loom::{driver_turns, make_driver, DrivingParker};
use crew_loom_tests::support::model;
use loom::thread;

#[test]
fn an_unpark_reaches_a_thread_waiting_in_the_driver() {
    model(3, || {
        make_driver();
        let parker = DrivingParker::new();
        let unparker = parker.unparker();
        let waker = thread::spawn(move || unparker.unpark());
        parker.park();
        waker.join().unwrap();
    });
}

#[test]
fn two_parked_threads_each_get_their_unpark_wherever_they_wait() {
    model(2, || {
        make_driver();
        let (first, second) = (DrivingParker::new(), DrivingParker::new());
        let (first_unparker, second_unparker) = (first.unparker(), second.unparker());
        let other = thread::spawn(move || second.park_as_worker());
        let waker = thread::spawn(move || {
            first_unparker.unpark();
            second_unparker.unpark();
        });
        first.park();
        waker.join().unwrap();
        other.join().unwrap();
        // No turn waited for a wake that nobody sent.
        assert!(driver_turns() <= 2);
    });
}
