//! One axum `Router`, three ways to serve it: the server of `ecosystem/bench-services`
//! (BENCHMARKS.md, "Services").
//!
//! `services <mode> [--takeover-ms N] [--no-header-read-timeout]`, where `<mode>` is
//! - `crew`: `crew::http::serve(crew::net::TcpListener, app)` under `Pool::block_on` of a
//!   2-worker crew pool, default settings: every connection a crew task on the pool's workers
//!   (for probing, `--takeover-ms N` sets `Builder::takeover_after(N ms)` and
//!   `--no-header-read-timeout` turns the serve's header-read timeout off);
//! - `tokio`: `axum::serve(tokio::net::TcpListener, app)` under `Runtime::block_on` of a tokio
//!   multi-thread runtime with 2 worker threads (`enable_all`), as `#[tokio::main]` runs it;
//! - `crew-old`: the way docs/tokio.md used to show, for the record: `axum::serve` on tokio's
//!   listener inside a crew task of a 2-worker crew pool, with crew's `tokio` feature (this
//!   crate's default `context`), so every connection runs on crew's one-thread tokio runtime
//!   (`crew-tokio`), outside crew's workers and their takeover;
//! - `calibrate`: times [`cpu_work`] with [`CPU_ITERATIONS`] and prints what it measured.
//!
//! The routes, the same handlers in every mode:
//! - `/`: "Hello, world!";
//! - `/cpu`: [`CPU_ITERATIONS`] rounds of an FNV-1a-style multiply-xor loop, about 20 µs of
//!   CPU on the machine of BENCHMARKS.md (see [`CPU_ITERATIONS`] for how it was calibrated);
//! - `/mix`: every 50th request (a global atomic counter) blocks its thread for 30 ms with
//!   `std::thread::sleep`, a stand-in for a `std` lock or a sync call; the rest answer at once.
//!
//! It binds 127.0.0.1:0 and prints its port alone on the first line of stdout. On `SIGTERM`, or
//! when stdin closes, it prints one summary line and exits:
//! `summary: mode=<mode> threads_started=<n> takeovers=<n> live_threads=<n> (<names>)`, where
//! for the crew modes `threads_started` and `takeovers` are the pool's
//! `metrics().threads_started` and `metrics().total.takeovers` over the server's life, and for
//! tokio `threads_started` counts the runtime's threads alive at the end (`/proc/self/task`,
//! those named `tokio-*`; its workers only, here) and `takeovers` is 0. `live_threads` counts
//! every thread of the process in `/proc/self/task` for every mode, with their names: the main
//! thread and the `stdin-watch` thread that waits for stdin to close are among them.
//!
//! `cargo run --release --example services -- crew` (then `curl 127.0.0.1:<port>/cpu`).

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use futures::channel::oneshot;
use futures::future::{select, Either};

/// The workers of every mode.
const WORKERS: usize = 2;

/// The rounds of [`cpu_work`] that `/cpu` does per request: about 20 µs.
///
/// Calibrated once, on the 2-vCPU AMD EPYC VM of BENCHMARKS.md with nothing else running, by
/// `services calibrate` (the median of 5,000 timed calls of `cpu_work(CPU_ITERATIONS)` on one
/// thread, after 500 untimed ones): 1.24 ns a round, so 20.0 µs at 16,100 rounds (one 64-bit
/// multiply and one xor on the loop's single dependency chain, so the time scales with the
/// clock, not with the compiler's unrolling). Kept fixed rather than measured at every start,
/// so every server and every round does the same work; on another machine run `calibrate` and
/// read the time it prints.
const CPU_ITERATIONS: u64 = 16_100;

