//! A tour of crew: spawn and join, the three panic policies, and a throughput line.
//!
//! Run with `cargo run --release --example tour`.

use std::time::Instant;

fn main() {
    // Panics in the policy demos below are expected: keep the panic hook's reports short.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|info| eprintln!("  (panic hook) {info}")));

    // 1. spawn + join on the global pool, from main and from inside a task.
    let answer = crew::block_on(async {
        let half = crew::spawn(async { 21 });
        half.await * 2
    });
    println!("spawn/join: {answer}");

    // 2. Propagate (the default): the awaiter re-panics with the task's original payload.
    let handle = crew::spawn(async { std::panic::panic_any("propagated payload") });
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crew::block_on(handle))).unwrap_err();
    println!("Propagate: awaiter caught {:?}", payload.downcast_ref::<&str>().unwrap());

    // 3. Catch: the awaiter gets a Result carrying the payload.
    let result = crew::block_on(crew::spawn_with(crew::Catch, async { panic!("caught as a value") }));
    println!("Catch: {}", result.unwrap_err());

    // 4. Ignore: the hook reports it, the pool swallows it, detached tasks affect nothing.
    crew::spawn_with(crew::Ignore, async { panic!("reported, then ignored") }).detach();
    println!("Ignore: pool still runs tasks: {}", crew::block_on(crew::spawn(async { "yes" })));
    std::panic::set_hook(default_hook);

    // 5. Throughput: spawn and join a million tiny tasks.
    const TASKS: usize = 1_000_000;
    let start = Instant::now();
    let total: usize = crew::block_on(async {
        let handles: Vec<_> = (0..TASKS).map(|i| crew::spawn(async move { i & 1 })).collect();
        let mut total = 0;
        for handle in handles {
            total += handle.await;
        }
        total
    });
    let elapsed = start.elapsed();
    assert_eq!(total, TASKS / 2);
    println!(
        "spawned and joined {TASKS} tasks in {elapsed:.2?} on {} workers ({:.0} ns per task)",
        workers(),
        elapsed.as_nanos() as f64 / TASKS as f64
    );
}

/// The global pool's size, as `CREW_WORKERS` or the CPU count sets it.
fn workers() -> usize {
    std::env::var(crew::config::WORKERS_ENV).ok().and_then(|v| v.trim().parse().ok()).unwrap_or_else(num_cpus::get)
}
