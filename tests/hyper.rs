//! The `hyper` feature: hyper's own client against hyper's own server, both on crew (crew's
//! executor, timer and sockets) over loopback: HTTP/1 keep-alive, HTTP/2 with many concurrent
//! streams, bodies streamed both ways at once, a client that disconnects mid-body, and a server
//! timeout that only crew's timer can fire; the timer's `now` and sleeps on a paused pool's
//! clock. Run with `cargo test --features hyper`.
#![cfg(all(feature = "hyper", feature = "macros"))]

use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use futures::SinkExt;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};

use crew::hyper::{Executor, Io, Timer};
use crew::net::{TcpListener, TcpStream};

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

/// A loopback listener on a free port.
fn listener() -> (TcpListener, std::net::SocketAddr) {
    let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.get_ref().local_addr().unwrap();
    (listener, addr)
}

/// Answers "hello from <thread> #<n>", counting requests.
async fn hello(request: Request<Incoming>, served: Arc<AtomicUsize>) -> Result<Response<Full<Bytes>>, Infallible> {
    let n = served.fetch_add(1, Ordering::SeqCst);
    let path = request.uri().path().to_owned();
    Ok(Response::new(Full::new(Bytes::from(format!("{path} from {} #{n}", thread_name())))))
}

#[crew::test(workers = 2, thread_name = "h1")]
async fn http1_keep_alive_serves_many_requests_on_one_connection() {
    let (listener, addr) = listener();
    let served = Arc::new(AtomicUsize::new(0));
    let for_server = served.clone();
    let server = crew::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let service = service_fn(move |request| hello(request, for_server.clone()));
        hyper::server::conn::http1::Builder::new().serve_connection(Io::vectored(stream), service).await
    });

    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(Io::vectored(stream)).await.unwrap();
    let connection = crew::spawn(connection);
    for i in 0..20 {
        let request = Request::get(format!("/r{i}")).body(Full::new(Bytes::new())).unwrap();
        sender.ready().await.unwrap(); // the previous response is read: the connection is free
        let response = sender.send_request(request).await.unwrap();
        assert!(response.status().is_success());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body = std::str::from_utf8(&body).unwrap();
        assert!(body.starts_with(&format!("/r{i} from h1-")), "{body}");
        assert!(body.ends_with(&format!("#{i}")), "one connection, in order: {body}");
    }
    drop(sender);
    connection.await.unwrap();
    server.await.unwrap();
    assert_eq!(served.load(Ordering::SeqCst), 20);
}

#[crew::test(workers = 2, thread_name = "h2")]
async fn http2_runs_many_concurrent_streams_on_crews_executor() {
    const STREAMS: usize = 200;
    let (listener, addr) = listener();
    let served = Arc::new(AtomicUsize::new(0));
    let for_server = served.clone();
    let server = crew::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let service = service_fn(move |request| hello(request, for_server.clone()));
        hyper::server::conn::http2::Builder::new(Executor)
            .timer(Timer)
            .serve_connection(Io::vectored(stream), service)
            .await
    });

    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, connection) =
        hyper::client::conn::http2::Builder::new(Executor).timer(Timer).handshake(Io::vectored(stream)).await.unwrap();
    let connection = crew::spawn(connection);
    let requests: Vec<_> = (0..STREAMS)
        .map(|i| {
            let mut sender = sender.clone();
            crew::spawn(async move {
                let request = Request::get(format!("/s{i}")).body(Full::new(Bytes::new())).unwrap();
                let response = sender.send_request(request).await.unwrap();
                let body = response.into_body().collect().await.unwrap().to_bytes();
                String::from_utf8(body.to_vec()).unwrap()
            })
        })
        .collect();
    for (i, request) in requests.into_iter().enumerate() {
        let body = request.await;
        assert!(body.starts_with(&format!("/s{i} from h2-")), "served on the test's pool: {body}");
    }
    drop(sender);
    connection.await.unwrap();
    server.await.unwrap();
    assert_eq!(served.load(Ordering::SeqCst), STREAMS);
}

