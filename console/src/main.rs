//! A crew program to watch live in tokio-console: a small mixed workload on a 2-worker pool and
//! the global pool, instrumented with console-subscriber.
//!
//! Run it with `cargo run --release` in this folder (it runs until stopped; give a number of
//! seconds as its argument to stop sooner), then run `tokio-console` in another terminal. The
//! console's task list shows each task's name, spawn location, polls, busy, scheduled and idle
//! time and wakers:
//! - `ping-N`/`pong-N`: pairs bouncing a counter over bounded channels, woken by each other;
//! - `ticker-N`: tasks that sleep on crew's timers, idle most of the time;
//! - `yielder-N`: tasks that give way after each slice of work (self-wakes);
//! - `slow`: a task whose polls take 50 ms now and then (a blocking call it should not make);
//! - `stuck`: a task that blocks its worker for 3 s every 10 s, so crew takes the worker over;
//! - `job-N`: short tasks spawned on the global pool every 100 ms, which finish at once;
//! - `lost-waker`: a task that waits on a future nobody will ever wake, which the console flags.

use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let run_for = match std::env::args().nth(1) {
        None => None,
        Some(arg) => match arg.parse::<u64>() {
            Ok(seconds) => Some(Duration::from_secs(seconds)),
            Err(_) => {
                eprintln!("error: the argument is how many seconds to run (a whole number), not {arg:?}");
                std::process::exit(2);
            }
        },
    };
    // Serves the console's gRPC API on 127.0.0.1:6669 (TOKIO_CONSOLE_BIND changes it).
    console_subscriber::init();

    let pool = Arc::new(crew::Pool::builder().workers(2).thread_name("live").build().expect("a 2-worker pool"));
    for pair in 0..8 {
        let (to_b, from_a) = async_channel::bounded::<u64>(1);
        let (to_a, from_b) = async_channel::bounded::<u64>(1);
        spawn_named(&pool, format!("ping-{pair}"), async move {
            let mut n = 0;
            while to_b.send(n).await.is_ok() {
                n = from_b.recv().await.unwrap_or(n) + 1;
                crew::time::sleep(Duration::from_millis(10)).await;
            }
        });
        spawn_named(&pool, format!("pong-{pair}"), async move {
            while let Ok(n) = from_a.recv().await {
                if to_a.send(n).await.is_err() {
                    break;
                }
            }
        });
    }
    for i in 0..4u64 {
        spawn_named(&pool, format!("ticker-{i}"), async move {
            let mut ticks = crew::time::interval(Duration::from_millis(250 * (i + 1)));
            loop {
                ticks.tick().await;
            }
        });
    }
    for i in 0..2 {
        spawn_named(&pool, format!("yielder-{i}"), async move {
            loop {
                for _ in 0..1000 {
                    crew::yield_now().await;
                }
                crew::time::sleep(Duration::from_millis(100)).await;
            }
        });
    }
    spawn_named(&pool, "slow".into(), async {
        loop {
            std::thread::sleep(Duration::from_millis(50));
            crew::time::sleep(Duration::from_millis(700)).await;
        }
    });
    spawn_named(&pool, "stuck".into(), async {
        loop {
            std::thread::sleep(Duration::from_secs(3));
            crew::time::sleep(Duration::from_secs(7)).await;
        }
    });
    spawn_named(&pool, "lost-waker".into(), std::future::pending::<()>());

    let start = Instant::now();
    for job in 0u64.. {
        if run_for.is_some_and(|limit| start.elapsed() >= limit) {
            break;
        }
        crew::task::Builder::new().name(format!("job-{job}")).spawn(async move { job * 2 }).detach();
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn spawn_named(pool: &crew::Pool, name: String, task: impl std::future::Future<Output = ()> + Send + 'static) {
    crew::task::Builder::new().name(name).spawn_on(pool, task).detach();
}
