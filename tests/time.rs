//! `crew::time`: sleeps complete no earlier than their deadline, 100,000 concurrent sleeps cost no
//! thread each, `timeout` gives `Ok`/`Err(Elapsed)` and drops the timed-out future (its accessors
//! reach the future until then, and panic after), a dropped timer releases its waker and never
//! wakes, `interval` keeps its schedule (burst catch-up), and timers fire on a pool whose workers
//! alone turn crew's driver. `tests/interval.rs` has the other missed-tick behaviours.
//!
//! The only timing assertions are "no earlier than the deadline" (a correctness property); every
//! wait is otherwise bounded only by the hang timeout of `tests/common`.

// Not under miri: a timer that has to wait makes crew's driver (epoll), whose real-time waits an
// interpreter stretches past any bound worth setting; the few tests that never register a timer
// are not worth that fragility.
#![cfg(not(miri))]

mod common;

use std::future::Future;
use std::panic;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use crew::time::{interval, interval_at, sleep, sleep_until, timeout, timeout_at, Elapsed, Timeout};
use futures::FutureExt;

use common::{payload_message, wait_until, with_timeout, DropCounter};

/// Concurrent sleeps in the thread-count test.
const SLEEPS: usize = 100_000;

/// A waker that counts its wakes; its `Arc`'s strong count tells how many clones are alive.
#[derive(Debug, Default)]
struct CountingWaker {
    wakes: AtomicUsize,
}

impl CountingWaker {
    fn wakes(&self) -> usize {
        self.wakes.load(Ordering::SeqCst)
    }
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `future` once on this thread with a fresh [`CountingWaker`].
fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let waker = Waker::from(Arc::new(CountingWaker::default()));
    Pin::new(future).poll(&mut Context::from_waker(&waker))
}

/// This process's thread count, from `/proc/self/status`.
fn process_threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status.lines().find(|line| line.starts_with("Threads:")).expect("a Threads: line");
    line["Threads:".len()..].trim().parse().expect("a thread count")
}

/// A small deterministic spread of durations in `1..=50` ms (xorshift of `i`).
fn millis_for(i: usize) -> Duration {
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    Duration::from_millis(1 + x % 50)
}

/// How many tests of this binary may run at once: `--test-threads`, else `RUST_TEST_THREADS`,
/// else the available parallelism (libtest's own order of precedence).
fn test_threads() -> usize {
    let args: Vec<String> = std::env::args().collect();
    let from_args = args.iter().enumerate().find_map(|(i, arg)| match arg.strip_prefix("--test-threads") {
        Some(rest) if rest.starts_with('=') => rest[1..].parse().ok(),
        Some("") => args.get(i + 1)?.parse().ok(),
        _ => None,
    });
    from_args
        .or_else(|| std::env::var("RUST_TEST_THREADS").ok()?.parse().ok())
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, usize::from))
}

#[test]
fn sleep_completes_no_earlier_than_its_duration() {
    with_timeout(|| {
        for millis in [0, 1, 5, 20] {
            let duration = Duration::from_millis(millis);
            // On a worker of the global pool...
            let waited = crew::block_on(crew::spawn(async move {
                let start = Instant::now();
                sleep(duration).await;
                start.elapsed()
            }));
            assert!(waited >= duration, "sleep({duration:?}) on a worker returned after {waited:?}");
            // ...and on a thread in crew::block_on.
            let start = Instant::now();
            crew::block_on(sleep(duration));
            let waited = start.elapsed();
            assert!(waited >= duration, "sleep({duration:?}) in block_on returned after {waited:?}");
        }
    });
}

#[test]
fn sleep_until_completes_no_earlier_than_its_deadline() {
    with_timeout(|| {
        for millis in [1, 5, 20] {
            let deadline = Instant::now() + Duration::from_millis(millis);
            let woke = crew::block_on(crew::spawn(async move {
                sleep_until(deadline).await;
                Instant::now()
            }));
            assert!(woke >= deadline, "sleep_until woke {:?} early", deadline - woke);
            let nap = sleep_until(deadline);
            assert_eq!(nap.deadline(), Some(deadline));
        }
        // A deadline in the past completes at the first poll.
        let mut past = sleep_until(Instant::now() - Duration::from_millis(1));
        assert_eq!(poll_once(&mut past), Poll::Ready(()));
    });
}

