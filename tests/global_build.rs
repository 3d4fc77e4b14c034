//! `Builder::build_global` configures the global pool once per process, before the first
//! `spawn`. Process-global, hence its own test binary with a single test.

mod common;

use common::probe::threads_named;
use common::{wait_until, with_timeout};

#[test]
#[cfg_attr(miri, ignore = "reads /proc/self/task: miri isolates it, and its threads are not the kernel's")]
fn build_global_configures_the_global_pool_once() {
    with_timeout(|| {
        // A refused configuration starts nothing, and leaves the global pool unconfigured.
        let err = crew::Builder::new().workers(0).thread_name("g").build_global().unwrap_err();
        assert!(!err.is_global_already_started());
        assert_eq!(err.to_string(), "Builder::workers(0) is invalid: expected a number of worker threads in 1..=1024");
        let err = crew::Builder::new().workers(3).thread_name("g").stack_size(1).build_global().unwrap_err();
        assert!(!err.is_global_already_started());
        assert_eq!(
            err.to_string(),
            "Builder::stack_size(1) is invalid: expected a size in bytes in 65536..=1073741824"
        );

        crew::Builder::new().workers(3).thread_name("g").build_global().expect("the first valid build_global");

        // Three tasks that meet at a barrier run on the three workers at once.
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(3));
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let barrier = barrier.clone();
                crew::spawn(async move {
                    barrier.wait();
                    std::thread::current().name().map(str::to_owned)
                })
            })
            .collect();
        let mut names: Vec<_> = handles.into_iter().map(|h| crew::block_on(h).unwrap()).collect();
        names.sort();
        assert_eq!(names, ["g-0", "g-1", "g-2"]);
        // No more than three: the process has exactly three threads named `g-N`.
        wait_until("the global workers to be listed", || threads_named("g-").len() == 3);
        assert_eq!(threads_named("g-"), ["g-0", "g-1", "g-2"]);
        // Every spawn from any thread goes to those workers.
        let names: Vec<_> = (0..32)
            .map(|_| {
                std::thread::spawn(|| {
                    crew::block_on(crew::spawn(async { std::thread::current().name().map(str::to_owned) }))
                })
            })
            .map(|t| t.join().unwrap().unwrap())
            .collect();
        assert!(names.iter().all(|n| ["g-0", "g-1", "g-2"].contains(&n.as_str())), "{names:?}");

        // Once started, every later build_global is refused, valid or not.
        let expected = "the global crew pool is already running: Builder::build_global must be called before the first crew::spawn, and only once";
        for builder in
            [crew::Builder::new().workers(3).thread_name("g"), crew::Builder::new(), crew::Builder::new().workers(0)]
        {
            let err = builder.build_global().unwrap_err();
            assert!(err.is_global_already_started());
            assert_eq!(err.to_string(), expected);
        }
        // The pool is unchanged.
        assert_eq!(threads_named("g-"), ["g-0", "g-1", "g-2"]);
        assert_eq!(crew::block_on(crew::spawn(async { 6 * 7 })), 42);
    });
}
