//! The `http` feature: `crew::http::serve` against hyper's own client over loopback, HTTP/1
//! and HTTP/2 (prior knowledge) on one port: where handlers run (crew's workers, in the serve's
//! group), the peer's address, graceful shutdown with requests in flight, dropping the serve,
//! panics, bad requests and clients gone mid-body, the connection limit, the header-read
//! timeout, a broken listener, and accept errors under a low `RLIMIT_NOFILE` (in a child
//! process); in `http/`: accepts under a flood of connects (`flood.rs`), the shutdown's bound
//! against a silent HTTP/2 peer (`shutdown.rs`), and the stall timeout against slow clients
//! (`stall.rs`). Run with `cargo test --features http --test http`.
#![cfg(all(feature = "http", feature = "macros", unix))]

mod common;

use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

use crew::http::PeerAddr;
use crew::hyper::{Executor, Io};
use crew::io::{AsyncReadExt, AsyncWriteExt};
use crew::net::{TcpListener, TcpStream};

/// Turns a hang into a failure; nothing here waits on it to pass.
async fn within_limit<T>(body: impl Future<Output = T>) -> T {
    crew::time::timeout(common::HANG_TIMEOUT, body).await.expect("the test hung")
}

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

/// A loopback listener on a free port.
fn listener() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.get_ref().local_addr().unwrap();
    (listener, addr)
}

/// Counts handlers in flight: one more for each value alive.
struct Live(Arc<AtomicUsize>);

impl Live {
    fn new(count: &Arc<AtomicUsize>) -> Live {
        count.fetch_add(1, Ordering::SeqCst);
        Live(count.clone())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The service under test, and what its handlers tell the test.
#[derive(Clone)]
struct App {
    /// Each `/wait` and `/hang` handler sends here once it runs.
    entered: async_channel::Sender<()>,
    /// Each `/wait` handler waits for a message here.
    release: async_channel::Receiver<()>,
    /// `/wait` and `/hang` handlers in flight.
    live: Arc<AtomicUsize>,
    /// What `/drain` handlers saw of their request's body: its length, or its error.
    drained: async_channel::Sender<Result<usize, String>>,
}

/// The test's side of an [`App`].
struct Control {
    entered: async_channel::Receiver<()>,
    release: async_channel::Sender<()>,
    live: Arc<AtomicUsize>,
    drained: async_channel::Receiver<Result<usize, String>>,
}

fn app() -> (App, Control) {
    let (entered_tx, entered) = async_channel::unbounded();
    let (release, release_rx) = async_channel::unbounded();
    let (drained_tx, drained) = async_channel::unbounded();
    let live = Arc::new(AtomicUsize::new(0));
    let app = App { entered: entered_tx, release: release_rx, live: live.clone(), drained: drained_tx };
    (app, Control { entered, release, live, drained })
}

impl App {
    /// As a tower service, for `crew::http::serve`.
    fn service(
        self,
    ) -> impl tower_service::Service<
        Request<Incoming>,
        Response = Response<Full<Bytes>>,
        Error = Infallible,
        Future = impl Send + 'static,
    > + Clone
           + Send
           + 'static {
        tower::service_fn(move |request| self.clone().route(request))
    }

    async fn route(self, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
        let text = match request.uri().path() {
            "/" => format!("{} {:?} {}", thread_name(), request.version(), peer(&request)),
            "/wait" => {
                let _live = Live::new(&self.live);
                self.entered.send(()).await.unwrap();
                self.release.recv().await.unwrap();
                "released".to_owned()
            }
            "/hang" => {
                let _live = Live::new(&self.live);
                self.entered.send(()).await.unwrap();
                std::future::pending::<()>().await;
                unreachable!()
            }
            "/panic" => panic!("the handler panics on purpose"),
            big if big.starts_with("/big/") => {
                let len = big["/big/".len()..].parse().unwrap();
                return Ok(Response::new(Full::new(Bytes::from(vec![b'x'; len]))));
            }
            "/drain" => {
                let drained = request.into_body().collect().await.map(|body| body.to_bytes().len());
                self.drained.send(drained.map_err(|e| e.to_string())).await.unwrap();
                "drained".to_owned()
            }
            "/digest" => digest_slowly(request.into_body()).await,
            other => {
                let mut response = Response::new(Full::new(Bytes::from(format!("no {other}"))));
                *response.status_mut() = StatusCode::NOT_FOUND;
                return Ok(response);
            }
        };
        Ok(Response::new(Full::new(Bytes::from(text))))
    }
}

/// A body's length and [`digest`], as text, read a frame at a time with other tasks run in
/// between: the connection's task returns between two frames.
async fn digest_slowly(mut body: Incoming) -> String {
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        read.extend_from_slice(&frame.unwrap().into_data().unwrap_or_default());
        for _ in 0..3 {
            crew::yield_now().await;
        }
    }
    format!("{} {}", read.len(), digest(&read))
}