#[test]
fn a_hundred_thousand_concurrent_sleeps_complete_without_a_thread_each() {
    with_timeout(|| {
        const WORKERS: usize = 2;
        // Takeover off: under a slow build (ThreadSanitizer) polls here can pass its threshold and
        // add threads, which this test, counting threads against timers, would misread.
        let pool = crew::Pool::builder().workers(WORKERS).thread_name("sleepy").takeover(false).build().unwrap();
        // Everything this test binary may run at once besides the sleeps: the main thread, a
        // harness thread and a `with_timeout` body per concurrently running test, the global
        // pool's workers, this pool's workers, the 1-worker pool of another test, the test
        // watchdog, and slack for other tests' short-lived pools. A
        // thread per timer (or per thousand timers) would exceed it by far.
        let test_threads = test_threads();
        let global_workers =
            std::env::var(crew::config::WORKERS_ENV).ok().and_then(|n| n.parse().ok()).unwrap_or_else(num_cpus::get);
        let bound = 1 + 2 * test_threads + global_workers + WORKERS + 1 + 2 + 8;

        // Every task waits at a gate first, so that all the timers are registered at once.
        let (open, gate) = futures::channel::oneshot::channel::<()>();
        let gate = gate.shared();
        let started = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let early = Arc::new(AtomicUsize::new(0));
        for i in 0..SLEEPS {
            let (gate, started, done, early) = (gate.clone(), started.clone(), done.clone(), early.clone());
            pool.spawn(async move {
                let _ = gate.await;
                let duration = millis_for(i);
                let start = Instant::now();
                started.fetch_add(1, Ordering::SeqCst);
                sleep(duration).await;
                if start.elapsed() < duration {
                    early.fetch_add(1, Ordering::SeqCst);
                }
                done.fetch_add(1, Ordering::SeqCst);
            })
            .detach();
        }
        drop(gate);
        let before = process_threads();
        open.send(()).unwrap();

        // Sample the thread count until every sleep has completed.
        let (mut most, mut samples, mut pending_seen) = (before, 0usize, 0usize);
        wait_until("all the sleeps complete", || {
            let threads = process_threads();
            most = most.max(threads);
            samples += 1;
            let pending = started.load(Ordering::SeqCst) - done.load(Ordering::SeqCst);
            pending_seen = pending_seen.max(pending);
            done.load(Ordering::SeqCst) == SLEEPS
        });
        assert_eq!(early.load(Ordering::SeqCst), 0, "sleeps that completed before their duration");
        assert!(
            most <= bound,
            "the process ran {most} threads (before: {before}) while sleeps were pending; expected at most {bound}"
        );
        eprintln!(
            "{SLEEPS} sleeps: at most {most} threads (bound {bound}, {before} before), {samples} samples, \
             up to {pending_seen} sleeps pending at once"
        );
    });
}

#[test]
fn timeout_returns_ok_when_the_future_finishes_first() {
    with_timeout(|| {
        let output = crew::block_on(crew::spawn(async {
            timeout(Duration::from_secs(3600), async {
                sleep(Duration::from_millis(1)).await;
                7
            })
            .await
        }));
        assert_eq!(output, Ok(7));
        let deadline = Instant::now() + Duration::from_secs(3600);
        assert_eq!(crew::block_on(timeout_at(deadline, async { "in time" })), Ok("in time"));
    });
}

#[test]
fn timeout_expiry_gives_elapsed_and_drops_the_future() {
    with_timeout(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let guard = DropCounter(drops.clone());
        let limit = Duration::from_millis(10);
        let (result, waited) = crew::block_on(crew::spawn(async move {
            let start = Instant::now();
            let result = timeout(limit, async move {
                let _guard = guard;
                std::future::pending::<()>().await;
            })
            .await;
            (result, start.elapsed())
        }));
        let err: Elapsed = result.unwrap_err();
        assert!(waited >= limit, "timed out after {waited:?}, before its {limit:?}");
        assert_eq!(err.limit(), Some(limit));
        assert_eq!(err.to_string(), "crew::time::timeout: the future did not finish within 10ms");
        assert_eq!(drops.load(Ordering::SeqCst), 1, "the timed-out future is dropped once");

        let guard = DropCounter(drops.clone());
        let deadline = Instant::now() + Duration::from_millis(5);
        let err = crew::block_on(timeout_at(deadline, async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }))
        .unwrap_err();
        assert!(Instant::now() >= deadline);
        assert_eq!(err.limit(), None);
        assert_eq!(err.to_string(), "crew::time::timeout_at: the future did not finish before its deadline");
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    });
}

