//! An axum `Router` served by `crew::http::serve` (crew's `http` feature), called with hyper's
//! client over crew's sockets, HTTP/1 and HTTP/2: state, extractors (`Path`, `Query`, `Json`),
//! the peer's address (`Extension<crew::http::PeerAddr>`), a streamed response body, and an
//! upgraded connection (`hyper::upgrade::on`, then `crew::spawn`). Each test asserts that its
//! handlers ran on crew's workers (the test pool's thread names). Nothing here calls axum's
//! `tokio` feature (`axum::serve`, which only `examples/services.rs` uses) or needs a tokio
//! runtime, though the crate's `context` feature gives one.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use bytes::Bytes;
use crew::http::PeerAddr;
use crew::hyper::{Executor, Io};
use crew::net::{TcpListener, TcpStream};
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Only turns a hang into a failure.
const LIMIT: Duration = Duration::from_secs(120);

fn thread_name() -> String {
    std::thread::current().name().unwrap_or("<unnamed>").to_owned()
}

#[derive(Clone, Default)]
struct AppState {
    hits: Arc<AtomicUsize>,
}

#[derive(Deserialize)]
struct Greeting {
    greeting: String,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct User {
    id: u32,
    greeting: String,
    thread: String,
}

#[derive(Deserialize, Serialize)]
struct Numbers {
    values: Vec<i64>,
}

fn app(state: AppState) -> Router {
    Router::new()
        .route("/", get(hello))
        .route("/users/{id}", get(user))
        .route("/sum", post(sum))
        .route("/peer", get(peer))
        .route("/stream", get(stream))
        .route("/upgrade", get(upgrade))
        .with_state(state)
}

async fn hello(State(state): State<AppState>) -> String {
    let hit = state.hits.fetch_add(1, Ordering::SeqCst);
    format!("{} #{hit}", thread_name())
}

async fn user(Path(id): Path<u32>, Query(query): Query<Greeting>) -> Json<User> {
    Json(User { id, greeting: query.greeting, thread: thread_name() })
}

async fn sum(Json(numbers): Json<Numbers>) -> Json<(i64, String)> {
    Json((numbers.values.iter().sum(), thread_name()))
}

/// What `ConnectInfo<SocketAddr>` gives under `axum::serve`.
async fn peer(Extension(PeerAddr(peer)): Extension<PeerAddr>) -> String {
    peer.to_string()
}

/// Ten chunks, each made when the body is polled for it: by the thread serving the connection.
async fn stream() -> Body {
    let chunks = futures::stream::iter(0..10).map(|i| Ok::<_, std::io::Error>(format!("{i}:{}\n", thread_name())));
    Body::from_stream(chunks)
}

/// Switches to a line echo protocol: the upgraded connection is served by a crew task (what
/// `WebSocketUpgrade::on_upgrade` would `tokio::spawn`).
async fn upgrade(mut request: Request) -> Response {
    let upgrading = hyper::upgrade::on(&mut request);
    crew::spawn(async move {
        let mut io = TokioIo::new(upgrading.await.expect("the upgrade"));
        let mut line = vec![0; 5];
        io.read_exact(&mut line).await.unwrap();
        let echo = format!("{} from {}", String::from_utf8(line).unwrap(), thread_name());
        io.write_all(echo.as_bytes()).await.unwrap();
        io.shutdown().await.unwrap();
    })
    .detach();
    (StatusCode::SWITCHING_PROTOCOLS, [(header::CONNECTION, "upgrade"), (header::UPGRADE, "echo")]).into_response()
}

/// A server on a free loopback port: its task (cancelled when dropped) and its address.
fn serve(state: AppState) -> (crew::JoinHandle<std::io::Result<()>>, SocketAddr) {
    let listener = TcpListener::bind(([127, 0, 0, 1], 0)).unwrap();
    let addr = listener.get_ref().local_addr().unwrap();
    (crew::spawn(async move { crew::http::serve(listener, app(state)).await }), addr)
}

type Sender1 = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn http1(addr: SocketAddr) -> (Sender1, SocketAddr) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let local = stream.get_ref().local_addr().unwrap();
    let (sender, connection) = hyper::client::conn::http1::handshake(Io::vectored(stream)).await.unwrap();
    crew::spawn(connection.with_upgrades()).detach();
    (sender, local)
}

