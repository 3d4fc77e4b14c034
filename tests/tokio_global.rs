//! The `tokio` feature with a runtime given to the global pool (`Builder::tokio_handle` with
//! `build_global`): the global pool's workers enter it, and so do the threads of no pool (the
//! blocking pool's, and `crew::block_on`'s caller on a plain thread), instead of crew's own
//! runtime, which never starts. One test binary: the global pool is configured once a process.

mod common;

use common::with_timeout;

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_owned()
}

#[test]
fn the_global_pools_runtime_is_the_one_of_threads_of_no_pool() {
    with_timeout(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("global-runtime")
            .enable_all()
            .build()
            .unwrap();
        crew::Builder::new().workers(2).tokio_handle(runtime.handle().clone()).build_global().unwrap();
        // A global pool's task.
        let on_worker = crew::block_on(crew::spawn(async { tokio::spawn(async { thread_name() }).await.unwrap() }));
        assert_eq!(on_worker, "global-runtime");
        // `crew::block_on` on a plain thread of no pool.
        let on_plain =
            std::thread::spawn(|| crew::block_on(async { tokio::spawn(async { thread_name() }).await.unwrap() }));
        assert_eq!(on_plain.join().unwrap(), "global-runtime");
        // The blocking pool's threads.
        let in_blocking = crew::block_on(crew::spawn_blocking(|| {
            tokio::runtime::Handle::current().block_on(tokio::spawn(async { thread_name() })).unwrap()
        }));
        assert_eq!(in_blocking, "global-runtime");
        // crew's own runtime never started: no thread of it.
        let own = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|task| std::fs::read_to_string(task.unwrap().path().join("comm")).ok())
            .filter(|name| name.trim() == "crew-tokio")
            .count();
        assert_eq!(own, 0, "crew's own runtime started although the global pool was given one");
    });
}
