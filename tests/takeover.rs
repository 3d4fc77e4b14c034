//! Automatic takeover of workers stuck inside one poll (`src/scheduler/takeover/monitor.rs`), the
//! slow-poll reports, `block_in_place` and `Pool::shutdown_timeout`.
//!
//! Every test waits for events (a channel, a counter, a report), never for time: a hang becomes
//! a failure through `with_timeout`, and no assertion depends on how fast anything runs. The
//! takeover threshold is set low (its minimum, 1 ms) only so that the tests finish soon.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{wait_until, with_timeout, Counted, Counts};
use crew::{SlowPoll, SlowPollKind};

/// The shortest takeover threshold, so that the tests run quickly.
const QUICK: Duration = crew::config::MIN_TAKEOVER_AFTER;

/// The reports a pool's hook received.
#[derive(Clone, Default)]
struct Reports(Arc<Mutex<Vec<SlowPoll>>>);

impl Reports {
    fn hook(&self) -> impl Fn(&SlowPoll) + Send + Sync + 'static {
        let reports = self.0.clone();
        move |report| reports.lock().unwrap().push(report.clone())
    }

    fn of(&self, kind: SlowPollKind) -> Vec<SlowPoll> {
        self.0.lock().unwrap().iter().filter(|report| report.kind() == kind).cloned().collect()
    }
}

#[test]
fn every_worker_blocked_until_the_queue_drains_still_completes() {
    for workers in [1, 2, 4] {
        with_timeout(move || {
            let pool = crew::Pool::builder().workers(workers).takeover_after(QUICK).build().unwrap();
            common::stuck::blocked_workers_release_after_the_queue(workers, |builder, task| {
                builder.spawn_on(&pool, task)
            });
        });
    }
}

#[test]
fn a_taken_over_poll_delivers_its_output_and_its_later_wakes_once() {
    with_timeout(|| {
        let reports = Reports::default();
        let pool = crew::Pool::builder().workers(1).takeover_after(QUICK).on_slow_poll(reports.hook()).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (later_tx, later_rx) = futures::channel::oneshot::channel::<u32>();
        let counts = Counts::new();
        let stuck = pool.spawn(Counted::new(&counts, async move {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap(); // stuck in this first poll
            later_rx.await.unwrap() + 1 // a later wake, after the takeover
        }));
        started_rx.recv().unwrap();
        // A task queued behind the stuck one: runs only on the thread that took over.
        let behind = pool.spawn(async { std::thread::current().name().map(str::to_owned) });
        let behind = crew::block_on(behind);
        assert_eq!(behind.as_deref(), Some("crew-worker-0"), "the new thread runs as worker 0");
        wait_until("the takeover is reported", || !reports.of(SlowPollKind::TakenOver).is_empty());
        release_tx.send(()).unwrap();
        // The stuck poll returns `Pending` on the channel: its end is reported.
        wait_until("the stuck poll's end is reported", || !reports.of(SlowPollKind::Returned).is_empty());
        later_tx.send(41).unwrap();
        assert_eq!(crew::block_on(stuck), 42);
        assert_eq!(counts.polls(), 2, "the first poll (taken over) and the one after the wake");
        let taken = &reports.of(SlowPollKind::TakenOver)[0];
        assert_eq!(taken.worker(), 0);
        assert!(taken.elapsed() >= QUICK, "{taken}");
        drop(pool);
        assert_eq!(counts.drops(), 1);
    });
}