/// A sum of `bytes` that depends on their order.
fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().enumerate().fold(0u64, |sum, (at, &byte)| sum.wrapping_mul(31).wrapping_add(byte as u64 ^ at as u64))
}

/// The request's `PeerAddr`, as text: a TCP address, `unix` for a Unix socket's, else `none`.
fn peer(request: &Request<Incoming>) -> String {
    let extensions = request.extensions();
    if let Some(PeerAddr(addr)) = extensions.get::<PeerAddr>() {
        addr.to_string()
    } else if extensions.get::<PeerAddr<std::os::unix::net::SocketAddr>>().is_some() {
        "unix".to_owned()
    } else {
        "none".to_owned()
    }
}

type Sender1 = hyper::client::conn::http1::SendRequest<Full<Bytes>>;
type Sender2 = hyper::client::conn::http2::SendRequest<Full<Bytes>>;

/// An HTTP/1 client connection to `addr`: its sender, its driver's task, its local address.
async fn http1(addr: SocketAddr) -> (Sender1, crew::JoinHandle<hyper::Result<()>>, SocketAddr) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let local = stream.get_ref().local_addr().unwrap();
    let (sender, connection) = hyper::client::conn::http1::handshake(Io::vectored(stream)).await.unwrap();
    (sender, crew::spawn(connection), local)
}

/// An HTTP/2 (prior knowledge) client connection to `addr`.
async fn http2(addr: SocketAddr) -> (Sender2, crew::JoinHandle<hyper::Result<()>>, SocketAddr) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let local = stream.get_ref().local_addr().unwrap();
    let (sender, connection) = hyper::client::conn::http2::handshake(Executor, Io::vectored(stream)).await.unwrap();
    (sender, crew::spawn(connection), local)
}

fn get(path: &str) -> Request<Full<Bytes>> {
    Request::get(path).body(Full::new(Bytes::new())).unwrap()
}

/// The body of a response, as text, after checking its status is 200.
async fn text(response: hyper::Result<Response<Incoming>>) -> String {
    let response = response.expect("a response");
    assert_eq!(response.status(), StatusCode::OK);
    String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
}

async fn get1(sender: &mut Sender1, path: &str) -> hyper::Result<Response<Incoming>> {
    sender.ready().await?;
    sender.send_request(get(path)).await
}

async fn get2(sender: &mut Sender2, path: &str) -> hyper::Result<Response<Incoming>> {
    sender.ready().await?;
    sender.send_request(get(path)).await
}

/// Connects to `addr` until the connect is refused: the listener has been closed.
async fn until_refused(addr: SocketAddr) {
    loop {
        match TcpStream::connect(addr).await {
            // Still listening; or it closed with this connect in its backlog, which resets it.
            Ok(_) => crew::time::sleep(Duration::from_millis(5)).await,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => return,
            Err(e) => panic!("connect: {e}"),
        }
    }
}

/// Runs `body` on a fresh 2-worker pool whose clock starts paused (docs/testing.md); a hang fails
/// after `common::HANG_TIMEOUT` of real time (a timer of the pool's own would be virtual, and
/// the clock jumps to it whenever the pool waits on a socket).
fn on_a_paused_pool<F: Future + 'static>(
    name: &str,
    body: impl FnOnce(Arc<crew::Pool>) -> F + Send + 'static,
) -> F::Output
where
    F::Output: Send + 'static,
{
    let name = name.to_owned();
    common::with_timeout(move || {
        let builder = crew::Pool::builder().workers(2).thread_name(name).start_paused(true).task_dump(true);
        let pool = Arc::new(builder.build().unwrap());
        pool.block_on(body(pool.clone()))
    })
}

