//! tonic (gRPC: tokio's sockets, h2, tower) with its server and its client both started from
//! crew tasks, with no wrapper: unary calls, and a bidirectional stream in lock step (each request
//! is sent only after the response to the one before arrived). The messages are prost derives
//! and the service is described in `build.rs` with tonic-build's `manual` module: no `.proto`,
//! no protoc.
//!
//! The server is tonic's own (`Server::builder().add_service(..).serve_with_incoming_shutdown`)
//! on a tokio `TcpListener`, driven by a crew task; tonic `tokio::spawn`s each connection, so
//! its handlers run on the context's tokio runtime, and the bidirectional handler hands its
//! stream to a crew task (`crew::spawn`, the global pool) to keep that work on crew. The client
//! (`Endpoint::connect`, its `Channel`) is used from crew tasks on a private pool.
//!
//! Without the context (`cargo test --no-default-features`) every test fails at its first line,
//! in `crew_ecosystem::tokio_context`.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use crew_ecosystem::{join, tokio_context};
use futures::channel::{mpsc, oneshot};
use futures::{SinkExt, Stream, StreamExt};
use tonic::transport::{Endpoint, Server};
use tonic::{Request, Response, Status, Streaming};

/// Only turns a hang into a failure: nothing here takes more than a few seconds.
const LIMIT: Duration = Duration::from_secs(120);

/// A request: a sequence number and a text.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoRequest {
    #[prost(uint64, tag = "1")]
    pub seq: u64,
    #[prost(string, tag = "2")]
    pub text: String,
}

/// The answer: the request's number, its text upper-cased, and the thread that answered.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoResponse {
    #[prost(uint64, tag = "1")]
    pub seq: u64,
    #[prost(string, tag = "2")]
    pub text: String,
    #[prost(string, tag = "3")]
    pub thread: String,
}

/// `build.rs`'s output: `echo_client::EchoClient` and `echo_server::{Echo, EchoServer}`.
#[allow(clippy::all, missing_docs)]
mod echo {
    include!(concat!(env!("OUT_DIR"), "/crew.ecosystem.Echo.rs"));
}
use echo::echo_client::EchoClient;
use echo::echo_server::{Echo, EchoServer};

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

fn answer(request: EchoRequest) -> EchoResponse {
    EchoResponse { seq: request.seq, text: request.text.to_uppercase(), thread: thread_name() }
}

struct EchoService;

#[tonic::async_trait]
impl Echo for EchoService {
    async fn unary(&self, request: Request<EchoRequest>) -> Result<Response<EchoResponse>, Status> {
        Ok(Response::new(answer(request.into_inner())))
    }

    type BidiStream = Pin<Box<dyn Stream<Item = Result<EchoResponse, Status>> + Send>>;

    async fn bidi(&self, request: Request<Streaming<EchoRequest>>) -> Result<Response<Self::BidiStream>, Status> {
        let mut requests = request.into_inner();
        let (mut tx, rx) = mpsc::channel(1);
        // The stream's work runs in a crew task: answers carry a crew worker's name.
        crew::spawn(async move {
            tokio_context();
            while let Some(request) = requests.next().await {
                let reply = request.map(answer);
                if tx.send(reply).await.is_err() {
                    break; // the client went away
                }
            }
        })
        .detach();
        Ok(Response::new(Box::pin(rx)))
    }
}

/// Starts tonic's server from a crew task on the global pool, on a tokio listener bound to
/// 127.0.0.1:0. Returns its address, the sender that shuts it down, and the task.
fn start_server() -> (SocketAddr, oneshot::Sender<()>, crew::JoinHandle<(), crew::Catch>) {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let server = crew::spawn_with(crew::Catch, async move {
        tokio_context();
        // tokio's own listener: it registers with the context's reactor.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        addr_tx.send(listener.local_addr().unwrap()).unwrap();
        let incoming = futures::stream::unfold(listener, |listener| async move {
            let accepted = listener.accept().await.map(|(stream, _)| stream);
            Some((accepted, listener))
        });
        Server::builder()
            .add_service(EchoServer::new(EchoService))
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stop_rx.await;
            })
            .await
            .expect("tonic's server failed");
    });
    let Ok(addr) = addr_rx.recv_timeout(LIMIT) else {
        // The task failed before binding (or hung): report why, from its own panic.
        crew::block_on(crew::time::timeout(LIMIT, join(server))).expect("the server task hung before binding");
        unreachable!("the server task returned without binding");
    };
    (addr, stop_tx, server)
}