/// `iterations` rounds of a multiply-xor hash (FNV-1a's prime and offset basis over the round
/// numbers): one dependency chain, which no compiler folds away or runs in parallel.
fn cpu_work(iterations: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for round in 0..iterations {
        hash ^= round;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Requests to `/mix` so far: the 50th, 100th, ... block their thread.
static MIX_REQUESTS: AtomicU64 = AtomicU64::new(0);

/// One `/mix` request in this many blocks its thread.
const MIX_ONE_IN: u64 = 50;

/// How long a blocking `/mix` request blocks its thread.
const MIX_BLOCK: Duration = Duration::from_millis(30);

async fn hello() -> &'static str {
    "Hello, world!"
}

async fn cpu() -> String {
    format!("{:016x}", cpu_work(std::hint::black_box(CPU_ITERATIONS)))
}

async fn mix() -> &'static str {
    if MIX_REQUESTS.fetch_add(1, Ordering::Relaxed) % MIX_ONE_IN == MIX_ONE_IN - 1 {
        // A std lock held elsewhere, a sync client call: the thread, not only the task, waits.
        std::thread::sleep(MIX_BLOCK);
        "Hello, late world!"
    } else {
        "Hello, world!"
    }
}

/// The one Router every mode serves.
fn app() -> Router {
    Router::new().route("/", get(hello)).route("/cpu", get(cpu)).route("/mix", get(mix))
}

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// A stop request in any mode: the mode's own `SIGTERM` future, or stdin's end.
type Stop = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Completes when stdin closes (end of file or an error), seen by a thread of its own.
fn stdin_closed() -> Stop {
    let (closed, on_close) = oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("stdin-watch".into())
        .spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            let _ = closed.send(());
        })
        .expect("services: cannot start the stdin-watch thread");
    Box::pin(async move {
        let _ = on_close.await;
    })
}

/// Whichever comes first: `terminate` or stdin's end.
fn stop(terminate: Stop) -> Stop {
    let closed = stdin_closed();
    Box::pin(async move {
        select(terminate, closed).await;
    })
}

/// Runs `serve` until `stop`; a serve that ends first must have failed.
async fn serve_until<E: std::fmt::Debug>(serve: impl Future<Output = Result<(), E>>, stop: Stop) {
    match select(Box::pin(serve), stop).await {
        Either::Left((Ok(()), _)) => panic!("services: the serve ended by itself"),
        Either::Left((Err(err), _)) => panic!("services: the serve failed: {err:?}"),
        Either::Right(((), _)) => {}
    }
}

fn announce(port: u16) {
    println!("{port}");
}

/// The threads of this process now: their count and their names, counted by name.
fn live_threads() -> (usize, String) {
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
                .map(|name| name.trim_end().to_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut counted: Vec<(String, usize)> = Vec::new();
    for name in names.iter() {
        match counted.last_mut() {
            Some((last, count)) if last == name => *count += 1,
            _ => counted.push((name.clone(), 1)),
        }
    }
    let list: Vec<String> = counted.iter().map(|(name, count)| format!("{name} x{count}")).collect();
    (names.len(), list.join(", "))
}

fn summary(mode: &str, threads_started: u64, takeovers: u64) {
    let (live, names) = live_threads();
    println!(
        "summary: mode={mode} threads_started={threads_started} takeovers={takeovers} live_threads={live} ({names})"
    );
}

fn crew_pool(options: &CrewOptions) -> crew::Pool {
    let mut builder = crew::Pool::builder().workers(WORKERS);
    if let Some(ms) = options.takeover_ms {
        builder = builder.takeover_after(Duration::from_millis(ms));
    }
    if options.no_spin {
        builder = builder.spin_before_park(Duration::ZERO);
    }
    builder.build().expect("services: cannot build the crew pool")
}

fn crew_terminate() -> Stop {
    let terminate = crew::signal::signal(crew::signal::Signal::Term);
    Box::pin(async move {
        terminate.await.expect("services: cannot listen for SIGTERM");
    })
}

/// `crew`: the new way.
fn run_crew(options: &CrewOptions) {
    let pool = crew_pool(options);
    pool.block_on(async {
        let stop = stop(crew_terminate());
        let listener = crew::net::TcpListener::bind(loopback()).expect("services: cannot bind");
        announce(listener.get_ref().local_addr().expect("services: no local address").port());
        let mut serve = crew::http::serve(listener, app());
        if options.no_header_read_timeout {
            serve = serve.header_read_timeout(None);
        }
        if options.no_stall_timeout {
            serve = serve.stall_timeout(None);
        }
        serve_until(serve.into_future(), stop).await;
    });
    let metrics = pool.metrics();
    summary("crew", metrics.threads_started, metrics.total.takeovers);
}

/// `crew-old`: `axum::serve` on tokio's listener, inside a crew task.
fn run_crew_old(options: &CrewOptions) {
    let pool = crew_pool(options);
    let task = pool.spawn(async {
        let stop = stop(crew_terminate());
        let listener = tokio::net::TcpListener::bind(loopback()).await.expect("services: cannot bind");
        announce(listener.local_addr().expect("services: no local address").port());
        serve_until(axum::serve(listener, app()).into_future(), stop).await;
    });
    crew::block_on(task);
    let metrics = pool.metrics();
    summary("crew-old", metrics.threads_started, metrics.total.takeovers);
}

/// `tokio`: `axum::serve` on a 2-worker tokio runtime.
fn run_tokio() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .expect("services: cannot build the tokio runtime");
    runtime.block_on(async {
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("services: cannot listen for SIGTERM");
        let stop = stop(Box::pin(async move {
            terminate.recv().await;
        }));
        let listener = tokio::net::TcpListener::bind(loopback()).await.expect("services: cannot bind");
        announce(listener.local_addr().expect("services: no local address").port());
        serve_until(axum::serve(listener, app()).into_future(), stop).await;
    });
    let runtime_threads = std::fs::read_dir("/proc/self/task")
        .map(|tasks| {
            tasks
                .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
                .filter(|name| name.starts_with("tokio-"))
                .count()
        })
        .unwrap_or(0);
    summary("tokio", runtime_threads as u64, 0);
}

