//! The global pool's `on_thread_start` and `on_thread_stop` also run on the process's blocking
//! threads (a test binary of its own: the global pool is configured once per process).

mod common;

use std::sync::{Arc, Mutex};

use common::with_timeout;

#[test]
fn the_global_pools_start_hook_runs_on_its_workers_and_the_blocking_threads() {
    with_timeout(|| {
        let started: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = started.clone();
        crew::Builder::new()
            .workers(2)
            .on_thread_start(move || log.lock().unwrap().push(std::thread::current().name().unwrap().to_owned()))
            .build_global()
            .unwrap();
        let job_thread = crew::block_on(crew::spawn_blocking(|| std::thread::current().name().unwrap().to_owned()));
        crew::block_on(crew::spawn(async {}));
        let started = started.lock().unwrap().clone();
        assert!(started.contains(&job_thread), "{job_thread} not in {started:?}");
        assert_eq!(started.iter().filter(|name| name.starts_with("crew-worker-")).count(), 2, "{started:?}");
    });
}
