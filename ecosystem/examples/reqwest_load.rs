//! reqwest on crew against reqwest on tokio: the same client code, the same local server.
//!
//! One hyper HTTP/1 "hello" server runs on a one-thread tokio runtime of its own (on its own
//! thread, the same for both). The client is `C` concurrent tasks, each sending GETs in a loop
//! through one shared `reqwest::Client` for the measured time: on a 2-worker crew pool (crew's
//! `tokio` feature, crew's own one-thread tokio runtime for the sockets), or on a 2-worker tokio
//! runtime; and, to measure the size of crew's own runtime, on a 2-worker crew pool given a
//! 2-worker tokio runtime for its sockets (`Builder::tokio_handle`). Rounds alternate the three;
//! each prints requests/s and the p50 and p99 latency.
//!
//! `cargo run --release --example reqwest_load -- [seconds per round] [rounds] [concurrencies]`
//! (defaults: 3, 3, "16,64").

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::service::service_fn;

/// Starts the server on its own thread; returns its port.
fn start_server() -> u16 {
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("server".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                port_tx.send(listener.local_addr().unwrap().port()).unwrap();
                loop {
                    let (stream, _) = listener.accept().await.unwrap();
                    tokio::spawn(async move {
                        let service = service_fn(|_request| async {
                            Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(b"Hello, world!"))))
                        });
                        let io = hyper_util::rt::TokioIo::new(stream);
                        let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                    });
                }
            });
        })
        .unwrap();
    port_rx.recv().unwrap()
}

/// What one client task does until `until`: GETs in a loop, each one's latency kept.
async fn client_loop(client: reqwest::Client, url: String, until: Instant, latencies: Arc<Mutex<Vec<Duration>>>) {
    let mut mine = Vec::new();
    while Instant::now() < until {
        let start = Instant::now();
        let body = client.get(&url).send().await.unwrap().bytes().await.unwrap();
        assert_eq!(&body[..], b"Hello, world!");
        mine.push(start.elapsed());
    }
    latencies.lock().unwrap().extend(mine);
}

/// One round's result: requests/s, p50, p99.
fn summary(mut latencies: Vec<Duration>, elapsed: Duration) -> (f64, Duration, Duration) {
    latencies.sort_unstable();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    (latencies.len() as f64 / elapsed.as_secs_f64(), at(0.5), at(0.99))
}

fn round_crew(pool: &crew::Pool, url: &str, concurrency: usize, seconds: u64) -> (f64, Duration, Duration) {
    let client = pool.block_on(async { reqwest::Client::new() });
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    let until = start + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| pool.spawn(client_loop(client.clone(), url.to_owned(), until, latencies.clone())))
        .collect();
    for task in tasks {
        crew::block_on(task);
    }
    let elapsed = start.elapsed();
    let taken = std::mem::take(&mut *latencies.lock().unwrap());
    summary(taken, elapsed)
}

fn round_tokio(
    runtime: &tokio::runtime::Runtime,
    url: &str,
    concurrency: usize,
    seconds: u64,
) -> (f64, Duration, Duration) {
    let client = runtime.block_on(async { reqwest::Client::new() });
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    let until = start + Duration::from_secs(seconds);
    runtime.block_on(async {
        let tasks: Vec<_> = (0..concurrency)
            .map(|_| tokio::spawn(client_loop(client.clone(), url.to_owned(), until, latencies.clone())))
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    let elapsed = start.elapsed();
    let taken = std::mem::take(&mut *latencies.lock().unwrap());
    summary(taken, elapsed)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: u64 = args.get(1).map_or(3, |s| s.parse().expect("seconds per round"));
    let rounds: usize = args.get(2).map_or(3, |s| s.parse().expect("rounds"));
    let concurrencies: Vec<usize> =
        args.get(3).map_or("16,64", String::as_str).split(',').map(|c| c.parse().expect("a concurrency")).collect();
    let url = format!("http://127.0.0.1:{}/", start_server());
    let pool = crew::Pool::builder().workers(2).build().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let io_runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let given = crew::Pool::builder().workers(2).tokio_handle(io_runtime.handle().clone()).build().unwrap();
    // Warm both up (connections, allocator).
    round_crew(&pool, &url, 16, 1);
    round_tokio(&runtime, &url, 16, 1);
    round_crew(&given, &url, 16, 1);
    println!("| concurrency | round | crew req/s | crew p50 | crew p99 | tokio req/s | tokio p50 | tokio p99 | crew + 2-worker I/O runtime req/s | p50 | p99 |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for &concurrency in &concurrencies {
        for round in 1..=rounds {
            let (crew_rps, crew_p50, crew_p99) = round_crew(&pool, &url, concurrency, seconds);
            let (tokio_rps, tokio_p50, tokio_p99) = round_tokio(&runtime, &url, concurrency, seconds);
            let (given_rps, given_p50, given_p99) = round_crew(&given, &url, concurrency, seconds);
            println!(
                "| {concurrency} | {round} | {crew_rps:.0} | {crew_p50:.2?} | {crew_p99:.2?} | {tokio_rps:.0} | {tokio_p50:.2?} | {tokio_p99:.2?} | {given_rps:.0} | {given_p50:.2?} | {given_p99:.2?} |"
            );
        }
    }
}
