//! Latency under CPU-bound load: how late timers fire and how long a TCP echo round trip takes
//! while every worker is busy with tasks that compute and yield. Not a criterion bench: it prints
//! one Markdown table of percentiles.
//!
//! Three executors, each with W worker threads (env `CREW_BENCH_WORKERS`, default 4, the setting
//! of the issue that asked for this file; the criterion benches default to 2):
//!
//! - `crew`: a private `crew::Pool::builder().workers(W)` (turning crew's own driver while it
//!   parks), with
//!   `crew::time::sleep_until`, `crew::net` sockets and `crew::yield_now`.
//! - `tokio`: `Builder::new_multi_thread().worker_threads(W).enable_all()`, with
//!   `tokio::time::sleep_until`, `tokio::net` sockets and `tokio::task::yield_now`.
//! - `async_executor`, run smol's way: one `async_executor::Executor` and W threads each running
//!   `async_io::block_on(ex.run(..))` (so a runner with nothing to do drives the reactor), with
//!   `async_io::Timer::at`, `async_io::Async<TcpListener>` and `futures_lite::future::yield_now`.
//!
//! The load (`load` column `S spinners`): S = W + 1 spinner tasks, each looping "busy-spin 1 ms
//! on `Instant::now()`, then yield", so there is always more CPU work than workers and a woken
//! task waits behind spinners unless the executor lets it in. The spinners start 100 ms before
//! each measurement and are stopped (and awaited) after it. The `none` rows measure the same
//! things with no spinners: the ideal.
//!
//! The load check (`spin/ms` column): every spinner bumps a shared counter after each 1 ms slice;
//! the column is the slices completed during the measurement per millisecond of its wall time,
//! that is about how many cores the spinners kept busy. It can be at most min(W, nproc) (a little
//! more from slices straddling the start), and is 0 in the `none` rows. Equal values across the
//! executors mean they were measured under the same load; a lower one means workers spent less
//! time on spinners: idle, busy with the measured tasks (20,000 timers take a while), or sharing
//! the cores with the measuring threads (the main thread, async-io's thread).
//!
//! The measurements (the `n` column says how many samples each percentile is over):
//!
//! - `timers N` (ms): N tasks are spawned at once from the main thread, each sleeping until
//!   `spawn instant + d`, d uniform in 0..50 ms (a xorshift generator with a fixed seed, so every
//!   executor gets the same deadlines). Each task records `(instant it resumed) - (its
//!   deadline)`: its lateness. A negative value would mean it woke early. tokio rounds deadlines up
//!   to its 1 ms timer tick, so it is about 0.5 ms late on average even when idle. N = 2,000 and
//!   20,000 (env `LATENCY_TIMERS`, a comma-separated list).
//! - `echo RTT` (µs): a task accepts one loopback TCP connection and echoes what it reads; the main
//!   thread (a plain std thread, blocking socket) sends one byte and reads it back, 2,000 times
//!   after one untimed warm-up round, TCP_NODELAY on both ends. Each sample is one round trip. A
//!   run that takes over 10 s stops early (and `n` shows the rounds done). Read async-executor's
//!   loaded echo rows with care: its bare `Async<TcpStream>` tries `read` before it waits, and on
//!   2 busy cores the client's next byte is usually there by the time the echo task's write
//!   returns (the OS ran the client in between), so most rounds never leave one poll and never
//!   reach the executor's queue or the reactor (measured: 1,954 to 1,976 of 2,000 rounds). crew's
//!   and tokio's streams wait for readiness after a short read, so each of their rounds is a real
//!   reactor wake of a task behind the spinners.
//!
//! Every wait is bounded: timers must all fire within 5 s after the 50 ms window, each echo within
//! 5 s, spinners must stop within 5 s; otherwise the program panics saying what did not happen.
//!
//! Run: `cargo bench --bench latency` (optionally `CREW_BENCH_WORKERS=2`,
//! `LATENCY_EXECUTORS=crew,tokio,async_executor` for a subset, `LATENCY_TIMERS=2000`).

use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use async_io::{Async, Timer};
use futures_lite::{AsyncReadExt, AsyncWriteExt};

