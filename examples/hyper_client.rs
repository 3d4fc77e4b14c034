//! hyper's client on crew, against `hyper_server` (start that first): two requests over one
//! HTTP/1.1 keep-alive connection, ten concurrent HTTP/2 streams on one connection, and a body
//! streamed both ways through `POST /echo` (each chunk comes back before the next is sent).
//!
//! ```sh
//! cargo run --features hyper --example hyper_server
//! cargo run --features hyper --example hyper_client                   # or: -- 127.0.0.1:3000
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use crew::hyper::{Executor, Io, Timer};
use crew::net::TcpStream;
use futures::channel::mpsc;
use futures::SinkExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, StreamBody};
use hyper::body::Frame;
use hyper::Request;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[crew::main]
async fn main() -> Result<(), Error> {
    let addr: SocketAddr = match std::env::args().nth(1) {
        Some(addr) => addr.parse().map_err(|e| format!("bad address {addr:?}: {e} (expected e.g. 127.0.0.1:3000)"))?,
        None => ([127, 0, 0, 1], 3000).into(),
    };
    let connect = || async move {
        TcpStream::connect(addr).await.map(Io::vectored).map_err(|e| {
            format!("cannot connect to {addr} ({e}): is `cargo run --features hyper --example hyper_server` running?")
        })
    };

    // HTTP/1.1: one connection, kept alive across two requests.
    let (mut sender, connection) = hyper::client::conn::http1::handshake(connect().await?).await?;
    let connection = crew::spawn(connection);
    for _ in 0..2 {
        sender.ready().await?;
        let response = sender.send_request(Request::get("/").body(Empty::<Bytes>::new())?).await?;
        print!("HTTP/1.1 {}: {}", response.status(), text(response.into_body().collect().await?.to_bytes()));
    }
    drop(sender);
    connection.await?;

    // HTTP/2: one connection, ten streams at once, each request on a task of its own. Its
    // requests' bodies are boxed: empty ones, and the streamed one below.
    let (sender, connection) = hyper::client::conn::http2::Builder::new(Executor)
        .timer(Timer)
        .handshake::<_, BoxBody<Bytes, Infallible>>(connect().await?)
        .await?;
    let connection = crew::spawn(connection);
    let requests: Vec<_> = (0..10)
        .map(|_| {
            let mut sender = sender.clone();
            crew::spawn(async move {
                let response = sender.send_request(Request::get("/").body(Empty::new().boxed())?).await?;
                Ok::<_, Error>(text(response.into_body().collect().await?.to_bytes()))
            })
        })
        .collect();
    for (i, request) in requests.into_iter().enumerate() {
        print!("HTTP/2 stream {i}: {}", request.await?);
    }

    // A body streamed both ways: each chunk is echoed back before the next one is sent.
    let (mut chunks, body) = mpsc::channel::<Result<Frame<Bytes>, Infallible>>(1);
    let request = Request::post("/echo").body(StreamBody::new(body).boxed())?;
    let mut response = sender.clone().send_request(request).await?.into_body();
    for i in 0..3 {
        let chunk = format!("chunk {i}");
        chunks.send(Ok(Frame::data(Bytes::from(chunk.clone())))).await?;
        let echoed = response.frame().await.ok_or("the echo ended early")??.into_data().map_err(|_| "not data")?;
        println!("echo: sent {chunk:?}, got {:?} back", text(echoed));
    }
    drop(chunks); // ends the request's body, so the echo ends too
    while let Some(frame) = response.frame().await {
        frame?;
    }
    drop(sender);
    connection.await?;
    Ok(())
}

fn text(bytes: Bytes) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}