/// The length of the first data frame of `response`'s body, and the body.
async fn first_frame(response: hyper::Result<Response<Incoming>>) -> (usize, Incoming) {
    let mut body = response.expect("a response").into_body();
    let frame = body.frame().await.unwrap().unwrap();
    (frame.into_data().unwrap().len(), body)
}

/// How many connection tasks of a serve `pool` runs.
fn connection_tasks(pool: &crew::Pool) -> usize {
    pool.dump().tasks().iter().filter(|task| task.info().name() == Some("http connection")).count()
}

/// Spins until `condition` holds (bounded by the test's timeout).
async fn until(mut condition: impl FnMut() -> bool) {
    while !condition() {
        crew::time::sleep(Duration::from_millis(2)).await;
    }
}

#[crew::test(thread_name = "served")]
async fn http1_and_http2_requests_run_on_the_pools_workers_with_the_peers_address() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).into_future());
        let (mut h1, _h1_connection, h1_local) = http1(addr).await;
        for _ in 0..3 {
            // One connection, kept alive: the same peer each time.
            let body = text(get1(&mut h1, "/").await).await;
            assert!(body.starts_with("served-"), "on a worker of the test's pool: {body}");
            assert!(body.ends_with(&format!(" HTTP/1.1 {h1_local}")), "{body}");
        }
        let (mut h2, _h2_connection, h2_local) = http2(addr).await;
        for _ in 0..3 {
            let body = text(get2(&mut h2, "/").await).await;
            assert!(body.starts_with("served-"), "on a worker of the test's pool: {body}");
            assert!(body.ends_with(&format!(" HTTP/2.0 {h2_local}")), "{body}");
        }
        drop(server); // cancels the serve and its connections
    })
    .await;
}

#[test]
fn connections_and_http2_streams_are_tasks_of_the_serves_group_on_the_pool_that_runs_it() {
    let pool = crew::Pool::builder().workers(2).thread_name("grouped").task_dump(true).build().unwrap();
    let (listener, addr) = listener();
    let (app, control) = app();
    let server = pool.spawn(crew::http::serve(listener, app.service()).into_future());
    let group_tasks = || {
        let dump = pool.dump();
        dump.tasks().iter().filter(|task| task.info().set_name() == Some(crew::http::GROUP_NAME)).count()
    };
    crew::block_on(within_limit(async {
        let (mut h1, _h1_connection, _) = http1(addr).await;
        let (mut h2, _h2_connection, _) = http2(addr).await;
        // Each hands its sender back, so that its connection stays open.
        let h1_request = crew::spawn(async move { (text(get1(&mut h1, "/wait").await).await, h1) });
        let h2_request = crew::spawn(async move { (text(get2(&mut h2, "/wait").await).await, h2) });
        control.entered.recv().await.unwrap();
        control.entered.recv().await.unwrap();
        // The HTTP/1 connection's task, the HTTP/2 connection's, and its stream's: all in the
        // private pool's dump, none on the global pool that runs this block.
        assert_eq!(group_tasks(), 3, "{}", pool.dump());
        let mut names: Vec<_> =
            pool.dump().tasks().iter().filter_map(|task| task.info().name().map(str::to_owned)).collect();
        names.sort();
        assert_eq!(names, ["http connection", "http connection", "http2 stream"], "the dump names them");
        control.release.send(()).await.unwrap();
        control.release.send(()).await.unwrap();
        let (h1_body, _h1) = h1_request.await;
        let (h2_body, _h2) = h2_request.await;
        assert_eq!((h1_body.as_str(), h2_body.as_str()), ("released", "released"));
        // The stream's task ends with its response; the connections stay open.
        until(|| group_tasks() == 2).await;
    }));
    drop(server);
    crew::block_on(within_limit(until(|| group_tasks() == 0)));
}

