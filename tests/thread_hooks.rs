//! `Builder::on_thread_start`, `on_thread_stop`, `on_thread_park`, `on_thread_unpark` and
//! `thread_name_fn`: each hook on every kind of thread a pool starts (workers, a hand-off's and a
//! takeover's), in order, and a panicking hook that kills nothing.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{wait_until, with_timeout};

type Log = Arc<Mutex<Vec<(String, &'static str)>>>;

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

/// A builder whose four hooks log `(thread, hook)` into the returned log.
fn logging(builder: crew::Builder) -> (crew::Builder, Log) {
    let log: Log = Arc::default();
    let entry = |what: &'static str| {
        let log = log.clone();
        move || log.lock().unwrap().push((thread_name(), what))
    };
    let builder = builder
        .on_thread_start(entry("start"))
        .on_thread_stop(entry("stop"))
        .on_thread_park(entry("park"))
        .on_thread_unpark(entry("unpark"));
    (builder, log)
}

/// Each thread's hooks, in the order they ran.
fn per_thread(log: &Log) -> std::collections::BTreeMap<String, Vec<&'static str>> {
    let mut threads = std::collections::BTreeMap::<String, Vec<&'static str>>::new();
    for (thread, what) in log.lock().unwrap().iter() {
        threads.entry(thread.clone()).or_default().push(what);
    }
    threads
}

/// Asserts that one thread's hooks ran as start, (park, unpark)*, [park], stop.
fn assert_life(thread: &str, hooks: &[&str]) {
    assert_eq!(hooks.first(), Some(&"start"), "{thread}: {hooks:?}");
    assert_eq!(hooks.last(), Some(&"stop"), "{thread}: {hooks:?}");
    let middle = &hooks[1..hooks.len() - 1];
    for (i, hook) in middle.iter().enumerate() {
        let expected = if i % 2 == 0 { "park" } else { "unpark" };
        assert_eq!(*hook, expected, "{thread}: park and unpark alternate: {hooks:?}");
    }
}

#[test]
fn every_worker_thread_runs_start_then_parks_and_unparks_in_turn_then_stop() {
    with_timeout(|| {
        let (builder, log) = logging(crew::Pool::builder().workers(2).thread_name("hooked"));
        let pool = builder.build().unwrap();
        for _ in 0..20 {
            crew::block_on(pool.spawn(async {}));
        }
        // Spawns spaced out: the workers park between them and are woken (until one was: on a
        // loaded machine a worker may not have parked yet when the next spawn comes).
        let unparked = |log: &Log| log.lock().unwrap().iter().any(|(_, what)| *what == "unpark");
        while !unparked(&log) {
            std::thread::sleep(Duration::from_millis(2));
            crew::block_on(pool.spawn(async {}));
        }
        drop(pool);
        let threads = per_thread(&log);
        assert_eq!(threads.len(), 2, "{threads:?}");
        for (thread, hooks) in &threads {
            assert!(thread.starts_with("hooked-"), "{thread}");
            assert_life(thread, hooks);
        }
        assert!(threads.values().any(|hooks| hooks.contains(&"unpark")), "{threads:?}");
    });
}

#[test]
fn a_hand_offs_thread_runs_the_start_and_stop_hooks_too() {
    with_timeout(|| {
        let (builder, log) = logging(crew::Pool::builder().workers(1).thread_name("handoff"));
        let pool = builder.build().unwrap();
        // `block_on` inside a task hands the worker's core to another thread.
        crew::block_on(pool.spawn(async { crew::block_on(crew::yield_now()) }));
        let started = pool.metrics().threads_started;
        assert!(started >= 2, "the hand-off started a thread: {started}");
        drop(pool);
        let threads = log.lock().unwrap().iter().filter(|(_, what)| *what == "start").count();
        assert_eq!(threads as u64, started, "one start hook per thread started");
        let stops = log.lock().unwrap().iter().filter(|(_, what)| *what == "stop").count();
        assert_eq!(stops as u64, started, "one stop hook per thread");
    });
}

#[test]
#[cfg_attr(miri, ignore = "blocks a worker for monitor intervals until a takeover: too slow interpreted")]
fn a_takeovers_thread_runs_the_start_hook() {
    with_timeout(|| {
        let (builder, log) =
            logging(crew::Pool::builder().workers(1).thread_name("taken").takeover_after(Duration::from_millis(5)));
        let pool = builder.build().unwrap();
        let (release, blocked) = std::sync::mpsc::channel::<()>();
        let stuck = pool.spawn(async move { blocked.recv().unwrap() });
        // Queued behind the stuck worker: runs only once a takeover's thread runs the core.
        let behind = pool.spawn(async {});
        crew::block_on(behind);
        release.send(()).unwrap();
        crew::block_on(stuck);
        let started = pool.metrics().threads_started;
        assert!(started >= 2, "{started}");
        wait_until("each started thread ran its start hook", || {
            log.lock().unwrap().iter().filter(|(_, what)| *what == "start").count() as u64 == started
        });
        drop(pool);
    });
}

#[test]
fn a_panicking_hook_kills_no_thread_and_no_pool() {
    with_timeout(|| {
        let pool = crew::Pool::builder()
            .workers(2)
            .on_thread_start(|| panic!("expected: a start hook's panic"))
            .on_thread_park(|| panic!("expected: a park hook's panic"))
            .on_thread_unpark(|| panic!("expected: an unpark hook's panic"))
            .on_thread_stop(|| panic!("expected: a stop hook's panic"))
            .build()
            .unwrap();
        for i in 0..50 {
            assert_eq!(crew::block_on(pool.spawn(async move { i })), i);
        }
        std::thread::sleep(Duration::from_millis(2)); // the workers park, then are woken
        assert_eq!(crew::block_on(pool.spawn(async { 7 })), 7);
        assert_eq!(pool.metrics().threads_started, 2, "no thread died and was replaced");
        drop(pool);
    });
}

#[test]
fn thread_name_fn_names_each_worker_by_its_number_and_replaces_the_prefix() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name_fn(|n| format!("api worker #{n}")).build().unwrap();
        let names = common::names_of_concurrent_workers(&pool, 2);
        assert_eq!(names, ["api worker #0", "api worker #1"]);

        // A control character is escaped, not passed to the OS (a NUL would fail the start).
        let pool = crew::Pool::builder().workers(1).thread_name_fn(|n| format!("bad\0{n}")).build().unwrap();
        let name = crew::block_on(pool.spawn(async { thread_name() }));
        assert_eq!(name, "bad\\00");

        // `thread_name` after `thread_name_fn` replaces it.
        let pool =
            crew::Pool::builder().workers(1).thread_name_fn(|n| format!("x{n}")).thread_name("last").build().unwrap();
        assert_eq!(crew::block_on(pool.spawn(async { thread_name() })), "last-0");
    });
}
