//! `Pool::builder()` options take effect (worker count, thread names, stack size, also on the
//! replacement threads `block_on` starts; a bounded spin before parking), and bad values are
//! refused before any thread starts, with an error that names the value and what is accepted.

mod common;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::probe::threads_named;
use common::{assert_all_workers_run, names_of_concurrent_workers, wait_until, with_timeout};

/// The size of the calling thread's stack, as the threads library reports it.
fn current_stack_size() -> usize {
    // SAFETY: `attr` is initialised by `pthread_getattr_np` before it is read, and destroyed
    // once; `pthread_self` is always valid for the calling thread.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        assert_eq!(libc::pthread_getattr_np(libc::pthread_self(), &mut attr), 0);
        let mut size = 0;
        assert_eq!(libc::pthread_attr_getstacksize(&attr, &mut size), 0);
        assert_eq!(libc::pthread_attr_destroy(&mut attr), 0);
        size
    }
}

/// Uses a 2 MiB array on the stack, in a frame of its own: more than a default 2 MiB Rust
/// thread stack holds. Returns `512 * seed`.
#[inline(never)]
fn use_two_mib_of_stack(seed: u8) -> u64 {
    let mut big = [0u8; 2 << 20];
    for byte in big.iter_mut().step_by(4096) {
        *byte = seed;
    }
    std::hint::black_box(&mut big);
    big.iter().step_by(4096).map(|&b| u64::from(b)).sum()
}

#[test]
#[cfg_attr(miri, ignore = "reads /proc/self/task: miri isolates it, and its threads are not the kernel's")]
fn workers_sets_the_number_of_distinct_worker_threads() {
    with_timeout(|| {
        for workers in [1, 2, 3, 5, 8] {
            let prefix = format!("pcw{workers}");
            let pool = crew::Pool::builder().workers(workers).thread_name(&prefix).build().unwrap();
            assert_eq!(pool.workers(), workers);
            // `workers` tasks meet at a barrier: they run on `workers` distinct threads at once,
            // named `{prefix}-0` .. `{prefix}-{workers - 1}`.
            assert_all_workers_run(&pool, &prefix, workers);
            // And there are no more threads than that.
            let expected: Vec<String> = {
                let mut names: Vec<String> = (0..workers).map(|i| format!("{prefix}-{i}")).collect();
                names.sort();
                names
            };
            assert_eq!(threads_named(&format!("{prefix}-")), expected);
            drop(pool);
            wait_until("the pool's threads to exit", || threads_named(&format!("{prefix}-")).is_empty());
        }
    });
}

#[test]
fn thread_name_sets_every_worker_prefix_and_the_default_is_crew_worker() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("pcname").build().unwrap();
        assert_eq!(names_of_concurrent_workers(&pool, 2), ["pcname-0", "pcname-1"]);
        let pool = crew::Pool::builder().workers(2).build().unwrap();
        assert_eq!(names_of_concurrent_workers(&pool, 2), ["crew-worker-0", "crew-worker-1"]);
        // Not a bare prefix: any printable string, in full (only the OS's copy, `comm`,
        // is cut to 15 bytes).
        let pool = crew::Pool::builder().workers(1).thread_name("a pool/with spaces:é").build().unwrap();
        assert_eq!(names_of_concurrent_workers(&pool, 1), ["a pool/with spaces:é-0"]);
    });
}