/// Runs `f(client)` in `tasks` crew tasks on a private pool, with one channel shared by all.
fn with_clients<F, Fut, T>(addr: SocketAddr, tasks: usize, f: F) -> Vec<T>
where
    F: Fn(EchoClient<tonic::transport::Channel>, usize) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let pool = crew::Pool::builder().workers(2).thread_name("client").build().unwrap();
    let channel = pool
        .block_on(crew::time::timeout(LIMIT, async move {
            tokio_context();
            // A `Channel` spawns its worker with `tokio::spawn` and connects with tokio's sockets.
            Endpoint::from_shared(format!("http://{addr}")).unwrap().connect().await
        }))
        .expect("connecting hung")
        .expect("connect to tonic's server");
    let calls: Vec<_> =
        (0..tasks).map(|task| join(pool.spawn_with(crew::Catch, f(EchoClient::new(channel.clone()), task)))).collect();
    pool.block_on(crew::time::timeout(LIMIT, futures::future::join_all(calls))).expect("the calls hung")
}

fn stop(stop: oneshot::Sender<()>, server: crew::JoinHandle<(), crew::Catch>) {
    stop.send(()).unwrap();
    crew::block_on(crew::time::timeout(LIMIT, join(server))).expect("tonic's server did not shut down");
}

#[test]
fn unary_calls_from_crew_tasks() {
    let (addr, stop_tx, server) = start_server();
    let threads = with_clients(addr, 16, |mut client, task| async move {
        tokio_context();
        for i in 0..20u64 {
            let seq = task as u64 * 1000 + i;
            let request = EchoRequest { seq, text: format!("task {task} call {i}") };
            let response = client.unary(request).await.expect("unary call").into_inner();
            assert_eq!(response.seq, seq);
            assert_eq!(response.text, format!("TASK {task} CALL {i}"));
        }
        thread_name()
    });
    for thread in threads {
        assert!(thread.starts_with("client-"), "called from the private pool: {thread}");
    }
    stop(stop_tx, server);
}

#[test]
fn bidirectional_streams_in_lock_step_from_crew_tasks() {
    const MESSAGES: u64 = 100;
    let (addr, stop_tx, server) = start_server();
    let served_by = with_clients(addr, 4, |mut client, task| async move {
        tokio_context();
        let (mut requests, requests_rx) = mpsc::channel::<EchoRequest>(1);
        requests.send(EchoRequest { seq: 0, text: format!("stream {task} #0") }).await.unwrap();
        let mut responses = client.bidi(requests_rx).await.expect("open the stream").into_inner();
        let mut threads = Vec::new();
        for seq in 0..MESSAGES {
            let response = responses.message().await.expect("a response").expect("the stream ended early");
            assert_eq!(response.seq, seq);
            assert_eq!(response.text, format!("STREAM {task} #{seq}"));
            threads.push(response.thread);
            // The next request goes out only now: the stream really is bidirectional.
            if seq + 1 < MESSAGES {
                let next = EchoRequest { seq: seq + 1, text: format!("stream {task} #{}", seq + 1) };
                requests.send(next).await.unwrap();
            }
        }
        drop(requests); // ends the request stream: the server's task ends, then its stream
        assert!(responses.message().await.expect("the stream's end").is_none());
        threads
    });
    for thread in served_by.iter().flatten() {
        assert!(thread.starts_with("crew-"), "answered from a crew task on the global pool: {thread}");
    }
    stop(stop_tx, server);
}