/// A request body fed chunk by chunk from a channel.
type ChunkBody = StreamBody<mpsc::Receiver<Result<Frame<Bytes>, Infallible>>>;

/// Serves one connection whose every request has its body echoed back as the response's body,
/// frame by frame, as it arrives.
fn serve_echo(listener: TcpListener, http2: bool) -> crew::JoinHandle<hyper::Result<()>> {
    crew::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let echo =
            service_fn(|request: Request<Incoming>| async { Ok::<_, Infallible>(Response::new(request.into_body())) });
        if http2 {
            hyper::server::conn::http2::Builder::new(Executor).serve_connection(Io::vectored(stream), echo).await
        } else {
            hyper::server::conn::http1::Builder::new().serve_connection(Io::vectored(stream), echo).await
        }
    })
}

/// Sends `CHUNKS` chunks of 16 KiB through `send`'s echo, reading each one's echo back before
/// sending the next: only bodies that stream in both directions at once get through. Bounded
/// by a timeout, so a body that is buffered whole fails the test instead of hanging it.
async fn echo_chunk_by_chunk<F, R>(send: F)
where
    F: FnOnce(Request<ChunkBody>) -> R,
    R: Future<Output = hyper::Result<Response<Incoming>>>,
{
    const CHUNKS: u8 = 40;
    const CHUNK: usize = 16 * 1024;
    let exchange = async {
        let (mut chunks, body) = mpsc::channel(1);
        let response = send(Request::post("/echo").body(StreamBody::new(body)).unwrap()).await.unwrap();
        let mut echoed = response.into_body();
        for i in 0..CHUNKS {
            chunks.send(Ok(Frame::data(Bytes::from(vec![i; CHUNK])))).await.unwrap();
            // The echo may come back in other frame sizes than it went: read up to one chunk.
            let mut back = Vec::new();
            while back.len() < CHUNK {
                let frame = echoed.frame().await.expect("the echo ended early").unwrap();
                back.extend_from_slice(&frame.into_data().expect("only data frames"));
            }
            assert!(back.len() == CHUNK && back.iter().all(|&b| b == i), "chunk {i} came back whole and alone");
        }
        drop(chunks); // ends the request's body, so the echo ends too
                      // HTTP/2 may close the stream with an empty frame: no data may follow the last chunk.
        while let Some(frame) = echoed.frame().await {
            let frame = frame.unwrap();
            assert!(frame.data_ref().map_or(true, Bytes::is_empty), "nothing after the last chunk");
        }
    };
    crew::time::timeout(Duration::from_secs(120), exchange).await.expect("a body was held back instead of streamed");
}

#[crew::test(workers = 2)]
async fn http1_bodies_stream_both_ways_at_once() {
    let (listener, addr) = listener();
    let server = serve_echo(listener, false);
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(Io::vectored(stream)).await.unwrap();
    let connection = crew::spawn(connection);
    echo_chunk_by_chunk(|request| sender.send_request(request)).await;
    drop(sender);
    connection.await.unwrap();
    server.await.unwrap();
}

#[crew::test(workers = 2)]
async fn http2_bodies_stream_both_ways_at_once() {
    let (listener, addr) = listener();
    let server = serve_echo(listener, true);
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::Builder::new(Executor).handshake(Io::vectored(stream)).await.unwrap();
    let connection = crew::spawn(connection);
    echo_chunk_by_chunk(|request| sender.send_request(request)).await;
    drop(sender);
    connection.await.unwrap();
    server.await.unwrap();
}

