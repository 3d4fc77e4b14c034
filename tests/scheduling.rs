//! Scheduling fairness and work stealing: a self-waking task starves nobody, the LIFO slot is
//! capped, and idle workers steal queued work from busy ones.

mod common;

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use common::{wait_until, with_timeout, with_timeout_of, Counted, Counts};

const NORMAL_TASKS: usize = if cfg!(miri) { 20 } else { 1_000 };

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

/// Some CPU work that the optimizer cannot remove.
fn busy_work() -> u64 {
    (0..if cfg!(miri) { 100 } else { 100_000 }).map(black_box).sum()
}

/// Never completes: every poll wakes its own waker and returns `Pending`.
struct Spinner;

impl Future for Spinner {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

fn a_spinning_task_does_not_starve_normal_tasks(workers: usize) {
    with_timeout(move || {
        let pool = Arc::new(crew::Pool::builder().workers(workers).build().unwrap());
        let spinner_counts = Counts::new();
        let spinner = pool.spawn(Counted::new(&spinner_counts, Spinner));
        wait_until("the spinner spins", || spinner_counts.polls() > 1);
        let ran = Arc::new(AtomicUsize::new(0));
        let task = |ran: &Arc<AtomicUsize>| {
            let ran = ran.clone();
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
            }
        };
        // Half from outside the pool (the injector), half from inside (a worker's own queues).
        let outside: Vec<_> = (0..NORMAL_TASKS / 2).map(|_| pool.spawn(task(&ran))).collect();
        let (inner_pool, inner_ran) = (pool.clone(), ran.clone());
        let inside = pool.spawn(async move {
            let handles: Vec<_> = (0..NORMAL_TASKS / 2).map(|_| inner_pool.spawn(task(&inner_ran))).collect();
            for handle in handles {
                handle.await;
            }
        });
        outside.into_iter().for_each(crew::block_on);
        crew::block_on(inside);
        assert_eq!(ran.load(Ordering::SeqCst), NORMAL_TASKS / 2 * 2);
        assert!(!spinner.is_finished());
        assert_eq!(crew::block_on(spinner.cancel()), None);
        assert_eq!(spinner_counts.drops(), 1);
    });
}

#[test]
fn a_task_waking_itself_forever_does_not_starve_1000_tasks_on_a_1_worker_pool() {
    a_spinning_task_does_not_starve_normal_tasks(1);
}

#[test]
fn a_task_waking_itself_forever_does_not_starve_1000_tasks_on_a_2_worker_pool() {
    a_spinning_task_does_not_starve_normal_tasks(2);
}

/// Stop a ping-pong after this many exchanges if nothing else stops it.
const PING_PONG_LIMIT: usize = 10_000;

#[derive(Default)]
struct Court {
    wakers: [Option<Waker>; 2],
    exchanges: usize,
    over: bool,
}

/// One of two players: each poll wakes the other player and waits to be woken back. Ends
/// when `stop` is set (or after `PING_PONG_LIMIT` exchanges), returning the exchange count.
struct Player {
    me: usize,
    court: Arc<Mutex<Court>>,
    stop: Arc<AtomicBool>,
}

impl Future for Player {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let mut court = self.court.lock().unwrap();
        let other = court.wakers[1 - self.me].take();
        if court.over || self.stop.load(Ordering::SeqCst) || court.exchanges >= PING_PONG_LIMIT {
            court.over = true;
            let exchanges = court.exchanges;
            drop(court);
            other.into_iter().for_each(Waker::wake);
            return Poll::Ready(exchanges);
        }
        court.wakers[self.me] = Some(cx.waker().clone());
        if other.is_some() {
            court.exchanges += 1;
        }
        drop(court);
        other.into_iter().for_each(Waker::wake);
        Poll::Pending
    }
}

