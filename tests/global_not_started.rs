//! `crew::metrics()` and `crew::dump()` before the global pool started: zeroes and an empty dump,
//! and the pool stays unstarted, so that a later `Builder::build_global` still configures it (a
//! test binary of its own: the global pool starts once per process).

mod common;

use common::with_timeout;

#[test]
fn metrics_and_dump_before_the_global_pool_starts_leave_it_unstarted() {
    with_timeout(|| {
        let metrics = crew::metrics();
        assert!(metrics.workers.is_empty(), "{metrics:?}");
        assert_eq!((metrics.total.polls, metrics.spawned_outside, metrics.live_tasks), (0, 0, 0));
        assert_eq!(metrics.threads_started, 0);
        let dump = crew::dump();
        assert!(dump.tasks().is_empty());
        assert_eq!(dump.is_enabled(), std::env::var("CREW_TASK_DUMP").as_deref() == Ok("on"));
        assert!(crew::metrics().workers.is_empty(), "a second look does not start it either");

        crew::Builder::new().workers(3).thread_name("configured").build_global().expect("the pool has not started");
        let ran_on = crew::block_on(crew::spawn(async { std::thread::current().name().unwrap().to_owned() }));
        assert!(ran_on.starts_with("configured-"), "{ran_on}");
        let metrics = crew::metrics();
        assert_eq!(metrics.workers.len(), 3);
        assert!(metrics.total.polls >= 1);
    });
}
