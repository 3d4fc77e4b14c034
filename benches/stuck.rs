//! Blocking inside a poll: many short tasks while 1 in 100 blocks its worker thread for a few
//! milliseconds (a `std::thread::sleep`, standing for a synchronous lock, DNS lookup or file read
//! inside a poll). Not a criterion bench: it prints one Markdown table of wall times.
//!
//! The workload (`one_in_100_blocks`): `TASKS` = 2,000 tasks spawned from the benchmarking thread
//! (not a worker), awaited in order; task `i` blocks its thread for B when `i % 100 == 50` (20
//! tasks), and otherwise busy-spins `SPIN` = 10 µs. Two tables: B = 3 ms (shorter than crew's
//! default takeover threshold) and B = 30 ms (longer). Every block that holds a worker's queue
//! delays the tasks behind it by up to B; the ideal (`crew, no blocking`: the 20 blocking tasks
//! spin 10 µs like the others) is the spinning alone, shared by the workers and the benchmarking
//! thread on the machine's cores.
//!
//! Members, each with W worker threads (env `CREW_BENCH_WORKERS`, default 2):
//!
//! - `crew`: a private pool with the defaults (takeover after `crew::config::DEFAULT_TAKEOVER_AFTER`, at
//!   most 16 stuck threads); `crew takeover N ms` with `Builder::takeover_after`; `crew, N stuck
//!   threads at most` with `Builder::max_stuck_threads`; `crew takeover off` with
//!   `Builder::takeover(false)`; `crew + block_in_place`: the defaults, the blocking call wrapped
//!   in `crew::block_in_place`; `crew, no blocking` the same tasks with the 20 blocks replaced by
//!   spins: the ideal.
//! - `tokio`: `Builder::new_multi_thread().worker_threads(W)`, as is; `tokio + block_in_place`:
//!   the blocking call wrapped in `tokio::task::block_in_place`, the manual fix tokio offers.
//! - `async_executor`, run smol's way (W threads running `ex.run`).
//!
//! Each member runs the workload once untimed, then `RUNS` = 11 times; the table shows the
//! median and the fastest run. Then the monitor's own cost: crew's default pool runs the workload
//! with no blocking, over and over for 2 s, and the `crew-monitor` thread's CPU time
//! (`/proc/self/task/*/schedstat`) is printed as a share of one core. First, what a takeover
//! would save if stuck threads waited as spares rather than exiting: the median time to start a
//! thread that signals back, against waking a parked one that signals back.
//!
//! Run: `cargo bench --bench stuck`.

#[allow(dead_code)] // the criterion benches' shared harness, of which this uses the executors only
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{start_async_executor, start_tokio, workers, Crew, Exec};

const TASKS: usize = 2_000;
const SPIN: Duration = Duration::from_micros(10);
const RUNS: usize = 11;

fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// One run of the workload on `ex`; a blocking task calls `block(b)`. Returns the wall time.
fn one_in_100_blocks<E: Exec>(ex: &E, block: fn(Duration), b: Duration) -> Duration {
    let start = Instant::now();
    let handles: Vec<_> = (0..TASKS)
        .map(|i| {
            ex.spawn(async move {
                if i % 100 == 50 {
                    block(b)
                } else {
                    spin(SPIN)
                }
            })
        })
        .collect();
    ex.block_on(async move {
        for handle in handles {
            handle.await;
        }
    });
    start.elapsed()
}