#[test]
fn the_lifo_slot_is_capped_so_a_ping_pong_pair_cannot_starve_a_queued_task() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(1).build().unwrap());
        let court = Arc::new(Mutex::new(Court::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let inner_pool = pool.clone();
        let (third_court, third_stop) = (court.clone(), stop.clone());
        let players = (court.clone(), stop.clone());
        let (first, second, third_saw) = crew::block_on(pool.spawn(async move {
            // Queued on this worker, behind the ping-pong that every wake puts in the LIFO slot.
            let third = inner_pool.spawn(async move {
                third_stop.store(true, Ordering::SeqCst);
                third_court.lock().unwrap().exchanges
            });
            let partner = inner_pool.spawn(Player { me: 1, court: players.0.clone(), stop: players.1.clone() });
            let first = Player { me: 0, court: players.0, stop: players.1 }.await;
            (first, partner.await, third.await)
        }));
        assert!(stop.load(Ordering::SeqCst), "the queued task ran");
        assert!(third_saw < PING_PONG_LIMIT, "the queued task ran only after {third_saw} exchanges");
        assert_eq!(first, second);
        assert!(court.lock().unwrap().over);
    });
}

#[test]
fn an_idle_worker_steals_a_cpu_bound_child_so_two_children_meet_at_a_barrier() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(2).thread_name("stealing").build().unwrap());
        let inner_pool = pool.clone();
        let mut names = crew::block_on(pool.spawn(async move {
            let barrier = Arc::new(Barrier::new(2));
            let children: Vec<_> = (0..2)
                .map(|_| {
                    let barrier = barrier.clone();
                    inner_pool.spawn(async move {
                        black_box(busy_work());
                        barrier.wait();
                        black_box(busy_work());
                        thread_name()
                    })
                })
                .collect();
            let mut names = Vec::new();
            for child in children {
                names.push(child.await);
            }
            names
        }));
        names.sort();
        assert_eq!(names, ["stealing-0", "stealing-1"], "each child ran on its own worker");
    });
}

#[test]
fn a_task_in_the_deque_of_a_worker_blocked_by_its_parent_is_stolen() {
    with_timeout(|| {
        let pool = Arc::new(crew::Pool::builder().workers(2).build().unwrap());
        let inner_pool = pool.clone();
        let value = crew::block_on(pool.spawn(async move {
            let barrier = Arc::new(Barrier::new(2));
            let for_child = barrier.clone();
            // The first child is pushed out of the LIFO slot into the stealable deque by the
            // second; the parent then blocks its worker until the first child runs elsewhere.
            let first = inner_pool.spawn(async move {
                for_child.wait();
                1
            });
            let second = inner_pool.spawn(async { 2 });
            barrier.wait();
            first.await + second.await
        }));
        assert_eq!(value, 3);
    });
}

/// A task spawned from a worker goes to that worker's LIFO slot, which searchers do not steal
/// from; with its owner blocked inside the parent's poll, the idle worker takes it as the
/// watcher (`src/scheduler/takeover/watch.rs`) once the owner has taken nothing from its slot for an interval.
/// (DESIGN.md: "A task must never be stranded in a slot or local queue while its worker is
/// blocked or busy for long".)
#[test]
fn a_task_in_the_lifo_slot_of_a_worker_blocked_by_its_parent_still_runs() {
    with_timeout_of(Duration::from_secs(30), || {
        let pool = Arc::new(crew::Pool::builder().workers(2).build().unwrap());
        let inner_pool = pool.clone();
        let value = crew::block_on(pool.spawn(async move {
            let barrier = Arc::new(Barrier::new(2));
            let for_child = barrier.clone();
            let child = inner_pool.spawn(async move {
                for_child.wait();
                1
            });
            // The parent blocks its worker (CPU-bound work would do the same, for longer).
            barrier.wait();
            child.await
        }));
        assert_eq!(value, 1);
    });
}

#[test]
fn tasks_spawned_from_outside_run_on_every_worker() {
    with_timeout(|| {
        let pool = crew::Pool::builder().workers(2).thread_name("outside").build().unwrap();
        common::assert_all_workers_run(&pool, "outside", 2);
    });
}