async fn send1(sender: &mut Sender1, request: hyper::Request<Full<Bytes>>) -> hyper::Response<hyper::body::Incoming> {
    sender.ready().await.unwrap();
    sender.send_request(request).await.unwrap()
}

async fn body_text(response: hyper::Response<hyper::body::Incoming>) -> String {
    assert_eq!(response.status(), StatusCode::OK);
    String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
}

fn get_request(path: &str) -> hyper::Request<Full<Bytes>> {
    hyper::Request::get(path).body(Full::new(Bytes::new())).unwrap()
}

#[crew::test(thread_name = "axum")]
async fn state_and_extractors_run_on_crews_workers_over_http1_and_http2() {
    crew::time::timeout(LIMIT, async {
        let state = AppState::default();
        let (_server, addr) = serve(state.clone());
        let (mut h1, _) = http1(addr).await;
        let hello = body_text(send1(&mut h1, get_request("/")).await).await;
        assert!(hello.starts_with("axum-") && hello.ends_with(" #0"), "{hello}");

        let user: User =
            serde_json::from_str(&body_text(send1(&mut h1, get_request("/users/7?greeting=hi")).await).await).unwrap();
        assert_eq!((user.id, user.greeting.as_str()), (7, "hi"));
        assert!(user.thread.starts_with("axum-"), "{user:?}");

        let numbers = serde_json::to_vec(&Numbers { values: vec![1, 2, 39] }).unwrap();
        let request = hyper::Request::post("/sum")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(numbers)))
            .unwrap();
        let (total, thread): (i64, String) =
            serde_json::from_str(&body_text(send1(&mut h1, request).await).await).unwrap();
        assert_eq!(total, 42);
        assert!(thread.starts_with("axum-"), "{thread}");

        // HTTP/2 with prior knowledge, as gRPC clients speak it, on the same port.
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut h2, connection) = hyper::client::conn::http2::handshake(Executor, Io::vectored(stream)).await.unwrap();
        crew::spawn(connection).detach();
        h2.ready().await.unwrap();
        let response = h2.send_request(get_request("http://localhost/")).await.unwrap();
        assert_eq!(response.version(), hyper::Version::HTTP_2);
        let hello = body_text(response).await;
        assert!(hello.starts_with("axum-") && hello.ends_with(" #1"), "{hello}");
        assert_eq!(state.hits.load(Ordering::SeqCst), 2);
    })
    .await
    .expect("the test hung");
}

#[crew::test(thread_name = "peer")]
async fn the_peers_address_reaches_the_handler_as_an_extension() {
    crew::time::timeout(LIMIT, async {
        let (_server, addr) = serve(AppState::default());
        let (mut h1, local) = http1(addr).await;
        assert_eq!(body_text(send1(&mut h1, get_request("/peer")).await).await, local.to_string());
    })
    .await
    .expect("the test hung");
}

#[crew::test(thread_name = "streamed")]
async fn a_streamed_body_is_made_chunk_by_chunk_on_crews_workers() {
    crew::time::timeout(LIMIT, async {
        let (_server, addr) = serve(AppState::default());
        let (mut h1, _) = http1(addr).await;
        let response = send1(&mut h1, get_request("/stream")).await;
        assert_eq!(response.headers().get(header::TRANSFER_ENCODING).unwrap(), "chunked", "streamed, not buffered");
        let text = body_text(response).await;
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 10, "{text}");
        for (i, line) in lines.iter().enumerate() {
            assert!(line.starts_with(&format!("{i}:streamed-")), "{line}");
        }
    })
    .await
    .expect("the test hung");
}

#[crew::test(thread_name = "upgraded")]
async fn an_upgraded_connection_is_served_by_a_crew_task() {
    crew::time::timeout(LIMIT, async {
        let (_server, addr) = serve(AppState::default());
        let (mut h1, _) = http1(addr).await;
        let request = hyper::Request::get("/upgrade")
            .header(header::CONNECTION, "upgrade")
            .header(header::UPGRADE, "echo")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let response = send1(&mut h1, request).await;
        assert_eq!(response.status(), StatusCode::SWITCHING_PROTOCOLS);
        let mut io = TokioIo::new(hyper::upgrade::on(response).await.unwrap());
        io.write_all(b"hello").await.unwrap();
        let mut echo = String::new();
        io.read_to_string(&mut echo).await.unwrap();
        assert!(echo.starts_with("hello from upgraded-"), "{echo}");
    })
    .await
    .expect("the test hung");
}
