//! reqwest in crew tasks, with no wrapper: its connections, connection tasks and timers are
//! tokio's, and work because crew's `tokio` feature gives every crew thread a tokio runtime
//! context. The server it talks to is hyper on crew (`crew::hyper`, crew's sockets), over
//! loopback. Proves that:
//! - a GET with a streamed response and a POST whose body streams both ways at once (each chunk
//!   is sent only after the previous one came back) work from crew tasks on the global pool, and
//!   on a private pool given the user's own tokio runtime (`Builder::tokio_handle`), where
//!   reqwest's own `tokio::spawn`s run on that runtime;
//! - a task blocked inside a poll does not stop another task's reqwest call: the call, queued
//!   behind the blocked task on a one-worker pool, runs once crew's takeover hands the worker's
//!   queue to a new thread;
//! - `#[crew::test]` works unchanged: a reqwest call in its body and in a task it spawns.
//!
//! Without the context (`cargo test --no-default-features`) every test fails at its first line,
//! in `crew_ecosystem::tokio_context`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::mpsc::RecvTimeoutError;
use std::thread::ThreadId;
use std::time::Duration;

use bytes::Bytes;
use crew::hyper::{Io, Timer};
use crew::net::TcpListener;
use crew_ecosystem::{join, tokio_context};
use futures::channel::mpsc;
use futures::{SinkExt, StreamExt};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};

/// Only turns a hang into a failure: nothing here takes more than a few seconds.
const LIMIT: Duration = Duration::from_secs(120);

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

/// A hyper server on crew: a loopback listener, and the accept loop to spawn on a crew pool.
/// Each connection is a crew task whose handle the loop keeps, so cancelling the loop's task
/// cancels every connection with it.
fn server() -> (SocketAddr, impl std::future::Future<Output = ()> + Send + 'static) {
    let listener = TcpListener::bind(([127, 0, 0, 1], 0)).expect("bind 127.0.0.1:0");
    let addr = listener.get_ref().local_addr().unwrap();
    let serve = async move {
        let mut connections = Vec::new();
        loop {
            let (stream, _) = listener.accept().await.expect("accept");
            connections.push(crew::spawn(async move {
                let http = hyper::server::conn::http1::Builder::new()
                    .timer(Timer)
                    .serve_connection(Io::vectored(stream), service_fn(route));
                // A client that goes away mid-request is not this server's failure to report.
                let _ = http.await;
            }));
        }
    };
    (addr, serve)
}

type Body = UnsyncBoxBody<Bytes, hyper::Error>;

/// `GET /count/N`: the lines `0\n` to `N-1\n`, one frame each, yielding to crew between frames.
/// `POST /echo`: the request's body back, frame by frame as it arrives.
async fn route(request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let path = request.uri().path().to_owned();
    let response = match (request.method(), path.strip_prefix("/count/")) {
        (&Method::GET, Some(n)) => {
            let n: usize = n.parse().expect("GET /count/N");
            let lines = futures::stream::unfold(0, move |i| async move {
                if i == n {
                    return None;
                }
                crew::yield_now().await;
                Some((Ok::<_, Infallible>(Frame::data(Bytes::from(format!("{i}\n")))), i + 1))
            });
            Response::new(StreamBody::new(lines).map_err(|never| match never {}).boxed_unsync())
        }
        (&Method::POST, None) if path == "/echo" => Response::new(request.into_body().boxed_unsync()),
        _ => {
            let body = Full::new(Bytes::from_static(b"not found\n")).map_err(|never| match never {});
            let mut response = Response::new(body.boxed_unsync());
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    };
    Ok(response)
}

/// A client for loopback: no proxy, whatever the environment's `HTTP_PROXY` says.
fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().expect("reqwest client")
}

/// GET `/count/n`, reading the response as a stream of chunks.
async fn get_count(client: &reqwest::Client, addr: SocketAddr, n: usize) {
    let response = client.get(format!("http://{addr}/count/{n}")).send().await.expect("GET");
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        body.extend_from_slice(&chunk.expect("a chunk of the response"));
    }
    let expected: String = (0..n).map(|i| format!("{i}\n")).collect();
    assert_eq!(String::from_utf8(body).unwrap(), expected);
}