/// How long a spinner computes before it yields.
const SPIN: Duration = Duration::from_millis(1);
/// How long the spinners run before a measurement starts.
const SETTLE: Duration = Duration::from_millis(100);
/// Timer durations are uniform in `0..MAX_SLEEP`.
const MAX_SLEEP: Duration = Duration::from_millis(50);
/// The xorshift seed for the timer durations.
const SEED: u64 = 0x1234_5678;
/// Timed echo round trips per connection.
const ROUNDS: usize = 2_000;
/// After this long the echo measurement stops early, whatever the number of rounds done.
const SOCKET_BUDGET: Duration = Duration::from_secs(10);
/// The longest any single wait may take: timers past `MAX_SLEEP`, an echo, spinners stopping.
const TIMEOUT: Duration = Duration::from_secs(5);

/// What a measurement needs from an executor. Every task is detached and reports back over a
/// std channel, so nothing here depends on the executors' join handles.
trait Runtime {
    const NAME: &'static str;

    fn start(workers: usize) -> Self;

    /// Spawns `task` from outside the executor and lets it run on unawaited.
    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static);

    fn yield_now() -> impl Future<Output = ()> + Send;

    fn sleep_until(deadline: Instant) -> impl Future<Output = ()> + Send;

    /// Accepts one connection on `listener` and echoes it until the peer closes it.
    fn echo(listener: TcpListener) -> impl Future<Output = io::Result<()>> + Send;
}

/// Echoes `$stream` until the peer closes it, then returns `Ok(())` from the enclosing `async
/// fn`: a macro because tokio and futures-lite spell the same `read`/`write_all` with different
/// traits (whichever are in scope).
macro_rules! echo_loop {
    ($stream:ident) => {{
        let mut buf = [0; 64];
        loop {
            match $stream.read(&mut buf).await? {
                0 => return Ok(()),
                n => $stream.write_all(&buf[..n]).await?,
            }
        }
    }};
}

// ---------------------------------------------------------------------------------------------
// the three executors

/// A private crew pool; dropping it shuts the pool down.
struct Crew(crew::Pool);

impl Runtime for Crew {
    const NAME: &'static str = "crew";

    fn start(workers: usize) -> Crew {
        Crew(crew::Pool::builder().workers(workers).build().expect("crew pool"))
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.0.spawn(task).detach();
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        crew::yield_now()
    }

    fn sleep_until(deadline: Instant) -> impl Future<Output = ()> + Send {
        crew::time::sleep_until(deadline)
    }

    async fn echo(listener: TcpListener) -> io::Result<()> {
        let listener = crew::net::TcpListener::from_std(listener)?;
        let (mut stream, _) = listener.accept().await?;
        stream.get_ref().set_nodelay(true)?;
        echo_loop!(stream)
    }
}

/// A tokio multi-thread runtime with its timer and I/O drivers.
struct Tokio(tokio::runtime::Runtime);

impl Runtime for Tokio {
    const NAME: &'static str = "tokio";

    fn start(workers: usize) -> Tokio {
        let builder = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build();
        Tokio(builder.expect("tokio runtime"))
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        // Dropping a tokio JoinHandle detaches the task.
        drop(self.0.spawn(task));
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    fn sleep_until(deadline: Instant) -> impl Future<Output = ()> + Send {
        tokio::time::sleep_until(deadline.into())
    }

    async fn echo(listener: TcpListener) -> io::Result<()> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // `from_std` needs the runtime's I/O driver, so it runs inside the task.
        listener.set_nonblocking(true)?;
        let (mut stream, _) = tokio::net::TcpListener::from_std(listener)?.accept().await?;
        stream.set_nodelay(true)?;
        echo_loop!(stream)
    }
}