#[crew::test(thread_name = "unix")]
async fn a_unix_listener_serves_http1_with_the_peers_unix_address() {
    within_limit(async {
        let dir = std::env::temp_dir().join(format!("crew-http-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("unix.sock");
        let _ = std::fs::remove_file(&path);
        let listener = crew::net::UnixListener::bind(&path).unwrap();
        let (app, _control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).into_future());
        let stream = crew::net::UnixStream::connect(&path).await.unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(Io::vectored(stream)).await.unwrap();
        let connection = crew::spawn(connection);
        sender.ready().await.unwrap();
        let body = text(sender.send_request(get("/")).await).await;
        assert!(body.starts_with("unix-") && body.ends_with(" HTTP/1.1 unix"), "{body}");
        drop(sender);
        connection.await.unwrap();
        drop(server);
        std::fs::remove_dir_all(&dir).unwrap();
    })
    .await;
}

#[crew::test(thread_name = "graceful")]
async fn graceful_shutdown_refuses_new_connects_closes_idle_ones_and_finishes_requests_in_flight() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, control) = app();
        let (stop, stopped) = futures::channel::oneshot::channel::<()>();
        let serve = crew::http::serve(listener, app.service()).with_graceful_shutdown(async move {
            stopped.await.ok();
        });
        let server = crew::spawn(serve.into_future());
        let (mut idle, idle_connection, _) = http1(addr).await;
        assert!(text(get1(&mut idle, "/").await).await.starts_with("graceful-"));
        let (mut h1, h1_connection, _) = http1(addr).await;
        let (mut h2, h2_connection, _) = http2(addr).await;
        let h1_request = crew::spawn(async move {
            let response = get1(&mut h1, "/wait").await;
            (text(response).await, h1)
        });
        let h2_request = crew::spawn(async move { text(get2(&mut h2, "/wait").await).await });
        control.entered.recv().await.unwrap();
        control.entered.recv().await.unwrap();

        stop.send(()).unwrap();
        until_refused(addr).await;
        // The idle keep-alive connection is closed by the server.
        idle_connection.await.unwrap();
        assert!(!server.is_finished(), "two requests are still in flight");
        control.release.send(()).await.unwrap();
        control.release.send(()).await.unwrap();
        let (h1_body, mut h1) = h1_request.await;
        assert_eq!(h1_body, "released");
        assert_eq!(h2_request.await, "released");
        // HTTP/1 closed after its response; HTTP/2 ended after GOAWAY and its last stream.
        h1_connection.await.unwrap();
        h2_connection.await.unwrap();
        assert!(get1(&mut h1, "/").await.is_err(), "no request after the shutdown");
        server.await.unwrap();
        assert_eq!(control.live.load(Ordering::SeqCst), 0);
    })
    .await;
}

#[crew::test(thread_name = "dropped")]
async fn dropping_the_serve_future_drops_every_connection_and_the_listener() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).into_future());
        let mut requests = Vec::new();
        for _ in 0..3 {
            let (mut h1, connection, _) = http1(addr).await;
            requests.push(crew::spawn(async move { get1(&mut h1, "/hang").await.map(drop) }));
            requests.push(connection);
        }
        let (h2, connection, _) = http2(addr).await;
        for _ in 0..2 {
            let mut h2 = h2.clone();
            requests.push(crew::spawn(async move { get2(&mut h2, "/hang").await.map(drop) }));
        }
        requests.push(connection);
        for _ in 0..5 {
            control.entered.recv().await.unwrap();
        }
        assert_eq!(control.live.load(Ordering::SeqCst), 5);

        server.cancel().await;
        // Every handler's future was dropped with its connection's (or stream's) task.
        until(|| control.live.load(Ordering::SeqCst) == 0).await;
        until_refused(addr).await;
        for request in requests {
            // Each request fails, or its connection ends: the server is gone.
            let _ = request.await;
        }
        drop(h2);
    })
    .await;
}

