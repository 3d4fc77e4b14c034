//! Takeover on the global pool: every one of its workers blocks inside a poll until the tasks
//! queued behind them finished (a deadlock without takeover). A test binary of its own, as the
//! global pool is configured once per process.

mod common;

#[test]
#[cfg_attr(
    miri,
    ignore = "the takeover protocol is loom's (loom-tests/tests/takeover.rs); under miri the monitor's emulated waits cost 48 s of CI, and tests/takeover.rs runs the private-pool cases"
)]
fn every_global_worker_blocked_until_the_queue_drains_still_completes() {
    common::with_timeout(|| {
        const WORKERS: usize = 2;
        crew::Builder::new().workers(WORKERS).takeover_after(crew::config::MIN_TAKEOVER_AFTER).build_global().unwrap();
        common::stuck::blocked_workers_release_after_the_queue(WORKERS, |builder, task| builder.spawn(task));
    });
}