/// One async-executor run by W threads in `async_io::block_on`; dropping it closes `stop`, which
/// ends every `run`, and joins the threads.
struct AsyncExecutor {
    ex: Arc<async_executor::Executor<'static>>,
    stop: async_channel::Sender<()>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Runtime for AsyncExecutor {
    const NAME: &'static str = "async_executor";

    fn start(workers: usize) -> AsyncExecutor {
        let ex = Arc::new(async_executor::Executor::new());
        let (stop, stopped) = async_channel::bounded::<()>(1);
        let runner = |i| {
            let (ex, stopped) = (ex.clone(), stopped.clone());
            // `recv` fails once `stop` is closed: that ends `run`.
            let run = move || {
                let _ = async_io::block_on(ex.run(stopped.recv()));
            };
            thread::Builder::new().name(format!("async-executor-{i}")).spawn(run).expect("runner thread")
        };
        let threads = (0..workers).map(runner).collect();
        AsyncExecutor { ex, stop, threads }
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.ex.spawn(task).detach();
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        futures_lite::future::yield_now()
    }

    async fn sleep_until(deadline: Instant) {
        Timer::at(deadline).await;
    }

    async fn echo(listener: TcpListener) -> io::Result<()> {
        let (mut stream, _) = Async::new(listener)?.accept().await?;
        stream.get_ref().set_nodelay(true)?;
        echo_loop!(stream)
    }
}

impl Drop for AsyncExecutor {
    fn drop(&mut self) {
        self.stop.close();
        for thread in self.threads.drain(..) {
            thread.join().expect("async-executor runner thread panicked");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// load and measurements

/// Runs `measure` while `spinners` spinner tasks keep `rt`'s workers busy (none: no load).
/// Returns its result and the spinner slices completed during it per ms of its wall time.
fn under_load<R: Runtime, T>(rt: &R, spinners: usize, measure: impl FnOnce(&R) -> T) -> (T, f64) {
    let stop = Arc::new(AtomicBool::new(false));
    let slices = Arc::new(AtomicU64::new(0));
    let (done, stopped) = mpsc::channel();
    for _ in 0..spinners {
        let (stop, slices, done) = (stop.clone(), slices.clone(), done.clone());
        rt.spawn(async move {
            while !stop.load(Relaxed) {
                let until = Instant::now() + SPIN;
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
                slices.fetch_add(1, Relaxed);
                R::yield_now().await;
            }
            let _ = done.send(());
        });
    }
    if spinners > 0 {
        thread::sleep(SETTLE);
    }
    let (start, sliced) = (Instant::now(), slices.load(Relaxed));
    let result = measure(rt);
    let spin_per_ms = (slices.load(Relaxed) - sliced) as f64 / (start.elapsed().as_secs_f64() * 1e3);
    stop.store(true, Relaxed);
    collect(&stopped, spinners, TIMEOUT, &format!("{}: spinners stopped", R::NAME));
    (result, spin_per_ms)
}

/// Spawns `n` sleeping tasks at once; returns how late each woke, in ms.
fn timer_lateness<R: Runtime>(rt: &R, n: usize) -> Vec<f64> {
    let (tx, rx) = mpsc::channel();
    let mut rng = XorShift(SEED);
    for _ in 0..n {
        let deadline = Instant::now() + Duration::from_micros(rng.next() % MAX_SLEEP.as_micros() as u64);
        let tx = tx.clone();
        rt.spawn(async move {
            R::sleep_until(deadline).await;
            let _ = tx.send(signed_secs(Instant::now(), deadline) * 1e3);
        });
    }
    collect(&rx, n, MAX_SLEEP + TIMEOUT, &format!("{}: timers fired", R::NAME))
}

/// Times one-byte round trips from this thread to an echo task on `rt`; returns them in µs.
fn echo_round_trips<R: Runtime>(rt: &R, rounds: usize) -> Vec<f64> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("listener address");
    let (tx, rx) = mpsc::channel();
    rt.spawn(async move {
        let _ = tx.send(R::echo(listener).await);
    });
    // The listener already listens, so this connects before the task accepts.
    let mut client = TcpStream::connect(addr).expect("connect to the echo task");
    client.set_nodelay(true).expect("TCP_NODELAY");
    client.set_read_timeout(Some(TIMEOUT)).expect("read timeout");
    let start = Instant::now();
    let mut samples = Vec::with_capacity(rounds);
    // Round 0 (connection set-up, first wake of the task) is not timed.
    for round in 0..=rounds {
        let sent = Instant::now();
        let byte = [round as u8];
        client.write_all(&byte).expect("write to the echo task");
        let mut echoed = [0];
        if let Err(err) = client.read_exact(&mut echoed) {
            panic!("{}: no echo for round {round} within {TIMEOUT:?}: {err}", R::NAME);
        }
        assert_eq!(echoed, byte, "{}: wrong byte echoed", R::NAME);
        if round > 0 {
            samples.push(sent.elapsed().as_secs_f64() * 1e6);
        }
        if start.elapsed() > SOCKET_BUDGET {
            break;
        }
    }
    drop(client);
    let served = collect(&rx, 1, TIMEOUT, &format!("{}: echo task ended", R::NAME));
    if let Some(Err(err)) = served.into_iter().next() {
        panic!("{}: echo task failed: {err}", R::NAME);
    }
    samples
}

/// Receives `n` values within `limit`, or panics saying that `what` did not happen in time.
fn collect<T>(rx: &mpsc::Receiver<T>, n: usize, limit: Duration, what: &str) -> Vec<T> {
    let deadline = Instant::now() + limit;
    let mut values = Vec::with_capacity(n);
    while values.len() < n {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(value) => values.push(value),
            Err(err) => panic!("{what}: only {} of {n} within {limit:?} ({err})", values.len()),
        }
    }
    values
}

/// `a - b` in seconds, negative when `a` is earlier.
fn signed_secs(a: Instant, b: Instant) -> f64 {
    match a.checked_duration_since(b) {
        Some(after) => after.as_secs_f64(),
        None => -(b - a).as_secs_f64(),
    }
}

/// Marsaglia's xorshift64: deterministic durations with no dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

// ---------------------------------------------------------------------------------------------
// configuration and report

/// The executors, as `LATENCY_EXECUTORS` names them.
#[derive(Clone, Copy)]
enum Kind {
    Crew,
    Tokio,
    AsyncExecutor,
}

impl FromStr for Kind {
    type Err = String;