#[crew::test(thread_name = "panics")]
async fn a_panic_in_the_service_ends_only_its_connection_or_stream() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).into_future());

        let (mut h1, h1_connection, _) = http1(addr).await;
        assert!(get1(&mut h1, "/panic").await.is_err(), "no response from a panicked handler");
        let _ = h1_connection.await; // the server closed it
        let (mut h1, _h1_connection, _) = http1(addr).await;
        assert!(text(get1(&mut h1, "/").await).await.starts_with("panics-"), "a new connection works");

        let (mut h2, _h2_connection, _) = http2(addr).await;
        assert!(get2(&mut h2, "/panic").await.is_err(), "the stream is reset");
        let body = text(get2(&mut h2, "/").await).await;
        assert!(body.starts_with("panics-"), "the HTTP/2 connection goes on: {body}");
        assert!(!server.is_finished());
    })
    .await;
}

#[crew::test(thread_name = "bad")]
async fn a_bad_request_or_a_client_gone_mid_body_ends_only_its_connection() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).into_future());

        let mut garbage = TcpStream::connect(addr).await.unwrap();
        garbage.write_all(b"NOT HTTP AT ALL\r\n\r\n").await.unwrap();
        let mut answer = Vec::new();
        garbage.read_to_end(&mut answer).await.unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");

        let mut gone = TcpStream::connect(addr).await.unwrap();
        gone.write_all(b"POST /drain HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nonly 13 bytes").await.unwrap();
        drop(gone);
        let drained = control.drained.recv().await.unwrap();
        assert!(drained.is_err(), "the handler saw the body end early: {drained:?}");

        let (mut h1, _connection, _) = http1(addr).await;
        assert!(text(get1(&mut h1, "/").await).await.starts_with("bad-"), "the server goes on");
        assert!(!server.is_finished());
    })
    .await;
}

#[crew::test(thread_name = "limited")]
async fn at_the_connection_limit_new_connects_wait_until_one_closes() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).max_connections(1).into_future());
        let (mut first, first_connection, _) = http1(addr).await;
        assert!(text(get1(&mut first, "/").await).await.starts_with("limited-"));
        // Connected (the kernel's backlog), but not accepted while the first is open.
        let (mut second, _second_connection, _) = http1(addr).await;
        let second_request = crew::spawn(async move { text(get1(&mut second, "/").await).await });
        crew::time::sleep(Duration::from_millis(100)).await;
        assert!(!second_request.is_finished(), "served beyond the limit of 1");
        drop(first);
        first_connection.await.unwrap();
        assert!(second_request.await.starts_with("limited-"));
        drop(server);
    })
    .await;
}

#[crew::test(thread_name = "slow")]
async fn a_client_too_slow_to_send_a_request_head_is_disconnected() {
    within_limit(async {
        let (listener, addr) = listener();
        let (app, _control) = app();
        let serve = crew::http::serve(listener, app.service()).header_read_timeout(Duration::from_millis(200));
        let server = crew::spawn(serve.into_future());
        // Nothing at all; half of HTTP/2's preface; half of an HTTP/1 request head.
        for sent in [&b""[..], b"PRI * HTTP/2.0\r\n", b"GET / HTTP/1.1\r\nhost: x\r\n"] {
            let mut slow = TcpStream::connect(addr).await.unwrap();
            slow.write_all(sent).await.unwrap();
            let mut answer = Vec::new();
            // Ends (EOF, or a reset) only once the server closes the connection.
            let _ = slow.read_to_end(&mut answer).await;
            assert!(answer.is_empty() || answer.starts_with(b"HTTP/1.1 408"), "{:?}", String::from_utf8_lossy(&answer));
        }
        let (mut h1, _connection, _) = http1(addr).await;
        assert!(text(get1(&mut h1, "/").await).await.starts_with("slow-"), "a prompt client is served");
        drop(server);
    })
    .await;
}

#[crew::test(thread_name = "paused", start_paused = true)]
async fn on_a_paused_clock_an_hour_long_header_timeout_disconnects_a_silent_client_at_once() {
    // No `within_limit`: its timeout would be virtual too, and fire first.
    let real = std::time::Instant::now();
    let (listener, addr) = listener();
    let (app, _control) = app();
    let serve = crew::http::serve(listener, app.service()).header_read_timeout(Duration::from_secs(3600));
    let server = crew::spawn(serve.into_future());
    let start = crew::time::now();
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut answer = Vec::new();
    // While both ends wait on their sockets the pool is idle: the clock jumps to the timeout.
    let _ = silent.read_to_end(&mut answer).await;
    assert!(answer.is_empty() || answer.starts_with(b"HTTP/1.1 408"), "{:?}", String::from_utf8_lossy(&answer));
    assert_eq!(crew::time::now() - start, Duration::from_secs(3600), "the serve's timer read the paused clock");
    assert!(real.elapsed() < Duration::from_secs(1800), "an hour of real time passed");
    drop(server);
}

