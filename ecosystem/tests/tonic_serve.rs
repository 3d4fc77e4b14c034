//! A tonic service served by `crew::http::serve(listener, routes)` (crew's `http` feature)
//! instead of tonic's `Server`, called with tonic's own client: unary calls and a bidirectional
//! stream, each answered on crew's workers (the server pool's thread names), with no
//! `crew::spawn` in the handlers: every connection and every HTTP/2 stream is a crew task. Then
//! the same `Routes` behind tower layers that tonic's `Server` would have added (a deadline, a
//! concurrency limit), and a graceful shutdown. The service is `build.rs`'s `Echo`, as in
//! `tests/tonic.rs`; the client's `Channel` needs the tokio context (this crate's `context`).

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use crew_ecosystem::tokio_context;
use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};
use tonic::service::Routes;
use tonic::transport::Endpoint;
use tonic::{Code, Request, Response, Status, Streaming};
use tower::ServiceBuilder;

/// Only turns a hang into a failure.
const LIMIT: Duration = Duration::from_secs(120);

#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoRequest {
    #[prost(uint64, tag = "1")]
    pub seq: u64,
    #[prost(string, tag = "2")]
    pub text: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EchoResponse {
    #[prost(uint64, tag = "1")]
    pub seq: u64,
    #[prost(string, tag = "2")]
    pub text: String,
    #[prost(string, tag = "3")]
    pub thread: String,
}

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
        let request = request.into_inner();
        if request.text == "never" {
            std::future::pending::<()>().await; // for the deadline's test
        }
        Ok(Response::new(answer(request)))
    }

    type BidiStream = Pin<Box<dyn Stream<Item = Result<EchoResponse, Status>> + Send>>;

    async fn bidi(&self, request: Request<Streaming<EchoRequest>>) -> Result<Response<Self::BidiStream>, Status> {
        // Answered as the response body is polled: by the stream's crew task.
        let answers = request.into_inner().map(|request| request.map(answer));
        Ok(Response::new(Box::pin(answers)))
    }
}

/// A loopback listener on a free port.
fn listener() -> (crew::net::TcpListener, SocketAddr) {
    let listener = crew::net::TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.get_ref().local_addr().unwrap();
    (listener, addr)
}

/// A pool whose threads are named `name-N`: the server's.
fn pool(name: &str) -> crew::Pool {
    crew::Pool::builder().workers(2).thread_name(name).build().unwrap()
}

/// A client connected to `addr` (tonic's `Channel`: tokio's sockets, from a crew task).
async fn client(addr: SocketAddr) -> EchoClient<tonic::transport::Channel> {
    tokio_context();
    let channel = Endpoint::from_shared(format!("http://{addr}")).unwrap().connect().await.expect("connect");
    EchoClient::new(channel)
}

#[test]
fn unary_and_bidirectional_calls_are_answered_on_crews_workers() {
    let server_pool = pool("grpc");
    let (listener, addr) = listener();
    let routes = Routes::new(EchoServer::new(EchoService));
    // The one line that replaces `Server::builder().add_service(..).serve(addr)`.
    let server = server_pool.spawn(crew::http::serve(listener, routes).into_future());
    let threads = crew::block_on(crew::spawn(crew::time::timeout(LIMIT, async move {
        let mut client = client(addr).await;
        let mut threads = Vec::new();
        for seq in 0..10 {
            let response = client.unary(EchoRequest { seq, text: format!("call {seq}") }).await.unwrap().into_inner();
            assert_eq!((response.seq, response.text), (seq, format!("CALL {seq}")));
            threads.push(response.thread);
        }
        let (mut requests, requests_rx) = mpsc::channel::<EchoRequest>(1);
        requests.send(EchoRequest { seq: 0, text: "stream #0".into() }).await.unwrap();
        let mut responses = client.bidi(requests_rx).await.unwrap().into_inner();
        for seq in 0..20 {
            let response = responses.message().await.unwrap().expect("the stream ended early");
            assert_eq!((response.seq, response.text), (seq, format!("STREAM #{seq}")));
            threads.push(response.thread);
            // In lock step: the next request goes out only after this answer came.
            requests.send(EchoRequest { seq: seq + 1, text: format!("stream #{}", seq + 1) }).await.unwrap();
        }
        drop(requests);
        threads
    })))
    .expect("the calls hung");
    for thread in threads {
        assert!(thread.starts_with("grpc-"), "answered on the server pool's workers: {thread}");
    }
    drop(server);
}

#[test]
fn the_routes_behind_tower_layers_get_a_deadline_and_a_concurrency_limit_then_shut_down_gracefully() {
    let server_pool = pool("layered");
    let (listener, addr) = listener();
    // What `Server::builder().timeout(..).concurrency_limit_per_connection(..)` adds, as layers
    // on the routes' axum Router; an expired deadline becomes a gRPC status, not a reset.
    let router = Routes::new(EchoServer::new(EchoService)).into_axum_router().layer(
        ServiceBuilder::new()
            .layer(HandleErrorLayer::new(|_: tower::BoxError| async {
                Status::deadline_exceeded("the server's deadline expired").into_http::<axum::body::Body>()
            }))
            .layer(tower::timeout::TimeoutLayer::new(Duration::from_millis(200)))
            .layer(tower::limit::ConcurrencyLimitLayer::new(64)),
    );
    let (stop, stopped) = futures::channel::oneshot::channel::<()>();
    let serve = crew::http::serve(listener, router).with_graceful_shutdown(async move {
        stopped.await.ok();
    });
    let server = server_pool.spawn(serve.into_future());
    crew::block_on(crew::spawn(crew::time::timeout(LIMIT, async move {
        let mut client = client(addr).await;
        let response = client.unary(EchoRequest { seq: 1, text: "fast".into() }).await.unwrap().into_inner();
        assert!(response.thread.starts_with("layered-"), "{}", response.thread);
        let status = client.unary(EchoRequest { seq: 2, text: "never".into() }).await.unwrap_err();
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status}");
    })))
    .expect("the calls hung");
    stop.send(()).unwrap();
    crew::block_on(crew::time::timeout(LIMIT, server)).expect("the server did not shut down").unwrap();
}