#[test]
fn a_timeout_drops_its_future_when_it_returns_and_panics_if_polled_again() {
    with_timeout(|| {
        for expire in [true, false] {
            let drops = Arc::new(AtomicUsize::new(0));
            let guard = DropCounter(drops.clone());
            let limit = if expire { Duration::ZERO } else { Duration::from_secs(3600) };
            let mut limited = Box::pin(timeout(limit, async move {
                let _guard = guard;
                if expire {
                    std::future::pending::<()>().await;
                }
            }));
            // Awaited through a reference: the `Timeout` itself lives on after its result.
            let result = crew::block_on(&mut limited);
            assert_eq!(result.is_err(), expire);
            assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped when the result came (expired: {expire})");
            let again = panic::catch_unwind(panic::AssertUnwindSafe(|| poll_once(&mut limited))).unwrap_err();
            assert_eq!(
                payload_message(again.as_ref()),
                Some("crew::time::Timeout polled after it returned its result")
            );
            drop(limited);
            assert_eq!(drops.load(Ordering::SeqCst), 1);
        }
    });
}

/// A future that is ready at its `ready_at`th poll, with the number of polls so far: state that
/// a `Timeout`'s accessors can read and change.
#[derive(Debug)]
struct ReadyAtPoll {
    polls: usize,
    ready_at: usize,
}

impl Future for ReadyAtPoll {
    type Output = usize;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<usize> {
        self.polls += 1;
        if self.polls >= self.ready_at {
            Poll::Ready(self.polls)
        } else {
            Poll::Pending
        }
    }
}

#[test]
fn timeout_accessors_reach_the_future_it_runs() {
    with_timeout(|| {
        let mut limited = timeout(Duration::from_secs(3600), ReadyAtPoll { polls: 0, ready_at: 3 });
        assert_eq!(poll_once(&mut limited), Poll::Pending);
        assert_eq!(limited.get_ref().polls, 1, "get_ref sees the future the timeout polled");
        // Changed through get_mut: ready at the next poll instead of the one after.
        limited.get_mut().ready_at = 2;
        assert_eq!(poll_once(&mut limited), Poll::Ready(Ok(2)));

        let mut limited = timeout(Duration::ZERO, ReadyAtPoll { polls: 0, ready_at: 3 });
        assert_eq!(poll_once(limited.get_mut()), Poll::Pending);
        // Out of the timeout: no limit any more (this one's, zero, would have expired).
        let mut inner = limited.into_inner();
        assert_eq!(inner.polls, 1);
        assert_eq!(poll_once(&mut inner), Poll::Pending);
        assert_eq!(poll_once(&mut inner), Poll::Ready(3));
    });
}

#[test]
fn timeout_accessors_panic_naming_the_rule_after_the_result_was_returned() {
    type Accessor = fn(Timeout<ReadyAtPoll>);
    let accessors: [(&str, Accessor); 3] = [
        ("get_ref", |limited| {
            limited.get_ref();
        }),
        ("get_mut", |mut limited| {
            limited.get_mut();
        }),
        ("into_inner", |limited| {
            limited.into_inner();
        }),
    ];
    with_timeout(move || {
        for (name, accessor) in accessors {
            for expire in [true, false] {
                let (limit, ready_at) =
                    if expire { (Duration::ZERO, usize::MAX) } else { (Duration::from_secs(3600), 1) };
                let mut limited = timeout(limit, ReadyAtPoll { polls: 0, ready_at });
                assert!(matches!(poll_once(&mut limited), Poll::Ready(result) if result.is_err() == expire));
                let payload = panic::catch_unwind(panic::AssertUnwindSafe(|| accessor(limited))).unwrap_err();
                assert_eq!(
                    payload_message(payload.as_ref()),
                    Some(
                        format!(
                            "crew::time::Timeout::{name} called after the timeout returned its result: a Timeout \
                             drops its future when it returns, so there is no future left"
                        )
                        .as_str()
                    ),
                    "expired: {expire}"
                );
            }
        }
    });
}