#[crew::test(thread_name = "broken")]
async fn a_listener_that_stops_listening_ends_serve_with_its_error_after_its_connections() {
    within_limit(async {
        let (listener, addr) = listener();
        let same_socket = listener.get_ref().try_clone().unwrap();
        let (app, control) = app();
        let server = crew::spawn(crew::http::serve(listener, app.service()).into_future());
        let (mut h1, _connection, _) = http1(addr).await;
        let request = crew::spawn(async move { text(get1(&mut h1, "/wait").await).await });
        control.entered.recv().await.unwrap();
        // shutdown(2) on a listening socket: its accept fails with EINVAL from then on.
        socket2::SockRef::from(&same_socket).shutdown(std::net::Shutdown::Both).unwrap();
        until(|| control.live.load(Ordering::SeqCst) == 1).await;
        assert!(!server.is_finished(), "a request is still in flight");
        control.release.send(()).await.unwrap();
        assert_eq!(request.await, "released");
        let error = server.await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{error}");
    })
    .await;
}

#[crew::test(thread_name = "unlistened")]
async fn a_socket_that_never_listened_ends_serve_with_invalid_input() {
    within_limit(async {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        socket.bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into()).unwrap();
        let listener = TcpListener::from_std(std::net::TcpListener::from(socket)).unwrap();
        let (app, _control) = app();
        let error = crew::http::serve(listener, app.service()).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{error}");
    })
    .await;
}

#[test]
fn bad_settings_panic_naming_the_value_and_what_is_accepted() {
    let (listener, _) = listener();
    let (app, _control) = app();
    let service = app.service();
    let zero = std::panic::catch_unwind(|| drop(crew::http::serve(listener, service.clone()).max_connections(0)));
    let message = zero.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("max_connections(0)") && message.contains("1 or more"), "{message}");
    let (listener, _) = self::listener();
    let zero = std::panic::catch_unwind(|| {
        drop(crew::http::serve(listener, service.clone()).header_read_timeout(Duration::ZERO))
    });
    let message = zero.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("header_read_timeout(Some(0ns))") && message.contains("None"), "{message}");
    let (listener, _) = self::listener();
    let zero = std::panic::catch_unwind(|| drop(crew::http::serve(listener, service).stall_timeout(Duration::ZERO)));
    let message = zero.unwrap_err().downcast::<String>().unwrap();
    assert!(message.contains("stall_timeout(Some(0ns))") && message.contains("None"), "{message}");
}

/// Set in the child process that runs the fd-limit test under a low `RLIMIT_NOFILE`.
const FD_LIMIT_CHILD: &str = "CREW_HTTP_FD_LIMIT_CHILD";

/// The fd-limit test's name: the child runs it alone.
const FD_LIMIT_TEST: &str = "accept_errors_under_a_low_fd_limit_back_off_are_reported_once_and_serving_goes_on";

#[test]
fn accept_errors_under_a_low_fd_limit_back_off_are_reported_once_and_serving_goes_on() {
    if common::child::is_child(FD_LIMIT_CHILD) {
        return fd_limit::child();
    }
    // The shell's `ulimit` lowers the limit for the child alone (no `unsafe` setrlimit here).
    let wrapper = ["sh", "-c", "ulimit -n 256 && exec \"$0\" \"$@\""];
    let command = common::child::child_command_under(&wrapper, FD_LIMIT_CHILD, FD_LIMIT_TEST);
    let output = common::child::output_within_timeout(command);
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "the child failed:\n{printed}");
    assert!(printed.contains("1 passed"), "the child ran the test:\n{printed}");
}

#[path = "http/fd_limit.rs"]
mod fd_limit;
#[path = "http/flood.rs"]
mod flood;
#[path = "http/shutdown.rs"]
mod shutdown;
#[path = "http/stall.rs"]
mod stall;
