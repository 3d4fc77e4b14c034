//! An idle pool sleeps: its parked workers use (almost) no CPU. Its own binary, with a single
//! test, so that nothing else in the process uses CPU while it measures.

mod common;

use std::time::Duration;

use common::probe::{thread_state, threads_named};
use common::{wait_until, with_timeout};

/// User + system CPU time this process has used so far.
fn process_cpu_time() -> Duration {
    // SAFETY: `usage` is a plain C struct that `getrusage` fills in.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    let micros = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    micros(usage.ru_utime) + micros(usage.ru_stime)
}

/// The scheduler states of the threads whose names start with `prefix`.
fn states_of(prefix: &str) -> Vec<char> {
    let mut states = Vec::new();
    for entry in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) else { continue };
        if comm.starts_with(prefix) {
            let tid: i32 = entry.file_name().to_str().unwrap().parse().unwrap();
            states.extend(thread_state(tid));
        }
    }
    states
}

#[test]
#[cfg_attr(miri, ignore = "measures CPU time with getrusage and reads /proc, neither of which miri supports")]
fn an_idle_pool_uses_less_than_one_percent_of_a_core() {
    with_timeout(idle_pool_body);
}

fn idle_pool_body() {
    const WORKERS: usize = 4;
    const PREFIX: &str = "idle";
    let pool = crew::Pool::builder().workers(WORKERS).thread_name(PREFIX).build().unwrap();

    // Some work first: tasks that yield, and tasks that await others, so that every worker has
    // searched, stolen and parked a few times.
    let mut leaves: Vec<_> = (0..2_000u64)
        .map(|i| {
            pool.spawn(async move {
                crew::yield_now().await;
                i
            })
        })
        .collect();
    let parents: Vec<_> = (0..200)
        .map(|_| {
            let children: Vec<_> = leaves.drain(..10).collect();
            pool.spawn(async move {
                let mut sum = 0;
                for child in children {
                    sum += child.await;
                }
                sum
            })
        })
        .collect();
    let total: u64 = parents.into_iter().map(crew::block_on).sum();
    assert_eq!(total, (0..2_000u64).sum::<u64>());

    // Settle: wait until every worker sleeps (an idle pool must get there; a spinning one never
    // does, and fails here after the hang timeout).
    wait_until("the workers to start", || threads_named(&format!("{PREFIX}-")).len() == WORKERS);
    wait_until("every idle worker to sleep", || {
        let states = states_of(&format!("{PREFIX}-"));
        states.len() == WORKERS && states.iter().all(|&s| s == 'S')
    });

    // Measure: the whole process's CPU time (only our threads: the pool's, and libtest's and
    // `with_timeout`'s, which wait) across one second of sleep. The bound is the spec's: < 1% of
    // one core.
    let before = process_cpu_time();
    std::thread::sleep(Duration::from_secs(1));
    let used = process_cpu_time() - before;
    eprintln!("CPU time used by the idle process in 1 s: {used:?}");
    assert!(used < Duration::from_millis(10), "an idle 4-worker pool used {used:?} of CPU in 1 s (limit: 10 ms)");
    // Still asleep, and still a working pool.
    assert!(states_of(&format!("{PREFIX}-")).iter().all(|&s| s == 'S'));
    assert_eq!(crew::block_on(pool.spawn(async { 7 })), 7);
}