fn measure<E: Exec>(name: &str, ex: &E, block: fn(Duration), b: Duration) {
    one_in_100_blocks(ex, block, b);
    let mut times: Vec<Duration> = (0..RUNS).map(|_| one_in_100_blocks(ex, block, b)).collect();
    times.sort();
    println!("| {name} | {:.1} | {:.1} |", ms(times[RUNS / 2]), ms(times[0]));
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn crew_pool(builder: crew::Builder) -> Crew {
    Crew(Arc::new(builder.workers(workers()).build().expect("crew pool")))
}

/// The CPU time of this process's threads named `name`, from the scheduler's own accounting.
fn cpu_time_of(name: &str) -> Duration {
    let mut total = 0;
    for entry in std::fs::read_dir("/proc/self/task").expect("/proc/self/task").flatten() {
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(entry.path().join("schedstat")).unwrap_or_default();
            total += stat.split_whitespace().next().and_then(|ns| ns.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    Duration::from_nanos(total)
}

fn table(b: Duration) {
    let w = workers();
    println!("\nW = {w}; {TASKS} tasks, 1 in 100 blocking {b:?}, the others spinning {SPIN:?}; {RUNS} runs\n");
    println!("| member | median (ms) | fastest (ms) |");
    println!("|---|---:|---:|");
    let sleep: fn(Duration) = std::thread::sleep;
    measure("crew, no blocking (ideal)", &crew_pool(crew::Builder::new()), |_| spin(SPIN), b);
    measure("crew (defaults)", &crew_pool(crew::Builder::new()), sleep, b);
    for threshold in [1, 2, 5] {
        let pool = crew_pool(crew::Builder::new().takeover_after(Duration::from_millis(threshold)));
        measure(&format!("crew takeover {threshold} ms"), &pool, sleep, b);
    }
    measure("crew takeover off", &crew_pool(crew::Builder::new().takeover(false)), sleep, b);
    measure(
        "crew + block_in_place",
        &crew_pool(crew::Builder::new()),
        |d| crew::block_in_place(|| std::thread::sleep(d)),
        b,
    );
    for cap in [2, 8, 64] {
        let pool = crew_pool(crew::Builder::new().max_stuck_threads(cap));
        measure(&format!("crew, {cap} stuck threads at most"), &pool, sleep, b);
    }
    {
        let (_rt, ex) = start_tokio(w);
        measure("tokio", &ex, sleep, b);
        measure("tokio + block_in_place", &ex, |d| tokio::task::block_in_place(|| std::thread::sleep(d)), b);
    }
    let (_owner, ex) = start_async_executor(w);
    measure("async_executor", &ex, sleep, b);
}

/// The median of `RUNS` * 10 timings of `f`.
fn median_of(mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..RUNS * 10).map(|_| f()).collect();
    times.sort();
    times[times.len() / 2]
}

/// What a stuck thread that exits after its poll costs each later takeover, against one that
/// waits as a spare: starting a thread that signals back, against waking a parked thread that
/// signals back.
fn exit_or_wait() {
    let start_fresh = median_of(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        let start = Instant::now();
        let thread =
            std::thread::Builder::new().name("crew-0".to_owned()).spawn(move || tx.send(()).unwrap()).expect("thread");
        rx.recv().unwrap();
        let elapsed = start.elapsed();
        thread.join().unwrap();
        elapsed
    });
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let (back_tx, back_rx) = std::sync::mpsc::channel();
    let spare = std::thread::spawn(move || {
        while go_rx.recv().is_ok() {
            back_tx.send(()).unwrap();
        }
    });
    let wake_spare = median_of(|| {
        std::thread::sleep(Duration::from_micros(200)); // the spare is parked again
        let start = Instant::now();
        go_tx.send(()).unwrap();
        back_rx.recv().unwrap();
        start.elapsed()
    });
    drop(go_tx);
    spare.join().unwrap();
    println!(
        "\nexit or wait as a spare: starting a thread {start_fresh:.1?}, waking a parked one {wake_spare:.1?} (medians of {})",
        RUNS * 10
    );
}

fn main() {
    exit_or_wait();
    table(Duration::from_millis(3));
    table(Duration::from_millis(30));
    for threshold in [None, Some(1)] {
        let builder = crew::Builder::new();
        let builder = match threshold {
            Some(ms) => builder.takeover_after(Duration::from_millis(ms)),
            None => builder,
        };
        let pool = crew_pool(builder);
        let (start, before) = (Instant::now(), cpu_time_of("crew-monitor"));
        let mut rounds = 0;
        while start.elapsed() < Duration::from_secs(2) {
            one_in_100_blocks(&pool, |_| spin(SPIN), SPIN);
            rounds += 1;
        }
        let (wall, monitor) = (start.elapsed(), cpu_time_of("crew-monitor") - before);
        println!(
            "\nmonitor (takeover after {}): {:.2}% of one core ({monitor:.1?} of CPU in {wall:.2?}, {rounds} busy rounds, no blocking)",
            threshold.map_or("the default 10 ms".to_owned(), |ms| format!("{ms} ms")),
            monitor.as_secs_f64() / wall.as_secs_f64() * 100.0
        );
        drop(pool);
    }
}
