//! A paused pool's clock (`Builder::start_paused`): timers read virtual time that moves only by
//! `crew::time::advance` or when the pool has nothing else to do, on pools of many workers.
//! Real time is only ever a bound that turns a hang into a failure, never a measurement.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crew::time::{self, advance, interval, now, sleep, timeout};

fn paused(workers: usize) -> crew::Pool {
    crew::Pool::builder().workers(workers).start_paused(true).build().unwrap()
}

/// Far more than any of these tests takes (interpreted by miri too), far less than the virtual
/// spans they cover: a bound that turns real waiting into a failure, not a measurement.
const REAL_BOUND: Duration = Duration::from_secs(1800);

#[test]
fn an_hour_long_timeout_fires_at_once_on_a_paused_two_worker_pool() {
    let pool = paused(2);
    let real = Instant::now();
    let (waited, result) = pool.block_on(async {
        let start = now();
        let result = timeout(Duration::from_secs(3600), std::future::pending::<()>()).await;
        (now() - start, result)
    });
    assert!(result.is_err());
    assert_eq!(waited, Duration::from_secs(3600));
    assert!(real.elapsed() < REAL_BOUND);
}

#[test]
fn a_task_that_finishes_first_beats_its_timeout() {
    let pool = paused(2);
    let outcome = pool.block_on(async {
        let start = now();
        let task = crew::spawn(async {
            sleep(Duration::from_secs(59)).await;
            "done"
        });
        let result = timeout(Duration::from_secs(60), task).await;
        (result, now() - start)
    });
    assert_eq!(outcome, (Ok("done"), Duration::from_secs(59)));
    // And the other way round: the timeout first, at its own deadline.
    let outcome = pool.block_on(async {
        let start = now();
        let task = crew::spawn(sleep(Duration::from_secs(61)));
        let result = timeout(Duration::from_secs(60), task).await;
        (result.is_err(), now() - start)
    });
    assert_eq!(outcome, (true, Duration::from_secs(60)));
}