#[test]
#[cfg_attr(miri, ignore = "reads the stack size with pthread_getattr_np, which miri does not support")]
fn stack_size_applies_to_every_worker_and_replacement_thread() {
    with_timeout(|| {
        const STACK: usize = 8 << 20;
        let pool = crew::Pool::builder().workers(2).thread_name("pcstack").stack_size(STACK).build().unwrap();
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let handles: Vec<_> = (1..=2u8)
            .map(|seed| {
                let barrier = barrier.clone();
                pool.spawn(async move {
                    barrier.wait();
                    let size = current_stack_size();
                    // Checked first: with a smaller stack the next call would crash the process.
                    assert!(size >= STACK, "worker stack is {size} bytes, asked for {STACK}");
                    (thread::current().name().unwrap().to_owned(), use_two_mib_of_stack(seed))
                })
            })
            .collect();
        let mut names: Vec<String> = handles
            .into_iter()
            .map(|handle| {
                let (name, sum) = crew::block_on(handle);
                assert!(sum == 512 || sum == 1024, "{sum}");
                name
            })
            .collect();
        names.sort();
        assert_eq!(names, ["pcstack-0", "pcstack-1"]);

        // `block_on` on a worker hands the worker's core to a replacement thread, which must
        // get the same name and stack size.
        let pool = crew::Pool::builder().workers(1).thread_name("pcrepl").stack_size(STACK).build().unwrap();
        let blocked_on = crew::block_on(pool.spawn(async {
            crew::block_on(crew::yield_now());
            thread::current().id()
        }));
        let (replacement, name, size) = crew::block_on(pool.spawn(async {
            (thread::current().id(), thread::current().name().map(str::to_owned), current_stack_size())
        }));
        assert_ne!(replacement, blocked_on, "the next task runs on the replacement thread");
        assert_eq!(name.as_deref(), Some("pcrepl-0"));
        assert!(size >= STACK, "replacement worker stack is {size} bytes, asked for {STACK}");
        assert_eq!(crew::block_on(pool.spawn(async { use_two_mib_of_stack(7) })), 7 * 512);

        // The smallest accepted size works too.
        let pool = crew::Pool::builder().workers(1).stack_size(crew::config::MIN_STACK_SIZE).build().unwrap();
        let size = crew::block_on(pool.spawn(async { current_stack_size() }));
        assert!(size >= crew::config::MIN_STACK_SIZE, "{size}");
    });
}

/// Builds `builder` and returns the error's message, checking the error's other accessors.
fn build_error(builder: crew::Builder) -> String {
    let err = builder.build().expect_err("an invalid configuration must not build");
    assert!(!err.is_global_already_started());
    assert!(std::error::Error::source(&err).is_none(), "a validation error has no OS cause");
    assert!(!format!("{err:?}").is_empty());
    err.to_string()
}

#[test]
fn bad_worker_counts_are_refused_with_the_value_and_the_range() {
    for (workers, shown) in [(0, "0"), (1025, "1025"), (usize::MAX, "18446744073709551615")] {
        assert_eq!(
            build_error(crew::Pool::builder().workers(workers)),
            format!("Builder::workers({shown}) is invalid: expected a number of worker threads in 1..=1024"),
        );
    }
    assert_eq!(crew::config::MAX_WORKERS, 1024);
    // The limits themselves are accepted.
    assert_eq!(crew::Pool::builder().workers(1).build().unwrap().workers(), 1);
}

#[test]
fn bad_stack_sizes_are_refused_with_the_value_and_the_range() {
    assert_eq!((crew::config::MIN_STACK_SIZE, crew::config::MAX_STACK_SIZE), (65_536, 1_073_741_824));
    for bytes in [0, 1, crew::config::MIN_STACK_SIZE - 1, crew::config::MAX_STACK_SIZE + 1, usize::MAX] {
        assert_eq!(
            build_error(crew::Pool::builder().workers(1).stack_size(bytes)),
            format!("Builder::stack_size({bytes}) is invalid: expected a size in bytes in 65536..=1073741824"),
        );
    }
}

