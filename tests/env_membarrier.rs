//! `CREW_MEMBARRIER`, the one process-wide `CREW_` variable: every pool's build checks its
//! value (a bad one is an error naming it), and `off` runs every pool without membarrier,
//! takeover included. A binary of its own with one test: the variable is the process's, and the
//! mode it chooses is decided once.

mod common;

use std::sync::mpsc;

use common::with_timeout;

#[test]
#[cfg_attr(miri, ignore = "a monitor thread and its waits: too slow interpreted")]
fn a_bad_value_is_named_and_off_runs_pools_in_fence_mode() {
    std::env::set_var(crew::config::MEMBARRIER_ENV, "maybe");
    let err = crew::Pool::builder().workers(1).build().unwrap_err();
    assert_eq!(err.to_string(), "CREW_MEMBARRIER=\"maybe\" is invalid: expected `on` or `off`");
    std::env::set_var(crew::config::MEMBARRIER_ENV, "off");
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).takeover(true).build().unwrap();
        // A blocked poll with a task behind it: the takeover (whose marks pair with the end of
        // each poll) works without membarrier.
        let (tx, rx) = mpsc::channel();
        let blocked = pool.spawn(async move { rx.recv().unwrap() });
        let behind = pool.spawn(async move { tx.send(3).unwrap() });
        pool.block_on(behind);
        assert_eq!(pool.block_on(blocked), 3);
        assert!(pool.metrics().total.takeovers >= 1);
    });
}