#[test]
fn a_zero_timeout_is_ok_for_a_ready_future_and_err_for_a_pending_one() {
    with_timeout(|| {
        assert_eq!(crew::block_on(timeout(Duration::ZERO, async { 5 })), Ok(5));
        assert_eq!(crew::block_on(timeout(Duration::ZERO, std::future::ready(6))), Ok(6));
        let err = crew::block_on(timeout(Duration::ZERO, std::future::pending::<()>())).unwrap_err();
        assert_eq!(err.limit(), Some(Duration::ZERO));
        // A single poll decides both, with no reactor involved.
        assert_eq!(poll_once(&mut Box::pin(timeout(Duration::ZERO, async { 1 }))), Poll::Ready(Ok(1)));
        assert!(matches!(
            poll_once(&mut Box::pin(timeout(Duration::ZERO, std::future::pending::<()>()))),
            Poll::Ready(Err(_))
        ));
        // Same from a worker.
        let on_worker = crew::block_on(crew::spawn(timeout(Duration::ZERO, std::future::pending::<()>())));
        assert!(on_worker.is_err());
    });
}

#[test]
fn a_dropped_sleep_releases_its_waker_and_never_wakes() {
    with_timeout(|| {
        let counter = Arc::new(CountingWaker::default());
        let waker = Waker::from(counter.clone());
        let mut nap = sleep(Duration::from_millis(50));
        let deadline = nap.deadline().unwrap();
        assert_eq!(Pin::new(&mut nap).poll(&mut Context::from_waker(&waker)), Poll::Pending);
        assert!(Arc::strong_count(&counter) > 2, "the timer holds a clone of the waker while pending");
        drop(nap);
        drop(waker);
        // The reactor drops its clone when it next processes timer operations (at the latest
        // when it wakes for the removed deadline).
        wait_until("the reactor drops its clone of the waker", || Arc::strong_count(&counter) == 1);
        while Instant::now() <= deadline + Duration::from_millis(20) {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(counter.wakes(), 0, "a dropped timer never wakes its task");
    });
}

#[test]
fn a_task_cancelled_while_sleeping_is_never_polled_again() {
    with_timeout(|| {
        let polls = Arc::new(AtomicUsize::new(0));
        let drops = Arc::new(AtomicUsize::new(0));
        let (polls2, guard) = (polls.clone(), DropCounter(drops.clone()));
        let handle = crew::spawn(async move {
            let _guard = guard;
            polls2.fetch_add(1, Ordering::SeqCst);
            sleep(Duration::from_millis(30)).await;
            polls2.fetch_add(1, Ordering::SeqCst);
        });
        wait_until("the task is sleeping", || polls.load(Ordering::SeqCst) == 1);
        assert_eq!(crew::block_on(handle.cancel()), None);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        crew::block_on(sleep(Duration::from_millis(60)));
        assert_eq!(polls.load(Ordering::SeqCst), 1, "no code after the sleep ran");
    });
}

#[test]
fn a_completed_sleep_stays_ready() {
    with_timeout(|| {
        let mut nap = sleep(Duration::from_millis(1));
        crew::block_on(&mut nap);
        for _ in 0..3 {
            assert_eq!(poll_once(&mut nap), Poll::Ready(()));
        }
        // Also after a reset to a past instant.
        nap.reset(Instant::now());
        assert_eq!(poll_once(&mut nap), Poll::Ready(()));
    });
}

#[test]
fn interval_ticks_in_order_at_start_plus_n_periods() {
    with_timeout(|| {
        let period = Duration::from_millis(3);
        let start = Instant::now() + Duration::from_millis(2);
        let dues = crew::block_on(crew::spawn(async move {
            let mut every = interval_at(start, period);
            assert_eq!(every.period(), period);
            let mut dues = Vec::new();
            for _ in 0..6 {
                let due = every.tick().await;
                assert!(Instant::now() >= due, "a tick completed before it was due");
                dues.push(due);
            }
            dues
        }));
        let expected: Vec<Instant> = (0..6).map(|n| start + period * n).collect();
        assert_eq!(dues, expected);
    });
}

#[test]
fn interval_ticks_first_at_once() {
    with_timeout(|| {
        let before = Instant::now();
        let mut every = interval(Duration::from_secs(3600));
        let after = Instant::now();
        // The first tick is due at creation, so one poll completes it: no reactor round trip.
        let Poll::Ready(first) = poll_once(&mut Box::pin(every.tick())) else {
            panic!("the first tick of an interval is pending");
        };
        assert!(before <= first && first <= after);
        assert_eq!(every.tick_due(), Some(first + Duration::from_secs(3600)));
        assert_eq!(poll_once(&mut Box::pin(every.tick())), Poll::Pending);
    });
}

#[test]
fn interval_catches_up_in_a_burst_after_a_stall() {
    with_timeout(|| {
        let period = Duration::from_millis(10);
        let start = Instant::now();
        let mut every = interval_at(start, period);
        assert_eq!(crew::block_on(every.tick()), start);
        // Stall past five more ticks.
        while Instant::now() < start + period * 5 {
            thread::sleep(Duration::from_millis(5));
        }
        // The missed ticks complete back to back, each at one poll, on the original schedule.
        for n in 1..=5 {
            assert_eq!(poll_once(&mut Box::pin(every.tick())), Poll::Ready(start + period * n));
        }
        // And the schedule carries on from there, not from the stall.
        assert_eq!(every.tick_due(), Some(start + period * 6));
        assert_eq!(crew::block_on(every.tick()), start + period * 6);
    });
}

#[test]
fn interval_with_a_zero_period_panics_naming_the_value() {
    for make in [(|| drop(interval(Duration::ZERO))) as fn(), || drop(interval_at(Instant::now(), Duration::ZERO))] {
        let payload = panic::catch_unwind(make).unwrap_err();
        let message = payload_message(&*payload).expect("a string panic message");
        assert_eq!(message, "crew::time::interval: the period must be greater than zero, got 0ns");
    }
}

#[test]
fn timers_fire_on_a_private_pool_whose_workers_alone_turn_the_driver() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(1).build().unwrap();
        // This thread waits on a std channel, not in `block_on`: the pool's worker is the only
        // thread that turns crew's driver.
        let (done, results) = std::sync::mpsc::channel();
        pool.spawn(async move {
            let start = Instant::now();
            sleep(Duration::from_millis(5)).await;
            let slept = start.elapsed();
            let mut every = interval(Duration::from_millis(2));
            let mut ticks = Vec::new();
            for _ in 0..3 {
                ticks.push(every.tick().await);
            }
            let timed_out = timeout(Duration::from_millis(3), std::future::pending::<()>()).await;
            // Many timers across the one worker at once.
            let handles: Vec<_> = (0..100).map(|i| crew::spawn(sleep(millis_for(i)))).collect();
            for handle in handles {
                handle.await;
            }
            done.send((slept, ticks, timed_out)).unwrap();
        })
        .detach();
        let (slept, ticks, timed_out) = results.recv().unwrap();
        assert!(slept >= Duration::from_millis(5), "slept only {slept:?}");
        assert_eq!(ticks[1] - ticks[0], Duration::from_millis(2));
        assert_eq!(ticks[2] - ticks[1], Duration::from_millis(2));
        assert!(timed_out.is_err());
    });
}

#[test]
fn huge_durations_never_fire_and_never_panic() {
    with_timeout(|| {
        let mut forever = sleep(Duration::MAX);
        assert_eq!(forever.deadline(), None);
        assert_eq!(poll_once(&mut forever), Poll::Pending);
        // A reset makes it an ordinary sleep again.
        forever.reset(Instant::now());
        assert!(forever.deadline().is_some());
        crew::block_on(&mut forever);

        assert_eq!(crew::block_on(timeout(Duration::MAX, async { 1 })), Ok(1));
        let mut never = Box::pin(timeout(Duration::MAX, std::future::pending::<()>()));
        assert_eq!(poll_once(&mut never), Poll::Pending);
        // A timeout with a huge limit inside a task: the task finishes when the future does.
        let output = crew::block_on(crew::spawn(timeout(Duration::MAX, async {
            sleep(Duration::from_millis(1)).await;
            2
        })));
        assert_eq!(output, Ok(2));

        // An interval whose second tick overflows `Instant`: one tick, then none.
        let mut every = interval(Duration::MAX);
        crew::block_on(every.tick());
        assert_eq!(every.tick_due(), None);
        assert_eq!(poll_once(&mut Box::pin(every.tick())), Poll::Pending);
    });
}
