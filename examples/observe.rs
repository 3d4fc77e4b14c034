//! Watching a pool from the inside: a small mixed workload (message passing, yielders, one slow
//! task and one stuck task) on a 2-worker pool, with its metrics and a dump of its tasks printed
//! every second, and the slow-poll reports as they come.
//!
//! Run with `cargo run --release --example observe` (about 4 seconds). With the `tracing`
//! feature each task's polls also run inside a span naming the task.

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

fn main() {
    let pool = Arc::new(
        crew::Pool::builder()
            .workers(2)
            .thread_name("observe")
            .slow_poll_threshold(Duration::from_millis(20))
            .on_slow_poll(|report| println!("  slow-poll report: {report}"))
            .task_dump(true)
            .build()
            .expect("pool"),
    );
    let start = Instant::now();
    let run_for = Duration::from_secs(3);

    // Message passing: pairs of tasks bouncing a counter over bounded channels.
    for pair in 0..50 {
        let (to_b, from_a) = async_channel::bounded::<u64>(1);
        let (to_a, from_b) = async_channel::bounded::<u64>(1);
        crew::task::Builder::new()
            .name(format!("ping-{pair}"))
            .spawn_on(&pool, async move {
                let mut n = 0;
                while start.elapsed() < run_for && to_b.send(n).await.is_ok() {
                    n = from_b.recv().await.unwrap_or(n) + 1;
                }
            })
            .detach();
        crew::task::Builder::new()
            .name(format!("pong-{pair}"))
            .spawn_on(&pool, async move {
                while let Ok(n) = from_a.recv().await {
                    if to_a.send(n).await.is_err() {
                        break;
                    }
                }
            })
            .detach();
    }

    // Yielders: tasks that give way after each slice of work.
    for i in 0..4 {
        crew::task::Builder::new()
            .name(format!("yielder-{i}"))
            .spawn_on(&pool, async move {
                while start.elapsed() < run_for {
                    crew::yield_now().await;
                }
            })
            .detach();
    }

    // A slow task: a 50 ms poll now and then (a synchronous call it should not make).
    crew::task::Builder::new()
        .name("slow-report")
        .spawn_on(&pool, async move {
            while start.elapsed() < run_for {
                std::thread::sleep(Duration::from_millis(50));
                crew::time::sleep(Duration::from_millis(700)).await;
            }
        })
        .detach();

    // A stuck task: blocks its worker on a channel for 1.5 s; the monitor takes the worker over.
    let (release, stuck) = mpsc::channel::<()>();
    crew::task::Builder::new()
        .name("stuck-on-a-std-channel")
        .spawn_on(&pool, async move {
            let _ = stuck.recv_timeout(Duration::from_millis(1500));
        })
        .detach();

    while start.elapsed() < run_for + Duration::from_millis(500) {
        std::thread::sleep(Duration::from_secs(1));
        println!("\n--- metrics at {:.1?} ---\n{}", start.elapsed(), pool.metrics());
        // The dump, without the hundred message-passing tasks: the others, and a count.
        let dump = pool.dump();
        let (pings, others): (Vec<_>, Vec<_>) =
            dump.tasks().iter().partition(|task| task.name().is_some_and(|name| name.starts_with("p")));
        println!("--- tasks: {} ping/pong tasks, and", pings.len());
        for task in others {
            println!("  {} ({} polls, {:.1?} old): {}", task.info(), task.polls(), task.age(), task.state());
        }
    }
    drop(release);
}