/// `calibrate`: the median time of `cpu_work(CPU_ITERATIONS)` on this thread.
fn calibrate() {
    for _ in 0..500 {
        std::hint::black_box(cpu_work(std::hint::black_box(CPU_ITERATIONS)));
    }
    let mut times: Vec<Duration> = (0..5_000)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(cpu_work(std::hint::black_box(CPU_ITERATIONS)));
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    let median = times[times.len() / 2];
    let per_round_ns = median.as_nanos() as f64 / CPU_ITERATIONS as f64;
    println!(
        "cpu_work({CPU_ITERATIONS}): median {:.1} µs (min {:.1}, p90 {:.1}) over {} calls; {per_round_ns:.3} ns a \
         round; 20 µs would be {:.0} rounds",
        median.as_secs_f64() * 1e6,
        times[0].as_secs_f64() * 1e6,
        times[times.len() * 9 / 10].as_secs_f64() * 1e6,
        times.len(),
        20_000.0 / per_round_ns,
    );
}

/// The crew modes' settings besides the defaults (for probing; the benchmark's `crew` has none).
#[derive(Default)]
struct CrewOptions {
    /// `--takeover-ms N`: `Builder::takeover_after(N ms)`.
    takeover_ms: Option<u64>,
    /// `--no-header-read-timeout`: `crew::http::serve(..).header_read_timeout(None)` (`crew` only).
    no_header_read_timeout: bool,
    /// `--no-stall-timeout`: `crew::http::serve(..).stall_timeout(None)` (`crew` only).
    no_stall_timeout: bool,
    /// `--no-spin`: `Builder::spin_before_park(0)`.
    no_spin: bool,
}

fn main() {
    let usage = "usage: services crew|tokio|crew-old|calibrate [--takeover-ms N] [--no-header-read-timeout] [--no-stall-timeout] [--no-spin]";
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| panic!("{usage}"));
    let mut options = CrewOptions::default();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--takeover-ms" => options.takeover_ms = Some(args.next().and_then(|ms| ms.parse().ok()).expect(usage)),
            "--no-header-read-timeout" => options.no_header_read_timeout = true,
            "--no-stall-timeout" => options.no_stall_timeout = true,
            "--no-spin" => options.no_spin = true,
            _ => panic!("{usage}"),
        }
    }
    let defaults = options.takeover_ms.is_none()
        && !options.no_header_read_timeout
        && !options.no_stall_timeout
        && !options.no_spin;
    match mode.as_str() {
        "crew" => run_crew(&options),
        "crew-old" if !options.no_header_read_timeout && !options.no_stall_timeout => run_crew_old(&options),
        "tokio" if defaults => run_tokio(),
        "calibrate" if defaults => calibrate(),
        _ => panic!("{usage}"),
    }
    // Straight out: no wait for a stuck thread or a pool's shutdown.
    std::process::exit(0);
}