#[test]
#[cfg_attr(miri, ignore = "lists the threads in /proc/self/task, which miri's isolation blocks")]
fn cpu_bound_polls_on_every_worker_stay_within_the_cap() {
    with_timeout(|| {
        const WORKERS: usize = 2;
        const CAP: usize = 2;
        let reports = Reports::default();
        let pool = crew::Pool::builder()
            .workers(WORKERS)
            .thread_name("capped")
            .takeover_after(QUICK)
            .max_stuck_threads(CAP)
            .on_slow_poll(reports.hook())
            .build()
            .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let spinners: Vec<_> = (0..20)
            .map(|_| {
                let stop = stop.clone();
                pool.spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        // Takeovers until every spare core is used, then the cap is reported.
        wait_until("a takeover refused at the cap", || !reports.of(SlowPollKind::CapReached).is_empty());
        assert_eq!(reports.of(SlowPollKind::TakenOver).len(), CAP, "one takeover per spare core, no more");
        let threads = common::probe::threads_named("capped-");
        assert!(threads.len() <= WORKERS + CAP, "{threads:?}");
        stop.store(true, Ordering::Relaxed);
        for spinner in spinners {
            crew::block_on(spinner);
        }
    });
}

#[test]
#[cfg_attr(miri, ignore = "did not finish within its 60 s hang guard under miri (2026-11-23; not analysed)")]
fn reports_name_the_task_its_spawn_location_and_its_worker() {
    with_timeout(|| {
        let reports = Reports::default();
        let pool = crew::Pool::builder()
            .workers(1)
            .takeover(false)
            .slow_poll_threshold(QUICK)
            .on_slow_poll(reports.hook())
            .build()
            .unwrap();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (builder, task) = (crew::task::Builder::new().name("slowpoke"), async move { release_rx.recv().unwrap() });
        let (handle, line) = (builder.spawn_on(&pool, task), line!());
        wait_until("the slow poll is reported", || !reports.of(SlowPollKind::Slow).is_empty());
        release_tx.send(()).unwrap();
        crew::block_on(handle);
        wait_until("its end is reported", || !reports.of(SlowPollKind::Returned).is_empty());
        for report in [&reports.of(SlowPollKind::Slow)[0], &reports.of(SlowPollKind::Returned)[0]] {
            let task = report.task().expect("the hook records each poll's task");
            assert_eq!(task.name(), Some("slowpoke"));
            assert_eq!((task.location().file(), task.location().line()), (file!(), line));
            assert_eq!(report.worker(), 0);
            let shown = report.to_string();
            assert!(shown.contains("\"slowpoke\"") && shown.contains(&format!("{}:{line}", file!())), "{shown}");
        }
        let slow = &reports.of(SlowPollKind::Slow)[0];
        let returned = &reports.of(SlowPollKind::Returned)[0];
        assert!(returned.elapsed() >= slow.elapsed(), "{slow} / {returned}");
        assert!(reports.of(SlowPollKind::TakenOver).is_empty(), "takeover is off");
    });
}

#[test]
fn block_in_place_hands_the_queue_to_another_thread_at_once() {
    with_timeout(|| {
        // Takeover off: only `block_in_place` can let the queued task run.
        let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
        let (tx, rx) = mpsc::channel::<u32>();
        let (queued_tx, queued_rx) = mpsc::channel::<()>();
        let waiting = pool.spawn(async move {
            queued_rx.recv().unwrap();
            crew::block_in_place(|| rx.recv().unwrap())
        });
        let sender = pool.spawn(async move { tx.send(5).unwrap() });
        queued_tx.send(()).unwrap();
        assert_eq!(crew::block_on(waiting), 5);
        crew::block_on(sender);
        // Outside a worker it just runs the closure.
        assert_eq!(crew::block_in_place(|| 3), 3);
    });
}

#[test]
fn shutdown_timeout_reports_a_thread_stuck_in_a_poll_and_drops_what_it_can_reach() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let stuck = pool.spawn(async move {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
        });
        started_rx.recv().unwrap();
        let counts = Counts::new();
        let queued = pool.spawn(Counted::new(&counts, async {}));
        assert!(!pool.shutdown_timeout(Duration::from_millis(10)), "the stuck thread cannot have finished");
        release_tx.send(()).unwrap();
        crew::block_on(stuck);
        // The queued task sat on the stuck worker's deque: that thread drops it on its way out.
        wait_until("the queued task is dropped", || counts.drops() == 1);
        assert_eq!(counts.polls(), 0);
        let err = crew::block_on(crew::spawn_with(crew::Catch, queued)).unwrap_err();
        assert!(err.is_panic(), "awaiting a task its pool dropped panics under Propagate");

        let pool = crew::Pool::builder().workers(2).build().unwrap();
        assert_eq!(crew::block_on(pool.spawn(async { 1 })), 1);
        assert!(pool.shutdown_timeout(Duration::from_secs(60)), "nothing stuck: every thread finished");
    });
}

#[test]
fn shutdown_timeout_of_duration_max_waits_for_a_stuck_poll_without_overflowing() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
        let (started_tx, started_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let stuck = pool.spawn(async move {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            9
        });
        started_rx.recv().unwrap();
        let counts = Counts::new();
        let queued = pool.spawn(Counted::new(&counts, async {}));
        // A deadline past the clock's range is no deadline: shutdown waits for the stuck poll.
        let spawner = pool.spawner();
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::spawn(move || done_tx.send(pool.shutdown_timeout(Duration::MAX)).unwrap());
        wait_until("the shutdown begins", || spawner.is_shut_down());
        assert!(done_rx.try_recv().is_err(), "the shutdown waits for the stuck poll");
        release_tx.send(()).unwrap();
        assert!(done_rx.recv().unwrap(), "every thread finished: the shutdown waited for the poll");
        assert_eq!(crew::block_on(stuck), 9);
        assert_eq!((counts.polls(), counts.drops()), (0, 1), "the queued task was dropped once, unpolled");
        drop(queued);
    });
}

#[test]
#[cfg_attr(miri, ignore = "blocks threads for many monitor intervals; too slow interpreted")]
fn a_steady_blocking_mix_reuses_the_threads_it_starts() {
    with_timeout(|| {
        const ROUNDS: usize = 20;
        let pool = crew::Pool::builder().workers(1).takeover_after(QUICK).build().unwrap();
        for round in 0..ROUNDS {
            // A task that blocks its worker until the task queued behind it runs: a takeover.
            let (tx, rx) = mpsc::channel::<()>();
            let blocked = pool.spawn(async move { rx.recv().unwrap() });
            let behind = pool.spawn(async move { tx.send(()).unwrap() });
            crew::block_on(behind);
            crew::block_on(blocked);
            // The stuck thread's poll returned: it waits as a spare for the next takeover.
            wait_until("the stuck thread waits as a spare", || pool.metrics().spare_threads == 1);
            let metrics = pool.metrics();
            assert_eq!(metrics.total.takeovers, round as u64 + 1, "{metrics}");
        }
        let metrics = pool.metrics();
        // The first worker and one thread for the first takeover; every later takeover ran on
        // the spare the one before left.
        assert_eq!(metrics.threads_started, 2, "{metrics}");
        assert!(metrics.to_string().contains("threads started 2 (1 spare)"), "{metrics}");
        drop(pool); // the spare gives up at once: the drop joins it
    });
}

#[test]
#[cfg_attr(miri, ignore = "spare threads' timed waits: too slow interpreted")]
fn hand_offs_reuse_a_spare_thread() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).takeover(false).build().unwrap();
        for round in 0..5u64 {
            // `block_on` on a worker hands its core to another thread first.
            let nested = pool.spawn(async move { crew::block_on(async move { round }) });
            assert_eq!(crew::block_on(nested), round);
            wait_until("the blocked thread waits as a spare", || pool.metrics().spare_threads == 1);
        }
        assert_eq!(pool.metrics().threads_started, 2, "{}", pool.metrics());
    });
}