#[test]
fn thread_names_that_would_break_a_line_of_output_are_refused() {
    let expected = "expected printable text: no control character (newline, NUL, escape), line separator, \
                    invisible format character, `\\` or `\"`";
    for (name, shown) in [
        ("a\0b", r#""a\0b""#),
        ("\0", r#""\0""#),
        ("a\nb", r#""a\nb""#),
        ("cr\r", r#""cr\r""#),
        ("\u{1b}[31mred", r#""\u{1b}[31mred""#),
        ("para\u{2028}", r#""para\u{2028}""#),
        ("bidi\u{202e}", r#""bidi\u{202e}""#),
    ] {
        assert_eq!(
            build_error(crew::Pool::builder().workers(1).thread_name(name)),
            format!("Builder::thread_name({shown}) is invalid: {expected}"),
        );
    }
    let pool = crew::Pool::builder().workers(1).thread_name("db pool (café) #2").build().unwrap();
    let name = crew::block_on(pool.spawn(async { std::thread::current().name().map(str::to_owned) }));
    assert_eq!(name.as_deref(), Some("db pool (café) #2-0"));
}

#[test]
fn every_duration_setting_takes_duration_max_without_panicking() {
    let max = Duration::MAX;
    let shown = format!("{max:?}");
    assert_eq!(
        build_error(crew::Pool::builder().workers(1).takeover_after(max)),
        format!("Builder::takeover_after({shown}) is invalid: expected a duration in 1ms..=3600s"),
    );
    assert_eq!(
        build_error(crew::Pool::builder().workers(1).slow_poll_threshold(max)),
        format!("Builder::slow_poll_threshold({shown}) is invalid: expected a duration in 1ms..=3600s"),
    );
    assert_eq!(
        build_error(crew::Pool::builder().workers(1).spin_before_park(max)),
        format!("Builder::spin_before_park({shown}) is invalid: expected a duration in 0s..=1ms"),
    );
    // The longest accepted values start a pool that runs.
    let pool = crew::Pool::builder()
        .workers(1)
        .takeover_after(crew::config::MAX_TAKEOVER_AFTER)
        .slow_poll_threshold(crew::config::MAX_TAKEOVER_AFTER)
        .on_slow_poll(|_| ())
        .spin_before_park(crew::config::MAX_SPIN_BEFORE_PARK)
        .build()
        .unwrap();
    assert_eq!(crew::block_on(pool.spawn(async { 3 })), 3);
    assert!(pool.shutdown_timeout(max), "nothing stuck: every thread finished");
}

#[test]
#[cfg_attr(miri, ignore = "reads /proc/self/task: miri isolates it, and its threads are not the kernel's")]
fn an_invalid_configuration_starts_no_thread() {
    with_timeout(|| {
        let bad = [
            crew::Pool::builder().workers(0).thread_name("pcbad"),
            crew::Pool::builder().workers(4).thread_name("pcbad").stack_size(0),
            crew::Pool::builder().workers(4096).thread_name("pcbad").stack_size(1 << 20),
        ];
        for builder in bad {
            builder.build().unwrap_err();
        }
        assert!(threads_named("pcbad-").is_empty(), "{:?}", threads_named("pcbad-"));
        // The check above would see the threads of a pool that started: a valid one does.
        let pool = crew::Pool::builder().workers(2).thread_name("pcbad").build().unwrap();
        wait_until("a valid pool's threads to start", || threads_named("pcbad-").len() == 2);
        drop(pool);
    });
}

#[test]
fn bad_spins_before_park_are_refused_with_the_value_and_the_range() {
    assert_eq!(crew::config::MAX_SPIN_BEFORE_PARK, Duration::from_millis(1));
    for (spin, shown) in [(Duration::from_nanos(1_000_001), "1.000001ms"), (Duration::from_secs(1), "1s")] {
        assert_eq!(
            build_error(crew::Pool::builder().workers(1).spin_before_park(spin)),
            format!("Builder::spin_before_park({shown}) is invalid: expected a duration in 0s..=1ms"),
        );
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "spins on the clock for a millisecond each time a worker runs dry: hours under miri; the other tests run the default, no spin, under miri"
)]
fn pools_that_spin_for_the_longest_time_or_not_at_all_run_every_task() {
    with_timeout(|| {
        for spin in [Duration::ZERO, crew::config::MAX_SPIN_BEFORE_PARK] {
            let pool = crew::Pool::builder().workers(2).spin_before_park(spin).build().unwrap();
            let handles: Vec<_> = (0..1_000).map(|i| pool.spawn(async move { i })).collect();
            let outputs: Vec<usize> = handles.into_iter().map(crew::block_on).collect();
            assert_eq!(outputs, (0..1_000).collect::<Vec<_>>(), "spin {spin:?}");
        }
    });
}

/// A spin is bounded: once the work runs out, every worker of a pool that spins for the
/// longest accepted time still parks (its park count passes its wake count).
#[test]
#[cfg_attr(miri, ignore = "spins on the clock for a millisecond per worker: slow under miri for no gain")]
fn workers_that_spin_before_parking_still_park_once_the_work_runs_out() {
    with_timeout(|| {
        let pool =
            crew::Pool::builder().workers(2).spin_before_park(crew::config::MAX_SPIN_BEFORE_PARK).build().unwrap();
        for i in 0..100 {
            assert_eq!(crew::block_on(pool.spawn(async move { i })), i);
        }
        wait_until("both workers to park after their spin", || {
            let metrics = pool.metrics();
            metrics.workers.len() == 2 && metrics.workers.iter().all(|worker| worker.parks > worker.unparks)
        });
    });
}
