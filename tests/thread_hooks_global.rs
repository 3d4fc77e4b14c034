//! The global pool's `on_thread_start` and `on_thread_stop` also run on the process's blocking
//! threads (a test binary of its own: the global pool is configured once per process).

mod common;

use std::sync::{Arc, Mutex};

use common::{wait_until, with_timeout};

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
        // A job's thread runs the hook before the job; a worker before its first task, which
        // may come after this look: wait for both workers' starts.
        assert!(started.lock().unwrap().contains(&job_thread), "{job_thread} not in {:?}", started.lock().unwrap());
        wait_until("both workers ran the start hook", || {
            started.lock().unwrap().iter().filter(|name| name.starts_with("crew-worker-")).count() == 2
        });
    });
}
