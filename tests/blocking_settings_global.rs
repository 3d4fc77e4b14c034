//! `Builder::max_blocking_threads` and `thread_keep_alive` given to `build_global` set the
//! process's blocking pool (a test binary of its own: the global pool is configured once per
//! process); a private pool's builder refuses them.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{wait_until, with_timeout};

#[test]
fn build_global_sets_the_blocking_pools_cap_and_keep_alive() {
    with_timeout(|| {
        let err = crew::Pool::builder().max_blocking_threads(2).build().unwrap_err();
        assert_eq!(
            err.to_string(),
            "Builder::max_blocking_threads(2) with Builder::build (a private pool) is invalid: one blocking pool serves \
             the process: set it on the builder given to Builder::build_global, or with its CREW_ variable"
        );
        let err = crew::Builder::new().max_blocking_threads(0).build_global().unwrap_err();
        assert!(err.to_string().contains("Builder::max_blocking_threads(0)") && err.to_string().contains("1..=65536"));
        let err = crew::Builder::new().thread_keep_alive(Duration::from_secs(3601)).build_global().unwrap_err();
        assert!(err.to_string().contains("0s..=3600s"), "{err}");

        crew::Builder::new()
            .workers(1)
            .max_blocking_threads(2)
            .thread_keep_alive(Duration::from_millis(50))
            .build_global()
            .unwrap();
        let (release, released) = mpsc::channel::<()>();
        let released = std::sync::Arc::new(std::sync::Mutex::new(released));
        let jobs: Vec<_> = (0..5)
            .map(|_| {
                let released = released.clone();
                crew::spawn_blocking(move || released.lock().unwrap().recv().unwrap())
            })
            .collect();
        wait_until("two threads run jobs and three jobs queue", || {
            let blocking = crew::metrics().blocking;
            blocking.threads == 2 && blocking.queued == 3
        });
        for _ in 0..5 {
            release.send(()).unwrap();
        }
        for job in jobs {
            crew::block_on(job);
        }
        assert!(crew::metrics().blocking.threads <= 2);
        // Idle 50 ms, each thread exits.
        wait_until("the idle blocking threads exited", || crew::metrics().blocking.threads == 0);
    });
}