#[test]
fn intervals_tick_on_the_virtual_clock_in_order() {
    let pool = paused(2);
    let real = Instant::now();
    let ticks = pool.block_on(async {
        let log = Arc::new(Mutex::new(Vec::new()));
        let start = now();
        let tasks: Vec<_> = [(7u64, "seven"), (3, "three")]
            .into_iter()
            .map(|(minutes, name)| {
                let log = log.clone();
                crew::spawn(async move {
                    let mut every = interval(Duration::from_secs(60 * minutes));
                    for _ in 0..4 {
                        let due = every.tick().await;
                        log.lock().unwrap().push(((due - start).as_secs() / 60, name));
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await;
        }
        let mut ticks = log.lock().unwrap().clone();
        ticks.sort();
        ticks
    });
    let mut expected: Vec<(u64, &str)> =
        (0..4).map(|n| (7 * n, "seven")).chain((0..4).map(|n| (3 * n, "three"))).collect();
    expected.sort();
    assert_eq!(ticks, expected);
    assert!(real.elapsed() < REAL_BOUND);
}

#[test]
fn advance_fires_in_deadline_order_and_lets_each_wake_run() {
    let pool = paused(2);
    let order = pool.block_on(async {
        let order = Arc::new(Mutex::new(Vec::new()));
        let start = now();
        // Made in an order unlike their deadlines.
        for seconds in [30u64, 10, 20, 40] {
            let order = order.clone();
            crew::spawn(async move {
                sleep(Duration::from_secs(seconds)).await;
                // Each woken task sees the clock at its own deadline: the clock waited for it.
                order.lock().unwrap().push((seconds, (now() - start).as_secs()));
            })
            .detach();
        }
        advance(Duration::from_secs(35)).await;
        assert_eq!(now() - start, Duration::from_secs(35), "the advance stops at its target");
        let seen = order.lock().unwrap().clone();
        seen
    });
    assert_eq!(order, vec![(10, 10), (20, 20), (30, 30)]);
}

#[test]
fn timers_due_at_one_instant_fire_in_the_order_they_were_made() {
    let pool = paused(1);
    let order = pool.block_on(async {
        let order = Arc::new(Mutex::new(Vec::new()));
        let at = now() + Duration::from_secs(5);
        let sleeps: Vec<_> = (0..6).map(|_| time::sleep_until(at)).collect();
        let tasks: Vec<_> = sleeps
            .into_iter()
            .enumerate()
            .rev()
            .map(|(made, nap)| {
                let order = order.clone();
                crew::spawn(async move {
                    nap.await;
                    order.lock().unwrap().push(made);
                })
            })
            .collect();
        for task in tasks {
            task.await;
        }
        let seen = order.lock().unwrap().clone();
        seen
    });
    // One worker runs the woken tasks in the order they were woken.
    assert_eq!(order, (0..6).collect::<Vec<_>>());
}

#[test]
fn a_blocking_job_of_the_pool_holds_the_clock() {
    let pool = paused(2);
    let result = pool.block_on(async {
        let job = crew::spawn_blocking(|| {
            // Real time passes; the pool's clock must not while the job is out.
            std::thread::sleep(Duration::from_millis(50));
            7
        });
        timeout(Duration::from_secs(1), job).await
    });
    assert_eq!(result, Ok(7));
}

#[test]
fn a_local_task_of_the_pool_holds_the_clock_while_it_is_queued() {
    let pool = paused(2);
    let result = pool.block_on(async {
        let (tx, rx) = futures::channel::oneshot::channel();
        crew::spawn_local(async move {
            sleep(Duration::from_secs(1)).await;
            tx.send(1).unwrap();
        })
        .detach();
        timeout(Duration::from_secs(2), rx).await
    });
    assert_eq!(result, Ok(Ok(1)));
}

#[test]
fn a_timer_reset_or_dropped_moves_the_clock_no_more() {
    let pool = paused(2);
    let moved = pool.block_on(async {
        let start = now();
        let mut nap = sleep(Duration::from_secs(3600));
        // Polled once, so filed under its deadline, then moved nearer and awaited.
        assert!(futures::poll!(&mut nap).is_pending());
        nap.reset(start + Duration::from_secs(2));
        nap.await;
        drop(sleep(Duration::from_secs(10)));
        sleep(Duration::from_secs(3)).await;
        now() - start
    });
    assert_eq!(moved, Duration::from_secs(5));
}

#[test]
fn many_tasks_on_many_workers_each_wake_at_their_deadline() {
    let pool = paused(4);
    let late = pool.block_on(async {
        let start = now();
        let tasks: Vec<_> = (1..=200u64)
            .map(|n| {
                crew::spawn(async move {
                    sleep(Duration::from_millis(n * 37 % 1000 + 1)).await;
                    let woke = now() - start;
                    woke != Duration::from_millis(n * 37 % 1000 + 1)
                })
            })
            .collect();
        let mut late = 0;
        for task in tasks {
            late += usize::from(task.await);
        }
        late
    });
    assert_eq!(late, 0, "every task saw the clock at its own deadline");
}

#[test]
fn an_unpaused_pool_and_the_global_pool_keep_real_time() {
    let pool = crew::Pool::builder().workers(1).build().unwrap();
    let before = Instant::now();
    let seen = pool.block_on(async { now() });
    assert!(seen >= before);
    let err = crew::Builder::new().start_paused(true).build_global().unwrap_err();
    assert_eq!(
        err.to_string(),
        "Builder::start_paused(true) with Builder::build_global is invalid: the global pool keeps real time and its own \
         order: build a private Pool with start_paused or seed"
    );
}

#[test]
fn advance_outside_a_paused_pool_panics_with_a_message() {
    let panic = std::panic::catch_unwind(|| advance(Duration::from_secs(1))).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains("outside a paused pool"), "{message}");
}

#[test]
fn nothing_is_counted_twice_the_clock_keeps_moving_after_many_wakes() {
    // Yields, joins, aborts and channel wakes between sleeps: if any of them left a unit of
    // work behind, the clock would stop and this would hang (and fail at the harness's bound).
    let pool = paused(2);
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    pool.block_on(async move {
        for round in 0..50u64 {
            let (tx, rx) = futures::channel::oneshot::channel::<u64>();
            let sender = crew::spawn(async move {
                crew::yield_now().await;
                sleep(Duration::from_millis(round + 1)).await;
                let _ = tx.send(round);
            });
            let doomed = crew::spawn(sleep(Duration::from_secs(3600)));
            doomed.abort_handle().abort();
            drop(doomed);
            assert_eq!(rx.await, Ok(round));
            sender.await;
            seen.fetch_add(1, Ordering::SeqCst);
        }
        sleep(Duration::from_secs(1)).await;
    });
    assert_eq!(count.load(Ordering::SeqCst), 50);
}

#[test]
fn a_task_that_blocks_its_thread_on_the_pools_timers_lets_the_clock_move() {
    let pool = paused(2);
    let (blocked, scoped) = pool.block_on(async {
        let start = now();
        let blocked = crew::spawn(async move {
            // The task's run gives its unit back while it blocks: the clock can reach 60 s.
            crew::block_on(async move {
                sleep(Duration::from_secs(60)).await;
                now() - start
            })
        })
        .await;
        let scoped = crew::spawn(async move {
            let mut seen = Duration::ZERO;
            crew::scope(|s| {
                s.spawn(async {
                    sleep(Duration::from_secs(30)).await;
                    seen = now() - start;
                });
            });
            seen
        })
        .await;
        (blocked, scoped)
    });
    assert_eq!(blocked, Duration::from_secs(60));
    assert_eq!(scoped, Duration::from_secs(90));
}

/// How a task blocks its thread in [`sibling_timeout_beside`].
#[derive(Debug, Clone, Copy)]
enum Blocks {
    BlockOn,
    Scope,
    BlockInPlace,
}

/// On a paused pool of one worker, a sibling task waits for a message with a timeout of 1 s;
/// the next task enters `blocks`, whose code reads the clock and sends the message at once.
/// Returns what that code read (after the start) and what the sibling got.
fn sibling_timeout_beside(blocks: Blocks) -> (Duration, Result<(), time::Elapsed>) {
    // One worker, which runs the sibling first (both go through the injector, in order): its
    // timer is filed before the other task blocks.
    let pool = paused(1);
    pool.block_on(async move {
        let start = now();
        let (tx, rx) = async_channel::bounded::<()>(1);
        let sibling =
            crew::spawn(async move { timeout(Duration::from_secs(1), rx.recv()).await.map(|got| got.unwrap()) });
        let blocking = crew::spawn(async move {
            let send = || {
                let at = now() - start;
                tx.try_send(()).unwrap();
                at
            };
            match blocks {
                Blocks::BlockOn => crew::block_on(async { send() }),
                Blocks::Scope => crew::scope(|_| send()),
                Blocks::BlockInPlace => crew::block_in_place(send),
            }
        });
        let at = blocking.await;
        (at, sibling.await)
    })
}

/// The task's unit of work goes on into the code `blocks` runs first: no instant of an idle
/// pool falls between, so the sibling's timer cannot fire there (it did in every run before).
fn assert_the_clock_stays_where_it_was(blocks: Blocks) {
    let runs = if cfg!(miri) { 2 } else { 20 };
    for _ in 0..runs {
        let (at, sibling) = sibling_timeout_beside(blocks);
        assert_eq!(at, Duration::ZERO, "{blocks:?}: the clock moved before the call's code ran");
        assert!(sibling.is_ok(), "{blocks:?}: the sibling's timeout fired, at {at:?}");
    }
}

#[test]
fn block_on_entered_by_a_task_leaves_the_clock_where_it_was() {
    assert_the_clock_stays_where_it_was(Blocks::BlockOn);
}

#[test]
fn a_scope_entered_by_a_task_leaves_the_clock_where_it_was() {
    assert_the_clock_stays_where_it_was(Blocks::Scope);
}

#[test]
fn block_in_place_entered_by_a_task_leaves_the_clock_where_it_was() {
    assert_the_clock_stays_where_it_was(Blocks::BlockInPlace);
}

#[test]
fn a_block_on_inside_a_scopes_closure_still_lets_the_clock_move() {
    let pool = paused(1);
    let waited = pool.block_on(async {
        crew::spawn(async {
            crew::scope(|_| {
                let start = now();
                crew::block_on(sleep(Duration::from_secs(5)));
                now() - start
            })
        })
        .await
    });
    assert_eq!(waited, Duration::from_secs(5));
}

#[cfg(feature = "macros")]
#[crew::test(start_paused = true)]
async fn the_test_attribute_starts_its_pool_paused() {
    let start = now();
    let every = crew::spawn(async {
        let mut ticks = interval(Duration::from_secs(600));
        for _ in 0..7 {
            ticks.tick().await;
        }
    });
    assert!(timeout(Duration::from_secs(3601), every).await.is_ok());
    assert_eq!(now() - start, Duration::from_secs(3600));
}