/// POST `/echo` with a body of `chunks` chunks streamed from a crew task, in lock step: each
/// chunk is sent only once the echo of the one before has been read back from the response,
/// so both bodies are streaming at once (neither is buffered whole).
async fn post_echo(client: &reqwest::Client, addr: SocketAddr, chunks: usize) {
    const CHUNK: usize = 4096;
    let chunk = |i: usize| Bytes::from(vec![b'a' + (i % 26) as u8; CHUNK]);
    let (mut body_tx, body_rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(1);
    let (mut echoed_tx, mut echoed_rx) = mpsc::channel::<usize>(1);
    let sender = crew::spawn(async move {
        tokio_context();
        for i in 0..chunks {
            body_tx.send(Ok(chunk(i))).await.expect("reqwest dropped the request body");
            if i + 1 < chunks {
                assert_eq!(echoed_rx.next().await, Some(i), "the echo of chunk {i}");
            }
        }
        // Dropping the sender ends the request's body.
    });

    let response = client
        .post(format!("http://{addr}/echo"))
        .body(reqwest::Body::wrap_stream(body_rx))
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let mut echoed = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(bytes) = stream.next().await {
        let before = echoed.len() / CHUNK;
        echoed.extend_from_slice(&bytes.expect("a chunk of the echo"));
        // Acknowledge every chunk completed by these bytes (the sender waits for the last one).
        for i in before..echoed.len() / CHUNK {
            if i + 1 < chunks {
                echoed_tx.send(i).await.expect("the body's sender stopped early");
            }
        }
    }
    sender.await;
    let expected: Vec<u8> = (0..chunks).flat_map(|i| chunk(i).to_vec()).collect();
    assert_eq!(echoed.len(), expected.len());
    assert!(echoed == expected, "the echo differs from the body sent");
}

/// What each calling task does: a GET and a POST, both streamed.
async fn get_and_post(client: reqwest::Client, addr: SocketAddr) -> String {
    tokio_context();
    get_count(&client, addr, 500).await;
    post_echo(&client, addr, 32).await;
    thread_name()
}

#[test]
fn streams_get_and_post_from_tasks_on_the_global_pool() {
    let (addr, serve) = server();
    let server = crew::spawn(serve);
    let client = client();
    // Eight tasks at once, sharing one client (and its connection pool) across crew's workers.
    let calls: Vec<_> =
        (0..8).map(|_| join(crew::spawn_with(crew::Catch, get_and_post(client.clone(), addr)))).collect();
    let threads = crew::block_on(crew::time::timeout(LIMIT, futures::future::join_all(calls)))
        .expect("reqwest calls from the global pool hung");
    for thread in &threads {
        assert!(thread.starts_with("crew-"), "ran on a global pool's worker: {thread}");
    }
    crew::block_on(server.cancel());
}

#[test]
fn streams_get_and_post_from_a_private_pool_on_the_users_tokio_runtime() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("users-tokio")
        .enable_all()
        .build()
        .unwrap();
    let builder = crew::Pool::builder().workers(2).thread_name("private");
    let pool = crew_ecosystem::tokio_handle(builder, runtime.handle().clone()).build().unwrap();
    let (addr, serve) = server();
    let server = pool.spawn(serve);
    let client = client();
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let client = client.clone();
            join(pool.spawn_with(crew::Catch, async move {
                // The context is the runtime the pool was given: its `tokio::spawn` (reqwest's
                // connection tasks, for one) runs on that runtime's threads.
                let spawned_on = tokio_context().spawn(async { thread_name() }).await.unwrap();
                assert!(spawned_on.starts_with("users-tokio"), "tokio::spawn ran on {spawned_on}");
                let current_spawn = tokio::spawn(async { thread_name() }).await.unwrap();
                assert!(current_spawn.starts_with("users-tokio"), "tokio::spawn ran on {current_spawn}");
                get_and_post(client, addr).await
            }))
        })
        .collect();
    let threads = pool
        .block_on(crew::time::timeout(LIMIT, futures::future::join_all(calls)))
        .expect("reqwest calls from a private pool hung");
    for thread in &threads {
        assert!(thread.starts_with("private-"), "ran on the private pool's worker: {thread}");
    }
    pool.block_on(server.cancel());
    drop(pool);
    drop(runtime);
}

#[test]
fn a_task_blocked_inside_a_poll_does_not_stop_another_tasks_reqwest_call() {
    let (addr, serve) = server();
    // The server runs on the global pool: only the caller's pool is under test here.
    let server = crew::spawn(serve);
    let pool = crew::Pool::builder().workers(1).thread_name("one").build().unwrap();
    let blocker = pool.spawn_with(crew::Catch, async move {
        tokio_context();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<ThreadId>();
        // Queued behind this task on this pool's only worker.
        let call = crew::spawn(async move {
            get_and_post(client(), addr).await;
            done_tx.send(std::thread::current().id()).unwrap();
        });
        // Block the worker's thread inside this poll until the call is done: only a takeover (a
        // new thread carrying on as this worker, with its queue) can run the call meanwhile.
        let caller = match done_rx.recv_timeout(LIMIT) {
            Ok(thread) => thread,
            Err(RecvTimeoutError::Timeout) => {
                panic!("the reqwest call never ran while the task before it blocked its worker")
            }
            Err(RecvTimeoutError::Disconnected) => panic!("the reqwest call failed (its panic is reported above)"),
        };
        (std::thread::current().id(), caller, call)
    });
    let (blocked, caller, call) =
        crew::block_on(crew::time::timeout(LIMIT * 2, join(blocker))).expect("the blocking task never returned");
    crew::block_on(call);
    assert_ne!(blocked, caller, "the call ran on another thread than the blocked one");
    let takeovers = pool.metrics().total.takeovers;
    assert!(takeovers >= 1, "the blocked worker was taken over ({takeovers} takeovers)");
    crew::block_on(server.cancel());
}

/// `#[crew::test]`: the body runs on the test's pool through `Pool::block_on`, whose caller
/// holds the context too; so do the pool's workers.
#[crew::test]
async fn reqwest_inside_crew_test() {
    tokio_context();
    let (addr, serve) = server();
    let server = crew::spawn(serve);
    let client = client();
    let text = crew::time::timeout(LIMIT, async {
        let response = client.get(format!("http://{addr}/count/3")).send().await.expect("GET");
        response.text().await.expect("the body")
    })
    .await
    .expect("the call in the test's body hung");
    assert_eq!(text, "0\n1\n2\n");
    let thread = crew::time::timeout(LIMIT, crew::spawn(get_and_post(client.clone(), addr)))
        .await
        .expect("the call in the test's task hung");
    assert!(thread.contains("reqwest_inside_crew_test"), "ran on the test's pool: {thread}");
    drop(client);
    server.cancel().await;
}