#[crew::test(workers = 2)]
async fn a_client_that_disconnects_mid_body_gives_the_handler_an_error_and_the_connection_ends() {
    let (listener, addr) = listener();
    let (saw, seen) = async_channel::bounded::<Result<usize, String>>(1);
    let server = crew::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let service = service_fn(move |request: Request<Incoming>| {
            let saw = saw.clone();
            async move {
                let mut body = request.into_body();
                let mut bytes = 0;
                let outcome = loop {
                    match body.frame().await {
                        Some(Ok(frame)) => bytes += frame.data_ref().map_or(0, Bytes::len),
                        Some(Err(error)) => break Err(format!("after {bytes} bytes: {error}")),
                        None => break Ok(bytes),
                    }
                };
                saw.send(outcome).await.unwrap();
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::new())))
            }
        });
        hyper::server::conn::http1::Builder::new().serve_connection(Io::vectored(stream), service).await
    });

    // Announces 1 MiB, sends 1 KiB of it, and goes.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = "POST /upload HTTP/1.1\r\nhost: localhost\r\ncontent-length: 1048576\r\n\r\n";
    crew::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await.unwrap();
    crew::io::AsyncWriteExt::write_all(&mut stream, &[7u8; 1024]).await.unwrap();
    drop(stream);

    let outcome = seen.recv().await.unwrap();
    let error = outcome.expect_err("the body ended early: an error, not a short body");
    assert!(error.starts_with("after 1024 bytes"), "{error}");
    // The connection ends too (hyper reports the lost body to the handler, not always to the
    // connection's future): no hang.
    let _ = server.await;
}

#[crew::test(workers = 2)]
async fn a_server_header_timeout_fires_on_crews_timer() {
    let (listener, addr) = listener();
    let server = crew::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let service =
            service_fn(|_: Request<Incoming>| async { Ok::<_, Infallible>(Response::new(Full::new(Bytes::new()))) });
        hyper::server::conn::http1::Builder::new()
            .timer(Timer)
            .header_read_timeout(Duration::from_millis(50))
            .serve_connection(Io::vectored(stream), service)
            .await
    });

    // Half a request line, then silence: only the timer ends this connection.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    crew::io::AsyncWriteExt::write_all(&mut stream, b"GET / HT").await.unwrap();
    let error = server.await.expect_err("the header read timed out");
    assert!(error.is_timeout(), "{error}");
    let mut rest = Vec::new();
    crew::io::AsyncReadExt::read_to_end(&mut stream, &mut rest).await.unwrap();
    // hyper answers a header timeout with nothing but a closed connection (or a 408).
    assert!(rest.is_empty() || rest.starts_with(b"HTTP/1.1 408"), "{}", String::from_utf8_lossy(&rest));
}

#[crew::test(workers = 1)]
async fn a_reset_sleep_moves_the_same_timer() {
    use hyper::rt::Timer as _;
    let start = std::time::Instant::now();
    let mut sleep = Timer.sleep(Duration::from_secs(3600));
    let before: *const () = std::ptr::addr_of!(*sleep).cast();
    Timer.reset(&mut sleep, start + Duration::from_millis(5));
    let after: *const () = std::ptr::addr_of!(*sleep).cast();
    assert_eq!(before, after, "reset moved the timer in place, not into a new sleep");
    // A reset that did not move the deadline would wait an hour: the timeout turns that into a failure.
    crew::time::timeout(Duration::from_secs(60), sleep).await.expect("the reset sleep fired at its new deadline");
    assert!(start.elapsed() >= Duration::from_millis(5), "not before its new deadline: {:?}", start.elapsed());
}

#[crew::test(workers = 2, start_paused = true)]
async fn the_timer_follows_a_paused_pools_clock() {
    use hyper::rt::Timer as _;
    let start = Timer.now();
    assert_eq!(start, crew::time::now());
    Timer.sleep(Duration::from_secs(600)).await;
    let mut nap = Timer.sleep(Duration::from_secs(3600));
    Timer.reset(&mut nap, Timer.now() + Duration::from_secs(60));
    nap.await;
    assert_eq!(Timer.now() - start, Duration::from_secs(660));
}