    fn from_str(name: &str) -> Result<Kind, String> {
        match name {
            "crew" => Ok(Kind::Crew),
            "tokio" => Ok(Kind::Tokio),
            "async_executor" => Ok(Kind::AsyncExecutor),
            _ => Err("expected crew, tokio or async_executor".into()),
        }
    }
}

/// Parses the comma-separated list in env `name` (else `default`), panicking on a bad item.
fn env_list<T>(name: &str, default: &str) -> Vec<T>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    let value = std::env::var(name).unwrap_or_else(|_| default.to_string());
    let parse = |item: &str| item.trim().parse().unwrap_or_else(|err| panic!("{name}: bad item {item:?} ({err})"));
    value.split(',').filter(|item| !item.trim().is_empty()).map(parse).collect()
}

/// Prints one table row: the load check, then percentiles by the nearest-rank method.
fn report(executor: &str, spinners: usize, spin_per_ms: f64, what: &str, unit: &str, mut samples: Vec<f64>) {
    assert!(!samples.is_empty(), "{executor}: no samples for {what}");
    samples.sort_by(f64::total_cmp);
    let rank = |p: f64| samples[((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
    let load = if spinners == 0 { "none".to_string() } else { format!("{spinners} spinners") };
    let digits = if unit == "ms" { 3 } else { 0 };
    let [p50, p99, max] = [rank(0.5), rank(0.99), rank(1.0)];
    let n = samples.len();
    println!(
        "| {executor} | {load} | {spin_per_ms:.2} | {what} | {n} | {unit} | {p50:.digits$} | {p99:.digits$} | {max:.digits$} |"
    );
}

/// Every row of one executor: each measurement with no load, then under the spinners.
fn run<R: Runtime>(workers: usize, timers: &[usize]) {
    let rt = R::start(workers);
    for spinners in [0, workers + 1] {
        for &n in timers {
            let (lateness, spin_per_ms) = under_load(&rt, spinners, |rt| timer_lateness(rt, n));
            report(R::NAME, spinners, spin_per_ms, &format!("timers {n}"), "ms", lateness);
        }
        let (round_trips, spin_per_ms) = under_load(&rt, spinners, |rt| echo_round_trips(rt, ROUNDS));
        report(R::NAME, spinners, spin_per_ms, "echo RTT", "µs", round_trips);
    }
}

fn main() {
    let workers = match env_list::<usize>("CREW_BENCH_WORKERS", "4")[..] {
        [n] if n > 0 => n,
        _ => panic!("CREW_BENCH_WORKERS must be one positive whole number"),
    };
    let timers = env_list::<usize>("LATENCY_TIMERS", "2000,20000");
    let executors = env_list::<Kind>("LATENCY_EXECUTORS", "crew,tokio,async_executor");
    let nproc = thread::available_parallelism().map_or(0, |n| n.get());
    println!("W = {workers} workers, S = {} spinners (1 ms spin, then yield), nproc = {nproc}", workers + 1);
    println!();
    println!("| executor | load | spin/ms | what | n | unit | p50 | p99 | max |");
    println!("|---|---|---:|---|---:|---|---:|---:|---:|");
    for executor in executors {
        match executor {
            Kind::Crew => run::<Crew>(workers, &timers),
            Kind::Tokio => run::<Tokio>(workers, &timers),
            Kind::AsyncExecutor => run::<AsyncExecutor>(workers, &timers),
        }
    }
}
